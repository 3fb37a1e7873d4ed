package conformancetest

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"stitchkit.dev/stitchkit/pkg/conformance"
)

func probesFixture(seen *[]string, mu *sync.Mutex) ([]conformance.Probe, conformance.Drivers) {
	ok := conformance.Observation{Outcome: conformance.OutcomeSuccess, Data: "pong"}
	probe := func(name string, exp conformance.Observation) conformance.Probe {
		return conformance.Probe{Name: name, Fixture: name, Transports: []conformance.Transport{conformance.TransportAGENT},
			Expected: map[conformance.Transport]conformance.Observation{conformance.TransportAGENT: exp}}
	}
	probes := []conformance.Probe{probe("first", ok), probe("second", conformance.Observation{Outcome: conformance.OutcomeTimeout}), probe("third", ok)}
	drivers := conformance.Drivers{conformance.TransportAGENT: conformance.DriverFunc(func(_ context.Context, f any) (conformance.Observation, error) {
		mu.Lock()
		*seen = append(*seen, f.(string))
		mu.Unlock()
		return ok, nil
	})}
	return probes, drivers
}

// TestRunProbesHelper is run in a child process by TestRunProbes, where its
// failure is the thing under test.
func TestRunProbesHelper(t *testing.T) {
	if os.Getenv("CONFORMANCETEST_CHILD") != "1" {
		t.Skip("run by TestRunProbes in a child process")
	}
	var seen []string
	var mu sync.Mutex
	probes, drivers := probesFixture(&seen, &mu)
	RunProbes(t, probes, drivers, nil)
	t.Logf("seen: %s", strings.Join(seen, ","))
}

func TestRunProbes(t *testing.T) {
	var seen []string
	var mu sync.Mutex
	probes, drivers := probesFixture(&seen, &mu)
	RunProbes(t, probes[:1], drivers, nil)
	if len(seen) != 1 || t.Failed() {
		t.Fatalf("passing probe: seen %v", seen)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^TestRunProbesHelper$", "-test.v")
	cmd.Env = append(os.Environ(), "CONFORMANCETEST_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("a failing probe did not fail the test:\n%s", out)
	}
	for _, want := range []string{
		"--- PASS: TestRunProbesHelper/first",
		"--- FAIL: TestRunProbesHelper/second",
		"Surface probe \"second\" AGENT mismatch\n",
		`expected: {"outcome":"timeout"}`,
		`actual: {"data":"pong","outcome":"success"}`,
		"--- PASS: TestRunProbesHelper/third",
		"seen: first,second,third",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("child output lacks %q:\n%s", want, out)
		}
	}
}
