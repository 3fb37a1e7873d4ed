package cueschema

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"cuelang.org/go/cue/cuecontext"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/validate"
)

// TestDefaultsMatchCUE: for every instance CUE accepts, the value the
// runner hands a handler (decode, ApplyDefaults and Validate on the
// emitted schema, as the mounts call them) is the value CUE exports for
// the schema unified with the instance, numbers compared by kind too.
// Optional fields are the one difference: CUE leaves an absent optional
// field absent even when it has a default (limit?: *20 | int), while the
// runner applies the default (see docs/contract-language.md); the test
// compares after dropping those.
func TestDefaultsMatchCUE(t *testing.T) {
	checked := 0
	allow := allowed(t)
	allowDefaults := allowList(t, true)
	used := map[string]bool{}
	for _, c := range loadCorpus(t) {
		if len(c.refused) > 0 {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			ctx := cuecontext.New()
			s := compileS(t, ctx, c.cue)
			b, err := translate(s)
			if err != nil {
				t.Fatal(err)
			}
			v, err := validate.Compile(b)
			if err != nil {
				t.Fatal(err)
			}
			for _, in := range c.ok {
				if _, listed := allow[c.name][in]; listed {
					continue // a known disagreement (the allow-list)
				}
				cv := cueJudge(ctx, s, []byte(in))
				ov := ourJudge(v, []byte(in))
				if !cv.ok || !ov.ok {
					continue
				}
				checked++
				if !sameCompletion(ov.value, cv.value, b) {
					if reason, ok := allowDefaults[c.name][in]; ok {
						used[c.name+"\t"+in] = true
						t.Logf("allowed: %s: %s", in, reason)
						continue
					}
					got, _ := graph.Canonical(ov.value)
					t.Errorf("%s: CUE completes it to %s, the handler gets %s", in, cv.value, got)
				}
			}
		})
	}
	if !t.Failed() {
		for name, m := range allowDefaults {
			for in := range m {
				if !used[name+"\t"+in] {
					t.Errorf("allow-list entry %s %s is not needed any more: remove it", name, in)
				}
			}
		}
	}
	t.Logf("%d instances", checked)
}

// optionalDefaultsOnly reports whether got differs from want only by
// members want lacks whose schema property is optional with a default.
func optionalDefaultsOnly(got, want, schema []byte) bool {
	var g, w, s any
	if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil || json.Unmarshal(schema, &s) != nil {
		return false
	}
	return extraDefaults(g, w, s)
}

// extraDefaults reports whether g differs from w only by members w lacks
// that a property schema of s (its $refs followed) gives a default.
func extraDefaults(g, w, s any) bool {
	return explainer{root: s}.extra(g, w, s)
}

type explainer struct{ root any }

func (e explainer) extra(g, w, s any) bool {
	gm, ok1 := g.(map[string]any)
	wm, ok2 := w.(map[string]any)
	if ok1 && ok2 {
		for k, gv := range gm {
			cands := e.subSchemas(s, func(m map[string]any) []any {
				p, _ := m["properties"].(map[string]any)
				if x, ok := p[k]; ok {
					return []any{x}
				}
				return nil
			})
			wv, ok := wm[k]
			if !ok {
				if !slices.ContainsFunc(cands, func(c any) bool {
					c = e.deref(c)
					m, _ := c.(map[string]any)
					_, has := m["default"]
					return has
				}) {
					return false
				}
				continue
			}
			if !e.explained(gv, wv, cands) {
				return false
			}
		}
		return len(wm) <= len(gm)
	}
	gl, ok1 := g.([]any)
	wl, ok2 := w.([]any)
	if ok1 && ok2 && len(gl) == len(wl) {
		for i := range gl {
			cands := e.subSchemas(s, func(m map[string]any) []any {
				if pre, ok := m["prefixItems"].([]any); ok && i < len(pre) {
					return []any{pre[i]}
				}
				if it, ok := m["items"].(map[string]any); ok {
					return []any{it}
				}
				return nil
			})
			if !e.explained(gl[i], wl[i], cands) {
				return false
			}
		}
		return true
	}
	return sameJSON(g, w)
}

// explained reports whether g and w are equal or differ only by optional
// defaults under one of the candidate schemas.
func (e explainer) explained(g, w any, cands []any) bool {
	if len(cands) == 0 {
		return e.extra(g, w, nil)
	}
	return slices.ContainsFunc(cands, func(c any) bool { return e.extra(g, w, c) })
}

// deref follows a local "$ref" (a few steps).
func (e explainer) deref(s any) any {
	for range 8 {
		m, ok := s.(map[string]any)
		if !ok {
			return s
		}
		ref, ok := m["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#/$defs/") {
			return s
		}
		root, _ := e.root.(map[string]any)
		defs, _ := root["$defs"].(map[string]any)
		t, ok := defs[strings.ReplaceAll(strings.ReplaceAll(strings.TrimPrefix(ref, "#/$defs/"), "~1", "/"), "~0", "~")]
		if !ok {
			return s
		}
		if len(m) > 1 {
			// (Siblings of the $ref: both apply.)
			return map[string]any{"allOf": []any{t, withoutRef(m)}}
		}
		s = t
	}
	return s
}

func withoutRef(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if k != "$ref" {
			out[k] = v
		}
	}
	return out
}

// subSchemas returns what pick finds in s and in the alternatives and
// conjuncts of s (anyOf, oneOf, allOf, $ref, nested), as object schemas.
func (e explainer) subSchemas(s any, pick func(map[string]any) []any) []any {
	var out []any
	var walk func(x any, d int)
	walk = func(x any, d int) {
		if d > 16 {
			return
		}
		if m, ok := x.(map[string]any); ok && m["$ref"] != nil {
			x = e.deref(x)
			if mm, ok := x.(map[string]any); ok && mm["$ref"] != nil {
				return
			}
		}
		m, ok := x.(map[string]any)
		if !ok {
			return
		}
		for _, c := range pick(m) {
			if cm, ok := c.(map[string]any); ok {
				out = append(out, cm)
			}
		}
		for _, k := range []string{"anyOf", "oneOf", "allOf"} {
			arms, _ := m[k].([]any)
			for _, a := range arms {
				walk(a, d+1)
			}
		}
	}
	walk(s, 0)
	return out
}
