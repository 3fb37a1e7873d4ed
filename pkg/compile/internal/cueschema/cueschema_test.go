package cueschema

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	"golang.org/x/tools/txtar"

	"stitchkit.dev/stitchkit/pkg/conformance/conformancetest"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/validate"
)

// -conformancetest.update (rewrite the schema.json sections of testdata/corpus/*.txtar) is
// the repository's one update switch, conformancetest's.
var update = conformancetest.Update

// The corpus: one txtar archive per construct.
//
//	-- schema.cue --   CUE declaring #S (imports allowed)
//	-- ok --           instances CUE accepts, one JSON value per line
//	-- bad --          instances CUE refuses
//	-- schema.json --  the expected translation (canonical JSON)
//	-- refused --      instead of schema.json: substrings the refusal must hold
//
// TestCorpus checks every instance with CUE itself and with pkg/validate
// built from the emitted schema, after the decode and defaults the mounts
// apply (see judge_test.go): the two verdicts must agree with each
// other and with the section the instance is in, except where the
// allow-list (testdata/allowlist.txt, mirrored in docs/contract-language.md)
// names the disagreement.

type corpusCase struct {
	name    string
	file    string
	archive *txtar.Archive
	cue     string
	ok, bad []string
	want    []byte // schema.json
	refused []string
}

func loadCorpus(t testing.TB) []*corpusCase {
	t.Helper()
	files, err := filepath.Glob("testdata/corpus/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	var out []*corpusCase
	for _, f := range files {
		a, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c := &corpusCase{name: strings.TrimSuffix(filepath.Base(f), ".txtar"), file: f, archive: a}
		for _, sec := range a.Files {
			switch sec.Name {
			case "schema.cue":
				c.cue = string(sec.Data)
			case "ok":
				c.ok = lines(sec.Data)
			case "bad":
				c.bad = lines(sec.Data)
			case "schema.json":
				c.want = bytes.TrimSpace(sec.Data)
			case "refused":
				c.refused = lines(sec.Data)
			default:
				t.Fatalf("%s: unknown section %q", f, sec.Name)
			}
		}
		if c.cue == "" {
			t.Fatalf("%s: no schema.cue", f)
		}
		out = append(out, c)
	}
	return out
}

func lines(b []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "//") {
			out = append(out, l)
		}
	}
	return out
}

// defaultsOnly marks an allow-list reason whose disagreement is in the
// value the runner hands a handler (TestDefaultsMatchCUE), not in what is
// accepted.
const defaultsOnly = "defaults only: "

// allowed is the allow-list: case name → instances whose disagreement is
// deliberate. TestCorpus reads the entries about acceptance, and
// TestDefaultsMatchCUE those whose reason starts with [defaultsOnly].
func allowed(t testing.TB) map[string]map[string]string {
	return allowList(t, false)
}

func allowList(t testing.TB, defaults bool) map[string]map[string]string {
	t.Helper()
	b, err := os.ReadFile("testdata/allowlist.txt")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]string{}
	for _, l := range lines(b) {
		if strings.HasPrefix(l, "#") {
			continue
		}
		parts := strings.SplitN(l, "\t", 3)
		if len(parts) != 3 {
			t.Fatalf("allowlist: %q: want CASE<TAB>INSTANCE<TAB>REASON", l)
		}
		if strings.HasPrefix(parts[2], defaultsOnly) != defaults {
			continue
		}
		if out[parts[0]] == nil {
			out[parts[0]] = map[string]string{}
		}
		out[parts[0]][parts[1]] = parts[2]
	}
	return out
}

// cueAccepts is CUE's verdict: the schema unified with the instance has no
// error and is concrete (cue vet -c).
func cueAccepts(ctx *cue.Context, s cue.Value, instance string) (bool, error) {
	x := ctx.CompileString(instance)
	if err := x.Err(); err != nil {
		return false, err
	}
	return s.Unify(x).Validate(cue.Concrete(true)) == nil, nil
}

func compileS(t testing.TB, ctx *cue.Context, src string) cue.Value {
	t.Helper()
	v := ctx.CompileString(src)
	if err := v.Validate(); err != nil {
		t.Fatalf("schema.cue: %v", err)
	}
	s := v.LookupPath(cue.ParsePath("#S"))
	if !s.Exists() {
		t.Fatalf("schema.cue declares no #S")
	}
	return s
}

// translate runs the translator and canonicalises its output.
func translate(s cue.Value) ([]byte, error) {
	doc, err := New(nil).Schema(s)
	if err != nil {
		return nil, err
	}
	return graph.CanonicalSchema(doc)
}

func TestCorpus(t *testing.T) {
	cases := loadCorpus(t)
	allow := allowed(t)
	used := map[string]bool{}
	instances, constructs := 0, 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := cuecontext.New()
			s := compileS(t, ctx, c.cue)
			got, err := translate(s)
			if len(c.refused) > 0 {
				var terr *Error
				if !errors.As(err, &terr) {
					t.Fatalf("want a refusal holding %q, got schema %s (err %v)", c.refused, got, err)
				}
				for _, want := range c.refused {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("refusal %q does not hold %q", err, want)
					}
				}
				for _, r := range terr.Refusals {
					if r.Hint == "" && !strings.Contains(r.Message, "not a valid") {
						t.Errorf("refusal without a hint: %v", r)
					}
				}
				constructs++
				return
			}
			if err != nil {
				t.Fatalf("translate: %v", err)
			}
			constructs++
			if update() {
				c.setSchema(t, got)
			} else if !bytes.Equal(got, c.want) {
				t.Errorf("schema:\n got %s\nwant %s", got, c.want)
			}
			v, err := validate.Compile(got)
			if err != nil {
				t.Fatalf("validate.Compile: %v\n%s", err, got)
			}
			check := func(in string, want bool) {
				instances++
				cueOK := cueJudge(ctx, s, []byte(in)).ok
				schemaOK := ourJudge(v, []byte(in)).ok
				if cueOK != want {
					t.Errorf("corpus error: CUE says %s accepted=%v, but it is in the %v section", in, cueOK, map[bool]string{true: "ok", false: "bad"}[want])
				}
				if schemaOK != cueOK {
					if reason, ok := allow[c.name][in]; ok {
						used[c.name+"\t"+in] = true
						t.Logf("allowed disagreement on %s: %s", in, reason)
						return
					}
					t.Errorf("DISAGREEMENT on %s: CUE accepted=%v, schema accepted=%v\nschema: %s", in, cueOK, schemaOK, got)
				}
			}
			for _, in := range c.ok {
				check(in, true)
			}
			for _, in := range c.bad {
				check(in, false)
			}
		})
	}
	if !update() && !t.Failed() {
		for name, m := range allow {
			for in := range m {
				if !used[name+"\t"+in] {
					t.Errorf("allow-list entry %s %s is not needed any more: remove it", name, in)
				}
			}
		}
	}
	t.Logf("%d constructs, %d instances", constructs, instances)
	if constructs < 60 || instances < 400 {
		t.Errorf("the corpus must cover at least 60 constructs and 400 instances (has %d, %d)", constructs, instances)
	}
}

func (c *corpusCase) setSchema(t *testing.T, schema []byte) {
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, schema, "", "  "); err != nil {
		t.Fatal(err)
	}
	_ = pretty
	found := false
	for i := range c.archive.Files {
		if c.archive.Files[i].Name == "schema.json" {
			c.archive.Files[i].Data = append(schema, '\n')
			found = true
		}
	}
	if !found {
		c.archive.Files = append(c.archive.Files, txtar.File{Name: "schema.json", Data: append(schema, '\n')})
	}
	if err := os.WriteFile(c.file, txtar.Format(c.archive), 0o644); err != nil {
		t.Fatal(err)
	}
}

var _ = slices.Sort[[]string]
