package project

import (
	"encoding/json"
	"fmt"
	"slices"

	"stitchkit.dev/stitchkit/internal/schematree"
	"stitchkit.dev/stitchkit/pkg/graph"
)

// How an operation's parts travel. Over HTTP, #params are the path
// wildcards, #query the query string and #input the JSON body; over the
// tool transports all three are one flat argument object ([Tool.SplitArgs]
// and [ArgSplitter] take it apart). Path and query values arrive as
// strings, so each is read as the JSON type its schema declares: that
// reading is [WireObject.Coerce], used by the HTTP mount, and the list
// facts it relies on ([WireField.List]) are what the OpenAPI export
// documents as repeated (style form, explode) query parameters.

// WireField is one top-level field of a #params or #query object schema.
type WireField struct {
	Name     string
	Required bool
	// List reports that the field is an array: on the wire each element
	// is one occurrence of the key (?tag=a&tag=b).
	List bool
	// Types are the JSON types a wire string may be read as (for a list,
	// the types of its elements), in the order [WireField.Coerce] tries
	// them: "null", "boolean", "integer", "number", then "string". Empty
	// when the schema does not say (the string is kept).
	Types []string
	// Schema is the field's schema as declared (references unresolved).
	Schema any
}

// WireObject describes an object schema whose fields travel as strings.
type WireObject struct {
	// Fields are sorted by name (code-unit order).
	Fields []WireField
	byName map[string]int
}

// NewWireObject reads the fields of a canonical #params or #query schema.
// A root $ref is followed into the schema's $defs. It fails when the
// schema is not JSON or not an object schema.
func NewWireObject(schema json.RawMessage) (*WireObject, error) {
	doc, err := decodeJSON(schema)
	if err != nil {
		return nil, fmt.Errorf("schema is not JSON: %w", err)
	}
	root, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not an object schema")
	}
	obj, _ := inlineRootRef(root, root)
	props, hasProps := obj["properties"].(map[string]any)
	if !hasProps && !hasType(obj["type"], "object") {
		return nil, fmt.Errorf("not an object schema")
	}
	var required []string
	if r, ok := obj["required"].([]any); ok {
		for _, x := range r {
			if s, ok := x.(string); ok {
				required = append(required, s)
			}
		}
	}
	w := &WireObject{byName: map[string]int{}}
	for _, name := range sortedKeys(props) {
		ps := props[name]
		f := WireField{Name: name, Required: slices.Contains(required, name), Schema: ps}
		types := jsonTypes(root, ps, 0)
		if slices.Contains(types, "array") {
			f.List = true
			types = itemTypes(root, ps)
		}
		f.Types = coercionOrder(types)
		w.byName[name] = len(w.Fields)
		w.Fields = append(w.Fields, f)
	}
	return w, nil
}

// Field returns the field called name, or nil.
func (w *WireObject) Field(name string) *WireField {
	if i, ok := w.byName[name]; ok {
		return &w.Fields[i]
	}
	return nil
}

// Coerce reads wire values (a path's wildcards, a parsed query string) as
// the decoded JSON object the schema validates: each value is read by its
// field's [WireField.Coerce]; a key the schema does not declare keeps its
// string (or its list of strings when repeated), so validation refuses it
// by name.
func (w *WireObject) Coerce(values map[string][]string) map[string]any {
	out := make(map[string]any, len(values))
	for k, vs := range values {
		if f := w.Field(k); f != nil {
			out[k] = f.Coerce(vs)
			continue
		}
		out[k] = (&WireField{}).Coerce(vs)
	}
	return out
}

// Coerce reads the wire strings of one field. A list field gives a list
// (one element per occurrence); a scalar field given once gives the
// scalar, given several times a list (which its schema then refuses). Each
// string becomes the first of the field's Types it is valid for: "null"
// for the text null, "boolean" for true or false, "integer" and "number"
// for JSON number syntax (kept as json.Number, so the validator judges the
// exact text), otherwise the string itself — so "abc" for an integer field
// stays a string and fails validation with a type error naming the field.
func (f *WireField) Coerce(vals []string) any {
	if !f.List && len(vals) == 1 {
		return f.coerceOne(vals[0])
	}
	out := make([]any, len(vals))
	for i, s := range vals {
		out[i] = f.coerceOne(s)
	}
	return out
}

func (f *WireField) coerceOne(s string) any {
	for _, t := range f.Types {
		switch t {
		case "null":
			if s == "null" {
				return nil
			}
		case "boolean":
			switch s {
			case "true":
				return true
			case "false":
				return false
			}
		case "integer", "number":
			if isJSONNumber(s) {
				return json.Number(s)
			}
		}
	}
	return s
}

// coercionOrder orders the scalar types of a field for coercion, string
// last (any string is a valid string, so it must be the fallback).
func coercionOrder(types []string) []string {
	var out []string
	for _, t := range []string{"null", "boolean", "integer", "number", "string"} {
		if slices.Contains(types, t) {
			out = append(out, t)
		}
	}
	return out
}

// jsonTypes returns the JSON types a schema admits, as far as type, const,
// enum, $ref and the combinators say; nil when nothing says.
func jsonTypes(root, s any, depth int) []string {
	m, ok := s.(map[string]any)
	if !ok || depth > 16 {
		return nil
	}
	var out []string
	add := func(ts ...string) {
		for _, t := range ts {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	switch t := m["type"].(type) {
	case string:
		add(t)
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok {
				add(s)
			}
		}
	}
	if len(out) > 0 {
		return out
	}
	if c, ok := m["const"]; ok {
		add(valueType(c))
	}
	if e, ok := m["enum"].([]any); ok {
		for _, v := range e {
			add(valueType(v))
		}
	}
	if ref, ok := m["$ref"].(string); ok {
		if target, ok := schematree.Resolve(root, ref); ok {
			add(jsonTypes(root, target, depth+1)...)
		}
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if arms, ok := m[k].([]any); ok {
			for _, a := range arms {
				add(jsonTypes(root, a, depth+1)...)
			}
		}
	}
	return out
}

// itemTypes returns the element types of an array schema.
func itemTypes(root, s any) []string {
	m, _ := s.(map[string]any)
	for range 16 {
		if m == nil {
			return nil
		}
		if items, ok := m["items"]; ok {
			return jsonTypes(root, items, 0)
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return nil
		}
		target, _ := schematree.Resolve(root, ref)
		m, _ = target.(map[string]any)
	}
	return nil
}

func valueType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return "integer"
		}
		return "number"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	default:
		return "object"
	}
}

func hasType(t any, want string) bool {
	switch t := t.(type) {
	case string:
		return t == want
	case []any:
		return slices.Contains(t, any(want))
	}
	return false
}

// isJSONNumber reports whether s is exactly a JSON number (RFC 8259 §6).
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(s)
}

// Part names the part of a call a value belongs to.
type Part string

// The parts of a call, in pipeline order.
const (
	PartParams Part = "params"
	PartQuery  Part = "query"
	PartInput  Part = "input"
)

// ArgSplitter says which part of an operation's call a flat tool argument
// belongs to: the inverse of the advertised-input merge ([Tool.SplitArgs]
// uses the same rule).
type ArgSplitter struct{ s argSplitter }

// Part returns the part the argument key belongs to: params for a key of
// #params (or a path name), query for a key of #query, input for every
// other key (so an undeclared key fails input validation, as an unknown
// body field does over HTTP). A runtime tool's arguments are all input.
func (a ArgSplitter) Part(key string) Part {
	switch {
	case a.s.runtime:
		return PartInput
	case a.s.params[key]:
		return PartParams
	case a.s.query[key]:
		return PartQuery
	}
	return PartInput
}

// Split sorts flat tool arguments into params, query and input by
// [ArgSplitter.Part]; a part with no argument is nil.
func (a ArgSplitter) Split(args map[string]json.RawMessage) (params, query, input map[string]json.RawMessage) {
	return a.s.split(args)
}

// Splitter returns the splitter of a prepared tool.
func (t *Tool) Splitter() ArgSplitter { return ArgSplitter{t.args} }

// OperationSplitter returns the argument splitter of op, for a runner that
// serves op's tools without holding a prepared surface.
func OperationSplitter(g *graph.Graph, op *graph.Operation) (ArgSplitter, error) {
	c := candidate{key: op.ID(), op: op}
	ps, err := parts(g, c)
	if err != nil {
		return ArgSplitter{}, err
	}
	return ArgSplitter{splitterFor(c, ps)}, nil
}
