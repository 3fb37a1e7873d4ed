package review

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// Direction says which way a schema's values travel relative to the server.
// Narrowing what the server accepts (Request) or widening what it returns
// (Response) breaks callers.
type Direction int

const (
	// Request schemas describe values the server receives: path
	// parameters, query, request bodies, tool arguments, clientToServer
	// event arguments and the acks of serverToClient events.
	Request Direction = iota
	// Response schemas describe values the server sends: outputs,
	// serverToClient event arguments and the acks of clientToServer events.
	Response
)

// String returns "request" or "response", the prefix of schema rule ids.
func (d Direction) String() string {
	if d == Response {
		return "response"
	}
	return "request"
}

// effect is how a change moves the set of valid values.
type effect int

const (
	narrowed effect = iota // fewer values are valid
	widened                // more values are valid
	changed                // some values left, others arrived
)

func (e effect) String() string {
	switch e {
	case narrowed:
		return "narrowed"
	case widened:
		return "widened"
	}
	return "changed"
}

// severityOf is the one direction rule: narrowing a request or widening a
// response breaks callers; the opposite moves are compatible; a change that
// does both is breaking either way.
func severityOf(d Direction, e effect) Severity {
	switch {
	case e == changed:
		return Breaking
	case d == Request && e == narrowed, d == Response && e == widened:
		return Breaking
	}
	return Info
}

// schemaFinding is one schema-level change before it is placed on a surface.
type schemaFinding struct {
	rule     string
	severity Severity
	pointer  string // JSON pointer into the resolved schema
	message  string
}

// schemaDiff compares two JSON Schema documents in one direction. $refs are
// resolved against each document's own root, so the pointers it reports
// walk the resolved (inlined) schema: /properties/task/properties/title,
// never /$defs/Task/....
type schemaDiff struct {
	dir              Direction
	oldRoot, newRoot any
	active           map[string]bool // ref pairs on the current walk (cycle guard)
	out              []schemaFinding
}

// diffSchemas compares the canonical schema documents old and new (either
// may be nil: absent) travelling in direction dir.
func diffSchemas(dir Direction, old, new json.RawMessage) ([]schemaFinding, error) {
	var o, n any
	if old != nil {
		if err := decodeJSON(old, &o); err != nil {
			return nil, fmt.Errorf("old schema: %w", err)
		}
	}
	if new != nil {
		if err := decodeJSON(new, &n); err != nil {
			return nil, fmt.Errorf("new schema: %w", err)
		}
	}
	d := &schemaDiff{dir: dir, oldRoot: o, newRoot: n, active: map[string]bool{}}
	d.compare("", o, n)
	return d.out, nil
}

func decodeJSON(b []byte, v *any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

func (d *schemaDiff) add(rule string, sev Severity, ptr, format string, a ...any) {
	d.out = append(d.out, schemaFinding{rule: d.dir.String() + "-" + rule, severity: sev, pointer: ptr, message: fmt.Sprintf(format, a...)})
}

// addEffect reports a change of the set of valid values.
func (d *schemaDiff) addEffect(kind string, e effect, ptr, format string, a ...any) {
	sev := severityOf(d.dir, e)
	msg := fmt.Sprintf(format, a...)
	switch sev {
	case Breaking:
		if d.dir == Request {
			msg += ": requests that were valid may now be rejected"
		} else {
			msg += ": callers may now receive values they were not promised"
		}
	}
	d.out = append(d.out, schemaFinding{rule: d.dir.String() + "-" + kind + "-" + e.String(), severity: sev, pointer: ptr, message: msg})
}

// maxRefs bounds the $refs one resolve follows, through sibling merges
// too, so a cycle ({"$ref":"#","x":1} refers to itself) ends.
const maxRefs = 64

// resolve follows $ref chains in root and returns the schema as an object
// (boolean schemas become {} and {"not":{}}), plus the chain of refs taken.
// Sibling keywords of a $ref override the target's.
func resolve(root, s any) (map[string]any, string) {
	budget := maxRefs
	return resolveBudget(root, s, &budget)
}

// resolveBudget is resolve spending at most *budget ref steps, shared with
// the resolution of the targets of $refs that have siblings. A chain that
// exhausts it resolves to {}.
func resolveBudget(root, s any, budget *int) (map[string]any, string) {
	var refs []string
	for ; *budget > 0; *budget-- {
		switch x := s.(type) {
		case nil:
			return nil, strings.Join(refs, ">")
		case bool:
			if x {
				return map[string]any{}, strings.Join(refs, ">")
			}
			return map[string]any{"not": map[string]any{}}, strings.Join(refs, ">")
		case map[string]any:
			ref, ok := x["$ref"].(string)
			if !ok {
				return x, strings.Join(refs, ">")
			}
			target := lookupPointer(root, ref)
			if target == nil {
				// An unresolvable ref compares as itself.
				return x, strings.Join(refs, ">")
			}
			refs = append(refs, ref)
			if len(x) == 1 {
				s = target
				continue
			}
			*budget--
			t, _ := resolveBudget(root, target, budget)
			merged := map[string]any{}
			for k, v := range t {
				merged[k] = v
			}
			for k, v := range x {
				if k != "$ref" {
					merged[k] = v
				}
			}
			return merged, strings.Join(refs, ">")
		default:
			return nil, strings.Join(refs, ">")
		}
	}
	return map[string]any{}, strings.Join(refs, ">")
}

// lookupPointer resolves a local reference "#/a/b" in root.
func lookupPointer(root any, ref string) any {
	if !strings.HasPrefix(ref, "#") {
		return nil
	}
	p := strings.TrimPrefix(ref, "#")
	if p == "" {
		return root
	}
	cur := root
	for _, tok := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		// A $ref is a URI: its fragment is percent-encoded ("#/$defs/%C3%9C").
		if u, err := url.PathUnescape(tok); err == nil {
			tok = u
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			cur = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
		if cur == nil {
			return nil
		}
	}
	return cur
}

// escapePointer escapes one JSON pointer reference token.
func escapePointer(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

// handled lists the keywords compare understands; any other keyword that
// differs is reported by the fallback rule.
var handled = map[string]bool{
	"$ref": true, "$defs": true, "definitions": true, "$schema": true, "$id": true, "$comment": true,
	"title": true, "description": true, "examples": true, "default": true, "deprecated": true,
	"readOnly": true, "writeOnly": true,
	"type": true, "enum": true, "const": true,
	"minimum": true, "exclusiveMinimum": true, "maximum": true, "exclusiveMaximum": true, "multipleOf": true,
	"minLength": true, "maxLength": true, "minItems": true, "maxItems": true,
	"minProperties": true, "maxProperties": true,
	"pattern": true, "format": true, "uniqueItems": true,
	"properties": true, "required": true, "additionalProperties": true,
	"items": true, "prefixItems": true,
	"oneOf": true, "anyOf": true, "allOf": true,
}

// compare walks old and new (raw, unresolved schemas; nil means absent).
func (d *schemaDiff) compare(ptr string, oldS, newS any) {
	switch {
	case oldS == nil && newS == nil:
		return
	case oldS == nil:
		d.schemaAdded(ptr, newS)
		return
	case newS == nil:
		if d.dir == Request {
			d.add("schema-removed", Warning, ptr, "schema removed: values callers send are no longer validated or used")
		} else {
			d.add("schema-removed", Breaking, ptr, "schema removed: callers reading the value break")
		}
		return
	}
	o, oref := resolve(d.oldRoot, oldS)
	n, nref := resolve(d.newRoot, newS)
	if oref != "" || nref != "" {
		key := oref + "|" + nref
		if d.active[key] {
			return // cycle: this pair is already being compared further up
		}
		d.active[key] = true
		defer delete(d.active, key)
	}
	if o == nil || n == nil {
		return
	}

	// A lone schema replaced by a union of alternatives (or the reverse)
	// compares as a one-branch union, so the branch that stayed matches.
	for _, k := range []string{"anyOf", "oneOf"} {
		ou, oIs := o[k].([]any)
		nu, nIs := n[k].([]any)
		switch {
		case oIs && !nIs && pureUnion(o, k) && !hasUnion(n):
			d.branches(ptr+"/"+k, k, ou, []any{newS})
			return
		case nIs && !oIs && pureUnion(n, k) && !hasUnion(o):
			d.branches(ptr+"/"+k, k, []any{oldS}, nu)
			return
		}
	}

	d.annotations(ptr, o, n)
	d.types(ptr, o, n)
	d.values(ptr, o, n)
	// Type-specific keywords matter only when both sides admit the type:
	// a string that became an integer is one type change, not also a
	// dropped maxLength.
	ot, nt := typeSet(o), typeSet(n)
	both := func(t string) bool { return typeContains(ot, t) && typeContains(nt, t) }
	if both("number") || both("integer") {
		intOnly := isIntegerOnly(o) && isIntegerOnly(n)
		d.bound(ptr, o, n, "minimum", "exclusiveMinimum", true, intOnly)
		d.bound(ptr, o, n, "maximum", "exclusiveMaximum", false, intOnly)
		d.multipleOf(ptr, o, n)
	}
	for _, c := range []struct{ key, kind, typ string }{
		{"minLength", "min-length", "string"}, {"minItems", "min-items", "array"}, {"minProperties", "min-properties", "object"},
	} {
		if both(c.typ) {
			d.count(ptr, o, n, c.key, c.kind, true)
		}
	}
	for _, c := range []struct{ key, kind, typ string }{
		{"maxLength", "max-length", "string"}, {"maxItems", "max-items", "array"}, {"maxProperties", "max-properties", "object"},
	} {
		if both(c.typ) {
			d.count(ptr, o, n, c.key, c.kind, false)
		}
	}
	if both("string") {
		d.stringKeyword(ptr, o, n, "pattern")
		d.stringKeyword(ptr, o, n, "format")
	}
	if ob, nb := o["uniqueItems"] == true, n["uniqueItems"] == true; ob != nb {
		if nb {
			d.addEffect("unique-items", narrowed, ptr+"/uniqueItems", "items must now be unique")
		} else {
			d.addEffect("unique-items", widened, ptr+"/uniqueItems", "items no longer need to be unique")
		}
	}
	d.object(ptr, o, n)
	d.array(ptr, o, n)
	d.union(ptr, o, n, "oneOf")
	d.union(ptr, o, n, "anyOf")
	d.allOf(ptr, o, n)
	d.fallback(ptr, o, n)
}

// schemaAdded classifies a schema slot that appears (an operation gains
// #input, #query or #output). A new request schema breaks callers only when
// it requires something; a new response schema is information callers did
// not have before.
func (d *schemaDiff) schemaAdded(ptr string, newS any) {
	if d.dir == Response {
		d.add("schema-added", Info, ptr, "schema added")
		return
	}
	n, _ := resolve(d.newRoot, newS)
	if req := stringSet(n["required"]); len(req) > 0 {
		d.add("schema-added", Breaking, ptr, "schema added with required properties %s: requests without them are now rejected", strings.Join(req, ", "))
		return
	}
	d.add("schema-added", Info, ptr, "schema added; nothing in it is required")
}

func (d *schemaDiff) annotations(ptr string, o, n map[string]any) {
	for _, k := range []string{"title", "description"} {
		if !jsonEqual(o[k], n[k]) {
			d.add("description-changed", Info, ptr+"/"+k, "%s changed from %s to %s", k, short(o[k]), short(n[k]))
		}
	}
	if !jsonEqual(o["examples"], n["examples"]) {
		d.add("examples-changed", Info, ptr+"/examples", "examples changed")
	}
	if !jsonEqual(o["default"], n["default"]) {
		sev := Info
		if d.dir == Request {
			// The server fills the default in for callers that omit the
			// value, so they silently get a different behaviour.
			sev = Warning
		}
		d.add("default-changed", sev, ptr+"/default", "default changed from %s to %s", short(o["default"]), short(n["default"]))
	}
	if ob, nb := o["deprecated"] == true, n["deprecated"] == true; ob != nb {
		if nb {
			d.add("deprecated", Warning, ptr+"/deprecated", "value is now deprecated")
		} else {
			d.add("undeprecated", Info, ptr+"/deprecated", "value is no longer deprecated")
		}
	}
	for _, k := range []string{"readOnly", "writeOnly"} {
		if !jsonEqual(o[k], n[k]) {
			d.add("annotation-changed", Info, ptr+"/"+k, "%s changed from %s to %s", k, short(o[k]), short(n[k]))
		}
	}
}

// allTypes is every JSON Schema type; "number" includes "integer".
var allTypes = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

// typeSet returns the JSON types s admits.
func typeSet(s map[string]any) []string {
	if not, ok := s["not"].(map[string]any); ok && len(not) == 0 {
		return nil // false schema
	}
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, e := range t {
			if str, ok := e.(string); ok {
				out = append(out, str)
			}
		}
		slices.Sort(out)
		return out
	}
	if vals, ok := valueSet(s); ok {
		var out []string
		for _, v := range vals {
			t := jsonType(v)
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
		slices.Sort(out)
		return out
	}
	return allTypes
}

func jsonType(v any) string {
	switch x := v.(type) {
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
	case json.Number:
		if _, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return "integer"
		}
		return "number"
	}
	return "null"
}

func typeContains(set []string, t string) bool {
	return slices.Contains(set, t) || (t == "integer" && slices.Contains(set, "number"))
}

func typeSubset(a, b []string) bool {
	for _, t := range a {
		if !typeContains(b, t) {
			return false
		}
	}
	return true
}

func isIntegerOnly(s map[string]any) bool {
	ts := typeSet(s)
	return len(ts) == 1 && ts[0] == "integer"
}

func (d *schemaDiff) types(ptr string, o, n map[string]any) {
	ot, nt := typeSet(o), typeSet(n)
	sub, super := typeSubset(nt, ot), typeSubset(ot, nt)
	p := ptr + "/type"
	switch {
	case sub && super:
		return
	case sub:
		d.addEffect("type", narrowed, p, "type narrowed from %s to %s", typeString(ot), typeString(nt))
	case super:
		d.addEffect("type", widened, p, "type widened from %s to %s", typeString(ot), typeString(nt))
	default:
		d.addEffect("type", changed, p, "type changed from %s to %s", typeString(ot), typeString(nt))
	}
}

func typeString(ts []string) string {
	switch {
	case len(ts) == 0:
		return "nothing"
	case len(ts) == len(allTypes):
		return "any"
	case len(ts) == 1:
		return ts[0]
	}
	return strings.Join(ts, "|")
}

// valueSet returns the values a schema restricts itself to via const or
// enum, and whether it does.
func valueSet(s map[string]any) ([]any, bool) {
	c, hasConst := s["const"]
	e, hasEnum := s["enum"].([]any)
	switch {
	case hasConst && hasEnum:
		for _, v := range e {
			if jsonEqual(v, c) {
				return []any{c}, true
			}
		}
		return nil, true
	case hasConst:
		return []any{c}, true
	case hasEnum:
		return e, true
	}
	return nil, false
}

func (d *schemaDiff) values(ptr string, o, n map[string]any) {
	ov, oOK := valueSet(o)
	nv, nOK := valueSet(n)
	kind, key := "enum", "enum"
	_, oc := o["const"]
	_, nc := n["const"]
	if (oc || !oOK) && (nc || !nOK) && (oc || nc) {
		kind, key = "const", "const"
	}
	p := ptr + "/" + key
	switch {
	case !oOK && !nOK:
		return
	case !oOK:
		d.addEffect(kind, narrowed, p, "%s %s added", key, valuesString(nv))
		return
	case !nOK:
		d.addEffect(kind, widened, p, "%s %s removed", key, valuesString(ov))
		return
	}
	removed := valuesMinus(ov, nv)
	added := valuesMinus(nv, ov)
	switch {
	case len(removed) == 0 && len(added) == 0:
	case len(added) == 0:
		d.addEffect(kind, narrowed, p, "%s values removed: %s", key, valuesString(removed))
	case len(removed) == 0:
		d.addEffect(kind, widened, p, "%s values added: %s", key, valuesString(added))
	default:
		d.addEffect(kind, changed, p, "%s changed: removed %s, added %s", key, valuesString(removed), valuesString(added))
	}
}

func valuesMinus(a, b []any) []any {
	var out []any
	for _, v := range a {
		if !slices.ContainsFunc(b, func(w any) bool { return jsonEqual(v, w) }) {
			out = append(out, v)
		}
	}
	return out
}

func valuesString(vs []any) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = short(v)
	}
	return strings.Join(parts, ", ")
}

// boundOf returns the effective lower (or upper) bound of s as a value and
// whether it is exclusive. For integer-only schemas exclusive bounds are
// turned into inclusive ones, so >0 and >=1 compare equal.
func boundOf(s map[string]any, incl, excl string, lower, intOnly bool) (v float64, exclusive, ok bool) {
	if x, isNum := number(s[incl]); isNum {
		v, ok = x, true
	}
	if x, isNum := number(s[excl]); isNum {
		if !ok || (lower && x >= v) || (!lower && x <= v) {
			v, exclusive, ok = x, true, true
		}
	}
	if ok && intOnly {
		switch {
		case lower && exclusive:
			v, exclusive = math.Floor(v)+1, false
		case lower:
			v = math.Ceil(v)
		case exclusive:
			v, exclusive = math.Ceil(v)-1, false
		default:
			v = math.Floor(v)
		}
	}
	return v, exclusive, ok
}

func number(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

func (d *schemaDiff) bound(ptr string, o, n map[string]any, incl, excl string, lower, intOnly bool) {
	ov, oe, oOK := boundOf(o, incl, excl, lower, intOnly)
	nv, ne, nOK := boundOf(n, incl, excl, lower, intOnly)
	key := incl
	if _, ok := n[excl]; ok {
		key = excl
	} else if _, ok := n[incl]; !ok {
		if _, ok := o[excl]; ok {
			key = excl
		}
	}
	p := ptr + "/" + key
	name := "maximum"
	if lower {
		name = "minimum"
	}
	switch {
	case !oOK && !nOK:
		return
	case !oOK:
		d.addEffect(name, narrowed, p, "%s %s added", name, boundString(nv, ne, lower))
		return
	case !nOK:
		d.addEffect(name, widened, p, "%s %s removed", name, boundString(ov, oe, lower))
		return
	}
	if ov == nv && oe == ne {
		return
	}
	tighter := nv > ov || (nv == ov && ne && !oe)
	if !lower {
		tighter = nv < ov || (nv == ov && ne && !oe)
	}
	e := widened
	if tighter {
		e = narrowed
	}
	d.addEffect(name, e, p, "%s changed from %s to %s", name, boundString(ov, oe, lower), boundString(nv, ne, lower))
}

func boundString(v float64, exclusive, lower bool) string {
	op := ">="
	switch {
	case lower && exclusive:
		op = ">"
	case !lower && exclusive:
		op = "<"
	case !lower:
		op = "<="
	}
	return op + strconv.FormatFloat(v, 'g', -1, 64)
}

func (d *schemaDiff) multipleOf(ptr string, o, n map[string]any) {
	ov, oOK := number(o["multipleOf"])
	nv, nOK := number(n["multipleOf"])
	p := ptr + "/multipleOf"
	switch {
	case !oOK && !nOK:
	case !oOK:
		d.addEffect("multiple-of", narrowed, p, "multipleOf %g added", nv)
	case !nOK:
		d.addEffect("multiple-of", widened, p, "multipleOf %g removed", ov)
	case ov == nv:
	case isMultiple(nv, ov):
		d.addEffect("multiple-of", narrowed, p, "multipleOf changed from %g to %g", ov, nv)
	case isMultiple(ov, nv):
		d.addEffect("multiple-of", widened, p, "multipleOf changed from %g to %g", ov, nv)
	default:
		d.addEffect("multiple-of", changed, p, "multipleOf changed from %g to %g", ov, nv)
	}
}

func isMultiple(a, b float64) bool {
	if b == 0 {
		return false
	}
	q := a / b
	return math.Abs(q-math.Round(q)) < 1e-9
}

// count compares a non-negative integer bound (minLength, maxItems, ...).
// An absent lower bound is 0; an absent upper bound is unbounded.
func (d *schemaDiff) count(ptr string, o, n map[string]any, key, kind string, lower bool) {
	ov, oOK := number(o[key])
	nv, nOK := number(n[key])
	if lower {
		if !oOK {
			ov = 0
		}
		if !nOK {
			nv = 0
		}
		if ov == nv {
			return
		}
		e := widened
		if nv > ov {
			e = narrowed
		}
		d.addEffect(kind, e, ptr+"/"+key, "%s changed from %g to %g", key, ov, nv)
		return
	}
	p := ptr + "/" + key
	switch {
	case !oOK && !nOK:
	case !oOK:
		d.addEffect(kind, narrowed, p, "%s %g added", key, nv)
	case !nOK:
		d.addEffect(kind, widened, p, "%s %g removed", key, ov)
	case nv < ov:
		d.addEffect(kind, narrowed, p, "%s changed from %g to %g", key, ov, nv)
	case nv > ov:
		d.addEffect(kind, widened, p, "%s changed from %g to %g", key, ov, nv)
	}
}

func (d *schemaDiff) stringKeyword(ptr string, o, n map[string]any, key string) {
	ov, oOK := o[key].(string)
	nv, nOK := n[key].(string)
	p := ptr + "/" + key
	switch {
	case !oOK && !nOK, oOK && nOK && ov == nv:
	case !oOK:
		d.addEffect(key, narrowed, p, "%s %q added", key, nv)
	case !nOK:
		d.addEffect(key, widened, p, "%s %q removed", key, ov)
	default:
		d.addEffect(key, changed, p, "%s changed from %q to %q", key, ov, nv)
	}
}

// openness of an object schema's additionalProperties.
type openness int

const (
	open        openness = iota // absent or true
	closed                      // false
	schemaProps                 // a schema
)

func additional(s map[string]any) openness {
	switch v := s["additionalProperties"].(type) {
	case nil:
		return open
	case bool:
		if v {
			return open
		}
		return closed
	}
	return schemaProps
}

func stringSet(v any) []string {
	arr, _ := v.([]any)
	var out []string
	for _, e := range arr {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func (d *schemaDiff) object(ptr string, o, n map[string]any) {
	op, _ := o["properties"].(map[string]any)
	np, _ := n["properties"].(map[string]any)
	oreq, nreq := stringSet(o["required"]), stringSet(n["required"])
	names := map[string]bool{}
	for k := range op {
		names[k] = true
	}
	for k := range np {
		names[k] = true
	}
	for _, k := range oreq {
		names[k] = true
	}
	for _, k := range nreq {
		names[k] = true
	}
	sorted := make([]string, 0, len(names))
	for k := range names {
		sorted = append(sorted, k)
	}
	graph.SortUTF16(sorted)
	nClosed := additional(n) == closed
	for _, k := range sorted {
		p := ptr + "/properties/" + escapePointer(k)
		os, inOld := op[k]
		ns, inNew := np[k]
		wasReq, isReq := slices.Contains(oreq, k), slices.Contains(nreq, k)
		inOld = inOld || wasReq
		inNew = inNew || isReq
		switch {
		case !inOld:
			if d.dir == Request {
				if isReq {
					d.add("required-property-added", Breaking, p, "required property %q added: requests without it are now rejected", k)
				} else {
					d.add("optional-property-added", Info, p, "optional property %q added", k)
				}
			} else {
				d.add("property-added", Info, p, "property %q added", k)
			}
			continue
		case !inNew:
			if d.dir == Request {
				if nClosed {
					d.add("property-removed", Breaking, p, "property %q removed and additional properties are not allowed: requests that send it are now rejected", k)
				} else {
					d.add("property-removed", Warning, p, "property %q removed: requests that send it are accepted but the value is ignored", k)
				}
			} else if wasReq {
				d.add("required-property-removed", Breaking, p, "required property %q removed: callers reading it break", k)
			} else {
				d.add("optional-property-removed", Warning, p, "optional property %q removed: callers reading it no longer get it", k)
			}
			continue
		}
		switch {
		case wasReq && !isReq:
			if d.dir == Request {
				d.add("property-became-optional", Info, p, "property %q is no longer required", k)
			} else {
				d.add("property-became-optional", Breaking, p, "property %q is no longer always returned: callers reading it may break", k)
			}
		case !wasReq && isReq:
			if d.dir == Request {
				d.add("property-became-required", Breaking, p, "property %q is now required: requests without it are now rejected", k)
			} else {
				d.add("property-became-required", Info, p, "property %q is now always returned", k)
			}
		}
		if os == nil {
			os = true
		}
		if ns == nil {
			ns = true
		}
		d.compare(p, os, ns)
	}

	oa, na := additional(o), additional(n)
	p := ptr + "/additionalProperties"
	switch {
	case oa == na && oa != schemaProps:
	case oa == schemaProps && na == schemaProps:
		d.compare(p, o["additionalProperties"], n["additionalProperties"])
	case na == closed || (oa == open && na == schemaProps):
		d.addEffect("additional-properties", narrowed, p, "additional properties %s", map[bool]string{true: "are no longer allowed", false: "are now constrained"}[na == closed])
	default:
		if d.dir == Response {
			// Most JSON decoders ignore unknown fields; strict or
			// generated clients do not. Adding a response property is
			// info, so opening the whole object is a warning.
			d.add("additional-properties-widened", Warning, p, "additional properties are now allowed in responses: strict clients may reject unknown fields")
		} else {
			d.addEffect("additional-properties", widened, p, "additional properties are now allowed")
		}
	}
}

func (d *schemaDiff) array(ptr string, o, n map[string]any) {
	opi, _ := o["prefixItems"].([]any)
	npi, _ := n["prefixItems"].([]any)
	rest := func(s map[string]any) any {
		if v, ok := s["items"]; ok {
			return v
		}
		return true
	}
	for i := range max(len(opi), len(npi)) {
		var os, ns any
		if i < len(opi) {
			os = opi[i]
		} else {
			os = rest(o)
		}
		if i < len(npi) {
			ns = npi[i]
		} else {
			ns = rest(n)
		}
		d.compare(ptr+"/prefixItems/"+strconv.Itoa(i), os, ns)
	}
	_, oi := o["items"]
	_, ni := n["items"]
	if oi || ni {
		d.compare(ptr+"/items", rest(o), rest(n))
	}
}

// discriminator returns a signature of a union branch: its properties fixed
// by const (e.g. kind:"a"), so branches are matched by tag, not position.
func discriminator(root any, s any) string {
	m, _ := resolve(root, s)
	props, _ := m["properties"].(map[string]any)
	var parts []string
	for k, v := range props {
		pm, _ := resolve(root, v)
		if vals, ok := valueSet(pm); ok && len(vals) == 1 {
			parts = append(parts, k+"="+short(vals[0]))
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

func (d *schemaDiff) union(ptr string, o, n map[string]any, key string) {
	ob, oOK := o[key].([]any)
	nb, nOK := n[key].([]any)
	if !oOK && !nOK {
		return
	}
	p := ptr + "/" + key
	if !oOK || !nOK {
		// A union appeared or disappeared: compare the lone schema with
		// each branch would guess; report it for a human instead.
		d.add(kebab(key)+"-changed", Warning, p, "%s %s: review the change by hand", key, map[bool]string{true: "added", false: "removed"}[nOK])
		return
	}
	d.branches(p, key, ob, nb)
}

// annotationKeys never change which values a schema accepts.
var annotationKeys = map[string]bool{"title": true, "description": true, "examples": true, "$comment": true,
	"$defs": true, "definitions": true, "$schema": true, "$id": true, "default": true}

// pureUnion reports whether s is only a union under key (plus annotations).
func pureUnion(s map[string]any, key string) bool {
	for k := range s {
		if k != key && !annotationKeys[k] {
			return false
		}
	}
	return true
}

func hasUnion(s map[string]any) bool {
	_, a := s["anyOf"]
	_, o := s["oneOf"]
	return a || o
}

// branches matches union branches old → new and compares the pairs;
// unmatched old branches narrow, unmatched new branches widen.
func (d *schemaDiff) branches(p, key string, ob, nb []any) {
	oldUsed := make([]bool, len(ob))
	newMatch := make([]int, len(nb))
	for i := range newMatch {
		newMatch[i] = -1
	}
	// 1. identical branches.
	for j, nbr := range nb {
		for i, obr := range ob {
			if !oldUsed[i] && d.sameSchema(obr, nbr) {
				oldUsed[i], newMatch[j] = true, i
				break
			}
		}
	}
	// 2. branches with the same discriminator.
	for j, nbr := range nb {
		if newMatch[j] >= 0 {
			continue
		}
		sig := discriminator(d.newRoot, nbr)
		if sig == "" {
			continue
		}
		for i, obr := range ob {
			if !oldUsed[i] && discriminator(d.oldRoot, obr) == sig {
				oldUsed[i], newMatch[j] = true, i
				break
			}
		}
	}
	// 3. leftovers paired by position when they are as many on each side.
	var lo, ln []int
	for i := range ob {
		if !oldUsed[i] {
			lo = append(lo, i)
		}
	}
	for j := range nb {
		if newMatch[j] < 0 {
			ln = append(ln, j)
		}
	}
	if len(lo) == len(ln) {
		for k := range lo {
			oldUsed[lo[k]], newMatch[ln[k]] = true, lo[k]
		}
	}
	for j, i := range newMatch {
		bp := p + "/" + strconv.Itoa(j)
		if i < 0 {
			d.addEffect(kebab(key), widened, bp, "%s branch %d added", key, j)
			continue
		}
		d.compare(bp, ob[i], nb[j])
	}
	for i, used := range oldUsed {
		if !used {
			d.addEffect(kebab(key), narrowed, p+"/"+strconv.Itoa(i), "%s branch %d removed", key, i)
		}
	}
}

func (d *schemaDiff) allOf(ptr string, o, n map[string]any) {
	ob, _ := o["allOf"].([]any)
	nb, _ := n["allOf"].([]any)
	for i := range max(len(ob), len(nb)) {
		p := ptr + "/allOf/" + strconv.Itoa(i)
		switch {
		case i >= len(ob):
			d.addEffect("all-of", narrowed, p, "allOf member %d added", i)
		case i >= len(nb):
			d.addEffect("all-of", widened, p, "allOf member %d removed", i)
		default:
			d.compare(p, ob[i], nb[i])
		}
	}
}

// fallback reports every keyword compare does not model.
func (d *schemaDiff) fallback(ptr string, o, n map[string]any) {
	keys := map[string]bool{}
	for k := range o {
		keys[k] = true
	}
	for k := range n {
		keys[k] = true
	}
	var sorted []string
	for k := range keys {
		if !handled[k] {
			sorted = append(sorted, k)
		}
	}
	graph.SortUTF16(sorted)
	for _, k := range sorted {
		if !d.sameSchema(o[k], n[k]) {
			d.add("schema-keyword-changed", Warning, ptr+"/"+escapePointer(k), "keyword %s changed from %s to %s: its effect is not classified, review it by hand", k, short(o[k]), short(n[k]))
		}
	}
}

// sameSchema reports whether two subschemas are equal once their $refs are
// expanded (so a schema moved into $defs compares equal to itself inline).
func (d *schemaDiff) sameSchema(a, b any) bool {
	ea, erra := expand(d.oldRoot, a, 0)
	eb, errb := expand(d.newRoot, b, 0)
	if erra != nil || errb != nil {
		return jsonEqual(a, b)
	}
	return jsonEqual(ea, eb)
}

// expand inlines local $refs up to a fixed depth (recursive schemas stop
// expanding and compare by reference text).
func expand(root, v any, depth int) (any, error) {
	if depth > 256 {
		return nil, fmt.Errorf("too deep")
	}
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := x["$ref"].(string); ok {
			if t := lookupPointer(root, ref); t != nil {
				merged := map[string]any{}
				if tm, ok := t.(map[string]any); ok {
					for k, v := range tm {
						merged[k] = v
					}
				} else {
					return expand(root, t, depth+1)
				}
				for k, v := range x {
					if k != "$ref" {
						merged[k] = v
					}
				}
				return expand(root, merged, depth+1)
			}
		}
		out := make(map[string]any, len(x))
		for k, v := range x {
			if k == "$defs" || k == "definitions" {
				continue
			}
			e, err := expand(root, v, depth+1)
			if err != nil {
				return nil, err
			}
			out[k] = e
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, v := range x {
			e, err := expand(root, v, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		return out, nil
	}
	return v, nil
}

func jsonEqual(a, b any) bool {
	ca, err1 := graph.Canonical(a)
	cb, err2 := graph.Canonical(b)
	if err1 != nil || err2 != nil {
		return false
	}
	return bytes.Equal(ca, cb)
}

// short renders a JSON value for a message, truncated.
func short(v any) string {
	if v == nil {
		return "(none)"
	}
	b, err := graph.Canonical(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

func kebab(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('-')
			b.WriteRune(r - 'A' + 'a')
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
