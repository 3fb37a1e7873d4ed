package openapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	// The runtime of the generated client: a test-only dependency, kept
	// in go.mod so the generated code builds.
	_ "github.com/oapi-codegen/runtime"

	"stitchkit.dev/stitchkit/pkg/compile"
	"stitchkit.dev/stitchkit/pkg/export/openapi"
)

// TestCodeGenerator feeds the OpenAPI document of examples/tasks to a real
// code generator — oapi-codegen, pinned as a Go tool dependency in go.mod
// — compiles what it generates, and checks the Go types it made: one Task
// type that every operation returning #Task uses, and no interface{} (any)
// where the contract has a type (the error envelope's details is a
// free-form object in the contract, and only that may be a map of any).
func TestCodeGenerator(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("the go command is needed to run oapi-codegen (go tool) and build its output")
	}
	root := moduleRoot(t)
	g, err := compile.Compile(context.Background(), filepath.Join(root, "examples", "tasks"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi.Generate(g, &openapi.Options{Prefix: "/api", Servers: []openapi.Server{{URL: "http://127.0.0.1:8080"}}})
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	spec := filepath.Join(tmp, "openapi.json")
	if err := os.WriteFile(spec, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	run := func(args ...string) []byte {
		t.Helper()
		cmd := exec.CommandContext(ctx, goBin, args...)
		cmd.Dir = root
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return out
	}
	src := run("tool", "oapi-codegen", "-generate", "types,client", "-package", "tasksapi", spec)

	// Build the generated package inside the module (so it resolves
	// github.com/oapi-codegen/runtime from go.mod) without writing into
	// the source tree: an overlay adds the file to a directory that does
	// not exist.
	gen := filepath.Join(tmp, "tasksapi.go")
	if err := os.WriteFile(gen, src, 0o644); err != nil {
		t.Fatal(err)
	}
	pkgDir := filepath.Join(root, "pkg", "export", "openapi", "zz_codegen_"+strconv.Itoa(os.Getpid()))
	overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(pkgDir, "tasksapi.go"): gen}})
	ovFile := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ovFile, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(root, pkgDir)
	run("build", "-overlay", ovFile, "./"+filepath.ToSlash(rel))

	f, err := parser.ParseFile(token.NewFileSet(), gen, src, 0)
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]ast.Expr{}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, s := range gd.Specs {
			ts := s.(*ast.TypeSpec)
			types[ts.Name.Name] = ts.Type
		}
	}

	// One named Task, with typed fields.
	task, ok := types["Task"].(*ast.StructType)
	if !ok {
		t.Fatalf("no Task struct in the generated code")
	}
	fields := map[string]string{}
	for _, fl := range task.Fields.List {
		for _, n := range fl.Names {
			fields[n.Name] = exprString(fl.Type)
		}
	}
	for name, want := range map[string]string{"Id": "TaskID", "Title": "string", "Done": "bool", "Tags": "*Tags"} {
		if fields[name] != want {
			t.Errorf("Task.%s is %q; want %q (fields %v)", name, fields[name], want, fields)
		}
	}
	// Every operation answering #Task answers the one Task type.
	for _, resp := range []string{"TasksGetResponse", "TasksCreateResponse", "TasksUpdateResponse", "TasksCompleteResponse", "TasksRenameResponse"} {
		st, ok := types[resp].(*ast.StructType)
		if !ok {
			t.Errorf("no %s in the generated client", resp)
			continue
		}
		got := ""
		for _, fl := range st.Fields.List {
			for _, n := range fl.Names {
				if n.Name == "JSON200" {
					got = exprString(fl.Type)
				}
			}
		}
		if got != "*Task" {
			t.Errorf("%s.JSON200 is %q; want *Task", resp, got)
		}
	}

	// No interface{} where the contract has a type.
	freeForm := freeFormProperties(t, doc)
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.TypeSpec:
			if isAny(x.Type) {
				t.Errorf("type %s is %s", x.Name.Name, exprString(x.Type))
			}
		case *ast.Field:
			if !mentionsAny(x.Type) || len(x.Names) == 0 {
				return true
			}
			tag := ""
			if x.Tag != nil {
				s, _ := strconv.Unquote(x.Tag.Value)
				tag, _, _ = strings.Cut(reflect.StructTag(s).Get("json"), ",")
			}
			if !freeForm[tag] {
				t.Errorf("field %s (json %q) is %s; the contract gives it a type", x.Names[0].Name, tag, exprString(x.Type))
			}
		}
		return true
	})
	if len(freeForm) == 0 || !freeForm["details"] {
		t.Errorf("free-form properties %v: the check above is vacuous", freeForm)
	}
}

// freeFormProperties names the properties of the document whose schema is
// an object of anything ({"type":"object"} with nothing else to say).
func freeFormProperties(t *testing.T, doc []byte) map[string]bool {
	var d any
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if props, ok := x["properties"].(map[string]any); ok {
				for name, s := range props {
					if m, ok := s.(map[string]any); ok && len(m) == 1 && m["type"] == "object" {
						out[name] = true
					}
				}
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(d)
	return out
}

func isAny(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.InterfaceType:
		return len(x.Methods.List) == 0
	case *ast.Ident:
		return x.Name == "any"
	}
	return false
}

func mentionsAny(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if ex, ok := n.(ast.Expr); ok && isAny(ex) {
			found = true
		}
		_, isStruct := n.(*ast.StructType)
		return !found && !isStruct // a nested struct's fields are checked on their own
	})
	return found
}

func exprString(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.StarExpr:
		return "*" + exprString(x.X)
	case *ast.ArrayType:
		return "[]" + exprString(x.Elt)
	case *ast.MapType:
		return "map[" + exprString(x.Key) + "]" + exprString(x.Value)
	case *ast.SelectorExpr:
		return exprString(x.X) + "." + x.Sel.Name
	case *ast.InterfaceType:
		return "interface{}"
	case *ast.StructType:
		return "struct{...}"
	}
	return "?"
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}
