package cueschema

import (
	"encoding/json"
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
					t.Errorf("%s: CUE exports %s, ApplyDefaults gives %s", in, wantB, gotB)
				}
			}
		})
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
	sm, _ := s.(map[string]any)
	if !ok1 || !ok2 {
		gb, _ := json.Marshal(g)
		wb, _ := json.Marshal(w)
		return string(gb) == string(wb)
	}
	props, _ := sm["properties"].(map[string]any)
	for k, gv := range gm {
		wv, ok := wm[k]
		if !ok {
			p, _ := props[k].(map[string]any)
			if _, hasDefault := p["default"]; !hasDefault {
				return false
			}
			continue
		}
		if !extraDefaults(gv, wv, props[k]) {
			return false
		}
	}
	return len(wm) <= len(gm)
}
