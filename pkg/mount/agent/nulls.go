package agent

import (
	"reflect"
	"slices"

	"stitchkit.dev/stitchkit/internal/schematree"
	"stitchkit.dev/stitchkit/pkg/validate"
)

// Strict function calling (OpenAI) makes every property required and
// widens the optional ones to accept null, so a model states "absent" as
// null. The contract schema — the only one the runner validates with —
// still says "optional, not null", so before the call the invoker removes
// each null member the contract does not require: absent is always valid
// for an optional member, and a null the contract requires (a nullable
// required field) is kept.

// maxSchemaDepth bounds how far [applicable] follows combinators and
// references.
const maxSchemaDepth = 64

// dropNulls removes, in place, every null object member of v that no
// schema applicable to it (s within root) requires. It reports whether it
// removed anything.
func dropNulls(v, s, root any) bool {
	changed := false
	switch x := v.(type) {
	case map[string]any:
		cands := applicable(root, s)
		for k, e := range x {
			if e == nil {
				if !requiredBy(cands, k) {
					delete(x, k)
					changed = true
				}
				continue
			}
			for _, c := range cands {
				if ps, ok := c["properties"].(map[string]any); ok && ps[k] != nil {
					changed = dropNulls(e, ps[k], root) || changed
				} else if ap, ok := c["additionalProperties"].(map[string]any); ok {
					changed = dropNulls(e, ap, root) || changed
				}
			}
		}
	case []any:
		cands := applicable(root, s)
		for i, e := range x {
			if e == nil {
				continue
			}
			for _, c := range cands {
				if pi, ok := c["prefixItems"].([]any); ok && i < len(pi) {
					changed = dropNulls(e, pi[i], root) || changed
				} else if it, ok := c["items"].(map[string]any); ok {
					changed = dropNulls(e, it, root) || changed
				}
			}
		}
	}
	return changed
}

// applicable returns the schema objects that apply to a value of s: s,
// what its $ref points at, and every allOf, anyOf and oneOf member, at any
// depth. A branch of a union may not be the one the value matches, so a
// member any of them requires is treated as required (the null is kept and
// validation decides).
func applicable(root, s any) []map[string]any {
	var out []map[string]any
	var visit func(s any, depth int)
	visit = func(s any, depth int) {
		m, ok := s.(map[string]any)
		if !ok || depth > maxSchemaDepth || slices.ContainsFunc(out, func(o map[string]any) bool { return sameMap(o, m) }) {
			return
		}
		out = append(out, m)
		if ref, ok := schematree.Ref(m); ok {
			if t, ok := schematree.Resolve(root, ref); ok {
				visit(t, depth+1)
			}
		}
		for _, k := range []string{"allOf", "anyOf", "oneOf"} {
			if l, ok := m[k].([]any); ok {
				for _, b := range l {
					visit(b, depth+1)
				}
			}
		}
	}
	visit(s, 0)
	return out
}

// sameMap reports whether a and b are the same map (not equal contents):
// a reference cycle must not loop.
func sameMap(a, b map[string]any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func requiredBy(cands []map[string]any, key string) bool {
	for _, c := range cands {
		if req, ok := c["required"].([]any); ok && slices.Contains(req, any(key)) {
			return true
		}
	}
	return false
}

// decodeSchema decodes a graph schema for dropNulls.
func decodeSchema(b []byte) any {
	if b == nil {
		return nil
	}
	v, err := validate.DecodeJSON(b, &validate.DecodeOptions{MaxDepth: 10000})
	if err != nil {
		return nil
	}
	return v
}
