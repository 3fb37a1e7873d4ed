package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// Arbitrary flag values never panic the command tree; a run succeeds or
// exits 1 with one tool error envelope on stderr.
func FuzzFlagValues(f *testing.F) {
	a, _ := flagsApp(f)
	for _, seed := range [][4]string{
		{"3", "0.5", `{"k":"v"}`, "a"},
		{"1.5", "x", "[1]", `["a","b"]`},
		{"-0", "1e999", `{"k":`, `[`},
		{"99999999999999999999999", "NaN", "null", "--"},
		{"", "", "", ""},
	} {
		f.Add(seed[0], seed[1], seed[2], seed[3])
	}
	f.Fuzz(func(t *testing.T, count, ratio, opts, tag string) {
		r := runApp(t, a, "", "make_thing", "--id", "x", "--json", "--count="+count, "--ratio="+ratio, "--opts="+opts, "--tags="+tag, "--opts.k="+tag)
		switch r.code {
		case 0:
			if r.stdout != `{"status":"ok"}`+"\n" {
				t.Fatalf("stdout %q", r.stdout)
			}
		case 1:
			line := strings.TrimSuffix(r.stderr, "\n")
			var env struct{ Error string }
			if strings.Contains(line, "\n") || json.Unmarshal([]byte(line), &env) != nil || env.Error == "" {
				t.Fatalf("stderr %q", r.stderr)
			}
		default:
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
	})
}
