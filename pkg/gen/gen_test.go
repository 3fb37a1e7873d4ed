package gen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/tools/txtar"

	"stitchkit.dev/stitchkit/pkg/check"
	"stitchkit.dev/stitchkit/pkg/conformance/conformancetest"
	"stitchkit.dev/stitchkit/pkg/graph"
)

// -conformancetest.update is the repository's one update switch (conformancetest's).
var update = conformancetest.Update

// contracts are the contracts whose generated code is golden-tested and
// compiled: the two examples, the mapping corpus, and the mounts' probe
// contracts (internal/mounttest/testdata/unseen: Go keywords, non-ASCII
// and clashing names, recursive types, int64, unions, non-object outputs),
// which are compiled and run but not golden-tested.
var contracts = []struct{ name, dir string }{
	{"tasks", "../../examples/tasks"},
	{"minimal", "../../examples/minimal"},
	{"mappings", "testdata/mappings"},
	{"library", "../../internal/mounttest/testdata/unseen/library"},
	{"fleet", "../../internal/mounttest/testdata/unseen/fleet"},
	{"ledger", "../../internal/mounttest/testdata/unseen/ledger"},
}

var (
	graphsOnce sync.Once
	graphs     map[string]*graph.Graph
	graphsErr  error
)

// testGraphs compiles every test contract once per test binary, and builds
// the hand-written schema corpus (testdata/schemas.txtar).
func testGraphs(t *testing.T) map[string]*graph.Graph {
	t.Helper()
	graphsOnce.Do(func() {
		graphs = map[string]*graph.Graph{}
		for _, c := range contracts {
			g, err := check.Compile(context.Background(), c.dir)
			if err != nil {
				graphsErr = fmt.Errorf("%s: %w", c.name, err)
				return
			}
			graphs[c.name] = g
		}
		g, err := schemaCorpus()
		if err != nil {
			graphsErr = err
			return
		}
		graphs["schemas"] = g
	})
	if graphsErr != nil {
		t.Fatal(graphsErr)
	}
	return graphs
}

// schemaCorpus builds a graph with one CLI command per schema of
// testdata/schemas.txtar: JSON Schema constructs the CUE compiler does not
// (yet) emit but a graph may hold (defaults, type arrays, patternProperties,
// allOf, "$ref": "#", bounds beyond int64, names encoding/json cannot tag).
// Each "-- NAME.json --" section is a schema; "-- NAME.values --" holds
// valid instances, one JSON value per line, that the generated types must
// carry unchanged.
func schemaCorpus() (*graph.Graph, error) {
	ar, err := txtar.ParseFile("testdata/schemas.txtar")
	if err != nil {
		return nil, err
	}
	g := &graph.Graph{
		GraphVersion: graph.GraphVersion, DigestVersion: graph.DigestVersion,
		Generator: graph.Generator{Stitchkit: "test", CUE: "none"},
		Name:      "schemas", Version: "0.0.0",
		Policy: graph.Policy{MCP: graph.MCPPolicy{SchemaValidation: graph.ValidationThrow}},
	}
	for _, f := range ar.Files {
		name, ok := strings.CutSuffix(f.Name, ".json")
		if !ok {
			continue
		}
		var schema any
		if err := json.Unmarshal(f.Data, &schema); err != nil {
			return nil, fmt.Errorf("schemas.txtar %s: %w", f.Name, err)
		}
		d, err := g.AddSchema(schema)
		if err != nil {
			return nil, err
		}
		g.CliCommands = append(g.CliCommands, graph.CliCommand{Name: name, Desc: name, Input: d})
		if name == "defaults" {
			// Also a runtime tool, so the generated-code test sees the
			// runner apply the defaults before the typed method runs.
			g.RuntimeTools = append(g.RuntimeTools, graph.RuntimeTool{Name: "corpus_defaults", Desc: "defaults",
				Identity: graph.Identity{Service: "corpus", Action: "defaults", Method: "POST", Scope: "public"},
				Input:    d, Transports: []graph.Transport{graph.MCP}})
		}
	}
	slices.SortFunc(g.CliCommands, func(a, b graph.CliCommand) int { return graph.CompareUTF16(a.Name, b.Name) })
	if err := g.Validate(); err != nil {
		return nil, err
	}
	return g, nil
}

// corpusValues returns the valid instances of each schema corpus entry.
func corpusValues(t *testing.T) map[string][]string {
	t.Helper()
	ar, err := txtar.ParseFile("testdata/schemas.txtar")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, f := range ar.Files {
		if name, ok := strings.CutSuffix(f.Name, ".values"); ok {
			for _, line := range strings.Split(strings.TrimSpace(string(f.Data)), "\n") {
				if line = strings.TrimSpace(line); line != "" {
					out[name] = append(out[name], line)
				}
			}
		}
	}
	return out
}

func generate(t *testing.T, g *graph.Graph, pkg string) []File {
	t.Helper()
	files, err := Generate(g, &Options{Package: pkg})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestGolden pins the generated Go source of the test contracts. Refresh
// with go test ./pkg/gen -conformancetest.update and review the diff. (examples/tasks pins
// its own checked-in package, examples/tasks/tasksapi.)
func TestGolden(t *testing.T) {
	gs := testGraphs(t)
	for _, name := range []string{"minimal", "mappings", "schemas"} {
		t.Run(name, func(t *testing.T) {
			files := generate(t, gs[name], name+"api")
			ar := &txtar.Archive{Comment: []byte("stitch gen output for " + name + " (graph.json omitted: pkg/compile pins it).\n")}
			for _, f := range files {
				if f.Name == GraphFile {
					continue
				}
				ar.Files = append(ar.Files, txtar.File{Name: f.Name, Data: f.Data})
			}
			got := txtar.Format(ar)
			path := filepath.Join("testdata", "golden", name+".txtar")
			if update() {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./pkg/gen -conformancetest.update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("generated code differs from %s (run go test ./pkg/gen -conformancetest.update and review the diff):\n%s", path, firstDiff(string(want), string(got)))
			}
		})
	}
}

// firstDiff shows the first differing line with some context.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\n  want %q\n  got  %q", i+1, wl, gl)
		}
	}
	return "(no line differs)"
}

// TestDeterministic generates each package several times (map iteration
// order changes between runs) and from a graph whose schema documents were
// re-encoded with their keys in reverse order: the bytes never change.
func TestDeterministic(t *testing.T) {
	gs := testGraphs(t)
	for name, g := range gs {
		first := generate(t, g, "p")
		for range 3 {
			again := generate(t, g, "p")
			for i := range first {
				if !bytes.Equal(first[i].Data, again[i].Data) {
					t.Fatalf("%s: %s differs between two runs", name, first[i].Name)
				}
			}
		}
		shuffled := *g
		shuffled.Schemas = map[graph.Digest]json.RawMessage{}
		for d, s := range g.Schemas {
			shuffled.Schemas[d] = reverseKeys(t, s)
		}
		again := generate(t, &shuffled, "p")
		for i := range first {
			if !bytes.Equal(first[i].Data, again[i].Data) {
				t.Fatalf("%s: %s depends on the key order of the schema documents", name, first[i].Name)
			}
		}
	}
}

// reverseKeys re-encodes a JSON document with every object's keys in
// reverse order.
func reverseKeys(t *testing.T, raw []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	var write func(v any)
	write = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			graph.SortUTF16(keys)
			b.WriteByte('{')
			for i := len(keys) - 1; i >= 0; i-- {
				k, _ := json.Marshal(keys[i])
				b.Write(k)
				b.WriteByte(':')
				write(x[keys[i]])
				if i > 0 {
					b.WriteByte(',')
				}
			}
			b.WriteByte('}')
		case []any:
			b.WriteByte('[')
			for i, e := range x {
				if i > 0 {
					b.WriteByte(',')
				}
				write(e)
			}
			b.WriteByte(']')
		default:
			e, _ := json.Marshal(x)
			b.Write(e)
		}
	}
	write(v)
	return b.Bytes()
}

func TestPackageName(t *testing.T) {
	for in, want := range map[string]string{
		"tasksapi": "tasksapi", "Tasks-API": "tasksapi", "2fa": "api2fa", "": "api", "type": "apitype", "go_x": "go_x",
	} {
		if got := PackageName(in); got != want {
			t.Errorf("PackageName(%q) = %q, want %q", in, got, want)
		}
	}
	if _, err := Generate(testGraphs(t)["minimal"], &Options{Package: "Not-Valid"}); err == nil {
		t.Error("Generate accepted an invalid package name")
	}
}

func TestExportName(t *testing.T) {
	for in, want := range map[string]string{
		"id": "ID", "userId": "UserID", "apiURL": "APIURL", "kebab-case": "KebabCase", "snake_case": "SnakeCase",
		"123start": "X123start", "-": "X", "": "X", "taskChanged": "TaskChanged", "été": "Été", "名前": "X名前",
		"already Exported": "AlreadyExported", "HTTPServer": "HTTPServer", "v2": "V2",
	} {
		if got := exportName(in); got != want {
			t.Errorf("exportName(%q) = %q, want %q", in, got, want)
		}
	}
}
