package cueschema

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/format"
	"cuelang.org/go/encoding/jsonschema"
	"golang.org/x/tools/txtar"

	"stitchkit.dev/stitchkit/pkg/validate"
)

// A corpus nobody here wrote (issue 17): the JSON-Schema-Test-Suite that
// CUE ships (encoding/jsonschema/testdata/external/tests/draft2020-12)
// and CUE's own generator cases (encoding/jsonschema/testdata/generate),
// both read from the module cache of the CUE version this module builds
// with. For the suite, CUE's decoder (encoding/jsonschema.Extract) turns
// each schema into CUE; for the generator cases the CUE is given. Then
// CUE judges each instance, our translator translates the CUE, and
// pkg/validate judges the same instance after the decode and defaults the
// mounts apply (judge_test.go); where both accept, the value a handler
// gets must be CUE's completion. A refusal of the translator (a
// positioned reason) is allowed and counted; every disagreement is in
// testdata/roundtrip-allowlist.txt with its reason (mirrored in
// docs/contract-language.md).
//
//	go test -run TestRoundTrip -v ./pkg/compile/internal/cueschema
//
// prints the counts.

// cueModuleDir is the directory of the CUE module in the module cache.
func cueModuleDir(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "cuelang.org/go").Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		t.Fatalf("locating cuelang.org/go in the module cache (go list -m cuelang.org/go): %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "encoding", "jsonschema", "testdata")); err != nil {
		t.Fatalf("CUE's test data is not in the module cache (go mod download cuelang.org/go): %v", err)
	}
	return dir
}

// rtCase is one schema of the round trip and its instances.
type rtCase struct {
	id        string // file#group
	ctx       *cue.Context
	schema    cue.Value
	instances [][]byte
	names     []string // instance ids within the case
}

type rtCounts struct {
	schemas, instances, refusals, extractFailures, disagreements, allowed, completions int
}

func TestRoundTrip(t *testing.T) {
	dir := cueModuleDir(t)
	allow := roundTripAllowList(t)
	used := map[string]bool{}
	var c rtCounts
	var cases []*rtCase
	suite := filepath.Join(dir, "encoding", "jsonschema", "testdata", "external", "tests", "draft2020-12")
	files, _ := filepath.Glob(filepath.Join(suite, "*.json"))
	for _, f := range files {
		cases = append(cases, suiteCases(t, f, &c)...)
	}
	gens, _ := filepath.Glob(filepath.Join(dir, "encoding", "jsonschema", "testdata", "generate", "*.txtar"))
	for _, f := range gens {
		cases = append(cases, generateCases(t, f)...)
	}
	for _, rc := range cases {
		c.schemas++
		b, err := translate(rc.schema)
		var terr *Error
		if errors.As(err, &terr) {
			c.refusals++
			t.Logf("%s: refused: %v", rc.id, oneLine(err))
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", rc.id, err)
			continue
		}
		v, err := validate.Compile(b)
		if err != nil {
			t.Errorf("%s: the emitted schema does not compile: %v\n%s", rc.id, err, b)
			continue
		}
		for i, in := range rc.instances {
			c.instances++
			key := rc.id + "\t" + rc.names[i]
			cv := cueJudge(rc.ctx, rc.schema, in)
			ov := ourJudge(v, in)
			var problem string
			switch {
			case cv.ok != ov.ok:
				problem = fmt.Sprintf("CUE accepted=%v, pkg/validate accepted=%v", cv.ok, ov.ok)
			case cv.ok && !sameCompletion(ov.value, cv.value, b):
				got, _ := json.Marshal(ov.value)
				problem = fmt.Sprintf("CUE completes it to %s, the handler gets %s", cv.value, got)
				c.completions++
			}
			if problem == "" {
				continue
			}
			c.disagreements++
			if reason, ok := allow[key]; ok {
				used[key] = true
				c.allowed++
				t.Logf("allowed: %s %s: %s", key, in, reason)
				continue
			}
			src, _ := format.Node(rc.schema.Syntax())
			t.Errorf("%s %s: %s\nCUE: %s\nschema: %s", key, in, problem, src, b)
		}
	}
	if !t.Failed() {
		for k := range allow {
			if !used[k] {
				t.Errorf("round-trip allow-list entry %q is not needed any more: remove it", k)
			}
		}
	}
	t.Logf("round trip: %d schemas (%d the decoder could not extract, not counted), %d instances, %d refusals, %d disagreements (%d of them in the value a handler gets), %d allow-listed",
		c.schemas, c.extractFailures, c.instances, c.refusals, c.disagreements, c.completions, c.allowed)
}

// asDefinition moves the schema Extract writes at the top of a file into
// a definition #S, as a contract declares its schemas (#input: …); the
// definitions and hidden fields it refers to stay where they are.
func asDefinition(f *ast.File) *ast.File {
	var top, body []ast.Decl
	for _, d := range f.Decls {
		switch x := d.(type) {
		case *ast.Package, *ast.ImportDecl, *ast.Attribute, *ast.CommentGroup:
			top = append(top, d)
		case *ast.Field:
			if id, ok := x.Label.(*ast.Ident); ok && (strings.HasPrefix(id.Name, "#") || strings.HasPrefix(id.Name, "_")) {
				top = append(top, d)
				continue
			}
			body = append(body, d)
		default:
			body = append(body, d)
		}
	}
	var value ast.Expr = &ast.StructLit{Elts: body}
	if len(body) == 1 {
		if e, ok := body[0].(*ast.EmbedDecl); ok {
			value = e.Expr
		}
	}
	top = append(top, &ast.Field{Label: ast.NewIdent("#S"), Value: value})
	return &ast.File{Filename: f.Filename, Decls: top}
}

// suiteCases reads one file of the JSON-Schema-Test-Suite: a list of
// groups, each a schema and its tests.
func suiteCases(t *testing.T, file string, c *rtCounts) []*rtCase {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var groups []struct {
		Description string          `json:"description"`
		Schema      json.RawMessage `json:"schema"`
		Tests       []struct {
			Description string          `json:"description"`
			Data        json.RawMessage `json:"data"`
		} `json:"tests"`
	}
	if err := json.Unmarshal(data, &groups); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var out []*rtCase
	base := strings.TrimSuffix(filepath.Base(file), ".json")
	for gi, g := range groups {
		ctx := cuecontext.New()
		sv := ctx.CompileBytes(g.Schema)
		if sv.Err() != nil {
			c.extractFailures++
			continue
		}
		f, err := jsonschema.Extract(sv, &jsonschema.Config{StrictFeatures: false})
		if err != nil {
			c.extractFailures++
			continue
		}
		v := ctx.BuildFile(asDefinition(f))
		if v.Err() != nil {
			c.extractFailures++
			continue
		}
		v = v.LookupPath(cue.ParsePath("#S"))
		rc := &rtCase{id: fmt.Sprintf("%s#%d", base, gi), ctx: ctx, schema: v}
		for ti, tc := range g.Tests {
			rc.instances = append(rc.instances, []byte(tc.Data))
			rc.names = append(rc.names, fmt.Sprint(ti))
		}
		out = append(out, rc)
	}
	return out
}

// generateCases reads one of CUE's generator cases: test.cue (the
// schema, at the path a "#path:" line of the comment names, else the
// root) and the data of datatest/*.cue.
func generateCases(t *testing.T, file string) []*rtCase {
	a, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	path := ""
	sc := bufio.NewScanner(bytes.NewReader(a.Comment))
	for sc.Scan() {
		if p, ok := strings.CutPrefix(sc.Text(), "#path:"); ok {
			path = strings.TrimSpace(p)
		}
	}
	ctx := cuecontext.New()
	var schema cue.Value
	var tests []cue.Value
	for _, f := range a.Files {
		switch {
		case f.Name == "test.cue":
			schema = ctx.CompileBytes(f.Data)
		case strings.HasPrefix(f.Name, "datatest/"):
			tests = append(tests, ctx.CompileBytes(f.Data))
		}
	}
	if !schema.Exists() || schema.Err() != nil {
		t.Fatalf("%s: test.cue: %v", file, schema.Err())
	}
	if path != "" {
		schema = schema.LookupPath(cue.ParsePath(path))
	}
	rc := &rtCase{id: "generate/" + strings.TrimSuffix(filepath.Base(file), ".txtar"), ctx: ctx, schema: schema}
	for _, tv := range tests {
		it, err := tv.Fields()
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for it.Next() {
			d := it.Value().LookupPath(cue.ParsePath("data"))
			if !d.Exists() {
				continue
			}
			b, err := d.MarshalJSON()
			if err != nil {
				t.Fatalf("%s: %s: %v", file, it.Selector(), err)
			}
			rc.instances = append(rc.instances, b)
			rc.names = append(rc.names, it.Selector().String())
		}
	}
	return []*rtCase{rc}
}

// roundTripAllowList reads testdata/roundtrip-allowlist.txt:
// CASE<TAB>INSTANCE<TAB>REASON, CASE as file#group or generate/name,
// INSTANCE the test's index or name.
func roundTripAllowList(t *testing.T) map[string]string {
	b, err := os.ReadFile("testdata/roundtrip-allowlist.txt")
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, l := range lines(b) {
		if strings.HasPrefix(l, "#") {
			continue
		}
		parts := strings.SplitN(l, "\t", 3)
		if len(parts) != 3 {
			t.Fatalf("roundtrip-allowlist: %q: want CASE<TAB>INSTANCE<TAB>REASON", l)
		}
		out[parts[0]+"\t"+parts[1]] = parts[2]
	}
	return out
}

var _ = slices.Contains[[]string]
