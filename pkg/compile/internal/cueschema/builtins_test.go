package cueschema

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"

	"stitchkit.dev/stitchkit/pkg/validate"
)

// TestBuiltinPatterns: the patterns that stand for uuid.Valid and
// net.IPv4 accept exactly the strings CUE's builtins accept, on random
// strings built from the characters their grammars use.
func TestBuiltinPatterns(t *testing.T) {
	for _, tc := range []struct {
		src      string
		alphabet []string
		gen      func(r *rand.Rand, alphabet []string) string
	}{
		{
			src:      `import "uuid", #S: uuid.Valid`,
			alphabet: []string{"0", "9", "a", "f", "A", "F", "g", "-", "{", "}", "urn:uuid:", "URN:uuid:", "urn:", "x"},
			gen: func(r *rand.Rand, a []string) string {
				// Start from a valid form and mutate it.
				forms := []string{"6ba7b810-9dad-11d1-80b4-00c04fd430c8", "{6ba7b810-9dad-11d1-80b4-00c04fd430c8}",
					"urn:uuid:6ba7b810-9dad-11d1-80b4-00c04fd430c8", "6ba7b8109dad11d180b400c04fd430c8"}
				return mutate(r, forms[r.IntN(len(forms))], a)
			},
		},
		{
			src:      `import "net", #S: string & net.IPv4`,
			alphabet: []string{"0", "1", "2", "5", "9", "00", "25", "255", "256", ".", ":", " ", "x"},
			gen: func(r *rand.Rand, a []string) string {
				forms := []string{"1.2.3.4", "255.255.255.255", "0.0.0.0", "10.200.30.40"}
				return mutate(r, forms[r.IntN(len(forms))], a)
			},
		},
	} {
		ctx := cuecontext.New()
		v := ctx.CompileString(strings.Replace(tc.src, ", #S", "\n#S", 1))
		s := v.LookupPath(cue.ParsePath("#S"))
		b, err := translate(s)
		if err != nil {
			t.Fatal(err)
		}
		val, err := validate.Compile(b)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, 2))
		accepted := 0
		for range 3000 {
			in := tc.gen(r, tc.alphabet)
			j, _ := json.Marshal(in)
			cueOK, err := cueAccepts(ctx, s, string(j))
			if err != nil {
				t.Fatal(err)
			}
			x, _ := validate.DecodeJSON(j, nil)
			if got := val.Validate(x) == nil; got != cueOK {
				t.Errorf("%s: %s: CUE accepted=%v, schema accepted=%v", tc.src, j, cueOK, got)
			}
			if cueOK {
				accepted++
			}
		}
		if accepted < 100 {
			t.Errorf("%s: only %d of the random strings are valid: the generator tests little", tc.src, accepted)
		}
	}
}

// mutate applies up to three random edits (replace, insert, delete) to s.
func mutate(r *rand.Rand, s string, alphabet []string) string {
	for range r.IntN(4) {
		if len(s) == 0 {
			s = alphabet[r.IntN(len(alphabet))]
			continue
		}
		i := r.IntN(len(s))
		switch r.IntN(3) {
		case 0:
			s = s[:i] + alphabet[r.IntN(len(alphabet))] + s[i+1:]
		case 1:
			s = s[:i] + alphabet[r.IntN(len(alphabet))] + s[i:]
		default:
			s = s[:i] + s[i+1:]
		}
	}
	return s
}
