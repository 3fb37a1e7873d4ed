package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestManifestCommand(t *testing.T) {
	dir := "../../examples/minimal"
	golden, err := os.ReadFile("../../pkg/conformance/testdata/examples/minimal.manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"manifest", dir, "--http-prefix", "/api"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !bytes.Equal(stdout.Bytes(), golden) {
		t.Errorf("stdout differs from the conformance golden:\n%s", stdout.String())
	}

	out := filepath.Join(t.TempDir(), "surface-manifest.json")
	stdout.Reset()
	if code := run([]string{"manifest", dir, "--http-prefix", "/api", "-o", out}, &stdout, &stderr); code != exitOK || stdout.Len() != 0 {
		t.Fatalf("-o: exit %d, stdout %q, stderr %s", code, stdout.String(), stderr.String())
	}
	if b, _ := os.ReadFile(out); !bytes.Equal(b, golden) {
		t.Errorf("-o wrote:\n%s", b)
	}
	stdout.Reset()
	if code := run([]string{"manifest", dir, "--http-prefix", "/api", "--check", out}, &stdout, &stderr); code != exitOK {
		t.Fatalf("--check on an equal file: exit %d: %s", code, stderr.String())
	}
	if want := "surface manifest " + out + " is up to date with " + dir + "\n"; stdout.String() != want {
		t.Errorf("--check on an equal file printed %q; want %q", stdout.String(), want)
	}

	// Drift: exit 1 and a field-path diff.
	drifted := strings.Replace(string(golden), `"List notes"`, `"List all notes"`, 1)
	if err := os.WriteFile(out, []byte(drifted), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"manifest", dir, "--http-prefix", "/api", "--check", out}, &stdout, &stderr); code != exitFailure {
		t.Fatalf("--check on drift: exit %d", code)
	}
	for _, want := range []string{`-operations[contract notes.list].description: "List all notes"`, `+operations[contract notes.list].description: "List notes"`} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("diff lacks %q:\n%s", want, stdout.String())
		}
	}
	if !strings.Contains(stderr.String(), "drifted from") {
		t.Errorf("stderr: %s", stderr.String())
	}

	// A drift longer than the cap: cut, with a hint, unless --full-diff.
	long := string(golden)
	for _, from := range []string{`"List notes"`, `"Create a note"`, `"Get one note"`} {
		long = strings.Replace(long, from, `"`+strings.Repeat("x", 3000)+`"`, 1)
	}
	if err := os.WriteFile(out, []byte(long), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"manifest", dir, "--http-prefix", "/api", "--check", out}, &stdout, &stderr); code != exitFailure ||
		!strings.Contains(stdout.String(), "diff truncated") || !strings.Contains(stderr.String(), "--full-diff prints all of it") {
		t.Errorf("long drift: exit %d\nstdout %s\nstderr %s", code, stdout.String(), stderr.String())
	}
	cut := stdout.Len()
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"manifest", dir, "--http-prefix", "/api", "--check", out, "--full-diff"}, &stdout, &stderr); code != exitFailure ||
		strings.Contains(stdout.String(), "diff truncated") || stdout.Len() <= cut || strings.Contains(stderr.String(), "--full-diff") {
		t.Errorf("--full-diff: exit %d, %d bytes (cut: %d)\nstderr %s", code, stdout.Len(), cut, stderr.String())
	}

	// Another manifestVersion: regenerate message.
	old := strings.Replace(string(golden), `"manifestVersion": 2`, `"manifestVersion": 1`, 1)
	if err := os.WriteFile(out, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if code := run([]string{"manifest", dir, "--check", out}, &stdout, &stderr); code != exitFailure || !strings.Contains(stderr.String(), "Surface snapshot is manifestVersion 1; this build writes 2") {
		t.Errorf("old version: exit %d: %s", code, stderr.String())
	}

	if code := run([]string{"manifest", dir, dir}, &stdout, &stderr); code != exitUsage {
		t.Errorf("two DIRs: exit %d", code)
	}
	if code := run([]string{"manifest", filepath.Join(t.TempDir(), "missing")}, &stdout, &stderr); code != exitFailure {
		t.Errorf("missing DIR: exit %d", code)
	}
}

// TestManifestCheckKeepsOptions: the manifest records the projection
// options it was built with, so --check without --http-prefix checks
// against the same routes, and the regenerate hint names the flag (it
// used to drop it, and following it moved every route).
func TestManifestCheckKeepsOptions(t *testing.T) {
	dir := "../../examples/minimal"
	out := filepath.Join(t.TempDir(), "surface-manifest.json")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"manifest", dir, "--http-prefix", "/api", "-o", out}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	stdout.Reset()
	if code := run([]string{"manifest", dir, "--check", out}, &stdout, &stderr); code != exitOK {
		t.Fatalf("--check without the flag on a manifest built with it: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	drifted := strings.Replace(string(b), `"List notes"`, `"List all notes"`, 1)
	if err := os.WriteFile(out, []byte(drifted), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if code := run([]string{"manifest", dir, "--check", out}, &stdout, &stderr); code != exitFailure {
		t.Fatalf("drift: exit %d", code)
	}
	if want := "`stitch manifest " + dir + " --http-prefix /api -o " + out + "`"; !strings.Contains(stderr.String(), want) {
		t.Errorf("hint lacks %s:\n%s", want, stderr.String())
	}
	// An explicit flag wins over the recorded options: the routes moved.
	stdout.Reset()
	if code := run([]string{"manifest", dir, "--http-prefix", "/v2", "--check", out}, &stdout, &stderr); code != exitFailure ||
		!strings.Contains(stdout.String(), "+options.httpPrefix: \"/v2\"") {
		t.Errorf("another prefix: exit %d\n%s", code, stdout.String())
	}
}
