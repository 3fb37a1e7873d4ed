// Package graphfixture loads the compiled graphs the run-time packages'
// tests run against, so those tests (and so the root module's go.mod) need
// no CUE compiler.
//
// A fixture is the graph.json checked in beside a contract's .cue files
// (examples/tasks/graph.json beside examples/tasks/tasks.cue). The
// authoring module produces them: TestGraphFixtures in pkg/compile compiles
// every folder holding a graph.json and .cue files, fails when a graph.json
// is stale, and rewrites them all with -update. Only tests import this
// package.
package graphfixture

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// FileName is the name of a fixture beside its contract's .cue files.
const FileName = "graph.json"

// Root is the repository root (the directory of the root go.mod).
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Dir is the contract folder rel (slash-separated, relative to the
// repository root, e.g. "examples/tasks").
func Dir(rel string) string { return filepath.Join(Root(), filepath.FromSlash(rel)) }

var raw sync.Map // absolute folder → []byte

// Read loads the fixture of the contract folder dir (absolute, or relative
// to the working directory) as a fresh graph: callers may modify it. The
// file's bytes are read once per process.
func Read(dir string) (*graph.Graph, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	b, ok := raw.Load(abs)
	if !ok {
		data, err := os.ReadFile(filepath.Join(abs, FileName))
		if err != nil {
			return nil, fmt.Errorf("%w (a compiled fixture: regenerate with `go test ./pkg/compile -run TestGraphFixtures -update` from the repository root)", err)
		}
		b, _ = raw.LoadOrStore(abs, data)
	}
	g, err := graph.Load(b.([]byte))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(abs, FileName), err)
	}
	return g, nil
}

// Load is [Read] for a test: it fails tb when the fixture is missing or
// does not load.
func Load(tb testing.TB, dir string) *graph.Graph {
	tb.Helper()
	g, err := Read(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// FromRoot is [Load] of the contract folder rel under the repository root
// (e.g. "examples/tasks").
func FromRoot(tb testing.TB, rel string) *graph.Graph {
	tb.Helper()
	return Load(tb, Dir(rel))
}
