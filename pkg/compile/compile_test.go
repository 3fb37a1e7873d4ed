package compile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/format"
	"cuelang.org/go/cue/parser"

	"stitchkit.dev/stitchkit/pkg/conformance/conformancetest"
	"stitchkit.dev/stitchkit/pkg/graph"
)

func compileBytes(t testing.TB, dir string) []byte {
	t.Helper()
	g, err := compileDir(context.Background(), dir)
	if err != nil {
		t.Fatalf("Compile(%s): %v", dir, err)
	}
	b, err := g.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGoldenGraphs pins graph.json of both examples; -conformancetest.update refreshes.
func TestGoldenGraphs(t *testing.T) {
	for _, name := range []string{"minimal", "tasks"} {
		t.Run(name, func(t *testing.T) {
			got := compileBytes(t, filepath.Join("..", "..", "examples", name))
			conformancetest.Golden(t, filepath.Join("testdata", name+".graph.json"), got)
		})
	}
}

// TestDeterministic compiles examples/tasks twice and then a shuffled copy
// (top-level declarations, struct fields and files permuted) and expects
// identical bytes each time.
func TestDeterministic(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "tasks")
	first := compileBytes(t, dir)
	if second := compileBytes(t, dir); !bytes.Equal(first, second) {
		t.Fatal("two compilations of examples/tasks differ")
	}
	src, err := os.ReadFile(filepath.Join(dir, "tasks.cue"))
	if err != nil {
		t.Fatal(err)
	}
	// Shuffling moves comments around, and doc comments become JSON Schema
	// descriptions, so the reference for shuffled copies is the contract
	// with its comments stripped.
	base, err := parser.ParseFile("tasks.cue", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	shuffleFile(base, nil)
	baseSrc, err := format.Node(base)
	if err != nil {
		t.Fatal(err)
	}
	gb, err := compileFiles(context.Background(), map[string][]byte{"tasks.cue": baseSrc})
	if err != nil {
		t.Fatal(err)
	}
	first, err = gb.Encode()
	if err != nil {
		t.Fatal(err)
	}
	for seed := int64(1); seed <= 3; seed++ {
		f, err := parser.ParseFile("tasks.cue", src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		shuffleFile(f, rand.New(rand.NewSource(seed)))
		out, err := format.Node(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(out, baseSrc) {
			t.Fatal("shuffle changed nothing")
		}
		g, err := compileFiles(context.Background(), map[string][]byte{"shuffled.cue": out})
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, out)
		}
		b, err := g.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, first) {
			t.Errorf("seed %d: shuffled contract compiles to different bytes", seed)
		}
	}
}

// shuffleFile strips comments and (unless r is nil) permutes the declarations after the imports and, recursively,
// the fields of every struct literal (order is meaningless in CUE except
// inside lists).
func shuffleFile(f *ast.File, r *rand.Rand) {
	n := 0
	for n < len(f.Decls) {
		switch f.Decls[n].(type) {
		case *ast.Package, *ast.ImportDecl:
			n++
			continue
		}
		break
	}
	if r != nil {
		rest := f.Decls[n:]
		r.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
		ast.Walk(f, func(node ast.Node) bool {
			if s, ok := node.(*ast.StructLit); ok {
				r.Shuffle(len(s.Elts), func(i, j int) { s.Elts[i], s.Elts[j] = s.Elts[j], s.Elts[i] })
			}
			return true
		}, nil)
	}
	// Comments keep their original positions and would land elsewhere.
	ast.Walk(f, func(node ast.Node) bool {
		ast.SetComments(node, nil)
		return true
	}, nil)
}

// TestCUEVetExamples runs the upstream cue CLI (plain `cue vet`) on the
// examples, built from the pinned module.
func TestCUEVetExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the cue CLI")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		// go test puts its own go first on PATH: only a test binary run by
		// hand can get here, and an acceptance check must not vanish then.
		t.Fatal("go is not on PATH: this test builds the cue CLI with it")
	}
	cueBin := filepath.Join(t.TempDir(), "cue")
	build := exec.Command(goBin, "build", "-o", cueBin, "cuelang.org/go/cmd/cue")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build cue: %v\n%s", err, out)
	}
	vet := exec.Command(cueBin, "vet", "./examples/...")
	vet.Dir = filepath.Join("..", "..")
	if out, err := vet.CombinedOutput(); err != nil {
		t.Fatalf("cue vet ./examples/...: %v\n%s", err, out)
	}
}

// TestGraphHasNoCUE asserts invariant 5: pkg/graph links no cuelang.org
// package.
func TestGraphHasNoCUE(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("go is not on PATH: invariant 5 is checked with go list") // (go test puts it there)
	}
	out, err := exec.Command(goBin, "list", "-deps", "stitchkit.dev/stitchkit/pkg/graph").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "cuelang.org/") {
			t.Errorf("pkg/graph depends on %s", line)
		}
	}
}

// TestNoProjectorImport: the data path runs one way — the compiler
// produces the graph and never reaches forward into the projector (the
// checks that need projections live in pkg/check, above both).
func TestNoProjectorImport(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("go is not on PATH")
	}
	out, err := exec.Command(goBin, "list", "-deps", "stitchkit.dev/stitchkit/pkg/compile").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "stitchkit.dev/stitchkit/pkg/") && line != "stitchkit.dev/stitchkit/pkg/graph" && line != "stitchkit.dev/stitchkit/pkg/compile" && !strings.HasPrefix(line, "stitchkit.dev/stitchkit/pkg/compile/internal/") {
			t.Errorf("pkg/compile depends on %s", line)
		}
	}
}

func compileSrc(t *testing.T, src string) []Diagnostic {
	t.Helper()
	_, err := compileFiles(context.Background(), map[string][]byte{"c.cue": []byte(src)})
	var cerr *Error
	if err == nil {
		return nil
	}
	if !errors.As(err, &cerr) {
		t.Fatalf("unexpected error: %v", err)
	}
	return cerr.Diagnostics
}

const header = "package c\n\nimport \"stitchkit.dev/stitchkit/schema\"\n\nschema.#Contract & {\n\tname: \"c\"\n\tversion: \"1.0.0\"\n"

func schemaOf(t *testing.T, def string) map[string]any {
	t.Helper()
	return schemaWith(t, "", def)
}

// schemaWith is schemaOf with root declarations (definitions the schema
// refers to) placed before the contract.
func schemaWith(t *testing.T, decls, def string) map[string]any {
	t.Helper()
	src := strings.Replace(header, "schema.#Contract & {", decls+"\nschema.#Contract & {", 1)
	g, err := compileFiles(context.Background(), map[string][]byte{"c.cue": []byte(src +
		"\tservices: s: operations: op: {method: \"POST\", path: \"/\", desc: \"d\", #input: " + def + "}\n}\n")})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(g.Schema(g.Services[0].Operations[0].Input), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestNormalisation(t *testing.T) {
	m := schemaOf(t, "{n: int & >=1 & <=10}")
	n := m["properties"].(map[string]any)["n"].(map[string]any)
	if n["type"] != "integer" || n["minimum"] != 1.0 || n["maximum"] != 10.0 || n["allOf"] != nil {
		t.Errorf("int bounds not merged into one integer schema: %v", n)
	}
	if m["$schema"] != jsonSchemaDialect || m["description"] != nil {
		t.Errorf("root: %v", m)
	}
	m = schemaWith(t, "#T: {a: string}", "#T")
	if m["$ref"] != nil || m["$defs"] != nil || m["type"] != "object" {
		t.Errorf("single-use root $ref not inlined: %v", m)
	}
}

func TestMetaAndDefaults(t *testing.T) {
	g, err := compileFiles(context.Background(), map[string][]byte{"c.cue": []byte(header + `
	meta: {a: 1, b: 2}
	services: s: {
		meta: {b: 3}
		operations: {
			x: {method: "GET", path: "/{id}", desc: "d", meta: {c: null}}
		}
	}
	services: t: operations: y: {method: "GET", path: "/", desc: "d", scope: "admin", expose: ["CLI", "HTTP"]}
}
`)})
	if err != nil {
		t.Fatal(err)
	}
	x := g.Operation("s", "x")
	if string(x.Meta) != `{"a":1,"b":3,"c":null}` || x.Scope != "public" || !x.ParamsSynthesized {
		t.Errorf("x: meta %s scope %s synth %v", x.Meta, x.Scope, x.ParamsSynthesized)
	}
	if got := g.Service("s").Prefix; got != "/s" {
		t.Errorf("prefix %q", got)
	}
	y := g.Operation("t", "y")
	if !slices.Equal(y.Expose, []graph.Transport{"HTTP", "CLI"}) || y.Scope != "admin" {
		t.Errorf("y: expose %v scope %s", y.Expose, y.Scope)
	}
	if g.Policy.MCP.SchemaValidation != "throw" {
		t.Errorf("schemaValidation default %q", g.Policy.MCP.SchemaValidation)
	}
	if _, ok := g.Sources["services.s.operations.x"]; !ok {
		t.Errorf("no source for services.s.operations.x: %v", g.Sources)
	}
}

func TestAllDiagnosticsReported(t *testing.T) {
	ds := compileSrc(t, header+`
	services: s: operations: {
		a: {method: "GET", path: "/{id}", desc: "d", #params: {x: string}, errors: ["NOPE"]}
		b: {method: "GET", path: "/{other}", desc: "d"}
	}
}
`)
	var rules []string
	for _, d := range ds {
		rules = append(rules, d.Rule)
	}
	// duplicate-route needs the projector: pkg/check reports it.
	want := []string{"params-cover-path", "undeclared-error"}
	for _, w := range want {
		if !slices.Contains(rules, w) {
			t.Errorf("missing %s in %v", w, ds)
		}
	}
	if !slices.IsSortedFunc(ds, func(a, b Diagnostic) int {
		if posLess(a.Pos, b.Pos) {
			return -1
		}
		if posLess(b.Pos, a.Pos) {
			return 1
		}
		return 0
	}) {
		t.Errorf("diagnostics not sorted: %v", ds)
	}
}

func FuzzCompile(f *testing.F) {
	for _, p := range []string{"../../examples/minimal/minimal.cue", "../../examples/tasks/tasks.cue"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	archives, _ := filepath.Glob("../../testdata/invalid/*.txtar")
	for _, a := range archives {
		b, _ := os.ReadFile(a)
		if _, after, ok := bytes.Cut(b, []byte("-- contract/c.cue --\n")); ok {
			src, _, _ := bytes.Cut(after, []byte("-- want/"))
			f.Add(src)
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > 1<<14 {
			return
		}
		g, err := compileFiles(context.Background(), map[string][]byte{"c.cue": src})
		if err != nil {
			if strings.Contains(err.Error(), "internal compiler error") {
				t.Fatalf("panic: %v", err)
			}
			return
		}
		if _, err := g.Encode(); err != nil {
			t.Fatalf("encode: %v", err)
		}
		if err := g.Validate(); err != nil {
			t.Fatalf("compiled graph is inconsistent: %v", err)
		}
	})
}
