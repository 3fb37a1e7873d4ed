package conformance_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"stitchkit.dev/stitchkit/pkg/conformance"
)

// recorder records the order of probe steps from any goroutine.
type recorder struct {
	mu    sync.Mutex
	steps []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.steps = append(r.steps, s)
}

func (r *recorder) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.steps)
}

var ok = conformance.Observation{Outcome: conformance.OutcomeSuccess, Data: map[string]any{"id": "t_1"}}

// answering is a driver that records its call and answers obs, failing the
// observation if its context is already done.
func answering(r *recorder, name string, obs conformance.Observation) conformance.Driver {
	return conformance.DriverFunc(func(ctx context.Context, fixture any) (conformance.Observation, error) {
		r.add(name)
		if ctx.Err() != nil {
			return conformance.Observation{Outcome: conformance.OutcomeAborted}, nil
		}
		if fixture != "fixture" {
			return conformance.Observation{}, errors.New("wrong fixture")
		}
		return obs, nil
	})
}

// hang is a driver that ignores its context and blocks until the test
// ends, the worst kind of driver.
func hang(t *testing.T, r *recorder) conformance.Driver {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	return conformance.DriverFunc(func(context.Context, any) (conformance.Observation, error) {
		r.add("hang")
		<-release
		return ok, nil
	})
}

func TestProbeOrder(t *testing.T) {
	var r recorder
	var deadlines []time.Time
	var mu sync.Mutex
	deadline := func(ctx context.Context) {
		d, _ := ctx.Deadline()
		mu.Lock()
		deadlines = append(deadlines, d)
		mu.Unlock()
	}
	probe := conformance.Probe{
		Name:       "create",
		Fixture:    "fixture",
		Transports: []conformance.Transport{conformance.TransportHTTP, conformance.TransportMCP},
		Expected:   map[conformance.Transport]conformance.Observation{conformance.TransportHTTP: ok, conformance.TransportMCP: ok},
		Setup: func(ctx context.Context) error {
			r.add("setup")
			deadline(ctx)
			return ctx.Err()
		},
		Teardown: func(ctx context.Context) error {
			r.add("teardown")
			deadline(ctx)
			return ctx.Err()
		},
	}
	withDeadline := func(name string) conformance.Driver {
		return conformance.DriverFunc(func(ctx context.Context, f any) (conformance.Observation, error) {
			deadline(ctx)
			return answering(&r, name, ok).Invoke(ctx, f)
		})
	}
	err := conformance.RunProbes(context.Background(), []conformance.Probe{probe},
		conformance.Drivers{conformance.TransportHTTP: withDeadline("http"), conformance.TransportMCP: withDeadline("mcp")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.get(), []string{"setup", "http", "mcp", "teardown"}; !slices.Equal(got, want) {
		t.Errorf("steps %v, want %v", got, want)
	}
	// One absolute deadline for every step, not one per step.
	if len(deadlines) != 4 || deadlines[0].IsZero() {
		t.Fatalf("deadlines %v", deadlines)
	}
	for _, d := range deadlines[1:] {
		if !d.Equal(deadlines[0]) {
			t.Errorf("step deadline %v differs from setup's %v: the budget is reset per step", d, deadlines[0])
		}
	}
}

func TestHungDriverFailsAtDeadline(t *testing.T) {
	var r recorder
	tornDown := 0
	probe := conformance.Probe{
		Name: "hung", Fixture: "fixture",
		Transports: []conformance.Transport{conformance.TransportHTTP, conformance.TransportMCP},
		Expected:   map[conformance.Transport]conformance.Observation{conformance.TransportHTTP: ok, conformance.TransportMCP: ok},
		Teardown: func(ctx context.Context) error {
			tornDown++
			if ctx.Err() != nil {
				t.Errorf("teardown after the deadline got a done context: %v", ctx.Err())
			}
			return nil
		},
	}
	start := time.Now()
	err := conformance.RunProbes(context.Background(), []conformance.Probe{probe},
		conformance.Drivers{conformance.TransportHTTP: hang(t, &r), conformance.TransportMCP: answering(&r, "mcp", ok)},
		&conformance.RunOptions{Timeout: time.Second}) // the driver must be reached before the deadline, even on a loaded machine
	var pe *conformance.ProbeError
	if !errors.As(err, &pe) || pe.Transport != conformance.TransportHTTP || pe.Step != conformance.StepInvoke || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if want := `Surface probe "hung" HTTP: probe deadline of 1s exceeded`; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err %q, want prefix %q", err, want)
	}
	if elapsed := time.Since(start); elapsed > 10*time.Second { // the driver hangs until the test ends
		t.Errorf("took %v", elapsed)
	}
	if got := r.get(); !slices.Equal(got, []string{"hang"}) {
		t.Errorf("steps %v: nothing runs after the deadline but teardown", got)
	}
	if tornDown != 1 {
		t.Errorf("teardown ran %d times", tornDown)
	}
}

func TestHungSetupStillTearsDownOnce(t *testing.T) {
	var r recorder
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	var torn sync.WaitGroup
	torn.Add(1)
	calls := 0
	probe := conformance.Probe{
		Name: "setup hangs", Fixture: "fixture",
		Transports: []conformance.Transport{conformance.TransportHTTP},
		Expected:   map[conformance.Transport]conformance.Observation{conformance.TransportHTTP: ok},
		Setup: func(context.Context) error {
			<-release // hangs on purpose, until the cleanup: the runner must not wait for it
			return nil
		},
		Teardown: func(context.Context) error {
			calls++
			torn.Done()
			return nil
		},
	}
	start := time.Now()
	err := conformance.RunProbes(context.Background(), []conformance.Probe{probe},
		conformance.Drivers{conformance.TransportHTTP: answering(&r, "http", ok)}, &conformance.RunOptions{Timeout: time.Second})
	elapsed := time.Since(start)
	var pe *conformance.ProbeError
	if !errors.As(err, &pe) || pe.Step != conformance.StepSetup || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	// The setup hangs until the test ends: any bound far below that
	// proves the run did not wait for it. (The deadline is a second, not
	// milliseconds, so that a loaded machine still reaches the setup
	// before it: a probe whose deadline has passed before it starts tears
	// nothing down.)
	if elapsed > 10*time.Second {
		t.Errorf("hung setup with a 1s deadline rejected after %v", elapsed)
	}
	tornDone := make(chan struct{})
	go func() { torn.Wait(); close(tornDone) }()
	select {
	case <-tornDone:
	case <-time.After(10 * time.Second):
		t.Fatal("the teardown did not run within 10s of the rejected setup")
	}
	if calls != 1 || len(r.get()) != 0 {
		t.Errorf("teardown %d times, steps %v", calls, r.get())
	}
}

// A teardown that hangs after the deadline is abandoned after its grace.
func TestHungTeardownIsAbandoned(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	var r recorder
	probe := conformance.Probe{
		Name: "teardown hangs", Fixture: "fixture",
		Transports: []conformance.Transport{conformance.TransportHTTP},
		Expected:   map[conformance.Transport]conformance.Observation{conformance.TransportHTTP: ok},
		Teardown: func(context.Context) error {
			<-release // hangs on purpose, until the cleanup: the runner must not wait for it
			return nil
		},
	}
	err := conformance.RunProbes(context.Background(), []conformance.Probe{probe},
		conformance.Drivers{conformance.TransportHTTP: hang(t, &r)},
		&conformance.RunOptions{Timeout: time.Second, TeardownGrace: 5 * time.Millisecond})
	var pe *conformance.ProbeError
	if !errors.As(err, &pe) || pe.Step != conformance.StepInvoke || !strings.Contains(err.Error(), "probe deadline of 1s exceeded") {
		t.Fatalf("the first failure must win: %v", err)
	}
}

// A probe that finishes its transports but overruns the deadline in
// teardown fails with the deadline.
func TestTeardownOverrunFails(t *testing.T) {
	var r recorder
	probe := conformance.Probe{
		Name: "slow teardown", Fixture: "fixture",
		Transports: []conformance.Transport{conformance.TransportHTTP},
		Expected:   map[conformance.Transport]conformance.Observation{conformance.TransportHTTP: ok},
		Teardown: func(ctx context.Context) error {
			<-ctx.Done() // the probe's deadline (1 s) ends it
			return ctx.Err()
		},
	}
	err := conformance.RunProbes(context.Background(), []conformance.Probe{probe},
		conformance.Drivers{conformance.TransportHTTP: answering(&r, "http", ok)}, &conformance.RunOptions{Timeout: time.Second})
	var pe *conformance.ProbeError
	if !errors.As(err, &pe) || pe.Step != conformance.StepTeardown || !strings.Contains(err.Error(), `Surface probe "slow teardown" teardown: probe deadline of 1s exceeded`) {
		t.Fatalf("err = %v", err)
	}
}

func TestRunOptionsRefused(t *testing.T) {
	var r recorder
	probe := conformance.Probe{Name: "p", Fixture: "fixture", Transports: []conformance.Transport{conformance.TransportHTTP},
		Expected: map[conformance.Transport]conformance.Observation{conformance.TransportHTTP: ok}}
	drivers := conformance.Drivers{conformance.TransportHTTP: answering(&r, "http", ok)}
	for _, tc := range []struct {
		opts *conformance.RunOptions
		want string
	}{
		{&conformance.RunOptions{Timeout: 1500 * time.Microsecond}, "Surface probe Timeout must be a positive whole number of milliseconds, got 1.5ms"},
		{&conformance.RunOptions{Timeout: -time.Second}, "Surface probe Timeout must be a positive whole number of milliseconds, got -1s"},
		{&conformance.RunOptions{TeardownGrace: time.Nanosecond}, "Surface probe TeardownGrace must be a positive whole number of milliseconds, got 1ns"},
		{&conformance.RunOptions{MaxDiagnosticBytes: -1}, "Surface probe MaxDiagnosticBytes must be a positive integer, got -1"},
	} {
		for _, probes := range [][]conformance.Probe{{probe}, nil} {
			err := conformance.RunProbes(context.Background(), probes, drivers, tc.opts)
			if err == nil || err.Error() != tc.want {
				t.Errorf("RunProbes(%d probes, %+v) = %v, want %q", len(probes), *tc.opts, err, tc.want)
			}
		}
		if err := conformance.ValidateRunOptions(tc.opts); err == nil || err.Error() != tc.want {
			t.Errorf("ValidateRunOptions(%+v) = %v", *tc.opts, err)
		}
	}
	if steps := r.get(); len(steps) != 0 {
		t.Errorf("a driver ran despite invalid options: %v", steps)
	}
}

func TestProbeFailures(t *testing.T) {
	var http, mcp conformance.Transport = conformance.TransportHTTP, conformance.TransportMCP
	calls := func(n int) *int { return &n }
	for _, tc := range []struct {
		name    string
		probe   conformance.Probe
		drivers func(r *recorder) conformance.Drivers
		opts    *conformance.RunOptions
		want    string
		steps   []string
	}{{
		name:  "no driver",
		probe: conformance.Probe{Name: "p", Transports: []conformance.Transport{http, mcp}, Expected: map[conformance.Transport]conformance.Observation{http: ok, mcp: ok}},
		drivers: func(r *recorder) conformance.Drivers {
			return conformance.Drivers{http: answering(r, "http", ok)}
		},
		want: `Surface probe "p" has no MCP driver`,
	}, {
		name:  "no expectation",
		probe: conformance.Probe{Name: "p", Transports: []conformance.Transport{http, mcp}, Expected: map[conformance.Transport]conformance.Observation{http: ok}},
		drivers: func(r *recorder) conformance.Drivers {
			return conformance.Drivers{http: answering(r, "http", ok), mcp: answering(r, "mcp", ok)}
		},
		want: `Surface probe "p" has no MCP expectation`,
	}, {
		name:  "invalid expectation",
		probe: conformance.Probe{Name: "p", Transports: []conformance.Transport{http}, Expected: map[conformance.Transport]conformance.Observation{http: {Outcome: conformance.OutcomeRealtimeRejected}}},
		drivers: func(r *recorder) conformance.Drivers {
			return conformance.Drivers{http: answering(r, "http", ok)}
		},
		want: `Surface probe "p" HTTP expectation: outcome "realtime_rejected" requires a rejection`,
	}, {
		name:  "unknown transport",
		probe: conformance.Probe{Name: "p", Transports: []conformance.Transport{"GRPC"}},
		drivers: func(r *recorder) conformance.Drivers {
			return conformance.Drivers{"GRPC": answering(r, "grpc", ok)}
		},
		want: `Surface probe "p": unknown transport "GRPC" (want HTTP, MCP, AGENT, CLI or REALTIME)`,
	}, {
		name:  "mismatch names probe, transport, expected and actual",
		probe: conformance.Probe{Name: "p", Fixture: "fixture", Transports: []conformance.Transport{http, mcp}, Expected: map[conformance.Transport]conformance.Observation{http: ok, mcp: ok}},
		drivers: func(r *recorder) conformance.Drivers {
			return conformance.Drivers{http: answering(r, "http", ok), mcp: answering(r, "mcp",
				conformance.Observation{Outcome: conformance.OutcomeValidationError, Code: "VALIDATION_ERROR", HandlerCalls: calls(0)})}
		},
		want:  "Surface probe \"p\" MCP mismatch\nexpected: {\"data\":{\"id\":\"t_1\"},\"outcome\":\"success\"}\nactual: {\"code\":\"VALIDATION_ERROR\",\"handlerCalls\":0,\"outcome\":\"validation_error\"}",
		steps: []string{"http", "mcp"},
	}, {
		name:  "driver error is the failure",
		probe: conformance.Probe{Name: "p", Transports: []conformance.Transport{http}, Expected: map[conformance.Transport]conformance.Observation{http: ok}},
		drivers: func(r *recorder) conformance.Drivers {
			return conformance.Drivers{http: answering(r, "http", ok)}
		},
		want:  `Surface probe "p" HTTP: wrong fixture`,
		steps: []string{"http"},
	}, {
		name:  "invalid observation",
		probe: conformance.Probe{Name: "p", Fixture: "fixture", Transports: []conformance.Transport{http}, Expected: map[conformance.Transport]conformance.Observation{http: ok}},
		drivers: func(r *recorder) conformance.Drivers {
			return conformance.Drivers{http: answering(r, "http", conformance.Observation{Outcome: "exploded"})}
		},
		want:  `Surface probe "p" HTTP: driver returned an invalid observation: unknown outcome "exploded"`,
		steps: []string{"http"},
	}, {
		name:  "unmarshalable data",
		probe: conformance.Probe{Name: "p", Fixture: "fixture", Transports: []conformance.Transport{http}, Expected: map[conformance.Transport]conformance.Observation{http: ok}},
		drivers: func(r *recorder) conformance.Drivers {
			return conformance.Drivers{http: answering(r, "http", conformance.Observation{Outcome: conformance.OutcomeSuccess, Data: func() {}})}
		},
		want:  `Surface probe "p" HTTP: driver returned an invalid observation: observation data is not JSON`,
		steps: []string{"http"},
	}, {
		name:  "panicking driver",
		probe: conformance.Probe{Name: "p", Fixture: "fixture", Transports: []conformance.Transport{http}, Expected: map[conformance.Transport]conformance.Observation{http: ok}},
		drivers: func(r *recorder) conformance.Drivers {
			return conformance.Drivers{http: conformance.DriverFunc(func(context.Context, any) (conformance.Observation, error) { panic("boom") })}
		},
		want: `Surface probe "p" HTTP: panic: boom`,
	}, {
		name: "diagnostic capped on a rune boundary before comparison",
		probe: conformance.Probe{Name: "p", Fixture: "fixture", Transports: []conformance.Transport{http},
			Expected: map[conformance.Transport]conformance.Observation{http: {Outcome: conformance.OutcomeDomainError, Diagnostic: "abcd"}}},
		drivers: func(r *recorder) conformance.Drivers {
			return conformance.Drivers{http: answering(r, "http", conformance.Observation{Outcome: conformance.OutcomeDomainError, Diagnostic: "abcdéf"})}
		},
		opts:  &conformance.RunOptions{MaxDiagnosticBytes: 5},
		steps: []string{"http"},
	}, {
		name: "default cap is 4096 bytes",
		probe: conformance.Probe{Name: "p", Fixture: "fixture", Transports: []conformance.Transport{http},
			Expected: map[conformance.Transport]conformance.Observation{http: {Outcome: conformance.OutcomeDomainError, Diagnostic: strings.Repeat("x", 4096)}}},
		drivers: func(r *recorder) conformance.Drivers {
			return conformance.Drivers{http: answering(r, "http", conformance.Observation{Outcome: conformance.OutcomeDomainError, Diagnostic: strings.Repeat("x", 5000)})}
		},
		steps: []string{"http"},
	}, {
		name: "an expectation longer than the cap could never match",
		probe: conformance.Probe{Name: "p", Fixture: "fixture", Transports: []conformance.Transport{http},
			Expected: map[conformance.Transport]conformance.Observation{http: {Outcome: conformance.OutcomeDomainError, Diagnostic: "abcdef"}}},
		drivers: func(r *recorder) conformance.Drivers {
			return conformance.Drivers{http: answering(r, "http", conformance.Observation{Outcome: conformance.OutcomeDomainError, Diagnostic: "abcdef"})}
		},
		opts: &conformance.RunOptions{MaxDiagnosticBytes: 3},
		want: `Surface probe "p" HTTP expectation: diagnostic of 6 bytes is longer than MaxDiagnosticBytes (3)`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var r recorder
			err := conformance.RunProbes(context.Background(), []conformance.Probe{tc.probe}, tc.drivers(&r), tc.opts)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected failure: %v", err)
			case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
				t.Fatalf("err = %v\nwant  %s", err, tc.want)
			}
			if got := r.get(); !slices.Equal(got, tc.steps) {
				t.Errorf("steps %v, want %v", got, tc.steps)
			}
		})
	}
}

// A mismatch keeps both observations for the caller.
func TestMismatchCarriesObservations(t *testing.T) {
	var r recorder
	bad := conformance.Observation{Outcome: conformance.OutcomeDomainError, Code: "TASK_NOT_FOUND"}
	err := conformance.RunProbes(context.Background(), []conformance.Probe{{Name: "p", Fixture: "fixture",
		Transports: []conformance.Transport{conformance.TransportCLI}, Expected: map[conformance.Transport]conformance.Observation{conformance.TransportCLI: ok}}},
		conformance.Drivers{conformance.TransportCLI: answering(&r, "cli", bad)}, nil)
	var pe *conformance.ProbeError
	if !errors.As(err, &pe) || pe.Probe != "p" || pe.Transport != conformance.TransportCLI || !pe.Expected.Equal(ok) || !pe.Actual.Equal(bad) {
		t.Fatalf("err = %#v", err)
	}
}

func TestTeardownErrorOnlyWhenNothingFailed(t *testing.T) {
	var r recorder
	teardownErr := errors.New("cleanup failed")
	probe := func(driverObs conformance.Observation) conformance.Probe {
		return conformance.Probe{Name: "p", Fixture: "fixture", Transports: []conformance.Transport{conformance.TransportHTTP},
			Expected: map[conformance.Transport]conformance.Observation{conformance.TransportHTTP: ok},
			Teardown: func(context.Context) error { r.add("teardown"); return teardownErr }}
	}
	err := conformance.RunProbes(context.Background(), []conformance.Probe{probe(ok)}, conformance.Drivers{conformance.TransportHTTP: answering(&r, "http", ok)}, nil)
	if !errors.Is(err, teardownErr) || err.Error() != `Surface probe "p" teardown: cleanup failed` {
		t.Errorf("teardown error after success: %v", err)
	}
	err = conformance.RunProbes(context.Background(), []conformance.Probe{probe(ok)},
		conformance.Drivers{conformance.TransportHTTP: answering(&r, "http", conformance.Observation{Outcome: conformance.OutcomeTimeout})}, nil)
	if errors.Is(err, teardownErr) || !strings.Contains(err.Error(), "HTTP mismatch") {
		t.Errorf("the earlier failure must win: %v", err)
	}
	if got := r.get(); !slices.Equal(got, []string{"http", "teardown", "http", "teardown"}) {
		t.Errorf("steps %v", got)
	}
}

// An outer context that is already done fails before setup, and a failing
// probe stops the run.
func TestCancelledAndFailFast(t *testing.T) {
	var r recorder
	mk := func(name string, exp conformance.Observation) conformance.Probe {
		return conformance.Probe{Name: name, Fixture: "fixture", Transports: []conformance.Transport{conformance.TransportHTTP},
			Expected: map[conformance.Transport]conformance.Observation{conformance.TransportHTTP: exp},
			Setup:    func(context.Context) error { r.add(name + ":setup"); return nil },
			Teardown: func(context.Context) error { r.add(name + ":teardown"); return nil }}
	}
	drivers := conformance.Drivers{conformance.TransportHTTP: answering(&r, "http", ok)}
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("stopped by the caller")
	cancel(stop)
	err := conformance.RunProbes(ctx, []conformance.Probe{mk("a", ok)}, drivers, nil)
	if !errors.Is(err, stop) || err.Error() != `Surface probe "a" setup: stopped by the caller` || len(r.get()) != 0 {
		t.Errorf("cancelled run: %v, steps %v", err, r.get())
	}
	err = conformance.RunProbes(context.Background(), []conformance.Probe{mk("a", ok), mk("b", conformance.Observation{Outcome: conformance.OutcomeTimeout}), mk("c", ok)}, drivers, nil)
	if err == nil || !strings.HasPrefix(err.Error(), `Surface probe "b" HTTP mismatch`) {
		t.Fatalf("err = %v", err)
	}
	if got, want := r.get(), []string{"a:setup", "http", "a:teardown", "b:setup", "http", "b:teardown"}; !slices.Equal(got, want) {
		t.Errorf("steps %v, want %v", got, want)
	}
}

func TestObservationValidate(t *testing.T) {
	rej := &conformance.Rejection{Direction: conformance.ClientInbound, Phase: conformance.PhaseArguments, Reason: conformance.ReasonInvalidArguments, Fault: conformance.FaultPeer}
	n := -1
	for _, tc := range []struct {
		obs  conformance.Observation
		want string
	}{
		{conformance.Observation{Outcome: conformance.OutcomeRealtimeRejected, Rejection: rej}, ""},
		{conformance.Observation{Outcome: conformance.OutcomeDisconnected, Disconnect: &conformance.Disconnect{Phase: conformance.InFlight}}, ""},
		{conformance.Observation{}, `unknown outcome ""`},
		{conformance.Observation{Outcome: conformance.OutcomeSuccess, Rejection: rej}, `outcome "success" carries a rejection; only realtime_rejected does`},
		{conformance.Observation{Outcome: conformance.OutcomeDisconnected}, `outcome "disconnected" requires a disconnect phase`},
		{conformance.Observation{Outcome: conformance.OutcomeTimeout, Disconnect: &conformance.Disconnect{Phase: conformance.InFlight}}, `outcome "timeout" carries a disconnect; only disconnected does`},
		{conformance.Observation{Outcome: conformance.OutcomeDisconnected, Disconnect: &conformance.Disconnect{Phase: "later"}}, `unknown disconnect phase "later"`},
		{conformance.Observation{Outcome: conformance.OutcomeSuccess, HandlerCalls: &n}, "handlerCalls is -1, not a non-negative integer"},
		{conformance.Observation{Outcome: conformance.OutcomeRealtimeRejected, Rejection: &conformance.Rejection{Direction: "sideways", Phase: conformance.PhaseArguments, Reason: conformance.ReasonInvalidArguments, Fault: conformance.FaultPeer}}, `unknown rejection direction "sideways"`},
		{conformance.Observation{Outcome: conformance.OutcomeRealtimeRejected, Rejection: &conformance.Rejection{Direction: conformance.ServerInbound, Phase: "body", Reason: conformance.ReasonInvalidArguments, Fault: conformance.FaultPeer}}, `unknown rejection phase "body"`},
		{conformance.Observation{Outcome: conformance.OutcomeRealtimeRejected, Rejection: &conformance.Rejection{Direction: conformance.ServerInbound, Phase: conformance.PhaseArguments, Reason: "bored", Fault: conformance.FaultPeer}}, `unknown rejection reason "bored"`},
		{conformance.Observation{Outcome: conformance.OutcomeRealtimeRejected, Rejection: &conformance.Rejection{Direction: conformance.ServerInbound, Phase: conformance.PhaseArguments, Reason: conformance.ReasonRejectedByPeer, Fault: "nobody"}}, `unknown rejection fault "nobody"`},
	} {
		err := tc.obs.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && err.Error() != tc.want) {
			t.Errorf("%+v: %v, want %q", tc.obs, err, tc.want)
		}
	}
	// Numbers compare by value, whatever Go type holds them.
	a := conformance.Observation{Outcome: conformance.OutcomeSuccess, Data: map[string]any{"n": 3, "list": []int{1}}}
	b := conformance.Observation{Outcome: conformance.OutcomeSuccess, Data: map[string]any{"n": 3.0, "list": []any{1.0}}}
	if !a.Equal(b) {
		t.Error("3 and 3.0 differ")
	}
}
