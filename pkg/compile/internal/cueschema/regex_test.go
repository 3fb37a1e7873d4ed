package cueschema

import (
	"encoding/json"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestPortableRegexpECMA runs every emitted pattern in a real ECMA-262
// engine (node, with the u flag) on probe strings and requires the verdict
// Go's regexp gives the original pattern: the rewrite keeps the meaning.
// node must be installed (it is on the development machine and in CI); the
// test fails, not skips, without it.
func TestPortableRegexpECMA(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed: this test needs a real ECMA-262 engine (apt-get install nodejs)")
	}
	patterns := []string{
		`^t_[a-z0-9]+$`, `^a.b$`, `a\sb`, `^\S+$`, `(?i)^abc$`, `^\pL+$`, `^\p{Greek}+$`, `\Qa.b\E`,
		`^😀+$`, `[😀-😂]`, `a\z`, `\Aa`, `[[:alpha:]]+`, `(?P<x>a)b`, `[]a]`, `(?s)a.b`, `\x{41}`,
		`a{2,3}`, `a{,3}`, `x{`, `\-`, `[\-a]`, `\#`, `\d\D\w\W`, `\bword\b`, `[^a-z]`, `\x7f`, `\101`,
		`(a|b)*?c`, `^[^@\s]+@[^@\s]+$`, `^(?:[a-z]+\.)+[a-z]{2,}$`, `\\`, `\/`, `[\s\d]`, `(?U)a+`,
	}
	probes := []string{"", "a", "b", "ab", "abc", "ABC", "aBc", "a.b", "axb", "a\nb", "a\rb", "a\u2028b", "a b", "a\u00a0b",
		"a\u000bb", "t_1", "T_1", "😀", "😁", "😀😀", "é", "Ωμέγα", "x{", "-", "#", "1a_", "word", "a word b", "aa", "aaa", "aaaa",
		"Aa", "A", "\x7f", "]", "]a", "aab", "abbc", "c", "x@y", "x@@y", "a.bc", "foo.bar.com", "\\", "/", " ", "5", "a\tb"}
	type probe struct {
		Pattern string   `json:"pattern"`
		Inputs  []string `json:"inputs"`
	}
	var batch []probe
	var want [][]bool
	for _, p := range patterns {
		out, msg := PortableRegexp(p)
		if msg != "" {
			t.Errorf("%q refused: %s", p, msg)
			continue
		}
		re := regexp.MustCompile(p)
		if _, err := regexp.Compile(out); err != nil {
			t.Errorf("%q → %q: not valid RE2: %v", p, out, err)
			continue
		}
		batch = append(batch, probe{Pattern: out, Inputs: probes})
		var w []bool
		for _, in := range probes {
			w = append(w, re.MatchString(in))
			if got := regexp.MustCompile(out).MatchString(in); got != re.MatchString(in) {
				t.Errorf("%q → %q: Go reads the rewrite differently on %q", p, out, in)
			}
		}
		want = append(want, w)
	}
	in, _ := json.Marshal(batch)
	script := `const batch = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = batch.map(p => { try { const re = new RegExp(p.pattern, 'u'); return p.inputs.map(s => re.test(s)); } catch (e) { return String(e); } });
process.stdout.write(JSON.stringify(out));`
	cmd := exec.Command(node, "-e", script)
	cmd.Stdin = strings.NewReader(string(in))
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var got []any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("node output %s: %v", b, err)
	}
	for i, r := range got {
		res, ok := r.([]any)
		if !ok {
			t.Errorf("%q: ECMA-262 refuses the pattern: %v", batch[i].Pattern, r)
			continue
		}
		for j, m := range res {
			if m != want[i][j] {
				t.Errorf("pattern %q: ECMA-262 says %v on %q, Go RE2 says %v", batch[i].Pattern, m, probes[j], want[i][j])
			}
		}
	}
	// What has no common form is refused.
	for _, p := range []string{`(?m)^a$`, `\C`} {
		if _, msg := PortableRegexp(p); msg == "" {
			t.Errorf("%q: want a refusal", p)
		}
	}
}
