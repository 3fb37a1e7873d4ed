package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"stitchkit.dev/stitchkit/pkg/conformance/conformancetest"
)

// -conformancetest.update (rewrite the want sections of testdata/invalid/*.txtar) is the
// repository's one update switch, conformancetest's; a second definition
// would panic.
var update = conformancetest.Update

// TestInvalidCorpus runs `stitch vet contract` on every archive of
// testdata/invalid and asserts exit 1 and exactly the want/diagnostics
// (the diagnostic lines of stderr). -conformancetest.update rewrites the want sections.
func TestInvalidCorpus(t *testing.T) {
	archives, err := filepath.Glob("../../testdata/invalid/*.txtar")
	if err != nil || len(archives) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, path := range archives {
		abs, err := filepath.Abs(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(abs)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			wantIdx := -1
			for i, f := range ar.Files {
				switch {
				case f.Name == "want/diagnostics":
					wantIdx = i
				case strings.HasPrefix(f.Name, "contract/"):
					writeFile(t, filepath.Join(dir, filepath.FromSlash(f.Name)), f.Data)
				default:
					t.Fatalf("unexpected archive section %q", f.Name)
				}
			}
			if wantIdx < 0 {
				t.Fatal("archive has no want/diagnostics section")
			}
			t.Chdir(dir)
			var stdout, stderr bytes.Buffer
			code := run([]string{"vet", "contract"}, &stdout, &stderr)
			if code != exitFailure {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, exitFailure, stderr.String())
			}
			got := diagnosticLines(stderr.String())
			if got == "" {
				t.Errorf("no diagnostics on stderr:\n%s", stderr.String())
			}
			if update() {
				ar.Files[wantIdx].Data = []byte(got)
				if err := os.WriteFile(abs, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if want := string(ar.Files[wantIdx].Data); got != want {
				t.Errorf("diagnostics differ\n--- got\n%s--- want\n%s", got, want)
			}
		})
	}
}

// diagnosticLines keeps the file:line:col lines of stitch's stderr.
func diagnosticLines(stderr string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(stderr, "\n") {
		if strings.HasPrefix(line, "stitch: ") || strings.TrimSpace(line) == "" {
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestVetExamples(t *testing.T) {
	for _, dir := range []string{"../../examples/minimal", "../../examples/tasks"} {
		var stdout, stderr bytes.Buffer
		if code := run([]string{"vet", dir}, &stdout, &stderr); code != exitOK {
			t.Errorf("stitch vet %s: exit %d\n%s", dir, code, stderr.String())
		}
		if stdout.String() != "ok\n" {
			t.Errorf("stitch vet %s: stdout %q, want \"ok\\n\"", dir, stdout.String())
		}
		// schema/ of this module is the built-in language: no warning.
		if stderr.Len() != 0 {
			t.Errorf("stitch vet %s: stderr %q", dir, stderr.String())
		}
	}
}

func TestVetUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"vet", "a", "b"}, &stdout, &stderr); code != exitUsage {
		t.Errorf("vet with two DIRs: exit %d, want %d", code, exitUsage)
	}
	if code := run([]string{"vet", filepath.Join(t.TempDir(), "missing")}, &stdout, &stderr); code != exitFailure {
		t.Errorf("vet of a missing dir: exit %d, want %d", code, exitFailure)
	}
}

// TestDefaultDir: every command taking one contract directory uses the
// current directory when none is given, with the same output (and
// diagnostics naming files relative to it).
func TestDefaultDir(t *testing.T) {
	minimal, err := filepath.Abs("../../examples/minimal")
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"vet", "compile", "manifest", "openapi", "asyncapi"} {
		var given, stderr bytes.Buffer
		if code := run([]string{cmd, minimal}, &given, &stderr); code != exitOK {
			t.Fatalf("%s DIR: exit %d\n%s", cmd, code, stderr.String())
		}
		t.Run(cmd, func(t *testing.T) {
			t.Chdir(minimal)
			var dot bytes.Buffer
			if code := run([]string{cmd}, &dot, &stderr); code != exitOK {
				t.Fatalf("%s: exit %d\n%s", cmd, code, stderr.String())
			}
			if !bytes.Equal(dot.Bytes(), given.Bytes()) || dot.Len() == 0 {
				t.Errorf("%s without DIR printed %q, with DIR %q", cmd, dot.String(), given.String())
			}
		})
	}
	bad := filepath.Join(t.TempDir(), "bad")
	writeFile(t, filepath.Join(bad, "c.cue"), []byte("package c\n\nimport \"stitchkit.dev/stitchkit/schema\"\n\nschema.#Contract & {name: \"c\", version: \"1.0.0\", errors: X_Y: {status: 600, message: \"m\"}}\n"))
	t.Chdir(bad)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"vet"}, &stdout, &stderr); code != exitFailure || !strings.HasPrefix(stderr.String(), "c.cue:5:") {
		t.Errorf("vet in a broken contract: exit %d, stderr %q", code, stderr.String())
	}
}

func TestCompileCommand(t *testing.T) {
	var out1, out2, stderr bytes.Buffer
	if code := run([]string{"compile", "../../examples/minimal"}, &out1, &stderr); code != exitOK {
		t.Fatalf("compile: exit %d\n%s", code, stderr.String())
	}
	file := filepath.Join(t.TempDir(), "graph.json")
	if code := run([]string{"compile", "../../examples/minimal", "-o", file}, &out2, &stderr); code != exitOK {
		t.Fatalf("compile -o: exit %d\n%s", code, stderr.String())
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, out1.Bytes()) || out2.Len() != 0 {
		t.Errorf("compile -o wrote different bytes than stdout")
	}
	if !bytes.Contains(b, []byte(`"name": "minimal"`)) {
		t.Errorf("graph.json lacks the contract name:\n%s", b)
	}
	stderr.Reset()
	bad := filepath.Join(t.TempDir(), "bad")
	writeFile(t, filepath.Join(bad, "c.cue"), []byte("package c\n\nimport \"stitchkit.dev/stitchkit/schema\"\n\nschema.#Contract & {name: \"c\", version: \"1.0.0\", errors: X_Y: {status: 600, message: \"m\"}}\n"))
	var out3 bytes.Buffer
	if code := run([]string{"compile", bad}, &out3, &stderr); code != exitFailure {
		t.Errorf("compile of a bad contract: exit %d, want 1", code)
	}
	if out3.Len() != 0 || !strings.Contains(stderr.String(), "c.cue:5:") {
		t.Errorf("compile of a bad contract: stdout %q stderr %q", out3.String(), stderr.String())
	}
}

func TestInit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lib-api")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"init", dir}, &stdout, &stderr); code != exitOK {
		t.Fatalf("init: exit %d\n%s", code, stderr.String())
	}
	for _, f := range []string{"cue.mod/module.cue", "contract.cue", "cue.mod/pkg/stitchkit.dev/stitchkit/schema/contract.cue"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("init did not create %s: %v", f, err)
		}
	}
	stdout.Reset()
	if code := run([]string{"vet", dir}, &stdout, &stderr); code != exitOK {
		t.Errorf("vet of the scaffold: exit %d\n%s", code, stderr.String())
	}
	// A second init refuses to overwrite and changes nothing.
	contract := filepath.Join(dir, "contract.cue")
	writeFile(t, contract, []byte("// mine\n"))
	stderr.Reset()
	if code := run([]string{"init", dir}, &stdout, &stderr); code != exitFailure {
		t.Errorf("second init: exit %d, want 1", code)
	}
	if b, _ := os.ReadFile(contract); string(b) != "// mine\n" || !strings.Contains(stderr.String(), "refusing to overwrite") {
		t.Errorf("second init overwrote contract.cue or said %q", stderr.String())
	}
}

// TestVetWarnings: MCP policy findings are printed as positioned warnings
// and vet still exits 0; a bad allowUntyped entry is an error.
func TestVetWarnings(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	src := "package c\n\nimport \"stitchkit.dev/stitchkit/schema\"\n\nschema.#Contract & {\n\tname: \"c\"\n\tversion: \"1.0.0\"\n" +
		"\tservices: s: operations: make: {method: \"POST\", path: \"/\", desc: \"d\", #input: {x: _, y: string}}\n" +
		"\tpolicy: mcp: {requireTypedProperties: true%s}\n}\n"
	writeFile(t, filepath.Join(dir, "c.cue"), []byte(fmt.Sprintf(src, "")))
	var stdout, stderr bytes.Buffer
	if code := run([]string{"vet", dir}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if want := "warning: " + filepath.ToSlash(dir) + "/c.cue:8:27: mcp-policy: MCP tool \"make_s\": untyped property make_s.x"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q lacks %q", stderr.String(), want)
	}
	writeFile(t, filepath.Join(dir, "c.cue"), []byte(fmt.Sprintf(src, ", allowUntyped: [\"make_s.x\", \"make_s.nope\"], allowFormats: [\" \"]")))
	stderr.Reset()
	if code := run([]string{"vet", dir}, &stdout, &stderr); code != exitFailure {
		t.Fatalf("exit %d, want 1\n%s", code, stderr.String())
	}
	for _, want := range []string{`"make_s.nope" names no property`, "allowFormats: entry 0 is blank"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q lacks %q", stderr.String(), want)
		}
	}
	if strings.Contains(stderr.String(), `"make_s.x"`) {
		t.Errorf("a valid allowUntyped entry was refused: %s", stderr.String())
	}
}

// TestExportDiagnosticsRelativeToCwd: openapi and asyncapi print
// diagnostics like vet (file paths joined to DIR as given).
func TestExportDiagnosticsRelativeToCwd(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bad", "c.cue"), []byte("package c\n\nimport \"stitchkit.dev/stitchkit/schema\"\n\nschema.#Contract & {name: \"c\", version: \"1.0.0\", errors: X_Y: {status: 600, message: \"m\"}}\n"))
	t.Chdir(dir)
	for _, cmd := range []string{"vet", "openapi", "asyncapi"} {
		var stdout, stderr bytes.Buffer
		if code := run([]string{cmd, "bad"}, &stdout, &stderr); code != exitFailure {
			t.Errorf("%s: exit %d, want 1", cmd, code)
		}
		if !strings.HasPrefix(stderr.String(), "bad/c.cue:5:") {
			t.Errorf("%s: stderr %q, want diagnostics at bad/c.cue:5:", cmd, stderr.String())
		}
	}
}

// problemMatcher is the editor problem-matcher pattern
// docs/contract-language.md documents for stitch vet's output: leading
// whitespace marks a related place, "warning: " a warning.
var problemMatcher = regexp.MustCompile(`^\s*(?:warning: )?(.+):(\d+):(\d+): (\S+): (.*)$`)

// TestProblemMatcher: every line of every golden diagnostic — primary
// and related — is matched by the documented pattern, and names a file
// of its archive, a positive line and column, and a rule.
func TestProblemMatcher(t *testing.T) {
	archives, err := filepath.Glob("../../testdata/invalid/*.txtar")
	if err != nil || len(archives) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	related := 0
	for _, path := range archives {
		ar, err := txtar.ParseFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files := map[string]bool{}
		var want string
		for _, f := range ar.Files {
			files[f.Name] = true
			if f.Name == "want/diagnostics" {
				want = string(f.Data)
			}
		}
		for _, line := range strings.Split(strings.TrimSuffix(want, "\n"), "\n") {
			m := problemMatcher.FindStringSubmatch(line)
			if m == nil {
				t.Errorf("%s: line %q does not match the problem matcher", filepath.Base(path), line)
				continue
			}
			if strings.HasPrefix(line, "\t") {
				related++
			}
			if !files[m[1]] && !strings.HasPrefix(m[1], "contract/cue.mod/") {
				t.Errorf("%s: line %q names file %q, not in the archive", filepath.Base(path), line, m[1])
			}
			if m[2] == "0" || m[3] == "0" {
				t.Errorf("%s: line %q has no position", filepath.Base(path), line)
			}
		}
	}
	if related == 0 {
		t.Error("no related line in the corpus")
	}
}
