package cueschema

import (
	"encoding/json"
	"slices"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/validate"
)

// TestDefaultsMatchCUE: for every instance CUE accepts, the value the
// runner hands a handler (validate's ApplyDefaults on the emitted schema)
// is the value CUE exports for the schema unified with the instance.
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
				x := ctx.CompileString(in)
				u := s.Unify(x)
				if u.Validate(cue.Concrete(true)) != nil {
					continue
				}
				want, err := u.MarshalJSON()
				if err != nil {
					t.Fatal(err)
				}
				val, err := validate.DecodeJSON([]byte(in), nil)
				if err != nil {
					t.Fatal(err)
				}
				got, _ := v.ApplyDefaults(val)
				gotB, err := graph.Canonical(got)
				if err != nil {
					t.Fatal(err)
				}
				wantV, _ := validate.DecodeJSON(want, nil)
				wantB, _ := graph.Canonical(wantV)
				checked++
				if string(gotB) != string(wantB) && !optionalDefaultsOnly(gotB, wantB, b) {
					if reason, ok := allowDefaults[c.name][in]; ok {
						used[c.name+"\t"+in] = true
						t.Logf("allowed: %s: %s", in, reason)
						continue
					}
					t.Errorf("%s: CUE exports %s, ApplyDefaults gives %s", in, wantB, gotB)
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

func extraDefaults(g, w, s any) bool {
	gm, ok1 := g.(map[string]any)
	wm, ok2 := w.(map[string]any)
	if ok1 && ok2 {
		for k, gv := range gm {
			cands := subSchemas(s, func(m map[string]any) []any {
				p, _ := m["properties"].(map[string]any)
				if x, ok := p[k]; ok {
					return []any{x}
				}
				return nil
			})
			wv, ok := wm[k]
			if !ok {
				if !slices.ContainsFunc(cands, func(c any) bool {
					_, has := c.(map[string]any)["default"]
					return has
				}) {
					return false
				}
				continue
			}
			if !explained(gv, wv, cands) {
				return false
			}
		}
		return len(wm) <= len(gm)
	}
	gl, ok1 := g.([]any)
	wl, ok2 := w.([]any)
	if ok1 && ok2 && len(gl) == len(wl) {
		for i := range gl {
			cands := subSchemas(s, func(m map[string]any) []any {
				if pre, ok := m["prefixItems"].([]any); ok && i < len(pre) {
					return []any{pre[i]}
				}
				if it, ok := m["items"].(map[string]any); ok {
					return []any{it}
				}
				return nil
			})
			if !explained(gl[i], wl[i], cands) {
				return false
			}
		}
		return true
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	return string(gb) == string(wb)
}

// explained reports whether g and w are equal or differ only by optional
// defaults under one of the candidate schemas.
func explained(g, w any, cands []any) bool {
	if len(cands) == 0 {
		return extraDefaults(g, w, nil)
	}
	return slices.ContainsFunc(cands, func(c any) bool { return extraDefaults(g, w, c) })
}

// subSchemas returns what pick finds in s and in the alternatives and
// conjuncts of s (anyOf, oneOf, allOf, nested), as object schemas.
func subSchemas(s any, pick func(map[string]any) []any) []any {
	var out []any
	var walk func(x any, d int)
	walk = func(x any, d int) {
		m, ok := x.(map[string]any)
		if !ok || d > 16 {
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
