package compile

import (
	"context"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// compileDir and compileFiles are this package's tests' way to a graph:
// Analyze with its own diagnostics as the error. They skip the projector's
// checks, as Analyze does; users call check.Compile.
func compileDir(ctx context.Context, dir string) (*graph.Graph, error) {
	return graphOf(Analyze(ctx, dir))
}

func compileFiles(ctx context.Context, files map[string][]byte) (*graph.Graph, error) {
	return graphOf(AnalyzeFiles(ctx, files))
}

// graphOf is the graph of a clean compilation, else its error.
func graphOf(r *Result, err error) (*graph.Graph, error) {
	if err != nil {
		return nil, err
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return r.Graph, nil
}
