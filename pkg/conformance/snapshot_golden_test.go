package conformance_test

import (
	"path/filepath"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"testing"

	"stitchkit.dev/stitchkit/internal/graphfixture"
	"stitchkit.dev/stitchkit/pkg/conformance"
	"stitchkit.dev/stitchkit/pkg/conformance/conformancetest"
)

// The hand-made fixture's snapshot: refreshed only with -conformancetest.update.
func TestSnapshotFixture(t *testing.T) {
	conformancetest.AssertManifestSnapshot(t, conformance.ItemsManifest(t), filepath.Join("testdata", "items.manifest.json"))
}

// Golden manifests of the examples, compiled from CUE.
func TestSnapshotExamples(t *testing.T) {
	for _, name := range []string{"minimal", "tasks"} {
		t.Run(name, func(t *testing.T) {
			g, err := graphfixture.Read(filepath.Join("..", "..", "examples", name))
			if err != nil {
				t.Fatalf("compile examples/%s: %v", name, err)
			}
			m, err := conformance.BuildManifest(projecttest.Prefixed(t, g, "/api"), nil)
			if err != nil {
				t.Fatal(err)
			}
			conformancetest.AssertManifestSnapshot(t, m, filepath.Join("testdata", "examples", name+".manifest.json"))
		})
	}
}
