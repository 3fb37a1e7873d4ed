package check

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzFiles: the projector-level checks run on whatever graph the
// compiler built — partial ones included, from contracts CUE refuses —
// without a panic; a contract reported clean has a consistent graph.
func FuzzFiles(f *testing.F) {
	for _, p := range []string{"../../examples/minimal/minimal.cue", "../../examples/tasks/tasks.cue"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	archives, _ := filepath.Glob("../../testdata/invalid/*.txtar")
	for _, a := range archives {
		b, _ := os.ReadFile(a)
		if _, after, ok := bytes.Cut(b, []byte("-- contract/c.cue --\n")); ok {
			src, _, _ := bytes.Cut(after, []byte("-- "))
			f.Add(src)
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > 1<<14 {
			return
		}
		rep, err := Files(context.Background(), map[string][]byte{"c.cue": src})
		if err != nil {
			if strings.Contains(err.Error(), "internal compiler error") {
				t.Fatalf("panic: %v", err)
			}
			return
		}
		for _, d := range append(rep.Errors, rep.Warnings...) {
			if d.Rule == "" || d.Message == "" {
				t.Fatalf("diagnostic without rule or message: %+v", d)
			}
		}
		if len(rep.Errors) == 0 {
			if rep.Graph == nil {
				t.Fatal("a clean report without a graph")
			}
			if err := rep.Graph.Validate(); err != nil {
				t.Fatalf("clean graph is inconsistent: %v", err)
			}
		}
	})
}
