package compile

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"stitchkit.dev/stitchkit/pkg/conformance/conformancetest"
)

// TestGraphFixtures keeps the compiled fixtures of the run-time packages'
// tests fresh. Those tests live in the root module, which must not require
// CUE, so they load a graph.json checked in beside each contract's .cue
// files (internal/graphfixture) instead of compiling it. Here every folder
// of the repository holding both is compiled and compared with its
// graph.json byte for byte; -update rewrites the stale ones (to add a
// fixture, create an empty graph.json beside the contract and run with
// -update). Outside a checkout (from the module cache) there is nothing to
// check.
func TestGraphFixtures(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.work")); err != nil {
		t.Skip("not in a stitchkit checkout (no go.work at ../..)")
	}
	var dirs []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || d.Name() != "graph.json" {
			return nil
		}
		cue, err := filepath.Glob(filepath.Join(filepath.Dir(path), "*.cue"))
		if err != nil {
			return err
		}
		if len(cue) > 0 {
			dirs = append(dirs, filepath.Dir(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The run-time tests depend on these; a walk that finds none is broken.
	for _, must := range []string{"examples/tasks", "internal/mounttest/testdata/unseen/library"} {
		if !slices.Contains(dirs, filepath.Join(root, filepath.FromSlash(must))) {
			t.Errorf("no fixture found for %s (found %d)", must, len(dirs))
		}
	}
	for _, dir := range dirs {
		rel, _ := filepath.Rel(root, dir)
		t.Run(filepath.ToSlash(rel), func(t *testing.T) {
			conformancetest.Golden(t, filepath.Join(dir, "graph.json"), compileBytes(t, dir))
		})
	}
}
