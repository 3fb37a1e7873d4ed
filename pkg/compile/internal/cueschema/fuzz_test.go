package cueschema

import (
	"sync"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"

	"stitchkit.dev/stitchkit/pkg/validate"
)

type fuzzCase struct {
	name string
	ctx  *cue.Context
	s    cue.Value
	v    *validate.Validator
}

var (
	fuzzOnce  sync.Once
	fuzzCases []*fuzzCase
	fuzzMu    sync.Mutex // CUE values are not safe for concurrent use
)

// FuzzDifferential mutates instances (seeded from the corpus) and checks
// that CUE and the validator built from the emitted schema agree on each.
func FuzzDifferential(f *testing.F) {
	cases := loadCorpus(f)
	allow := allowed(f)
	fuzzOnce.Do(func() {
		for _, c := range cases {
			if len(c.refused) > 0 {
				continue
			}
			ctx := cuecontext.New()
			s := compileS(f, ctx, c.cue)
			b, err := translate(s)
			if err != nil {
				f.Fatal(err)
			}
			v, err := validate.Compile(b)
			if err != nil {
				f.Fatal(err)
			}
			fuzzCases = append(fuzzCases, &fuzzCase{name: c.name, ctx: ctx, s: s, v: v})
		}
	})
	idx := map[string]int{}
	for i, c := range fuzzCases {
		idx[c.name] = i
	}
	for _, c := range cases {
		i, ok := idx[c.name]
		if !ok {
			continue
		}
		for _, in := range append(append([]string{}, c.ok...), c.bad...) {
			f.Add(uint16(i), []byte(in))
		}
	}
	f.Fuzz(func(t *testing.T, i uint16, instance []byte) {
		c := fuzzCases[int(i)%len(fuzzCases)]
		val, err := validate.DecodeJSON(instance, nil)
		if err != nil {
			return
		}
		if _, ok := allow[c.name][string(instance)]; ok {
			return
		}
		fuzzMu.Lock()
		cueOK, err := cueAccepts(c.ctx, c.s, string(instance))
		fuzzMu.Unlock()
		if err != nil {
			return // not an instance CUE reads as JSON
		}
		if got := c.v.Validate(val) == nil; got != cueOK {
			t.Errorf("%s: %s: CUE accepted=%v, schema accepted=%v", c.name, instance, cueOK, got)
		}
	})
}
