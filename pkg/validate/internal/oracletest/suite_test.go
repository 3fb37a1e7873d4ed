package oracletest

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"stitchkit.dev/stitchkit/pkg/validate/internal/engine"
	"strings"
	"testing"
)

// TestSuite runs the official JSON-Schema-Test-Suite (draft 2020-12, the
// files for the keywords this engine implements; see
// engine/testdata/JSON-Schema-Test-Suite/README.md) through the engine and
// through santhosh-tekuri/jsonschema/v6. Every case must give the suite's
// answer, and the two validators must agree. A group whose schema the
// engine refuses (a keyword it does not implement: $id-relative or remote
// references, $dynamicRef, …) must be listed in engine/testdata/refused.txt with
// the reason, so a refusal is a decision, never an accident.
func TestSuite(t *testing.T) {
	refused := readRefused(t)
	files, err := filepath.Glob("../engine/testdata/JSON-Schema-Test-Suite/tests/draft2020-12/*.json")
	if err != nil {
		t.Fatal(err)
	}
	opt, _ := filepath.Glob("../engine/testdata/JSON-Schema-Test-Suite/tests/draft2020-12/optional/*.json")
	files = append(files, opt...)
	if len(files) < 30 {
		t.Fatalf("only %d suite files found", len(files))
	}
	var cases, groups, refusedGroups int
	seen := map[string]bool{}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var suite []struct {
			Description string          `json:"description"`
			Schema      json.RawMessage `json:"schema"`
			Tests       []struct {
				Description string          `json:"description"`
				Data        json.RawMessage `json:"data"`
				Valid       bool            `json:"valid"`
			} `json:"tests"`
		}
		if err := json.Unmarshal(raw, &suite); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		name := strings.TrimPrefix(file, "../engine/testdata/JSON-Schema-Test-Suite/tests/draft2020-12/")
		for _, g := range suite {
			groups++
			key := name + "\t" + g.Description
			doc := decode(t, g.Schema)
			s, err := engine.Compile(doc, nil)
			if err != nil {
				var ce *engine.CompileError
				if !errors.As(err, &ce) {
					t.Errorf("%s: %q: compile error of type %T: %v", name, g.Description, err, err)
				}
				if _, ok := refused[key]; !ok {
					t.Errorf("%s: %q: refused but not listed in engine/testdata/refused.txt: %v", name, g.Description, err)
				}
				seen[key] = true
				refusedGroups++
				continue
			}
			if _, ok := refused[key]; ok {
				t.Errorf("%s: %q is listed in engine/testdata/refused.txt but compiles", name, g.Description)
			}
			o := oracle(doc, nil)
			if o == nil {
				t.Errorf("%s: %q: santhosh-tekuri refuses a schema the engine compiles", name, g.Description)
			}
			for _, tc := range g.Tests {
				cases++
				v := decode(t, tc.Data)
				got := s.Valid(v)
				if got != tc.Valid {
					t.Errorf("%s: %q / %q: data %s: engine says valid=%v, the suite %v", name, g.Description, tc.Description, short(tc.Data), got, tc.Valid)
				}
				if issues := s.Validate(v); (issues == nil) != got {
					t.Errorf("%s: %q / %q: Valid=%v but Validate reports %v", name, g.Description, tc.Description, got, issues)
				}
				if o != nil {
					if ov := oracleValid(o, v); ov != got {
						t.Errorf("%s: %q / %q: data %s: engine valid=%v, santhosh-tekuri %v (suite: %v)", name, g.Description, tc.Description, short(tc.Data), got, ov, tc.Valid)
					}
				}
			}
		}
	}
	for key := range refused {
		if !seen[key] {
			t.Errorf("engine/testdata/refused.txt lists %q, which no suite file has", key)
		}
	}
	t.Logf("%d files, %d groups (%d refused at compile time), %d cases judged by both validators", len(files), groups, refusedGroups, cases)
}

// readRefused reads engine/testdata/refused.txt: FILE<TAB>GROUP<TAB>REASON lines.
func readRefused(t *testing.T) map[string]string {
	f, err := os.Open("../engine/testdata/refused.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.SplitN(line, "\t", 3)
		if len(parts) != 3 || parts[2] == "" {
			t.Fatalf("engine/testdata/refused.txt: %q is not FILE<TAB>GROUP<TAB>REASON", line)
		}
		out[parts[0]+"\t"+parts[1]] = parts[2]
	}
	return out
}
