package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"stitchkit.dev/stitchkit/internal/schematree"
)

// Format checks one "format" value. It is called with every instance the
// schema applies to (strings, numbers, any kind): it returns nil for
// values it does not constrain, as JSON Schema formats do, and an error
// saying what is wrong otherwise.
type Format func(v any) error

// Options say how a document is read. A nil *Options means JSON Schema
// 2020-12 as written, with no format known.
type Options struct {
	// Format returns the checker for a "format" name. A name it does not
	// know (ok false) makes Compile refuse the schema: a format is never
	// silently an annotation.
	Format func(name string) (f Format, ok bool)
	// IntegerLiterals reads "type": "integer" as CUE's int: a number
	// written without fraction or exponent. The default is JSON Schema's
	// reading, under which 1.0 and 1e2 are integers.
	IntegerLiterals bool
	// UniqueKinds makes "uniqueItems" compare as CUE does: an integer
	// literal and a number written with a fraction or exponent differ
	// even when equal in value (1 and 1.0), while 1.0 and 1.00 do not.
	// The default is JSON Schema's equality, under which 1 and 1.0 are
	// equal.
	UniqueKinds bool
}

// Schema is a compiled JSON Schema 2020-12 document: a tree of nodes, one
// per schema object, each holding only the keywords it declares in the
// form the validator uses (bounds parsed once, patterns compiled once,
// property tables sorted). Safe for concurrent use.
type Schema struct {
	root *node
	opts Options
	// hasDefaults: some node ApplyDefaults walks declares "default".
	hasDefaults bool
}

// type bits.
const (
	tNull uint8 = 1 << iota
	tBoolean
	tInteger
	tNumber
	tString
	tArray
	tObject
)

var typeNames = []struct {
	bit  uint8
	name string
}{{tNull, "null"}, {tBoolean, "boolean"}, {tInteger, "integer"}, {tNumber, "number"}, {tString, "string"}, {tArray, "array"}, {tObject, "object"}}

// node is one compiled schema object (or boolean schema).
type node struct {
	loc string // JSON pointer of the schema in its document, for messages and errors

	always, never bool // boolean schemas true / false

	types     uint8
	typeWant  string // "integer or string", for messages
	hasConst  bool
	constV    any
	enum      []any
	enumStr   map[string]struct{} // every enum value is a string: fast membership
	format    Format
	fmtName   string
	ref       *node
	allOf     []*node
	anyOf     []*node
	oneOf     []*node
	not       *node
	ifN       *node
	thenN     *node
	elseN     *node
	hasNumKw  bool
	minimum   *bound
	maximum   *bound
	exMinimum *bound
	exMaximum *bound
	multOf    *bound
	minLen    int // -1: absent
	maxLen    int
	pattern   *pattern
	hasArrKw  bool
	prefix    []*node
	items     *node
	minItems  int
	maxItems  int
	unique    bool
	contains  *node
	minCont   int // -1: absent (contains then means minContains 1)
	maxCont   int
	hasObjKw  bool
	props     []prop // sorted by name
	propIdx   map[string]int
	required  []string // required names that are not in props
	nReqProps int      // how many props are required
	addl      *node    // additionalProperties schema (nil: absent)
	patProps  []patProp
	propNames *node
	minProps  int
	maxProps  int
	depReq    []depReq
	depSch    []depSchema

	hasDefault bool
	def        any
	reachesDef bool // a default is reachable from here (see defaults.go)
}

type bound struct {
	n    num
	text string
}

type prop struct {
	name     string
	node     *node
	required bool
}

type patProp struct {
	re   *pattern
	src  string
	node *node
}

type depReq struct {
	name string
	reqs []string
}

type depSchema struct {
	name string
	node *node
}

// annotations are keywords that do not constrain an instance; everything
// else a schema says must be implemented below or the schema is refused.
var annotations = map[string]bool{
	"$schema": true, "$comment": true, "title": true, "description": true, "default": true,
	"examples": true, "deprecated": true, "readOnly": true, "writeOnly": true,
	"contentEncoding": true, "contentMediaType": true, "contentSchema": true,
	"$defs": true, "definitions": true,
}

// CompileError says why a document was refused.
type CompileError struct {
	Loc    string // JSON pointer of the offending schema
	Reason string
}

func (e *CompileError) Error() string {
	loc := e.Loc
	if loc == "" {
		loc = "/"
	}
	return fmt.Sprintf("schema at %s: %s", loc, e.Reason)
}

type compiler struct {
	root  any
	opts  Options
	nodes map[string]*node // by JSON pointer
	// pending refs, resolved once every node reached by the walk exists.
	err error
}

// Compile compiles doc, a JSON Schema 2020-12 document decoded with
// json.Number numbers (map[string]any, []any, json.Number, string, bool,
// nil). Local references ("#", "#/$defs/T", any JSON pointer into the
// document, "#anchor") are resolved at compile time, cycles included.
// Keywords the engine does not implement ($dynamicRef, unevaluated*,
// remote references, draft-07 keywords, unknown keywords and unknown
// formats) are refused, never ignored.
func Compile(doc any, opts *Options) (s *Schema, err error) {
	c := &compiler{root: doc, nodes: map[string]*node{}}
	if opts != nil {
		c.opts = *opts
	}
	if m, ok := doc.(map[string]any); ok {
		if id, ok := m["$id"]; ok {
			if _, ok := id.(string); !ok {
				return nil, &CompileError{Reason: `"$id" must be a string`}
			}
		}
	}
	root := c.compile("", doc)
	if c.err != nil {
		return nil, c.err
	}
	s = &Schema{root: root, opts: c.opts}
	s.hasDefaults = markDefaults(root)
	if s.hasDefaults {
		for _, n := range c.nodes {
			if n.hasDefault {
				n.def = s.floatDefault(n, n.def)
			}
		}
	}
	return s, nil
}

func (c *compiler) fail(loc, format string, args ...any) {
	if c.err == nil {
		c.err = &CompileError{Loc: loc, Reason: fmt.Sprintf(format, args...)}
	}
}

// compile returns the node for the schema v at loc, compiling it once.
func (c *compiler) compile(loc string, v any) *node {
	if n, ok := c.nodes[loc]; ok {
		return n
	}
	n := &node{loc: loc, minLen: -1, maxLen: -1, minItems: -1, maxItems: -1, minCont: -1, maxCont: -1, minProps: -1, maxProps: -1}
	c.nodes[loc] = n
	if c.err != nil {
		return n
	}
	switch s := v.(type) {
	case bool:
		n.always, n.never = s, !s
		return n
	case map[string]any:
		c.object(n, s)
	default:
		c.fail(loc, "a schema must be an object or a boolean, not %s", kindName(v))
	}
	return n
}

func (c *compiler) sub(loc, kw string, v any) *node {
	return c.compile(loc+"/"+schematree.Escape(kw), v)
}

func (c *compiler) object(n *node, s map[string]any) {
	loc := n.loc
	for _, k := range sortedKeys(s) {
		v := s[k]
		if annotations[k] {
			switch k {
			case "$schema":
				if str, _ := v.(string); str != "https://json-schema.org/draft/2020-12/schema" {
					c.fail(loc, `"$schema" %v is not supported: only JSON Schema 2020-12 is`, v)
				}
			case "default":
				n.hasDefault, n.def = true, v
			case "$defs", "definitions":
				m, ok := v.(map[string]any)
				if !ok {
					c.fail(loc, "%q must be an object of schemas", k)
					continue
				}
				for _, name := range sortedKeys(m) {
					c.compile(loc+"/"+schematree.Escape(k)+"/"+schematree.Escape(name), m[name])
				}
			}
			continue
		}
		switch k {
		case "$id":
			if loc != "" {
				c.fail(loc, `"$id" below the root is not supported (references are resolved within one document)`)
			}
		case "$anchor":
			if _, ok := v.(string); !ok {
				c.fail(loc, `"$anchor" must be a string`)
			}
		case "type":
			c.types(n, v)
		case "const":
			n.hasConst, n.constV = true, v
		case "enum":
			arr, ok := v.([]any)
			if !ok {
				c.fail(loc, `"enum" must be an array`)
				continue
			}
			n.enum = arr
			strs := map[string]struct{}{}
			for _, e := range arr {
				s, ok := e.(string)
				if !ok {
					strs = nil
					break
				}
				strs[s] = struct{}{}
			}
			n.enumStr = strs
		case "format":
			name, ok := v.(string)
			if !ok {
				c.fail(loc, `"format" must be a string`)
				continue
			}
			var f Format
			if c.opts.Format != nil {
				f, ok = c.opts.Format(name)
			} else {
				ok = false
			}
			if !ok || f == nil {
				c.fail(loc, "format %q is not supported", name)
				continue
			}
			n.format, n.fmtName = f, name
		case "$ref":
			ref, ok := v.(string)
			if !ok {
				c.fail(loc, `"$ref" must be a string`)
				continue
			}
			n.ref = c.resolve(loc, ref)
		case "allOf", "anyOf", "oneOf":
			arr, ok := v.([]any)
			if !ok || len(arr) == 0 {
				c.fail(loc, "%q must be a non-empty array of schemas", k)
				continue
			}
			nodes := make([]*node, len(arr))
			for i, e := range arr {
				nodes[i] = c.compile(fmt.Sprintf("%s/%s/%d", loc, k, i), e)
			}
			switch k {
			case "allOf":
				n.allOf = nodes
			case "anyOf":
				n.anyOf = nodes
			default:
				n.oneOf = nodes
			}
		case "not":
			n.not = c.sub(loc, k, v)
		case "if":
			n.ifN = c.sub(loc, k, v)
		case "then":
			n.thenN = c.sub(loc, k, v)
		case "else":
			n.elseN = c.sub(loc, k, v)
		case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf":
			b := c.bound(loc, k, v)
			if b == nil {
				continue
			}
			n.hasNumKw = true
			switch k {
			case "minimum":
				n.minimum = b
			case "maximum":
				n.maximum = b
			case "exclusiveMinimum":
				n.exMinimum = b
			case "exclusiveMaximum":
				n.exMaximum = b
			default:
				if b.n.neg || b.n.isZero() {
					c.fail(loc, `"multipleOf" must be greater than 0`)
				}
				n.multOf = b
			}
		case "minLength":
			n.minLen = c.count(loc, k, v)
		case "maxLength":
			n.maxLen = c.count(loc, k, v)
		case "pattern":
			n.pattern = c.regexp(loc, k, v)
		case "prefixItems":
			arr, ok := v.([]any)
			if !ok || len(arr) == 0 {
				c.fail(loc, `"prefixItems" must be a non-empty array of schemas`)
				continue
			}
			n.hasArrKw = true
			for i, e := range arr {
				n.prefix = append(n.prefix, c.compile(fmt.Sprintf("%s/prefixItems/%d", loc, i), e))
			}
		case "items":
			if _, ok := v.([]any); ok {
				c.fail(loc, `"items" as an array is draft-07; 2020-12 spells it "prefixItems"`)
				continue
			}
			n.hasArrKw = true
			n.items = c.sub(loc, k, v)
		case "minItems":
			n.hasArrKw = true
			n.minItems = c.count(loc, k, v)
		case "maxItems":
			n.hasArrKw = true
			n.maxItems = c.count(loc, k, v)
		case "uniqueItems":
			b, ok := v.(bool)
			if !ok {
				c.fail(loc, `"uniqueItems" must be a boolean`)
			}
			n.unique = b
			n.hasArrKw = n.hasArrKw || b
		case "contains":
			n.hasArrKw = true
			n.contains = c.sub(loc, k, v)
		case "minContains":
			n.hasArrKw = true
			n.minCont = c.count(loc, k, v)
		case "maxContains":
			n.hasArrKw = true
			n.maxCont = c.count(loc, k, v)
		case "properties":
			m, ok := v.(map[string]any)
			if !ok {
				c.fail(loc, `"properties" must be an object of schemas`)
				continue
			}
			n.hasObjKw = true
			for _, name := range sortedKeys(m) {
				n.props = append(n.props, prop{name: name, node: c.compile(loc+"/properties/"+schematree.Escape(name), m[name])})
			}
		case "required":
			n.hasObjKw = true
			n.required = c.names(loc, k, v)
		case "additionalProperties":
			n.hasObjKw = true
			n.addl = c.sub(loc, k, v)
		case "patternProperties":
			m, ok := v.(map[string]any)
			if !ok {
				c.fail(loc, `"patternProperties" must be an object of schemas`)
				continue
			}
			n.hasObjKw = true
			for _, src := range sortedKeys(m) {
				re, err := newPattern(src)
				if err != nil {
					c.fail(loc, "patternProperties: %q is not a regular expression: %v", src, err)
					continue
				}
				n.patProps = append(n.patProps, patProp{re: re, src: src, node: c.compile(loc+"/patternProperties/"+schematree.Escape(src), m[src])})
			}
		case "propertyNames":
			n.hasObjKw = true
			n.propNames = c.sub(loc, k, v)
		case "minProperties":
			n.hasObjKw = true
			n.minProps = c.count(loc, k, v)
		case "maxProperties":
			n.hasObjKw = true
			n.maxProps = c.count(loc, k, v)
		case "dependentRequired":
			m, ok := v.(map[string]any)
			if !ok {
				c.fail(loc, `"dependentRequired" must be an object of arrays`)
				continue
			}
			n.hasObjKw = true
			for _, name := range sortedKeys(m) {
				n.depReq = append(n.depReq, depReq{name: name, reqs: c.names(loc, k, m[name])})
			}
		case "dependentSchemas":
			m, ok := v.(map[string]any)
			if !ok {
				c.fail(loc, `"dependentSchemas" must be an object of schemas`)
				continue
			}
			n.hasObjKw = true
			for _, name := range sortedKeys(m) {
				n.depSch = append(n.depSch, depSchema{name: name, node: c.compile(loc+"/dependentSchemas/"+schematree.Escape(name), m[name])})
			}
		default:
			c.fail(loc, "keyword %q is not supported by this validator", k)
		}
	}
	// Fold required into the property table, so one lookup per declared
	// property answers both.
	if len(n.required) > 0 && len(n.props) > 0 {
		var rest []string
		for _, r := range n.required {
			i, ok := slices.BinarySearchFunc(n.props, r, func(p prop, name string) int { return strings.Compare(p.name, name) })
			if ok {
				if !n.props[i].required {
					n.props[i].required = true
					n.nReqProps++
				}
				continue
			}
			if !slices.Contains(rest, r) {
				rest = append(rest, r)
			}
		}
		n.required = rest
	}
	if len(n.props) > 8 {
		n.propIdx = make(map[string]int, len(n.props))
		for i, p := range n.props {
			n.propIdx[p.name] = i
		}
	}
}

func (c *compiler) types(n *node, v any) {
	var names []string
	switch t := v.(type) {
	case string:
		names = []string{t}
	case []any:
		for _, e := range t {
			s, ok := e.(string)
			if !ok {
				c.fail(n.loc, `"type" must be a string or an array of strings`)
				return
			}
			names = append(names, s)
		}
	default:
		c.fail(n.loc, `"type" must be a string or an array of strings`)
		return
	}
	for _, name := range names {
		found := false
		for _, tn := range typeNames {
			if tn.name == name {
				n.types |= tn.bit
				found = true
			}
		}
		if !found {
			c.fail(n.loc, "unknown type %q", name)
		}
	}
	if len(names) == 0 {
		n.types = 0
		c.fail(n.loc, `"type" must name at least one type`)
		return
	}
	var want []string
	for _, tn := range typeNames {
		if n.types&tn.bit != 0 {
			want = append(want, tn.name)
		}
	}
	n.typeWant = strings.Join(want, " or ")
}

func (c *compiler) bound(loc, kw string, v any) *bound {
	jn, ok := v.(json.Number)
	if !ok {
		if f, isF := v.(float64); isF {
			jn = json.Number(numText(f))
		} else {
			c.fail(loc, "%q must be a number", kw)
			return nil
		}
	}
	n, ok := parseNumber(string(jn))
	if !ok {
		c.fail(loc, "%q must be a number", kw)
		return nil
	}
	return &bound{n: n, text: string(jn)}
}

// count reads a non-negative integer keyword value.
func (c *compiler) count(loc, kw string, v any) int {
	n, ok := numOf(v)
	if !ok || !n.isInteger() || n.neg {
		c.fail(loc, "%q must be a non-negative integer", kw)
		return -1
	}
	if !n.isSmall || n.small > 1<<31 {
		return 1 << 31 // beyond any instance a body can hold
	}
	return int(n.small)
}

func (c *compiler) names(loc, kw string, v any) []string {
	arr, ok := v.([]any)
	if !ok {
		c.fail(loc, "%q must be an array of strings", kw)
		return nil
	}
	out := make([]string, 0, len(arr))
	for _, e := range arr {
		s, ok := e.(string)
		if !ok {
			c.fail(loc, "%q must be an array of strings", kw)
			return nil
		}
		out = append(out, s)
	}
	return out
}

func (c *compiler) regexp(loc, kw string, v any) *pattern {
	src, ok := v.(string)
	if !ok {
		c.fail(loc, "%q must be a string", kw)
		return nil
	}
	re, err := newPattern(src)
	if err != nil {
		c.fail(loc, "%s %q is not a regular expression: %v", kw, src, err)
		return nil
	}
	return re
}

// resolve returns the node a local reference points at.
func (c *compiler) resolve(loc, ref string) *node {
	frag := ref
	if i := strings.IndexByte(ref, '#'); i >= 0 {
		base := ref[:i]
		if base != "" && !c.isRootID(base) {
			c.fail(loc, "reference %q is not local: only references within the document are supported", ref)
			return nil
		}
		frag = ref[i:]
	} else if !c.isRootID(ref) {
		c.fail(loc, "reference %q is not local: only references within the document are supported", ref)
		return nil
	} else {
		frag = "#"
	}
	if frag != "#" && !strings.HasPrefix(frag, "#/") {
		// "#name": a plain-name fragment names an $anchor.
		name := frag[1:]
		tloc, ok := c.anchor(name)
		if !ok {
			c.fail(loc, "reference %q: no $anchor %q in the document", ref, name)
			return nil
		}
		return c.compile(tloc, c.lookup(tloc))
	}
	toks, ok := schematree.ParseRef(frag)
	if !ok {
		c.fail(loc, "reference %q is not a JSON pointer", ref)
		return nil
	}
	var b strings.Builder
	for _, t := range toks {
		b.WriteByte('/')
		b.WriteString(schematree.Escape(t))
	}
	tloc := b.String()
	if n, ok := c.nodes[tloc]; ok {
		return n
	}
	target, found := schematree.Lookup(c.root, tloc)
	if !found {
		c.fail(loc, "reference %q points at nothing in the document", ref)
		return nil
	}
	return c.compile(tloc, target)
}

func (c *compiler) isRootID(base string) bool {
	m, _ := c.root.(map[string]any)
	id, _ := m["$id"].(string)
	if i := strings.IndexByte(id, '#'); i >= 0 {
		id = id[:i]
	}
	return id != "" && id == base
}

func (c *compiler) lookup(loc string) any {
	v, _ := schematree.Lookup(c.root, loc)
	return v
}

// anchor finds the schema declaring "$anchor": name.
func (c *compiler) anchor(name string) (string, bool) {
	found := ""
	ok := false
	schematree.Walk(c.root, func(ptr string, ch schematree.Child) bool {
		if m, isMap := ch.Schema.(map[string]any); isMap && m["$anchor"] == name && !ok {
			found, ok = ptr, true
		}
		return !ok
	})
	return found, ok
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func kindName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	if isNumberValue(v) {
		return "number"
	}
	return fmt.Sprintf("Go type %T", v)
}
