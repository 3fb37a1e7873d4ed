// Package modgraph holds the test that a run-time user's module graph stays
// small: a program built from a compiled graph inherits neither the CUE
// compiler nor the peers the repository's own tests and benchmarks use
// (DESIGN invariant 5, at the module level).
package modgraph

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// maxModules bounds `go list -m all` of a consumer importing the run-time
// packages: the consumer, this module and what this module's go.mod
// requires (with pruned module graphs a dependency's requirements are not
// followed further).
const maxModules = 25

// forbidden are module or package path prefixes a run-time consumer must
// not inherit: the CUE compiler, and the peers that only the nested
// modules' tests and benchmarks need.
var forbidden = []string{
	"cuelang.org/",
	"cuelabs.dev/",
	"github.com/danielgtaylor/huma",
	"github.com/oasdiff/",
	"github.com/getkin/kin-openapi",
	"github.com/openai/",
	"github.com/anthropics/",
	"google.golang.org/genai",
	"github.com/oapi-codegen/",
	"github.com/santhosh-tekuri/",
	"github.com/nats-io/nats-server",
}

const consumerMain = `package main

import (
	"fmt"
	"os"

	"stitchkit.dev/stitchkit/pkg/graph"
	_ "stitchkit.dev/stitchkit/pkg/mount"
	_ "stitchkit.dev/stitchkit/pkg/mount/http"
)

func main() {
	_, err := graph.Load([]byte("{}"))
	fmt.Fprintln(os.Stderr, err)
}
`

// TestRuntimeModuleGraph builds a throwaway consumer module that imports
// pkg/graph, pkg/mount and the HTTP mount from this checkout (a replace
// directive, as a user trying a local change would write), then checks what
// it inherits: `go list -deps` (what it links) holds no CUE, no testing and
// no peer; `go list -m all` (its module graph) holds no peer and at most
// maxModules modules. It needs only the module cache or proxy: the
// consumer's go.sum starts as a copy of this module's.
func TestRuntimeModuleGraph(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command on a consumer module")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the consumer module: %v", err)
	}
	_, file, _, _ := runtime.Caller(0)
	root, err := filepath.Abs(filepath.Join(filepath.Dir(file), "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gomod := fmt.Sprintf("module example.com/consumer\n\ngo 1.26.8\n\nrequire stitchkit.dev/stitchkit v0.0.0\n\nreplace stitchkit.dev/stitchkit => %s\n", root)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"go.mod": []byte(gomod), "go.sum": sum, "main.go": []byte(consumerMain)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// A cold module cache downloads a few modules; a loaded machine is
	// slow. Every command shares one deadline that says what ran out.
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, goBin, args...)
		cmd.Dir = dir
		// Outside any workspace, module mode, go.mod updated as needed.
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GO111MODULE=on")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if ctx.Err() != nil {
			t.Fatalf("go %s: no answer within the test's 4-minute deadline\n%s", strings.Join(args, " "), stderr.Bytes())
		}
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
		}
		return string(out)
	}

	run("build", "-o", os.DevNull, ".")
	deps := strings.Fields(run("list", "-deps", "."))
	if len(deps) < 20 {
		t.Fatalf("go list -deps listed only %q", deps)
	}
	for _, d := range deps {
		if d == "testing" || hasPrefix(d) {
			t.Errorf("the consumer links %s", d)
		}
	}

	mods := strings.Split(strings.TrimSpace(run("list", "-m", "all")), "\n")
	for _, m := range mods {
		if hasPrefix(m) {
			t.Errorf("the consumer's module graph holds %s", m)
		}
	}
	if len(mods) > maxModules {
		t.Errorf("the consumer's module graph has %d modules, more than %d:\n%s", len(mods), maxModules, strings.Join(mods, "\n"))
	}
	t.Logf("a consumer of graph, mount and mount/http: %d modules in go list -m all, %d packages linked", len(mods), len(deps))
}

func hasPrefix(path string) bool {
	for _, f := range forbidden {
		if strings.HasPrefix(path, f) {
			return true
		}
	}
	return false
}

// TestWorkspaceHoldsEveryModule: `go test -race work`, the repository's one
// test command, tests the modules go.work uses, so a nested go.mod missing
// from go.work would go untested without a word. Every module must also
// build against this checkout, not a published version: each nested module
// replaces every stitchkit module it requires with its folder here.
func TestWorkspaceHoldsEveryModule(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to read go.work: %v", err)
	}
	_, file, _, _ := runtime.Caller(0)
	root, err := filepath.Abs(filepath.Join(filepath.Dir(file), "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	editJSON := func(dir string, args ...string) []byte {
		t.Helper()
		cmd := exec.CommandContext(ctx, goBin, args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go %s in %s: %v (deadline: %v)", strings.Join(args, " "), dir, err, ctx.Err())
		}
		return out
	}
	var work struct{ Use []struct{ DiskPath string } }
	if err := json.Unmarshal(editJSON(root, "work", "edit", "-json"), &work); err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, u := range work.Use {
		used[filepath.Clean(filepath.Join(root, u.DiskPath))] = true
	}

	var dirs []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "go.mod" {
			dirs = append(dirs, filepath.Dir(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 2 {
		t.Fatalf("found only %d go.mod files under %s", len(dirs), root)
	}
	for _, dir := range dirs {
		rel, _ := filepath.Rel(root, dir)
		if !used[dir] {
			t.Errorf("go.work does not use %s: `go work use ./%s`", rel, filepath.ToSlash(rel))
		}
		if dir == root {
			continue
		}
		var mod struct {
			Require []struct{ Path string }
			Replace []struct {
				Old struct{ Path string }
				New struct{ Path string }
			}
		}
		if err := json.Unmarshal(editJSON(dir, "mod", "edit", "-json"), &mod); err != nil {
			t.Fatal(err)
		}
		replaced := map[string]string{}
		for _, r := range mod.Replace {
			replaced[r.Old.Path] = r.New.Path
		}
		for _, r := range mod.Require {
			if r.Path != "stitchkit.dev/stitchkit" && !strings.HasPrefix(r.Path, "stitchkit.dev/stitchkit/") {
				continue
			}
			want := filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(strings.TrimPrefix(r.Path, "stitchkit.dev/stitchkit"), "/")))
			got, ok := replaced[r.Path]
			if !ok || filepath.Clean(filepath.Join(dir, got)) != want {
				t.Errorf("%s requires %s without `replace %s => %s`", rel, r.Path, r.Path, relOrAbs(dir, want))
			}
		}
	}
}

func relOrAbs(from, to string) string {
	if r, err := filepath.Rel(from, to); err == nil {
		return filepath.ToSlash(r)
	}
	return to
}
