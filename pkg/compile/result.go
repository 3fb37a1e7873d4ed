package compile

import (
	"cuelang.org/go/cue"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// Result is everything one compilation found. [Analyze] returns it; a
// layer above the compiler (package stitchkit.dev/stitchkit/pkg/check)
// adds the checks that need the projector and positions them with
// [Result.Pos].
//
// A Result keeps the evaluated CUE value of the contract alive (for
// [Result.Strings]): drop it once the checks are done.
type Result struct {
	// Dir is the contract directory as given ("(in memory)" for
	// AnalyzeFiles).
	Dir string
	// Graph is the graph built from every node CUE found intact. It is
	// nil when the package could not be loaded or its root is broken, and
	// incomplete (broken nodes left out) when Diagnostics is not empty:
	// use it then only to run further checks, never as the contract.
	Graph *graph.Graph
	// Diagnostics are the contract's mistakes, sorted by position.
	Diagnostics []Diagnostic
	// Warnings are findings that do not fail the compilation, sorted
	// (e.g. a copy of the contract language under cue.mod/pkg that
	// differs from the one this compiler checks with).
	Warnings []Diagnostic

	skipped      map[string]bool
	skipSurfaces bool
	index        *posIndex
	root         cue.Value
}

// Err returns the diagnostics as an *[Error], or nil when there is none.
func (r *Result) Err() error {
	if len(r.Diagnostics) == 0 {
		return nil
	}
	return &Error{Dir: r.Dir, Diagnostics: r.Diagnostics}
}

// Pos returns where the contract wrote the node at the CUE path node
// ("services.tasks.operations.list.path", "surfaces.agent.include.2"),
// or, when the node itself was not written (a default, a field produced
// by a comprehension), its nearest written parent.
func (r *Result) Pos(node string) graph.Pos {
	if r.index == nil {
		return graph.Pos{}
	}
	return r.index.lookup(node)
}

// Declared returns every place the contract's own files declare the label
// path node, in source order (several when two files or two blocks write
// the same field); nil when none does.
func (r *Result) Declared(node string) []graph.Pos {
	if r.index == nil {
		return nil
	}
	return r.index.all[node]
}

// Strings returns the list of strings at node as written, in the written
// order (the graph keeps selections and policy lists sorted), e.g.
// r.Strings("surfaces.mcp.default.include"); nil when there is none.
func (r *Result) Strings(node string) []string {
	if !r.root.Exists() {
		return nil
	}
	return strList(r.root.LookupPath(cue.ParsePath(node)))
}

// Skipped reports whether the node with selection key key
// ("service.action", "service.*", "runtime.NAME") was left out of Graph
// because CUE reported errors in it; a selection pattern naming it is
// then not a mistake of its own.
func (r *Result) Skipped(key string) bool { return r.skipped[key] }

// SurfacesBroken reports whether CUE reported errors in surfaces or
// policy, so Graph carries neither and surface checks must not run.
func (r *Result) SurfacesBroken() bool { return r.skipSurfaces }
