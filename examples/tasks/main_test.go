package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"stitchkit.dev/stitchkit/pkg/check"
	"stitchkit.dev/stitchkit/pkg/conformance/conformancetest"
	"stitchkit.dev/stitchkit/pkg/gen"
)

// -conformancetest.update is the repository's one update switch (conformancetest's).
var update = conformancetest.Update

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestRun starts the program as go run would, reads the URLs it prints,
// uses them, and stops it as SIGINT would.
func TestRun(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithCancel(context.Background())
	out := &lockedBuffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, "127.0.0.1:0", out) }()
	var tasksURL string
	for deadline := time.Now().Add(10 * time.Second); tasksURL == ""; {
		if time.Now().After(deadline) {
			t.Fatalf("no URLs printed:\n%s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
		for _, line := range strings.Split(out.String(), "\n") {
			if f := strings.Fields(line); len(f) == 2 && f[0] == "tasks" {
				tasksURL = f[1]
			}
		}
	}
	if !strings.HasPrefix(tasksURL, "http://127.0.0.1:") {
		t.Fatalf("listens beyond loopback: %s", tasksURL)
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Post(tasksURL, "application/json", strings.NewReader(`{"title":"Write docs"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != `{"done":false,"id":"t_1","title":"Write docs"}` {
		t.Errorf("POST %s: %d %s", tasksURL, resp.StatusCode, b)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run did not return within 30s of its context's cancellation")
	}
}

// TestGeneratedBindingsAreCurrent regenerates tasksapi from tasks.cue and
// requires the checked-in files to be byte-identical (refresh with
// go test ./examples/tasks -conformancetest.update, or go generate ./examples/tasks).
func TestGeneratedBindingsAreCurrent(t *testing.T) {
	rep, err := check.Dir(context.Background(), ".")
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) > 0 {
		t.Fatalf("tasks.cue: %v", rep.Errors)
	}
	files, err := gen.Generate(rep.Graph, &gen.Options{Package: "tasksapi"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		path := filepath.Join("tasksapi", f.Name)
		if update() {
			if err := os.WriteFile(path, f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		have, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(have, f.Data) {
			t.Errorf("%s is not what stitch gen writes for tasks.cue: run go generate ./examples/tasks", path)
		}
	}
	ents, err := os.ReadDir("tasksapi")
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != len(files) {
		t.Errorf("tasksapi holds %d files, stitch gen writes %d", len(ents), len(files))
	}
}

// TestNoCUEAtRunTime proves the example server links neither CUE nor
// package testing: CUE is an authoring dependency only.
func TestNoCUEAtRunTime(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(goCmd, "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Split(string(out), "\n")
	if len(deps) < 20 || !strings.Contains(string(out), "stitchkit.dev/stitchkit/pkg/mount\n") {
		t.Fatalf("go list -deps printed too little:\n%s", out)
	}
	for _, d := range deps {
		if strings.HasPrefix(d, "cuelang.org/go") || d == "testing" {
			t.Errorf("the tasks server links %s", d)
		}
	}
}
