package project

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// DESIGN §1 invariant 1: one projector. Mounts, the manifest, exporters and
// review take tool names and advertised schemas from pkg/project's exported
// results ([ToolSurfaces], [Tool.Name], [Tool.Input]); nothing else derives
// them. TestOneProjector scans every non-test Go file of the module outside
// pkg/project and fails on the tell-tale signs of a second derivation:
//
//   - the derivation's string pieces: verb prefixes ("list_", "get_", …) and
//     the $defs namespaces ("params__", "query__", "input__");
//   - a function named like a derivation (singularize, toolName,
//     flattenUnion, advertisedInput, mergeSchemas, strictSchema) or like
//     surface selection matching (globMatch, patternMatches, matchPattern,
//     selectCandidates);
//   - a direct call of project.ToolName, project.ResolveToolName or
//     project.MatchPattern, which would skip explicit names, duplicate
//     checks and surface selection (pkg/compile too: its surface checks
//     are the problems project.ToolSurfaces reports);
//   - reading an operation's explicit tool name (x.Tool.Name), which only
//     the graph, the compiler and the projector may do.
//
// testdata/bypass/mount.go is the negative fixture proving each rule fires.

const projectImport = "stitchkit.dev/stitchkit/pkg/project"

var (
	forbiddenLiterals = []string{"list_", "get_", "create_", "update_", "delete_", "params__", "query__", "input__"}
	derivationFunc    = regexp.MustCompile(`(?i)^(singular|singulari[sz]e|(derive|make|build|compute)?toolname|flattenunions?|advertisedinput|mergeschemas?|mergeparts|strictschema|globmatch|patternmatch(es)?|matchpattern|selectcandidates)$`)
)

// bypasses reports projector bypasses in one Go file. mayResolveNames and
// mayReadToolName grant the compiler's (and graph's) exceptions.
func bypasses(fset *token.FileSet, f *ast.File, mayResolveNames, mayReadToolName bool) []string {
	var out []string
	report := func(n ast.Node, format string, a ...any) {
		p := fset.Position(n.Pos())
		out = append(out, fmt.Sprintf("%s:%d: %s", p.Filename, p.Line, fmt.Sprintf(format, a...)))
	}
	projectName := ""
	for _, imp := range f.Imports {
		if path, _ := strconv.Unquote(imp.Path.Value); path == projectImport {
			projectName = "project"
			if imp.Name != nil {
				projectName = imp.Name.Name
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.BasicLit:
			if x.Kind == token.STRING {
				if s, err := strconv.Unquote(x.Value); err == nil && slices.Contains(forbiddenLiterals, s) {
					report(x, "string %q derives a tool name or namespaces an advertised schema: use project.ToolSurfaces", s)
				}
			}
		case *ast.FuncDecl:
			if derivationFunc.MatchString(x.Name.Name) {
				report(x, "func %s re-derives what pkg/project computes: use project.ToolSurfaces", x.Name.Name)
			}
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok && projectName != "" && id.Name == projectName &&
				(x.Sel.Name == "ToolName" || x.Sel.Name == "ResolveToolName" || x.Sel.Name == "MatchPattern") && !mayResolveNames {
				report(x, "project.%s called outside the projector: take Tool.Name from project.ToolSurfaces", x.Sel.Name)
			}
			if inner, ok := x.X.(*ast.SelectorExpr); ok && inner.Sel.Name == "Tool" && x.Sel.Name == "Name" && !mayReadToolName {
				report(x, ".Tool.Name read outside the projector: take Tool.Name from project.ToolSurfaces")
			}
		}
		return true
	})
	return out
}

// scanBypasses parses every non-test .go file under root (skipping
// testdata, vendor and hidden directories, and skip) and collects
// bypasses. rel is the slash path of a file's directory relative to root.
func scanBypasses(t *testing.T, root string, skip func(rel string) bool, exceptions func(rel string) (resolve, read bool)) []string {
	t.Helper()
	fset := token.NewFileSet()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		relDir, _ := filepath.Rel(root, filepath.Dir(path))
		relDir = filepath.ToSlash(relDir)
		if skip(relDir) {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		resolve, read := exceptions(relDir)
		out = append(out, bypasses(fset, f, resolve, read)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found")
		}
		dir = parent
	}
}

func TestOneProjector(t *testing.T) {
	root := moduleRoot(t)
	found := scanBypasses(t, root,
		func(rel string) bool { return rel == "pkg/project" || strings.HasPrefix(rel, "pkg/project/") },
		func(rel string) (bool, bool) {
			compiler := rel == "pkg/compile" || strings.HasPrefix(rel, "pkg/compile/")
			return false, compiler || rel == "pkg/graph"
		})
	for _, f := range found {
		t.Error(f)
	}
}

func TestOneProjectorCatchesBypasses(t *testing.T) {
	dir := filepath.Join("testdata", "bypass")
	fset := token.NewFileSet()
	path := filepath.Join(dir, "mount.go")
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	got := bypasses(fset, f, false, false)
	// Every line marked "// want:" must be reported, and nothing else.
	var want []int
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "// want:") {
				want = append(want, fset.Position(c.Pos()).Line)
			}
		}
	}
	var lines []int
	for _, g := range got {
		parts := strings.Split(g, ":")
		n, _ := strconv.Atoi(parts[1])
		if !slices.Contains(lines, n) {
			lines = append(lines, n)
		}
	}
	if len(want) < 5 || !slices.Equal(lines, want) {
		t.Errorf("reported lines %v, marked lines %v:\n%s", lines, want, strings.Join(got, "\n"))
	}
	// The compiler's exceptions silence only the rules they name.
	if got := bypasses(fset, f, true, true); len(got) != 4 {
		t.Errorf("with compiler exceptions: %q", got)
	}
}

// DESIGN §1 invariant 7: projected once. Routes, tool surfaces, realtime
// rows, error sets, argument splits and wire fields are derived by
// [New], once per projection; every mount, the manifest, the exports and
// the drivers read the [Projection]. TestProjectedOnce scans every non-test
// Go file of the module outside pkg/project and fails on a call of a
// derivation. Two packages may call them: pkg/check (`stitch vet`, which
// reports each derivation's problems, positioned, on graphs that do not
// project) and pkg/review (which compares two graphs and serves neither).
// testdata/bypass/rederive.go is the negative fixture proving the rule
// fires.

// derivations are the functions New calls; nothing else may.
var derivations = []string{"HTTPRoutes", "RouteTable", "ToolSurfaces", "RealtimeTopology",
	"OperationErrors", "RuntimeToolErrors", "OperationSplitter", "SplitArgs", "NewWireObject"}

// rederivations reports calls of a derivation in one Go file.
func rederivations(fset *token.FileSet, f *ast.File) []string {
	projectName := ""
	for _, imp := range f.Imports {
		if path, _ := strconv.Unquote(imp.Path.Value); path == projectImport {
			projectName = "project"
			if imp.Name != nil {
				projectName = imp.Name.Name
			}
		}
	}
	if projectName == "" {
		return nil
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == projectName && slices.Contains(derivations, sel.Sel.Name) {
			p := fset.Position(sel.Pos())
			out = append(out, fmt.Sprintf("%s:%d: project.%s re-derives what the projection holds: read it from the one project.Projection (runner.Projection())", p.Filename, p.Line, sel.Sel.Name))
		}
		return true
	})
	return out
}

func TestProjectedOnce(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
				rel == "pkg/project" || rel == "pkg/check" || rel == "pkg/review") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, r := range rederivations(fset, f) {
			t.Error(r)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestProjectedOnceCatchesRederivations(t *testing.T) {
	fset := token.NewFileSet()
	path := filepath.Join("testdata", "bypass", "rederive.go")
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var want, got []int
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "// want:") {
				want = append(want, fset.Position(c.Pos()).Line)
			}
		}
	}
	for _, r := range rederivations(fset, f) {
		n, _ := strconv.Atoi(strings.Split(r, ":")[1])
		got = append(got, n)
	}
	if len(want) != 7 || !slices.Equal(got, want) {
		t.Errorf("reported lines %v, marked lines %v", got, want)
	}
}

// TestNewDerivesOnce: one projection derives its routes, tool surfaces and
// realtime rows exactly once each, and reading them does not derive again.
func TestNewDerivesOnce(t *testing.T) {
	counts := map[string]int{}
	deriveHook = func(what string) { counts[what]++ }
	defer func() { deriveHook = nil }()
	g := tasksGraph(t)
	g.Errors = []graph.ErrorCode{{Code: "TASK_NOT_FOUND", Status: 404, Message: "Task not found"}}
	p, err := New(g, &Options{HTTPPrefix: "/api"})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		_, _, _ = p.Routes(), p.Tools(), p.Realtime()
	}
	if want := map[string]int{"routes": 1, "tools": 1, "realtime": 1}; !maps.Equal(counts, want) {
		t.Errorf("derivations = %v, want %v", counts, want)
	}
}
