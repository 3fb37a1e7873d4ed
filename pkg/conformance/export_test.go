package conformance

import "testing"

// ItemsManifest builds the hand-made fixture's manifest for the external
// tests (package conformance_test), which pin it through conformancetest;
// an internal test cannot import conformancetest without an import cycle.
func ItemsManifest(t testing.TB) *Manifest {
	t.Helper()
	return build(t, itemsGraph(t, "number", false), testOpts)
}
