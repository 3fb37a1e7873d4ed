package compile

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInMemorySchemaCopy: a copy of the contract language given to
// AnalyzeFiles never changes what the contract is checked against; a copy
// that differs draws a schema-copy warning, an identical one none.
func TestInMemorySchemaCopy(t *testing.T) {
	lang, err := SchemaFiles()
	if err != nil || len(lang) == 0 {
		t.Fatalf("SchemaFiles: %v", err)
	}
	src := header + "\tservices: s: operations: list: {method: \"GET\", path: \"/\", desc: \"d\"}\n}\n"
	files := map[string][]byte{"c.cue": []byte(src)}
	for name, b := range lang {
		files[SchemaCopyDir+"/"+name] = b
	}
	r, err := AnalyzeFiles(context.Background(), files)
	if err != nil || r.Err() != nil || len(r.Warnings) != 0 {
		t.Fatalf("identical copy: err %v, diagnostics %v, warnings %v", err, r.Err(), r.Warnings)
	}

	// A copy that would refuse the contract (version pinned, name pinned).
	files[SchemaCopyDir+"/contract.cue"] = append(append([]byte{}, lang["contract.cue"]...), "\n#Contract: version: \"9.9.9\"\n"...)
	files[SchemaCopyDir+"/zz.cue"] = []byte("package schema\n\n#Contract: name: \"other\"\n")
	r, err = AnalyzeFiles(context.Background(), files)
	if err != nil {
		t.Fatal(err)
	}
	if r.Err() != nil {
		t.Fatalf("the edited copy was used: %v", r.Err())
	}
	if len(r.Warnings) != 1 {
		t.Fatalf("warnings %v", r.Warnings)
	}
	w := r.Warnings[0]
	if w.Rule != "schema-copy" || w.Pos.String() != SchemaCopyDir+"/contract.cue:1:1" ||
		!strings.Contains(w.Message, "(contract.cue differs, zz.cue is extra)") || !strings.Contains(w.Message, "stitch init --upgrade") {
		t.Errorf("warning %v", w)
	}
	if _, err := compileFiles(context.Background(), files); err != nil {
		t.Errorf("AnalyzeFiles: %v", err)
	}
}

func TestSchemaDrift(t *testing.T) {
	lang, err := SchemaFiles()
	if err != nil {
		t.Fatal(err)
	}
	d, err := CompareSchema(lang)
	if err != nil || !d.None() || d.String() != "" {
		t.Errorf("identical: %+v %v", d, err)
	}
	cp := map[string][]byte{"new.cue": nil}
	for k, v := range lang {
		cp[k] = v
	}
	cp["contract.cue"] = []byte("package schema\n")
	delete(cp, "tools.cue")
	d, _ = CompareSchema(cp)
	if got, want := d.String(), "contract.cue differs, tools.cue is missing, new.cue is extra"; got != want {
		t.Errorf("drift %q, want %q", got, want)
	}
	for mod, want := range map[string]string{
		"module: \"stitchkit.dev/stitchkit@v0\"\nlanguage: version: \"v0.17.1\"\n":                                            "schema",
		"module: \"example.com/x@v0\"\nlanguage: version: \"v0.17.1\"\n":                                                      SchemaCopyDir,
		"module: \"example.com/x@v0\"\nlanguage: version: \"v0.17.1\"\ndeps: \"stitchkit.dev/stitchkit@v0\": v: \"v0.1.0\"\n": "",
	} {
		if got, ok := ModuleSchemaDir([]byte(mod)); got != want || ok != (want != "") {
			t.Errorf("ModuleSchemaDir(%q) = %q, %v", mod, got, ok)
		}
	}
}

// TestStitchkitModuleSchema: inside the stitchkit.dev/stitchkit module the
// language is its schema/ folder; a checkout whose schema/ differs from
// the one this compiler was built with is checked with the built-in one
// and warned about.
func TestStitchkitModuleSchema(t *testing.T) {
	lang, err := SchemaFiles()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	write := func(name string, b []byte) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("cue.mod/module.cue", []byte("module: \"stitchkit.dev/stitchkit@v0\"\nlanguage: version: \"v0.17.1\"\n"))
	for name, b := range lang {
		write("schema/"+name, b)
	}
	write("schema/contract.cue", append(append([]byte{}, lang["contract.cue"]...), "\n#Contract: version: \"9.9.9\"\n"...))
	write("examples/x/x.cue", []byte(header+"}\n"))
	r, err := Analyze(context.Background(), filepath.Join(root, "examples", "x"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Err() != nil {
		t.Fatalf("the checkout's schema/ was used: %v", r.Err())
	}
	if len(r.Warnings) != 1 || r.Warnings[0].Pos.String() != "../../schema/contract.cue:1:1" || !strings.Contains(r.Warnings[0].Message, "rebuild stitch") {
		t.Errorf("warnings %v", r.Warnings)
	}
}
