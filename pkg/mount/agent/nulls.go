package agent

import (
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

// dropNulls removes, in place, every null object member of v that no
// schema applicable to it (s within root) requires. It reports whether it
// removed anything.
func dropNulls(v, s, root any) bool {
	changed := false
	switch x := v.(type) {
	case map[string]any:
		cands := schematree.Applicable(root, s)
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
		cands := schematree.Applicable(root, s)
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
