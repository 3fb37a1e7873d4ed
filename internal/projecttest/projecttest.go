// Package projecttest builds the one projection of a graph in tests: the
// value every mount, the manifest, the exports and the drivers read.
package projecttest

import (
	"testing"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/project"
)

// New returns project.New(g, opts), failing t when g does not project.
func New(t testing.TB, g *graph.Graph, opts *project.Options) *project.Projection {
	t.Helper()
	p, err := project.New(g, opts)
	if err != nil {
		t.Fatalf("project.New: %v", err)
	}
	return p
}

// Prefixed is [New] with the HTTP prefix prefix.
func Prefixed(t testing.TB, g *graph.Graph, prefix string) *project.Projection {
	t.Helper()
	return New(t, g, &project.Options{HTTPPrefix: prefix})
}
