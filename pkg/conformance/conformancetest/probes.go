package conformancetest

import (
	"testing"

	"stitchkit.dev/stitchkit/pkg/conformance"
)

// RunProbes runs each probe as a subtest of t named after it, through
// [conformance.RunProbes] with t's context, so one failing probe fails its
// subtest with the probe, transport, expected and actual observation, and
// the others still run (the library itself stops at the first failure).
// Invalid options fail t before any probe runs.
func RunProbes(t *testing.T, probes []conformance.Probe, drivers conformance.Drivers, opts *conformance.RunOptions) {
	t.Helper()
	if err := conformance.ValidateRunOptions(opts); err != nil {
		t.Fatal(err)
	}
	for _, p := range probes {
		t.Run(p.Name, func(t *testing.T) {
			t.Helper()
			if err := conformance.RunProbes(t.Context(), []conformance.Probe{p}, drivers, opts); err != nil {
				t.Error(err)
			}
		})
	}
}
