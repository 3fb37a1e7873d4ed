package project

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"stitchkit.dev/stitchkit/internal/schematree"
)

// Discriminated-union flattening (research contracts §2.4.1): weaker models
// drop fields of nested oneOf, so when a policy asks for it, a union of
// closed objects sharing a string discriminator is presented as one object
// whose fields say when they apply. Presentation only: the runner validates
// with the contract's own schema, and the flat document accepts a superset
// of what the union accepts.

// flattenUnions returns a copy of doc with every flattenable union, at any
// depth, replaced by its flat object.
func flattenUnions(doc any) any {
	doc = schematree.Clone(doc)
	f := &flattener{root: doc}
	return f.walk(doc)
}

type flattener struct {
	root any
}

func (f *flattener) walk(s any) any {
	m, ok := s.(map[string]any)
	if !ok {
		return s
	}
	// Definitions last: a union elsewhere that refers to one sees it as
	// written, not already flattened.
	for _, defs := range []bool{false, true} {
		schematree.MapChildren(m, func(c schematree.Child) any {
			if (c.Keyword == "$defs" || c.Keyword == "definitions") != defs {
				return c.Schema
			}
			return f.walk(c.Schema)
		})
	}
	if flat, _ := f.flatten(m); flat != nil {
		return flat
	}
	return m
}

// resolve follows a bare local "$ref" to its target; other schemas are
// returned as they are.
func (f *flattener) resolve(s any) any { return schematree.DerefBare(f.root, s) }

// flatten flattens one union node. It returns nil to leave the node
// unchanged, with the reason a union could not be flattened ("" when the
// node is not a union).
func (f *flattener) flatten(node map[string]any) (map[string]any, string) {
	key := ""
	for _, k := range []string{"oneOf", "anyOf"} {
		if _, ok := node[k]; ok {
			if key != "" {
				return nil, "it has both oneOf and anyOf" // not a plain union
			}
			key = k
		}
	}
	if key == "" {
		return nil, ""
	}
	if _, ok := node["properties"]; ok {
		return nil, "it declares properties next to its " + key
	}
	list, ok := node[key].([]any)
	if !ok || len(list) < 2 {
		return nil, "its " + key + " has fewer than two branches"
	}
	branches := make([]map[string]any, len(list))
	for i, b := range list {
		m, ok := f.resolve(b).(map[string]any)
		if !ok || !isBranchObject(m, node) {
			return nil, fmt.Sprintf("branch %d is %s, not an object with properties: only unions of objects can be flattened", i+1, describeBranch(m))
		}
		branches[i] = m
	}
	disc, values := discriminator(branches)
	if disc == "" {
		return nil, noDiscriminatorReason(branches)
	}

	// Property names in first-seen order across branches.
	var names []string
	for _, b := range branches {
		for _, k := range sortedKeys(b["properties"].(map[string]any)) {
			if !slices.Contains(names, k) {
				names = append(names, k)
			}
		}
	}
	props := map[string]any{}
	// The discriminator stays optional when a branch let it be omitted:
	// the flat schema must accept everything the union accepts.
	var required []any
	if requiredEverywhere(branches, disc) {
		required = append(required, disc)
	}
	var all []any
	for _, vs := range values {
		for _, v := range vs {
			if !slices.Contains(all, any(v)) {
				all = append(all, v)
			}
		}
	}
	discProp := map[string]any{"type": "string", "enum": all}
	bools := 0
	for _, p := range branchProps(branches, disc) {
		if _, ok := p.(map[string]any)["const"].(bool); ok {
			bools++
		}
	}
	switch bools {
	case 0:
	case len(branches):
		discProp = map[string]any{"type": "boolean"}
	default:
		return nil, "its discriminator " + disc + " is a bool in some branches and a string in others"
	}
	if d, ok := agreedDescription(branchProps(branches, disc)); ok {
		discProp["description"] = d
	}
	props[disc] = discProp
	for _, name := range names {
		if name == disc {
			continue
		}
		present := branchProps(branches, name)
		var reqIn, hasIn []string
		for i, b := range branches {
			if _, ok := b["properties"].(map[string]any)[name]; ok {
				hasIn = append(hasIn, values[i]...)
			}
			if requires(b, name) {
				reqIn = append(reqIn, values[i]...)
			}
		}
		merged := f.mergeProperty(present)
		switch {
		case requiredEverywhere(branches, name):
			required = append(required, name)
		case len(reqIn) > 0:
			merged = withSuffix(merged, "Required if "+disc+" = "+strings.Join(reqIn, " | "))
		case len(present) < len(branches):
			merged = withSuffix(merged, "Available if "+disc+" = "+strings.Join(hasIn, " | "))
		}
		props[name] = merged
	}

	out := map[string]any{}
	for k, v := range node {
		if k != key {
			out[k] = v
		}
	}
	out["type"] = "object"
	out["properties"] = props
	if len(required) > 0 {
		out["required"] = required
	} else {
		delete(out, "required")
	}
	strict := true
	for _, b := range branches {
		if b["additionalProperties"] != false {
			strict = false
		}
	}
	if strict {
		out["additionalProperties"] = false
	} else {
		out["additionalProperties"] = map[string]any{}
	}
	return out, ""
}

// describeBranch names what a union branch that is not a flattenable object
// is, for error messages.
func describeBranch(b map[string]any) string {
	if b == nil {
		return "not a schema object"
	}
	switch t := b["type"].(type) {
	case string:
		if t != "object" {
			return "of type " + t
		}
	case []any:
		return fmt.Sprintf("of types %v", t)
	}
	if _, ok := b["const"]; ok {
		return "a constant"
	}
	if _, ok := b["enum"]; ok {
		return "an enum"
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf", "not", "$ref", "if", "patternProperties"} {
		if _, ok := b[k]; ok {
			return "an object combined with " + k
		}
	}
	if _, ok := b["properties"]; !ok {
		return "an object without properties"
	}
	return "not an object"
}

// noDiscriminatorReason explains why no discriminator was found.
func noDiscriminatorReason(branches []map[string]any) string {
	first := branches[0]["properties"].(map[string]any)
	for _, name := range sortedKeys(first) {
		seen := map[string]bool{}
		shared := ""
		everywhere := true
		for _, b := range branches {
			p, ok := b["properties"].(map[string]any)[name]
			if !ok {
				everywhere = false
				break
			}
			vs, ok := stringValues(p)
			if !ok {
				everywhere = false
				break
			}
			for _, v := range vs {
				if seen[v] && shared == "" {
					shared = v
				}
				seen[v] = true
			}
		}
		if everywhere && shared != "" {
			return fmt.Sprintf("no property tells the branches apart: %q is a string const/enum in every branch, but more than one branch allows %q", name, shared)
		}
	}
	return "no discriminator: no string const/enum property is present in every branch with distinct values"
}

// isBranchObject reports whether a union branch is an object with
// properties and nothing that flattening would lose at its root.
func isBranchObject(b, parent map[string]any) bool {
	t, hasType := b["type"]
	if hasType && t != "object" || !hasType && parent["type"] != "object" {
		return false
	}
	if _, ok := b["properties"].(map[string]any); !ok {
		return false
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf", "not", "$ref", "if", "patternProperties"} {
		if _, ok := b[k]; ok {
			return false
		}
	}
	return true
}

// discriminator finds the property that tells the branches apart: a string
// const/enum present in every branch with no value shared between branches.
// A property every branch requires wins (upstream's rule); failing that, one
// every branch merely declares is accepted, because CUE emits a concrete
// regular field (`kind: "email"`) as an optional const — CUE fills it in, so
// it may be omitted. Candidates are tried in name order. It returns the
// property and each branch's values.
func discriminator(branches []map[string]any) (string, [][]string) {
	first := branches[0]["properties"].(map[string]any)
	for _, mustRequire := range []bool{true, false} {
	next:
		for _, name := range sortedKeys(first) {
			values := make([][]string, len(branches))
			seen := map[string]bool{}
			for i, b := range branches {
				if mustRequire && !requires(b, name) {
					continue next
				}
				p, ok := b["properties"].(map[string]any)[name]
				if !ok {
					continue next
				}
				vs, ok := stringValues(p)
				if !ok {
					continue next
				}
				for _, v := range vs {
					if seen[v] {
						continue next
					}
					seen[v] = true
				}
				values[i] = vs
			}
			return name, values
		}
	}
	return "", nil
}

func requires(b map[string]any, name string) bool {
	req, _ := b["required"].([]any)
	return slices.Contains(req, any(name))
}

func requiredEverywhere(branches []map[string]any, name string) bool {
	for _, b := range branches {
		if !requires(b, name) {
			return false
		}
	}
	return true
}

// stringValues returns the values of a string const or all-string enum.
func stringValues(s any) ([]string, bool) {
	m, ok := s.(map[string]any)
	if !ok {
		return nil, false
	}
	if c, ok := m["const"]; ok {
		if b, ok := c.(bool); ok {
			// A bool-driven conditional (ship: *false | bool, if
			// ship {address!: …}) is a union told apart by a bool.
			return []string{fmt.Sprint(b)}, true
		}
		str, ok := c.(string)
		return []string{str}, ok
	}
	e, ok := m["enum"].([]any)
	if !ok || len(e) == 0 {
		return nil, false
	}
	out := make([]string, len(e))
	for i, v := range e {
		str, ok := v.(string)
		if !ok {
			return nil, false
		}
		out[i] = str
	}
	return out, true
}

func branchProps(branches []map[string]any, name string) []any {
	var out []any
	for _, b := range branches {
		if p, ok := b["properties"].(map[string]any)[name]; ok {
			out = append(out, p)
		}
	}
	return out
}

// annotationKeys are ignored when comparing colliding properties.
var annotationKeys = []string{"$schema", "default", "description", "examples", "title"}

func withoutAnnotations(s any) any {
	m, ok := s.(map[string]any)
	if !ok {
		return s
	}
	out := map[string]any{}
	for k, v := range m {
		if !slices.Contains(annotationKeys, k) {
			out[k] = v
		}
	}
	return out
}

func agreedDescription(schemas []any) (string, bool) {
	var desc string
	for i, s := range schemas {
		m, _ := s.(map[string]any)
		d, ok := m["description"].(string)
		if !ok {
			return "", false
		}
		if i > 0 && d != desc {
			return "", false
		}
		desc = d
	}
	return desc, len(schemas) > 0
}

// mergeProperty merges the schemas one property has in the branches that
// declare it.
func (f *flattener) mergeProperty(schemas []any) any {
	desc, agreed := agreedDescription(schemas)
	withDesc := func(m map[string]any) any {
		delete(m, "description")
		if agreed {
			m["description"] = desc
		}
		return m
	}
	same := true
	for _, s := range schemas[1:] {
		if !reflect.DeepEqual(withoutAnnotations(s), withoutAnnotations(schemas[0])) {
			same = false
			break
		}
	}
	if same {
		if m, ok := schematree.Clone(schemas[0]).(map[string]any); ok {
			return withDesc(m)
		}
		return schematree.Clone(schemas[0])
	}
	var enum []any
	allStrings := true
	for _, s := range schemas {
		vs, ok := stringValues(s)
		if !ok {
			allStrings = false
			break
		}
		for _, v := range vs {
			if !slices.Contains(enum, any(v)) {
				enum = append(enum, v)
			}
		}
	}
	if allStrings {
		return withDesc(map[string]any{"type": "string", "enum": enum})
	}
	kinds := map[string]bool{}
	for _, s := range schemas {
		ks, ok := f.kinds(s, 0)
		if !ok {
			return withDesc(map[string]any{})
		}
		for _, k := range ks {
			kinds[k] = true
		}
	}
	if kinds["integer"] && kinds["number"] {
		delete(kinds, "integer")
	}
	var ordered []any
	for _, k := range kindOrder {
		if kinds[k] {
			ordered = append(ordered, k)
		}
	}
	if len(ordered) == 1 {
		m := map[string]any{"type": ordered[0]}
		switch ordered[0] {
		case "object":
			m["additionalProperties"] = map[string]any{}
		case "array":
			m["items"] = map[string]any{}
		}
		return withDesc(m)
	}
	return withDesc(map[string]any{"type": ordered})
}

// kindOrder is the deterministic order of a widened type array.
var kindOrder = []string{"string", "number", "integer", "boolean", "object", "array", "null"}

// kinds returns the JSON kinds a schema provably restricts values to.
func (f *flattener) kinds(s any, depth int) ([]string, bool) {
	m, ok := s.(map[string]any)
	if !ok || depth > 8 {
		return nil, false
	}
	switch t := m["type"].(type) {
	case string:
		return []string{t}, true
	case []any:
		var out []string
		for _, e := range t {
			str, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, str)
		}
		return out, len(out) > 0
	}
	if c, ok := m["const"]; ok {
		return []string{valueKind(c)}, true
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		var out []string
		for _, v := range e {
			out = append(out, valueKind(v))
		}
		return out, true
	}
	if ref, ok := m["$ref"].(string); ok {
		t, ok := schematree.Resolve(f.root, ref)
		if !ok {
			return nil, false
		}
		return f.kinds(t, depth+1)
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if l, ok := m[k].([]any); ok && len(l) > 0 {
			var out []string
			for _, b := range l {
				ks, ok := f.kinds(b, depth+1)
				if !ok {
					return nil, false
				}
				out = append(out, ks...)
			}
			return out, true
		}
	}
	return nil, false
}

func valueKind(v any) string {
	switch x := v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			return "number"
		}
		return "integer"
	default:
		return "number"
	}
}

// withSuffix appends a "Required if …"/"Available if …" note to a property's
// description.
func withSuffix(s any, note string) any {
	m, ok := s.(map[string]any)
	if !ok {
		return s
	}
	if d, ok := m["description"].(string); ok && d != "" {
		m["description"] = d + " (" + note + ")"
	} else {
		m["description"] = note
	}
	return m
}

// strictSchema prepares a document for OpenAI strict function calling:
// every object is closed (additionalProperties: false) and lists every
// property as required, and each property that was optional becomes
// nullable, so a model states "absent" as null. The runner still validates
// with the contract schema, which is why the Agent invoker drops null
// arguments for optional fields before validation.
func strictSchema(doc any) any {
	doc = schematree.Clone(doc)
	var walk func(any) any
	walk = func(s any) any {
		m, ok := s.(map[string]any)
		if !ok {
			return s
		}
		schematree.MapChildren(m, func(c schematree.Child) any { return walk(c.Schema) })
		if !isObjectType(m) {
			return m
		}
		props, _ := m["properties"].(map[string]any)
		if props == nil {
			props = map[string]any{}
			m["properties"] = props
		}
		req, _ := m["required"].([]any)
		all := make([]any, 0, len(props))
		for _, k := range sortedKeys(props) {
			if !slices.Contains(req, any(k)) {
				props[k] = nullable(props[k])
			}
			all = append(all, k)
		}
		m["required"] = all
		m["additionalProperties"] = false
		return m
	}
	return walk(doc)
}

func isObjectType(m map[string]any) bool {
	switch t := m["type"].(type) {
	case string:
		return t == "object"
	case []any:
		return slices.Contains(t, any("object"))
	}
	_, ok := m["properties"]
	return ok
}

// nullable widens a schema to also accept null.
func nullable(s any) any {
	m, ok := s.(map[string]any)
	if !ok {
		return s
	}
	if _, ok := m["const"]; !ok {
		switch t := m["type"].(type) {
		case string:
			if t == "null" {
				return m
			}
			m["type"] = []any{t, "null"}
			addNullEnum(m)
			return m
		case []any:
			if !slices.Contains(t, any("null")) {
				m["type"] = append(t, "null")
			}
			addNullEnum(m)
			return m
		}
	}
	return map[string]any{"anyOf": []any{m, map[string]any{"type": "null"}}}
}

func addNullEnum(m map[string]any) {
	if e, ok := m["enum"].([]any); ok && !slices.Contains(e, nil) {
		m["enum"] = append(e, nil)
	}
}
