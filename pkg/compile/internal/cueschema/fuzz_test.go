package cueschema

import (
	"errors"
	"sync"
	"testing"
	"time"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"

	"stitchkit.dev/stitchkit/pkg/validate"
)

type fuzzCase struct {
	name   string
	ctx    *cue.Context
	s      cue.Value
	v      *validate.Validator
	schema []byte
}

var (
	fuzzOnce  sync.Once
	fuzzCases []*fuzzCase
	fuzzMu    sync.Mutex // CUE values are not safe for concurrent use
)

// FuzzDifferential mutates instances (seeded from the corpus) and checks
// that CUE and the validator built from the emitted schema agree on each,
// after the decode and defaults the mounts apply, and on the value a
// handler gets.
func FuzzDifferential(f *testing.F) {
	cases := loadCorpus(f)
	allow := allowed(f)
	allowDefaults := allowList(f, true)
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
			fuzzCases = append(fuzzCases, &fuzzCase{name: c.name, ctx: ctx, s: s, v: v, schema: b})
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
		if _, ok := allow[c.name][string(instance)]; ok {
			return
		}
		fuzzMu.Lock()
		cv := cueJudge(c.ctx, c.s, instance)
		fuzzMu.Unlock()
		ov := ourJudge(c.v, instance)
		if cv.ok != ov.ok {
			t.Errorf("%s: %s: CUE accepted=%v, schema accepted=%v", c.name, instance, cv.ok, ov.ok)
		} else if _, listed := allowDefaults[c.name][string(instance)]; cv.ok && !listed && !sameCompletion(ov.value, cv.value, c.schema) {
			t.Errorf("%s: %s: CUE completes it to %s, the handler gets %v", c.name, instance, cv.value, ov.value)
		}
	})
}

// FuzzTranslate mutates the schemas themselves (seeded with the corpus
// cases and their instances): whatever CUE a user writes, the translator
// returns a schema or a refusal, quickly and without a panic, and where it
// returns a schema, CUE and the validator built from it agree on the
// instance.
func FuzzTranslate(f *testing.F) {
	allow := allowed(f)
	// The allow-listed disagreements, by schema source.
	allowedIn := map[string]map[string]string{}
	for _, c := range loadCorpus(f) {
		for _, in := range append(append([]string{}, c.ok...), c.bad...) {
			f.Add(c.cue, in)
		}
		if m := allow[c.name]; m != nil {
			allowedIn[c.cue] = m
		}
	}
	f.Fuzz(func(t *testing.T, src, instance string) {
		if _, ok := allowedIn[src][instance]; ok {
			return
		}
		if len(src) > 4096 {
			return
		}
		ctx := cuecontext.New()
		v := ctx.CompileString(src)
		if v.Err() != nil || v.Validate() != nil {
			return
		}
		s := v.LookupPath(cue.ParsePath("#S"))
		if !s.Exists() || s.Err() != nil {
			return
		}
		start := time.Now()
		b, err := translate(s)
		if d := time.Since(start); d > 10*time.Second {
			t.Fatalf("translating took %v", d)
		}
		var terr *Error
		if errors.As(err, &terr) {
			return // a refusal (positioned, with a hint: TestCorpus)
		}
		if err != nil {
			t.Fatal(err)
		}
		vv, err := validate.Compile(b)
		if err != nil {
			t.Fatalf("the emitted schema does not compile: %v\n%s", err, b)
		}
		cv := cueJudge(ctx, s, []byte(instance))
		if got := ourJudge(vv, []byte(instance)).ok; got != cv.ok {
			t.Errorf("%q on %s: CUE accepted=%v, schema accepted=%v\n%s", src, instance, cv.ok, got, b)
		}
	})
}
