package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/load"
)

// plainCUEVet checks dir the way plain `cue vet -c` does (cue/load with
// no overlay, so the import resolves to the copy under cue.mod/pkg) and
// returns its error.
func plainCUEVet(t *testing.T, dir string) error {
	t.Helper()
	insts := load.Instances([]string{"."}, &load.Config{Dir: dir})
	if len(insts) != 1 {
		t.Fatalf("%d instances", len(insts))
	}
	if err := insts[0].Err; err != nil {
		return err
	}
	v := cuecontext.New().BuildInstance(insts[0])
	if err := v.Err(); err != nil {
		return err
	}
	return v.Validate(cue.Concrete(true), cue.Definitions(true), cue.Hidden(true))
}

func vet(t *testing.T, dir string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run([]string{"vet", dir}, &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestSchemaCopy: stitch vet always checks with the built-in contract
// language; a copy under cue.mod/pkg that differs (edited, older, newer)
// draws a warning naming `stitch init --upgrade`, which refreshes it; an
// identical copy or no copy draws none.
func TestSchemaCopy(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shop")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"init", dir}, &stdout, &stderr); code != exitOK {
		t.Fatalf("init: exit %d\n%s", code, stderr.String())
	}
	copyDir := filepath.Join(dir, "cue.mod", "pkg", "stitchkit.dev", "stitchkit", "schema")

	// Fresh copy: no warning, and plain CUE agrees.
	if code, _, errOut := vet(t, dir); code != exitOK || errOut != "" {
		t.Fatalf("vet of a fresh scaffold: exit %d, stderr %q", code, errOut)
	}
	if err := plainCUEVet(t, dir); err != nil {
		t.Fatalf("plain CUE refuses the fresh scaffold: %v", err)
	}

	// Edit the copy so that it refuses the contract, add a file, drop one.
	contractCue := filepath.Join(copyDir, "contract.cue")
	orig, err := os.ReadFile(contractCue)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, contractCue, append(append([]byte{}, orig...), "\n#Contract: version: \"9.9.9\"\n"...))
	writeFile(t, filepath.Join(copyDir, "extra.cue"), []byte("package schema\n\n#Contract: name: \"only-this\"\n"))
	if err := os.Remove(filepath.Join(copyDir, "tools.cue")); err != nil {
		t.Fatal(err)
	}
	if err := plainCUEVet(t, dir); err == nil {
		t.Fatal("plain CUE accepts the contract under the edited copy: the test proves nothing")
	}
	code, out, errOut := vet(t, dir)
	if code != exitOK || out != "ok\n" {
		t.Fatalf("vet under an edited copy: exit %d, stdout %q, stderr %q (stitch must check with the built-in language)", code, out, errOut)
	}
	wantWarn := "warning: " + filepath.ToSlash(dir) + "/cue.mod/pkg/stitchkit.dev/stitchkit/schema/contract.cue:1:1: schema-copy: cue.mod/pkg/stitchkit.dev/stitchkit/schema differs from the contract language built into this stitch (contract.cue differs, tools.cue is missing, extra.cue is extra)"
	if !strings.HasPrefix(errOut, wantWarn) || !strings.Contains(errOut, "plain `cue vet` checks this copy") || !strings.Contains(errOut, "stitch init --upgrade") {
		t.Errorf("warning:\n%s\nwant it to start with\n%s", errOut, wantWarn)
	}
	// compile prints the same warning and still writes the graph.
	var gout, gerr bytes.Buffer
	if code := run([]string{"compile", dir}, &gout, &gerr); code != exitOK || gout.Len() == 0 || !strings.Contains(gerr.String(), "schema-copy") {
		t.Errorf("compile under an edited copy: exit %d, stderr %q", code, gerr.String())
	}

	// Refresh from a subdirectory of the module.
	sub := filepath.Join(dir, "more")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	if code := run([]string{"init", "--upgrade", sub}, &stdout, &stderr); code != exitOK {
		t.Fatalf("init --upgrade: exit %d\n%s", code, stderr.String())
	}
	shown := filepath.ToSlash(copyDir)
	if want := "removed " + shown + "/extra.cue\nupdated " + shown + "/contract.cue\ncreated " + shown + "/tools.cue\n"; stdout.String() != want {
		t.Errorf("init --upgrade said\n%s\nwant\n%s", stdout.String(), want)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "contract.cue")); !bytes.Contains(b, []byte("schema.#Contract")) {
		t.Error("init --upgrade touched the contract")
	}
	if code, _, errOut := vet(t, dir); code != exitOK || errOut != "" {
		t.Errorf("vet after init --upgrade: exit %d, stderr %q", code, errOut)
	}
	if err := plainCUEVet(t, dir); err != nil {
		t.Errorf("plain CUE refuses the contract after init --upgrade: %v", err)
	}
	stdout.Reset()
	if code := run([]string{"init", "--upgrade", dir}, &stdout, &stderr); code != exitOK || !strings.HasSuffix(stdout.String(), "is up to date\n") {
		t.Errorf("second init --upgrade: exit %d, %q", code, stdout.String())
	}

	// No copy at all: no warning (the built-in language is used).
	bare := filepath.Join(t.TempDir(), "bare")
	writeFile(t, filepath.Join(bare, "cue.mod", "module.cue"), []byte("module: \"example.com/bare@v0\"\nlanguage: version: \"v0.17.1\"\n"))
	b, err := os.ReadFile(filepath.Join(dir, "contract.cue"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(bare, "contract.cue"), b)
	if code, _, errOut := vet(t, bare); code != exitOK || errOut != "" {
		t.Errorf("vet without a copy: exit %d, stderr %q", code, errOut)
	}
	// init --upgrade creates the copy there.
	stdout.Reset()
	if code := run([]string{"init", "--upgrade", bare}, &stdout, &stderr); code != exitOK || !strings.Contains(stdout.String(), "created ") {
		t.Errorf("init --upgrade without a copy: exit %d, %q", code, stdout.String())
	}
	if err := plainCUEVet(t, bare); err != nil {
		t.Errorf("plain CUE after init --upgrade created the copy: %v", err)
	}
}

func TestSchemaUpgradeRefusals(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"init", "--upgrade", t.TempDir()}, &stdout, &stderr); code != exitFailure || !strings.Contains(stderr.String(), "no CUE module") {
		t.Errorf("outside a module: exit %d, %q", code, stderr.String())
	}
	stderr.Reset()
	if code := run([]string{"init", "--upgrade", "../../examples/minimal"}, &stdout, &stderr); code != exitFailure || !strings.Contains(stderr.String(), "stitchkit.dev/stitchkit module itself") {
		t.Errorf("in the stitchkit module: exit %d, %q", code, stderr.String())
	}
}
