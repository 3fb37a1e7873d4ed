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
	"stitchkit.dev/stitchkit/internal/projecttest"
	"strconv"
	"strings"
	"testing"
	"time"

	// The runtime of the generated client: a test-only dependency, kept
	// in go.mod so the generated code builds.
	_ "github.com/oapi-codegen/runtime"

	"stitchkit.dev/stitchkit/pkg/check"
	"stitchkit.dev/stitchkit/pkg/export/openapi"
)

// TestCodeGenerator feeds the OpenAPI document of examples/tasks to a real
// code generator — oapi-codegen, pinned as a Go tool dependency in go.mod
// — compiles what it generates, and checks the Go types it made: one Task
// type that every operation returning #Task uses, and no interface{} (any)
// where the contract has a type (the error envelope's details is a
// free-form object in the contract, and only that may be a map of any).
func TestCodeGenerator(t *testing.T) {
	root := moduleRoot(t)
	doc, f, types := generateGo(t, filepath.Join(root, "examples", "tasks"), "tasksapi", "/api",
		&openapi.Options{Servers: []openapi.Server{{URL: "http://127.0.0.1:8080"}}})

	// One named Task, with typed fields.
	wantFields(t, types, "Task", map[string]string{"Id": "TaskID", "Title": "string", "Done": "bool", "Tags": "*Tags"})
	// Every operation answering #Task answers the one Task type.
	wantJSON200(t, types, "*Task", "TasksGetResponse", "TasksCreateResponse", "TasksUpdateResponse", "TasksCompleteResponse", "TasksRenameResponse")
	noUntyped(t, doc, f)
}

// TestCodeGeneratorBilling runs the generator on a payments contract
// (testdata/billing): shared enums, a definition inlined into a nullable
// field (#RefundReason | null) and into a conjunction (#CustomerID &
// =~"…"), definitions only ever used whole (#Customer, #Endpoint),
// defaults, nullable fields and unions. The document must generate (a
// member the generator names after its property used to clash with the
// component of the same name), with one type per definition.
func TestCodeGeneratorBilling(t *testing.T) {
	doc, f, types := generateGo(t, filepath.Join("testdata", "billing"), "billingapi", "", nil)
	wantFields(t, types, "Charge", map[string]string{"Amount": "Amount", "Currency": "Currency", "Status": "ChargeStatus", "Description": "*string", "Captured": "bool"})
	wantFields(t, types, "Refund", map[string]string{"Reason": "*RefundReason", "Currency": "Currency"})
	wantFields(t, types, "Customer", map[string]string{"Id": "CustomerID", "Cards": "*[]Card", "Name": "*string"})
	wantFields(t, types, "ChargesCreateJSONBody", map[string]string{"Capture": "*bool", "Currency": "Currency", "Customer": "CustomerID"})
	wantJSON200(t, types, "*Charge", "ChargesCreateResponse", "ChargesRetrieveResponse", "ChargesCaptureResponse")
	wantJSON200(t, types, "*Customer", "CustomersCreateResponse", "CustomersRetrieveResponse")
	wantJSON200(t, types, "*Card", "CustomersAttachCardResponse")
	wantJSON200(t, types, "*Endpoint", "WebhooksCreateResponse")
	noUntyped(t, doc, f)
}

// generateGo exports the contract in dir, runs oapi-codegen on it, builds
// the generated package and returns the document, the parsed code and its
// type declarations by name.
func generateGo(t *testing.T, dir, pkg, prefix string, opts *openapi.Options) ([]byte, *ast.File, map[string]ast.Expr) {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("the go command is needed to run oapi-codegen (go tool) and build its output")
	}
	root := moduleRoot(t)
	g, err := check.Compile(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi.Generate(projecttest.Prefixed(t, g, prefix), opts)
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
	src := run("tool", "oapi-codegen", "-generate", "types,client", "-package", pkg, spec)

	// Build the generated package inside the module (so it resolves
	// github.com/oapi-codegen/runtime from go.mod) without writing into
	// the source tree: an overlay adds the file to a directory that does
	// not exist.
	gen := filepath.Join(tmp, pkg+".go")
	if err := os.WriteFile(gen, src, 0o644); err != nil {
		t.Fatal(err)
	}
	pkgDir := filepath.Join(root, "pkg", "export", "openapi", "zz_codegen_"+pkg+"_"+strconv.Itoa(os.Getpid()))
	overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(pkgDir, pkg+".go"): gen}})
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
	return doc, f, types
}

// wantFields checks the Go types of some fields of the struct name.
func wantFields(t *testing.T, types map[string]ast.Expr, name string, want map[string]string) {
	t.Helper()
	st, ok := types[name].(*ast.StructType)
	if !ok {
		t.Errorf("no %s struct in the generated code", name)
		return
	}
	fields := map[string]string{}
	for _, fl := range st.Fields.List {
		for _, n := range fl.Names {
			fields[n.Name] = exprString(fl.Type)
		}
	}
	for field, typ := range want {
		if fields[field] != typ {
			t.Errorf("%s.%s is %q; want %q (fields %v)", name, field, fields[field], typ, fields)
		}
	}
}

// wantJSON200 checks that each response type answers typ on 200.
func wantJSON200(t *testing.T, types map[string]ast.Expr, typ string, responses ...string) {
	t.Helper()
	for _, resp := range responses {
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
		if got != typ {
			t.Errorf("%s.JSON200 is %q; want %s", resp, got, typ)
		}
	}
}

// noUntyped fails on interface{} (any) anywhere the contract has a type:
// only free-form objects may hold a map of any.
func noUntyped(t *testing.T, doc []byte, f *ast.File) {
	t.Helper()
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

// moduleRoot is the repository root (this package is pkg/export/openapi of
// the nested module pkg/export; the examples sit at the root).
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}
