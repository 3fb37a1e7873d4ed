package compile

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
)

// schemaFixer rewrites the output of encoding/jsonschema.Generate where it
// disagrees with what the CUE value accepts, walking the (normalised)
// schema alongside the value it was generated from:
//
//   - a regular field is required. Generate leaves a regular field with a
//     concrete value (kind: "email", items: [...T], meta: {n?: int}) out
//     of "required" because CUE would fill it in; at run time nothing fills
//     it in, so a regular field is required unless it has a default
//     (x: *1 | int). Only x?: is optional.
//   - a "const" holding an object is rewritten as an object schema:
//     Generate writes {...} (open) as {"const": {}} inside a definition,
//     which refuses every non-empty object; a closed struct becomes
//     {"type": "object", "additionalProperties": false} plus one const
//     property per field.
//   - an object schema with a $ref to an object $defs entry next to its own
//     properties is what Generate makes of an embedding ({#Base, id:
//     string}) or a conjunction (#Base & {done?: bool}); JSON Schema
//     applies both closed objects and refuses every instance. The entry's
//     properties are merged into the node, and additionalProperties and the
//     property set follow what the CUE value allows.
//   - an empty closed struct gets "additionalProperties": false.
//
// $defs entries are walked with the value each reference resolved to
// (recorded by the NamesFunc given to Generate).
type schemaFixer struct {
	doc     map[string]any
	defVals map[string]cue.Value
	defs    map[string]any // doc["$defs"], nil when absent
	lost    []string       // fields of a struct Generate left out
}

const maxFixDepth = 200

func fixSchema(doc map[string]any, v cue.Value, defVals map[string]cue.Value, builtins map[string]string) error {
	f := &schemaFixer{doc: doc, defVals: defVals}
	f.defs, _ = doc["$defs"].(map[string]any)
	for name, b := range builtins {
		if b == "time.Time" && f.defs != nil {
			// time.Time accepts RFC 3339 text, as time.Format(time.RFC3339)
			// does, which Generate maps to "date-time".
			f.defs[name] = map[string]any{"type": "string", "format": "date-time"}
		}
	}
	// Definitions first: a node that embeds one copies its (fixed)
	// properties.
	names := make([]string, 0, len(f.defs))
	for name := range f.defs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if dv, ok := defVals[name]; ok && dv.Exists() {
			f.node(f.defs[name], dv, 0)
		}
	}
	f.node(doc, v, 0)
	f.pruneDefs()
	if len(f.lost) > 0 {
		slices.Sort(f.lost)
		return fmt.Errorf("the generator left out the fields %s of a struct (seen with a definition embedded in a field of the schema: declare that field's schema as a definition, e.g. #T: {#Base, id: string}, and refer to it)", strings.Join(slices.Compact(f.lost), ", "))
	}
	return nil
}

type fieldInfo struct {
	val     cue.Value
	regular bool
}

func structFields(v cue.Value) map[string]fieldInfo {
	iter, err := v.Fields(cue.Optional(true))
	if err != nil {
		return nil
	}
	out := map[string]fieldInfo{}
	for iter.Next() {
		sel := iter.Selector()
		ct := sel.ConstraintType()
		out[sel.Unquoted()] = fieldInfo{val: iter.Value(), regular: ct != cue.OptionalConstraint && ct != cue.RequiredConstraint && ct != cue.PatternConstraint}
	}
	return out
}

func (f *schemaFixer) node(s any, v cue.Value, depth int) {
	m, ok := s.(map[string]any)
	if !ok || depth > maxFixDepth || !v.Exists() {
		return
	}
	if c, ok := m["const"]; ok && hasObject(c) {
		delete(m, "const")
		for k, e := range constSchema(c, v).(map[string]any) {
			m[k] = e
		}
	}
	if ref, ok := m["$ref"].(string); ok && isObjectNode(m) {
		f.mergeRef(m, ref, v)
	}
	if props, ok := m["properties"].(map[string]any); ok {
		fields := structFields(v)
		for name, ps := range props {
			fi, ok := fields[name]
			if !ok {
				continue
			}
			if fi.regular {
				// Default reports a default for an open list too ([...T]
				// defaults to []); a marked default makes the value
				// non-concrete.
				if _, hasDefault := fi.val.Default(); !hasDefault || fi.val.IsConcrete() {
					addRequired(m, name)
				}
			}
			f.node(ps, fi.val, depth+1)
		}
	}
	if m["type"] == "object" && v.IncompleteKind() == cue.StructKind && !v.Allows(cue.AnyString) {
		_, ap := m["additionalProperties"]
		_, pp := m["patternProperties"]
		applied := false
		for _, k := range []string{"allOf", "anyOf", "oneOf", "$ref", "if", "dependentSchemas", "unevaluatedProperties"} {
			if _, ok := m[k]; ok {
				applied = true
			}
		}
		if !ap && !pp && !applied {
			if _, hasProps := m["properties"]; !hasProps {
				// A closed struct with fields and no properties: Generate
				// lost them. Refuse rather than accept (or refuse) every
				// object.
				for name := range structFields(v) {
					f.lost = append(f.lost, strconv.Quote(name))
				}
			}
			m["additionalProperties"] = false
		}
	}
	if ap, ok := m["additionalProperties"].(map[string]any); ok {
		f.node(ap, v.LookupPath(cue.MakePath(cue.AnyString)), depth+1)
	}
	if it, ok := m["items"].(map[string]any); ok {
		f.node(it, v.LookupPath(cue.MakePath(cue.AnyIndex)), depth+1)
	}
	if pi, ok := m["prefixItems"].([]any); ok {
		for i, e := range pi {
			f.node(e, v.LookupPath(cue.MakePath(cue.Index(i))), depth+1)
		}
	}
	if all, ok := m["allOf"].([]any); ok {
		for _, e := range all {
			f.node(e, v, depth+1)
		}
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if arms, ok := m[k].([]any); ok {
			f.arms(arms, v, depth)
		}
	}
}

// arms walks the arms of an anyOf/oneOf with the disjuncts of v they were
// generated from. Generate reorders and deduplicates arms, so an arm is
// matched to a disjunct of the same kind with the same field names.
func (f *schemaFixer) arms(arms []any, v cue.Value, depth int) {
	ds := disjuncts(v, 0)
	if len(ds) == 0 {
		return
	}
	used := make([]bool, len(ds))
	for _, arm := range arms {
		am, ok := arm.(map[string]any)
		if !ok {
			continue
		}
		best := -1
		for i, d := range ds {
			if armMatches(am, d) && (best < 0 || used[best] && !used[i]) {
				best = i
			}
		}
		if best < 0 {
			continue
		}
		used[best] = true
		f.node(am, ds[best], depth+1)
	}
}

func disjuncts(v cue.Value, depth int) []cue.Value {
	if depth > 50 {
		return nil
	}
	op, args := v.Expr()
	if op != cue.OrOp {
		if depth == 0 {
			return nil
		}
		return []cue.Value{v}
	}
	var out []cue.Value
	for _, a := range args {
		out = append(out, disjuncts(a, depth+1)...)
	}
	return out
}

func armMatches(arm map[string]any, d cue.Value) bool {
	k := d.IncompleteKind()
	ts, _ := typeSet(arm["type"])
	var names map[string]any
	if props, ok := arm["properties"].(map[string]any); ok {
		names = props
	} else if c, ok := arm["const"].(map[string]any); ok {
		names = c
	} else if slices.Contains(ts, "object") {
		names = map[string]any{}
	}
	if names != nil {
		if k != cue.StructKind {
			return false
		}
		fields := structFields(d)
		if len(fields) != len(names) {
			return false
		}
		for name := range names {
			if _, ok := fields[name]; !ok {
				return false
			}
		}
		return true
	}
	_, items := arm["items"]
	_, prefix := arm["prefixItems"]
	_, c := arm["const"].([]any)
	if slices.Contains(ts, "array") || items || prefix || c {
		return k == cue.ListKind
	}
	return false
}

// mergeRef inlines the object $defs entry ref points to into m, an object
// schema of its own: CUE unifies the two (an embedding adds the fields, a
// conjunction keeps what both allow), JSON Schema would apply two closed
// objects side by side.
func (f *schemaFixer) mergeRef(m map[string]any, ref string, v cue.Value) {
	name, ok := strings.CutPrefix(ref, "#/$defs/")
	if !ok || f.defs == nil || v.IncompleteKind() != cue.StructKind {
		return
	}
	target, ok := f.defs[name].(map[string]any)
	if !ok || !isObjectNode(target) {
		return
	}
	target = deepCopy(target).(map[string]any)
	merged := map[string]any{}
	for k, tv := range target {
		switch k {
		case "properties", "patternProperties":
			tp, _ := tv.(map[string]any)
			mp, _ := m[k].(map[string]any)
			out := map[string]any{}
			for p, s := range tp {
				out[p] = s
			}
			for p, s := range mp {
				if prev, ok := out[p]; ok {
					out[p] = map[string]any{"allOf": []any{prev, s}}
				} else {
					out[p] = s
				}
			}
			merged[k] = out
		case "required":
			r := unionStrings(tv, m[k])
			if m[k] == nil {
				r = tv
			}
			merged[k] = r
		case "additionalProperties", "description", "title", "$comment":
		case "$defs", "$schema", "$id", "unevaluatedProperties", "allOf", "anyOf", "oneOf", "$ref":
			return
		default:
			if mv, ok := m[k]; ok {
				if k == "type" {
					t, ok := intersectTypes(mv, tv)
					if !ok {
						return
					}
					merged[k] = t
					continue
				}
				if !jsonEqual(mv, tv) {
					return
				}
			}
			merged[k] = tv
		}
	}
	tap, tHas := target["additionalProperties"].(map[string]any)
	map_, mHas := m["additionalProperties"].(map[string]any)
	for k, e := range merged {
		m[k] = e
	}
	delete(m, "$ref")
	if v.Allows(cue.AnyString) {
		switch {
		case tHas && mHas:
			m["additionalProperties"] = map[string]any{"allOf": []any{tap, map_}}
		case tHas:
			m["additionalProperties"] = tap
		case mHas:
		default:
			delete(m, "additionalProperties")
		}
		return
	}
	m["additionalProperties"] = false
	if props, ok := m["properties"].(map[string]any); ok {
		for p := range props {
			// Allows reports an optional field declared by one
			// conjunct (#Base & {done?: bool}) as allowed although the
			// other conjunct refuses it; filling it in tells.
			path := cue.MakePath(cue.Str(p))
			if v.FillPath(path, v.Context().CompileString("_")).LookupPath(path).Err() != nil {
				delete(props, p)
			}
		}
	}
}

// pruneDefs removes $defs entries no longer referenced (after mergeRef).
func (f *schemaFixer) pruneDefs() {
	if f.defs == nil {
		return
	}
	for changed := true; changed; {
		changed = false
		for name := range f.defs {
			if countRefs(f.doc, "#/$defs/"+name) == 0 {
				delete(f.defs, name)
				changed = true
			}
		}
	}
	if len(f.defs) == 0 {
		delete(f.doc, "$defs")
	}
}

func isObjectNode(m map[string]any) bool {
	if ts, ok := typeSet(m["type"]); ok && slices.Contains(ts, "object") && len(ts) == 1 {
		return true
	}
	_, p := m["properties"]
	_, ap := m["additionalProperties"]
	return p || ap
}

func addRequired(m map[string]any, name string) {
	req, _ := m["required"].([]any)
	for _, r := range req {
		if r == name {
			return
		}
	}
	m["required"] = append(req, name)
}

func hasObject(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return true
	case []any:
		for _, e := range x {
			if hasObject(e) {
				return true
			}
		}
	}
	return false
}

// constSchema returns a schema accepting exactly const c, reading the
// openness of each object from the CUE value v it was generated from.
func constSchema(c any, v cue.Value) any {
	switch x := c.(type) {
	case map[string]any:
		out := map[string]any{"type": "object"}
		if len(x) > 0 {
			props := map[string]any{}
			var req []any
			for k, e := range x {
				props[k] = constSchema(e, v.LookupPath(cue.MakePath(cue.Str(k))))
				req = append(req, k)
			}
			out["properties"] = props
			out["required"] = req
		}
		if !v.Exists() || !v.Allows(cue.AnyString) {
			out["additionalProperties"] = false
		}
		return out
	case []any:
		if !hasObject(x) {
			return map[string]any{"const": x}
		}
		items := make([]any, len(x))
		for i, e := range x {
			items[i] = constSchema(e, v.LookupPath(cue.MakePath(cue.Index(i))))
		}
		return map[string]any{"type": "array", "prefixItems": items, "items": false, "minItems": jsonInt(len(x))}
	}
	return map[string]any{"const": c}
}

func jsonInt(n int) json.Number { return json.Number(strconv.Itoa(n)) }

func jsonEqual(a, b any) bool { return reflect.DeepEqual(a, b) }

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}
