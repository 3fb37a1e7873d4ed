package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestGenCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "minimalapi")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"gen", "../../examples/minimal", "-o", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	want := map[string]bool{"bindings.go": true, "graph.go": true, "graph.json": true, "types.go": true}
	ents, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !want[e.Name()] {
			t.Errorf("unexpected file %s", e.Name())
		}
		delete(want, e.Name())
	}
	if len(want) > 0 {
		t.Errorf("missing files %v", want)
	}
	types, _ := os.ReadFile(filepath.Join(out, "types.go"))
	if !bytes.Contains(types, []byte("package minimalapi\n")) {
		t.Errorf("package name is not the directory's:\n%.200s", types)
	}

	// Unchanged output leaves the files alone; a graph.json input and -p
	// work too.
	st, _ := os.Stat(filepath.Join(out, "types.go"))
	old := st.ModTime().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(out, "types.go"), old, old); err != nil {
		t.Fatal(err)
	}
	if code := run([]string{"gen", filepath.Join(out, "graph.json"), "-o", out, "-p", "minimalapi"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	st, _ = os.Stat(filepath.Join(out, "types.go"))
	if !st.ModTime().Equal(old) {
		t.Error("regenerating identical bytes rewrote types.go")
	}

	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"gen", "../../examples/minimal"}, exitUsage, "-o PKGDIR is required"},
		{[]string{"gen", "../../examples/minimal", "-o", out, "-p", "Not-Valid"}, exitFailure, "not a valid package name"},
		{[]string{"gen", filepath.Join(t.TempDir(), "missing"), "-o", out}, exitFailure, "no such file"},
	} {
		stderr.Reset()
		if code := run(c.args, &stdout, &stderr); code != c.code || !strings.Contains(stderr.String(), c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d mentioning %q", c.args, code, stderr.String(), c.code, c.msg)
		}
	}
}

// --cli writes the command's main.go, importing the generated package by
// its path in the module around it; outside a module it is an error.
func TestGenCLI(t *testing.T) {
	mod := t.TempDir()
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/m\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	args := []string{"gen", "../../examples/tasks", "-o", filepath.Join(mod, "api", "tasksapi"), "--cli", filepath.Join(mod, "cmd", "tasks")}
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	main, err := os.ReadFile(filepath.Join(mod, "cmd", "tasks", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"package main\n", `tasksapi "example.com/m/api/tasksapi"`, `os.Getenv("TASKS_SERVER")`, "project.New(tasksapi.Graph(), nil)", "cli.New(p, opts)"} {
		if !strings.Contains(string(main), want) {
			t.Errorf("main.go lacks %q:\n%s", want, main)
		}
	}
	stderr.Reset()
	outside := t.TempDir()
	if code := run([]string{"gen", "../../examples/minimal", "-o", filepath.Join(outside, "api"), "--cli", filepath.Join(outside, "cmd")}, &stdout, &stderr); code != exitFailure || !strings.Contains(stderr.String(), "not inside a Go module") {
		t.Errorf("outside a module: exit %d, stderr %q", code, stderr.String())
	}
}
