package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Issue is one reason a value was refused: the JSON Pointer of the value
// in the instance, the keyword that failed and a message.
type Issue struct {
	Path    string `json:"path"`
	Keyword string `json:"keyword"`
	Message string `json:"message"`
}

// maxRefHops bounds how many references the validator follows without
// descending into the instance: a schema that reaches itself that way
// ({"$ref": "#"} at the root) would never finish, and is refused at the
// value like any other failure.
const maxRefHops = 128

// vctx is one validation run. In verdict mode (collect false) the first
// failure ends it; in collect mode every failure becomes an Issue with
// the path the run is at.
type vctx struct {
	collect bool
	s       *Schema
	issues  []Issue
	path    []pathTok
	hops    int
}

type pathTok struct {
	key   string
	index int // -1: key
}

// Valid reports whether v matches the schema, without building any
// message. It does not allocate for instances the schema accepts.
func (s *Schema) Valid(v any) bool {
	c := vctx{s: s}
	return s.root.check(v, &c)
}

// Validate returns why v does not match the schema (nil when it does), in
// a stable order: by instance path, then keyword, then message.
func (s *Schema) Validate(v any) []Issue {
	c := vctx{s: s}
	if s.root.check(v, &c) {
		return nil
	}
	c = vctx{s: s, collect: true}
	s.root.check(v, &c)
	if len(c.issues) == 0 {
		// Cannot happen (every failing path reports); never answer an
		// invalid value with no reason.
		c.issues = append(c.issues, Issue{Message: "value does not match its schema"})
	}
	return sortIssues(c.issues)
}

func sortIssues(is []Issue) []Issue {
	slices.SortStableFunc(is, func(a, b Issue) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		if c := strings.Compare(a.Keyword, b.Keyword); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
	return slices.Compact(is)
}

func (c *vctx) pointer() string {
	if len(c.path) == 0 {
		return ""
	}
	var b strings.Builder
	for _, t := range c.path {
		b.WriteByte('/')
		if t.index >= 0 {
			b.WriteString(strconv.Itoa(t.index))
			continue
		}
		k := t.key
		if strings.ContainsAny(k, "~/") {
			k = strings.ReplaceAll(k, "~", "~0")
			k = strings.ReplaceAll(k, "/", "~1")
		}
		b.WriteString(k)
	}
	return b.String()
}

func (c *vctx) add(kw, format string, args ...any) {
	c.issues = append(c.issues, Issue{Path: c.pointer(), Keyword: kw, Message: fmt.Sprintf(format, args...)})
}

// verdict runs n on v in verdict mode, keeping the reference-hop count of
// the current run (the value is the same one).
func (c *vctx) verdict(n *node, v any) bool {
	if !c.collect {
		return n.check(v, c)
	}
	sub := vctx{s: c.s, hops: c.hops}
	return n.check(v, &sub)
}

// child validates v, a member or element of the current value.
func (c *vctx) child(n *node, v any, key string, index int) bool {
	if n.always {
		return true
	}
	hops := c.hops
	c.hops = 0
	if c.collect {
		c.path = append(c.path, pathTok{key: key, index: index})
	}
	ok := n.check(v, c)
	if c.collect {
		c.path = c.path[:len(c.path)-1]
	}
	c.hops = hops
	return ok
}

// check validates v against n: every keyword of n, in verdict mode until
// the first failure, in collect mode all of them.
func (n *node) check(v any, c *vctx) bool {
	if n.always {
		return true
	}
	if n.never {
		if c.collect {
			c.add("", "false schema")
		}
		return false
	}
	ok := true
	fail := func() bool { // reports whether to stop
		ok = false
		return !c.collect
	}

	// type, const, enum and format end the node's checks when they fail:
	// what follows would only restate them.
	// A number is parsed once, for the type check and the numeric
	// keywords.
	var nv num
	parsed, isNum := false, false
	number := func() (num, bool) {
		if !parsed {
			nv, isNum = numOf(v)
			parsed = true
		}
		return nv, isNum
	}
	if n.types != 0 && !n.typeOK(v, c.s, number) {
		if c.collect {
			if c.s.opts.IntegerLiterals && n.types&tInteger != 0 && n.types&tNumber == 0 && isNumberValue(v) {
				c.add("type", "must be an integer, written without a fraction or exponent (got %s)", numText(v))
			} else {
				c.add("type", "got %s, want %s", typeOf(v), n.typeWant)
			}
		}
		return false
	}
	if n.hasConst && !equal(v, n.constV, false) {
		if c.collect {
			c.add("const", "%s", constMessage(n.constV))
		}
		return false
	}
	if n.enum != nil && !n.inEnum(v) {
		if c.collect {
			c.add("enum", "%s", enumMessage(n.enum))
		}
		return false
	}
	if n.format != nil {
		if err := n.format(v); err != nil {
			if c.collect {
				c.add("format", "%s is not valid %s: %v", display(v), n.fmtName, err)
			}
			return false
		}
	}

	if n.ref != nil {
		c.hops++
		if c.hops > maxRefHops {
			if c.collect {
				c.add("$ref", "the schema refers to itself without descending into the value")
			}
			c.hops--
			return false
		}
		r := n.ref.check(v, c)
		c.hops--
		if !r && fail() {
			return false
		}
	}

	switch x := v.(type) {
	case string:
		if (n.minLen >= 0 || n.maxLen >= 0 || n.pattern != nil) && !n.checkString(x, c) && fail() {
			return false
		}
	case map[string]any:
		if n.hasObjKw && !n.checkObject(x, c) && fail() {
			return false
		}
	case []any:
		if n.hasArrKw && !n.checkArray(x, c) && fail() {
			return false
		}
	case bool, nil:
	default:
		if !n.hasNumKw {
			if !isNumberValue(v) || !validFloat(v) {
				if c.collect {
					c.add("type", "%s is not a JSON value", typeOf(v))
				}
				return false
			}
			break
		}
		xn, isNum := number()
		if !isNum {
			if c.collect {
				c.add("type", "%s is not a JSON value", typeOf(v))
			}
			return false
		}
		if !n.checkNumber(xn, v, c) && fail() {
			return false
		}
	}

	for _, a := range n.allOf {
		if !a.check(v, c) && fail() {
			return false
		}
	}
	if n.anyOf != nil {
		matched := false
		for _, a := range n.anyOf {
			if c.verdict(a, v) {
				matched = true
				break
			}
		}
		if !matched {
			if c.collect {
				if b := chosenBranch(n.anyOf, v); b != nil {
					// The instance names its alternative (a
					// discriminator's value): say what is wrong in
					// it, which a client can fix.
					b.check(v, c)
				} else {
					c.add("anyOf", "matches none of the %d alternatives", len(n.anyOf))
				}
			}
			if fail() {
				return false
			}
		}
	}
	if n.oneOf != nil {
		first, second := -1, -1
		for i, a := range n.oneOf {
			if c.verdict(a, v) {
				if first < 0 {
					first = i
				} else {
					second = i
					break
				}
			}
		}
		if first < 0 || second >= 0 {
			if c.collect {
				if first < 0 {
					c.add("oneOf", "'oneOf' failed, none matched")
				} else {
					c.add("oneOf", "'oneOf' failed, subschemas %d, %d matched", first, second)
				}
			}
			if fail() {
				return false
			}
		}
	}
	if n.not != nil && c.verdict(n.not, v) {
		if c.collect {
			c.add("not", "'not' failed")
		}
		if fail() {
			return false
		}
	}
	if n.ifN != nil {
		var branch *node
		if c.verdict(n.ifN, v) {
			branch = n.thenN
		} else {
			branch = n.elseN
		}
		if branch != nil && !branch.check(v, c) && fail() {
			return false
		}
	}
	return ok
}

// typeOK reports whether v is of one of n's types.
func (n *node) typeOK(v any, s *Schema, number func() (num, bool)) bool {
	switch v.(type) {
	case string:
		return n.types&tString != 0
	case map[string]any:
		return n.types&tObject != 0
	case []any:
		return n.types&tArray != 0
	case bool:
		return n.types&tBoolean != 0
	case nil:
		return n.types&tNull != 0
	}
	if n.types&tNumber != 0 {
		_, ok := number()
		return ok
	}
	if n.types&tInteger != 0 {
		x, ok := number()
		if !ok {
			return false
		}
		if s.opts.IntegerLiterals {
			return x.literalInt
		}
		return x.isInteger()
	}
	return false
}

func typeOf(v any) string {
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
	if _, ok := numOf(v); ok {
		return "number"
	}
	return fmt.Sprintf("Go type %T", v)
}

func (n *node) inEnum(v any) bool {
	if n.enumStr != nil {
		s, ok := v.(string)
		if !ok {
			return false
		}
		_, ok = n.enumStr[s]
		return ok
	}
	for _, e := range n.enum {
		if equal(v, e, false) {
			return true
		}
	}
	return false
}

func (n *node) checkNumber(x num, v any, c *vctx) bool {
	ok := true
	if b := n.minimum; b != nil && cmpNum(x, b.n) < 0 {
		ok = false
		if !c.collect {
			return false
		}
		c.add("minimum", "minimum: got %s, want %s", numText(v), b.text)
	}
	if b := n.maximum; b != nil && cmpNum(x, b.n) > 0 {
		ok = false
		if !c.collect {
			return false
		}
		c.add("maximum", "maximum: got %s, want %s", numText(v), b.text)
	}
	if b := n.exMinimum; b != nil && cmpNum(x, b.n) <= 0 {
		ok = false
		if !c.collect {
			return false
		}
		c.add("exclusiveMinimum", "exclusiveMinimum: got %s, want %s", numText(v), b.text)
	}
	if b := n.exMaximum; b != nil && cmpNum(x, b.n) >= 0 {
		ok = false
		if !c.collect {
			return false
		}
		c.add("exclusiveMaximum", "exclusiveMaximum: got %s, want %s", numText(v), b.text)
	}
	if b := n.multOf; b != nil && !multipleOf(x, b.n) {
		ok = false
		if !c.collect {
			return false
		}
		c.add("multipleOf", "multipleOf: got %s, want %s", numText(v), b.text)
	}
	return ok
}

func (n *node) checkString(s string, c *vctx) bool {
	ok := true
	if n.minLen >= 0 || n.maxLen >= 0 {
		// Lengths are in code points; a byte count answers without
		// counting whenever it can (a code point is 1 to 4 bytes).
		count := -1
		runes := func() int {
			if count < 0 {
				count = utf8.RuneCountInString(s)
			}
			return count
		}
		if n.minLen > 0 && (len(s) < n.minLen || len(s) < 4*n.minLen && runes() < n.minLen) {
			ok = false
			if !c.collect {
				return false
			}
			c.add("minLength", "minLength: got %d, want %d", runes(), n.minLen)
		}
		if n.maxLen >= 0 && len(s) > n.maxLen && runes() > n.maxLen {
			ok = false
			if !c.collect {
				return false
			}
			c.add("maxLength", "maxLength: got %d, want %d", runes(), n.maxLen)
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		ok = false
		if !c.collect {
			return false
		}
		c.add("pattern", "%s does not match pattern %s", quote(s), quote(n.pattern.String()))
	}
	return ok
}

func (n *node) lookupProp(name string) (int, bool) {
	if n.propIdx != nil {
		i, ok := n.propIdx[name]
		return i, ok
	}
	for i := range n.props {
		if n.props[i].name == name {
			return i, true
		}
	}
	return -1, false
}

func (n *node) checkObject(m map[string]any, c *vctx) bool {
	ok := true
	if n.minProps >= 0 && len(m) < n.minProps {
		ok = false
		if !c.collect {
			return false
		}
		c.add("minProperties", "minProperties: got %d, want %d", len(m), n.minProps)
	}
	if n.maxProps >= 0 && len(m) > n.maxProps {
		ok = false
		if !c.collect {
			return false
		}
		c.add("maxProperties", "maxProperties: got %d, want %d", len(m), n.maxProps)
	}

	// Declared properties: one lookup each answers presence (required)
	// and the member to validate.
	present := 0
	var missing []string
	for i := range n.props {
		p := &n.props[i]
		mv, has := m[p.name]
		if !has {
			if p.required {
				ok = false
				if !c.collect {
					return false
				}
				missing = append(missing, p.name)
			}
			continue
		}
		present++
		if !c.child(p.node, mv, p.name, -1) {
			ok = false
			if !c.collect {
				return false
			}
		}
	}
	for _, r := range n.required {
		if _, has := m[r]; !has {
			ok = false
			if !c.collect {
				return false
			}
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		if len(missing) == 1 {
			c.add("required", "missing property %s", quote(missing[0]))
		} else {
			slices.Sort(missing)
			c.add("required", "missing properties %s", joinQuoted(missing))
		}
	}

	// Members not declared: only walked when some keyword governs them.
	if len(n.patProps) > 0 || n.addl != nil && present < len(m) {
		var extra []string
		member := func(k string, mv any) bool { // false: stop
			_, declared := n.lookupProp(k)
			matched := declared
			for _, pp := range n.patProps {
				if pp.re.MatchString(k) {
					matched = true
					if !c.child(pp.node, mv, k, -1) {
						ok = false
						if !c.collect {
							return false
						}
					}
				}
			}
			if matched || n.addl == nil {
				return true
			}
			if n.addl.never {
				ok = false
				extra = append(extra, k)
				return c.collect
			}
			if !c.child(n.addl, mv, k, -1) {
				ok = false
				return c.collect
			}
			return true
		}
		if c.collect {
			for _, k := range sortedMapKeys(m) {
				member(k, m[k])
			}
		} else {
			for k, mv := range m {
				if !member(k, mv) {
					return false
				}
			}
		}
		if len(extra) > 0 {
			c.add("additionalProperties", "additional properties %s not allowed", joinQuoted(extra))
		}
	}

	if n.propNames != nil {
		for _, k := range sortedMapKeys(m) {
			if !c.verdict(n.propNames, k) {
				ok = false
				if !c.collect {
					return false
				}
				c.add("propertyNames", "invalid propertyName %s", quote(k))
			}
		}
	}
	for _, d := range n.depReq {
		if _, has := m[d.name]; !has {
			continue
		}
		var miss []string
		for _, r := range d.reqs {
			if _, has := m[r]; !has {
				miss = append(miss, r)
			}
		}
		if len(miss) > 0 {
			ok = false
			if !c.collect {
				return false
			}
			c.add("dependentRequired", "properties %s required, if %s exists", joinQuoted(miss), quote(d.name))
		}
	}
	for _, d := range n.depSch {
		if _, has := m[d.name]; !has {
			continue
		}
		if !d.node.check(m, c) {
			ok = false
			if !c.collect {
				return false
			}
		}
	}
	return ok
}

// sortedMapKeys returns the keys of m in order, so issues and their
// messages come out the same on every run.
func sortedMapKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func (n *node) checkArray(a []any, c *vctx) bool {
	ok := true
	if n.minItems >= 0 && len(a) < n.minItems {
		ok = false
		if !c.collect {
			return false
		}
		c.add("minItems", "minItems: got %d, want %d", len(a), n.minItems)
	}
	if n.maxItems >= 0 && len(a) > n.maxItems {
		ok = false
		if !c.collect {
			return false
		}
		c.add("maxItems", "maxItems: got %d, want %d", len(a), n.maxItems)
	}
	if n.unique {
		if i, j, dup := duplicate(a, c.s.opts.UniqueKinds); dup {
			ok = false
			if !c.collect {
				return false
			}
			c.add("uniqueItems", "items at %d and %d are equal; items must be unique", i, j)
		}
	}
	for i, e := range a {
		var sch *node
		if i < len(n.prefix) {
			sch = n.prefix[i]
		} else if n.items != nil {
			sch = n.items
		} else {
			if len(n.prefix) == 0 {
				break
			}
			continue
		}
		if !c.child(sch, e, "", i) {
			ok = false
			if !c.collect {
				return false
			}
		}
	}
	if n.contains != nil {
		var matched []int
		count := 0
		for i, e := range a {
			hops := c.hops
			c.hops = 0
			if c.verdict(n.contains, e) {
				count++
				if c.collect {
					matched = append(matched, i)
				}
			}
			c.hops = hops
		}
		lo := n.minCont
		if lo < 0 {
			lo = 1
		}
		if count < lo {
			ok = false
			if !c.collect {
				return false
			}
			switch {
			case n.minCont < 0:
				c.add("contains", "no items match contains schema")
			case count == 0:
				c.add("minContains", "min %d items required to match contains schema, but none matched", lo)
			default:
				c.add("minContains", "min %d items required to match contains schema, but matched %d items at %s", lo, count, joinInts(matched))
			}
		}
		if n.maxCont >= 0 && count > n.maxCont {
			ok = false
			if !c.collect {
				return false
			}
			c.add("maxContains", "max %d items required to match contains schema, but matched %d items at %s", n.maxCont, count, joinInts(matched))
		}
	}
	return ok
}

func joinInts(is []int) string {
	var b strings.Builder
	for i, v := range is {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Itoa(v))
	}
	return b.String()
}

// quote single-quotes s for a message.
func quote(s string) string {
	q := strconv.Quote(s)
	q = strings.ReplaceAll(q[1:len(q)-1], `\"`, `"`)
	return "'" + strings.ReplaceAll(q, `'`, `\'`) + "'"
}

func joinQuoted(ss []string) string {
	var b strings.Builder
	for i, s := range ss {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quote(s))
	}
	return b.String()
}

// display renders a scalar for a message.
func display(v any) string {
	switch x := v.(type) {
	case string:
		return quote(x)
	case []any, map[string]any:
		return "value"
	case nil:
		return "null"
	case json.Number:
		return string(x)
	}
	if isNumberValue(v) {
		return numText(v)
	}
	return fmt.Sprint(v)
}

func constMessage(want any) string {
	switch want.(type) {
	case []any, map[string]any:
		return "'const' failed"
	}
	return "value must be " + display(want)
}

func enumMessage(want []any) string {
	for _, w := range want {
		switch w.(type) {
		case []any, map[string]any:
			return "'enum' failed"
		}
	}
	if len(want) == 1 {
		return "value must be " + display(want[0])
	}
	parts := make([]string, len(want))
	for i, w := range want {
		parts[i] = display(w)
	}
	return "value must be one of " + strings.Join(parts, ", ")
}

// chosenBranch returns the one branch of a union whose constant-valued
// properties (discriminators: kind: "email") an object instance matches,
// when it names exactly one; nil otherwise (no discriminator, none or
// several branches named, not an object).
func chosenBranch(branches []*node, v any) *node {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	var chosen *node
	for _, b := range branches {
		o := b
		for i := 0; i < 8 && o.ref != nil && len(o.props) == 0; i++ {
			o = o.ref
		}
		discriminated, matches := false, true
		for _, p := range o.props {
			if !p.node.hasConst {
				continue
			}
			want, isStr := p.node.constV.(string)
			if !isStr {
				continue
			}
			discriminated = true
			if got, ok := obj[p.name].(string); !ok || got != want {
				matches = false
				break
			}
		}
		if !discriminated || !matches {
			continue
		}
		if chosen != nil {
			return nil
		}
		chosen = b
	}
	return chosen
}
