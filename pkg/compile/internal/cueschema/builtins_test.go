package cueschema

import (
	"encoding/json"
	"math/rand/v2"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"

	"stitchkit.dev/stitchkit/pkg/validate"
)

// TestBuiltinPatterns: the patterns that stand for uuid.Valid and
// net.IPv4, IPv6 and IP accept exactly the strings CUE's builtins accept, on random
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
			src:      `import "net", #S: string & net.IPv6`,
			alphabet: []string{"0", "f", "F", "g", "1234", "12345", ":", "::", ".", "1.2.3.4", "%", "%eth0", " "},
			gen: func(r *rand.Rand, a []string) string {
				forms := []string{"::", "::1", "1::", "fe80::1%eth0", "2001:db8::8a2e:370:7334", "1:2:3:4:5:6:7:8",
					"::ffff:1.2.3.4", "1:2:3:4:5:6:1.2.3.4", "1::2:3:4:5:6:7", "1:2:3:4:5:6:7::", "a:b::c:1.2.3.4"}
				return mutate(r, forms[r.IntN(len(forms))], a)
			},
		},
		{
			src:      `import "net", #S: string & net.IP`,
			alphabet: []string{"0", "f", "1", "25", "256", ":", "::", ".", "%", "%z"},
			gen: func(r *rand.Rand, a []string) string {
				forms := []string{"::1", "1.2.3.4", "fe80::1%eth0", "::ffff:1.2.3.4", "255.0.0.1", "1:2:3:4:5:6:7:8"}
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
		pattern := stringPattern(t, b)
		goRE := regexp.MustCompile(pattern)
		var inputs []string
		var goSays []bool
		r := rand.New(rand.NewPCG(1, 2))
		accepted := 0
		for range 4000 {
			in := tc.gen(r, tc.alphabet)
			inputs = append(inputs, in)
			goSays = append(goSays, goRE.MatchString(in))
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
		// The pattern means the same in ECMA-262 (u flag).
		for i, m := range ecmaMatches(t, pattern, inputs) {
			if m != goSays[i] {
				t.Errorf("%s: ECMA-262 says %v on %q, Go RE2 says %v", tc.src, m, inputs[i], goSays[i])
			}
		}
	}
}

// stringPattern returns the pattern of the string arm of a translated
// builtin ({"pattern": …} or {"anyOf": [{"type": "string", "pattern":
// …}, …]}).
func stringPattern(t *testing.T, b []byte) string {
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if p, ok := doc["pattern"].(string); ok {
		return p
	}
	for _, a := range doc["anyOf"].([]any) {
		if p, ok := a.(map[string]any)["pattern"].(string); ok {
			return p
		}
	}
	t.Fatalf("no pattern in %s", b)
	return ""
}

// ecmaMatches runs pattern in node (ECMA-262, u flag) on each input.
func ecmaMatches(t *testing.T, pattern string, inputs []string) []bool {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed: this test needs a real ECMA-262 engine (apt-get install nodejs)")
	}
	in, _ := json.Marshal(map[string]any{"pattern": pattern, "inputs": inputs})
	script := `const p = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const re = new RegExp(p.pattern, 'u');
process.stdout.write(JSON.stringify(p.inputs.map(s => re.test(s))));`
	cmd := exec.Command(node, "-e", script)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var got []bool
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node output %s: %v", out, err)
	}
	return got
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
