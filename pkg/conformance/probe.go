package conformance

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Transport names the transport a probe drives: HTTP, MCP, AGENT, CLI or
// REALTIME (the Transport* constants).
type Transport string

// Probe is one explicit scenario: a fixture invoked on each listed
// transport by that transport's driver, with the observation each must
// produce. The kit never derives fixtures or expectations from schemas; the
// caller writes both.
type Probe struct {
	// Name identifies the probe in failures.
	Name string
	// Fixture is handed to every driver as is. The built-in drivers take a
	// [Call]; the realtime driver a [RealtimeFixture].
	Fixture any
	// Transports are invoked in this order. A transport without a driver
	// or without an expectation fails the run; none is ever skipped.
	Transports []Transport
	// Expected is the exact observation per transport. Expectations for
	// transports not listed are ignored.
	Expected map[Transport]Observation
	// Setup runs before the first transport, Teardown after the last —
	// after a failure and after the deadline too (see [RunOptions]).
	// Either may be nil.
	Setup    func(ctx context.Context) error
	Teardown func(ctx context.Context) error
}

// Driver invokes a probe's fixture on one transport the caller owns and
// reports what happened. An error (rather than an observation) means the
// driver could not observe at all; it fails the probe as is.
//
// Invoke must honour ctx: it is done when the probe's deadline passes. A
// driver that ignores it is abandoned at the deadline — its goroutine runs
// on until it returns, and its result is discarded.
type Driver interface {
	Invoke(ctx context.Context, fixture any) (Observation, error)
}

// DriverFunc adapts a function to [Driver].
type DriverFunc func(ctx context.Context, fixture any) (Observation, error)

// Invoke calls f.
func (f DriverFunc) Invoke(ctx context.Context, fixture any) (Observation, error) {
	return f(ctx, fixture)
}

// Drivers maps each transport to the driver the caller supplies for it.
type Drivers map[Transport]Driver

// Defaults of [RunOptions].
const (
	DefaultProbeTimeout       = 10 * time.Second
	DefaultTeardownGrace      = time.Second
	DefaultMaxDiagnosticBytes = 4096
)

// RunOptions configures [RunProbes]; nil means defaults.
type RunOptions struct {
	// Timeout is each probe's one absolute deadline, covering setup, every
	// transport invocation and teardown; it is not reset per step. It must
	// be a positive whole number of milliseconds (the unit of the upstream
	// kit's timeoutMs); 0 means [DefaultProbeTimeout].
	Timeout time.Duration
	// TeardownGrace bounds a teardown that starts after the probe's context
	// is done (its deadline passed, or ctx was cancelled). Such a teardown
	// still runs, exactly once, but with a fresh context — carrying ctx's
	// values, expiring after TeardownGrace — because a cancelled context
	// would make most cleanup fail at once. The runner waits for it at most
	// that long and then abandons it. A positive whole number of
	// milliseconds; 0 means [DefaultTeardownGrace].
	TeardownGrace time.Duration
	// MaxDiagnosticBytes caps an observed diagnostic before comparison:
	// longer text is cut to at most this many bytes on a rune boundary.
	// 0 means [DefaultMaxDiagnosticBytes]; negative values are refused.
	MaxDiagnosticBytes int
}

// Probe step names, as reported by [ProbeError].
const (
	StepSetup    = "setup"
	StepInvoke   = "invoke"
	StepTeardown = "teardown"
)

// ProbeError is the failure of one probe. It names the probe, the step
// and, for an invocation, the transport; a mismatch also carries both
// observations.
type ProbeError struct {
	Probe string
	// Step is StepSetup, StepInvoke or StepTeardown; "" for a probe refused
	// before anything ran (a transport without driver or expectation, an
	// invalid expectation).
	Step      string
	Transport Transport
	// Expected and Actual are set when the observation did not match.
	Expected, Actual *Observation
	// Err is the cause: the error of setup, driver or teardown, the
	// deadline's cause, or what made an observation invalid.
	Err error
}

var (
	errNoDriver      = errors.New("no driver")
	errNoExpectation = errors.New("no expectation")
)

func (e *ProbeError) Error() string {
	switch {
	case e.Expected != nil && e.Actual != nil:
		exp, _ := e.Expected.Canonical()
		act, _ := e.Actual.Canonical()
		return fmt.Sprintf("Surface probe %q %s mismatch\nexpected: %s\nactual: %s", e.Probe, e.Transport, exp, act)
	case errors.Is(e.Err, errNoDriver):
		return fmt.Sprintf("Surface probe %q has no %s driver", e.Probe, e.Transport)
	case errors.Is(e.Err, errNoExpectation):
		return fmt.Sprintf("Surface probe %q has no %s expectation", e.Probe, e.Transport)
	case e.Transport != "" && e.Step == "":
		return fmt.Sprintf("Surface probe %q %s expectation: %v", e.Probe, e.Transport, e.Err)
	case e.Transport != "":
		return fmt.Sprintf("Surface probe %q %s: %v", e.Probe, e.Transport, e.Err)
	case e.Step != "":
		return fmt.Sprintf("Surface probe %q %s: %v", e.Probe, e.Step, e.Err)
	}
	return fmt.Sprintf("Surface probe %q: %v", e.Probe, e.Err)
}

// Unwrap returns the cause.
func (e *ProbeError) Unwrap() error { return e.Err }

// RunProbes runs probes in order against drivers and returns the first
// failure as a [*ProbeError] (fail-fast: later probes do not run).
//
// Before any probe runs, even when there are none, opts is checked, and
// every probe is checked statically: each listed transport must be one of
// the five, have a driver and a well-formed expectation (whose diagnostic
// fits the cap).
//
// Per probe, one deadline of opts.Timeout (derived from ctx, so cancelling
// ctx ends it too) covers setup, each transport invocation in the listed
// order, and teardown. If ctx is already done, the probe fails before
// setup. Each step is bounded: at the deadline the runner stops waiting and
// abandons the step (it cannot stop a goroutine that ignores ctx). A
// driver's observation must be a valid [Observation]; its diagnostic is
// capped, and its canonical JSON must equal the expectation's exactly.
//
// Teardown, when declared, runs exactly once for every probe that started
// (whose context was live when it began), whatever happened after — see [RunOptions.TeardownGrace] for what it gets once the
// deadline has passed. A teardown error is reported only when nothing
// failed before it; a probe that ran out of time in teardown fails with
// the deadline.
//
// A panic in setup, a driver or teardown is recovered and fails the probe.
func RunProbes(ctx context.Context, probes []Probe, drivers Drivers, opts *RunOptions) error {
	o, err := resolveRunOptions(opts)
	if err != nil {
		return err
	}
	for i := range probes {
		if err := checkProbe(&probes[i], drivers, o); err != nil {
			return err
		}
	}
	for i := range probes {
		if err := runProbe(ctx, &probes[i], drivers, o); err != nil {
			return err
		}
	}
	return nil
}

// ValidateRunOptions reports whether opts would be accepted by [RunProbes].
func ValidateRunOptions(opts *RunOptions) error {
	_, err := resolveRunOptions(opts)
	return err
}

func resolveRunOptions(opts *RunOptions) (RunOptions, error) {
	o := RunOptions{Timeout: DefaultProbeTimeout, TeardownGrace: DefaultTeardownGrace, MaxDiagnosticBytes: DefaultMaxDiagnosticBytes}
	if opts == nil {
		return o, nil
	}
	for _, d := range []struct {
		name string
		v    time.Duration
		dst  *time.Duration
	}{{"Timeout", opts.Timeout, &o.Timeout}, {"TeardownGrace", opts.TeardownGrace, &o.TeardownGrace}} {
		if d.v == 0 {
			continue
		}
		if d.v < 0 || d.v%time.Millisecond != 0 {
			return o, fmt.Errorf("Surface probe %s must be a positive whole number of milliseconds, got %v", d.name, d.v)
		}
		*d.dst = d.v
	}
	if opts.MaxDiagnosticBytes < 0 {
		return o, fmt.Errorf("Surface probe MaxDiagnosticBytes must be a positive integer, got %d", opts.MaxDiagnosticBytes)
	}
	if opts.MaxDiagnosticBytes > 0 {
		o.MaxDiagnosticBytes = opts.MaxDiagnosticBytes
	}
	return o, nil
}

func knownTransport(t Transport) bool {
	switch t {
	case TransportHTTP, TransportMCP, TransportAGENT, TransportCLI, TransportREALTIME:
		return true
	}
	return false
}

// checkProbe refuses, before anything runs, what could never pass.
func checkProbe(p *Probe, drivers Drivers, o RunOptions) error {
	if len(p.Transports) == 0 {
		return &ProbeError{Probe: p.Name, Err: errors.New("lists no transport")}
	}
	for _, t := range p.Transports {
		if !knownTransport(t) {
			return &ProbeError{Probe: p.Name, Err: fmt.Errorf("unknown transport %q (want HTTP, MCP, AGENT, CLI or REALTIME)", t)}
		}
		if drivers[t] == nil {
			return &ProbeError{Probe: p.Name, Transport: t, Err: errNoDriver}
		}
		exp, ok := p.Expected[t]
		if !ok {
			return &ProbeError{Probe: p.Name, Transport: t, Err: errNoExpectation}
		}
		if err := exp.Validate(); err != nil {
			return &ProbeError{Probe: p.Name, Transport: t, Err: err}
		}
		if len(exp.Diagnostic) > o.MaxDiagnosticBytes {
			// An observed diagnostic is cut to the cap, so this one could
			// never match.
			return &ProbeError{Probe: p.Name, Transport: t, Err: fmt.Errorf("diagnostic of %d bytes is longer than MaxDiagnosticBytes (%d)", len(exp.Diagnostic), o.MaxDiagnosticBytes)}
		}
	}
	return nil
}

func runProbe(ctx context.Context, p *Probe, drivers Drivers, o RunOptions) (failure error) {
	pctx, cancel := context.WithTimeoutCause(ctx, o.Timeout, fmt.Errorf("probe deadline of %v exceeded: %w", o.Timeout, context.DeadlineExceeded))
	defer cancel()
	fail := func(step string, t Transport, err error) error {
		return &ProbeError{Probe: p.Name, Step: step, Transport: t, Err: err}
	}
	if pctx.Err() != nil {
		// Nothing has started, so there is nothing to tear down.
		return fail(StepSetup, "", context.Cause(pctx))
	}
	if p.Teardown != nil {
		defer func() {
			if err := runTeardown(ctx, pctx, p.Teardown, o.TeardownGrace); err != nil && failure == nil {
				failure = fail(StepTeardown, "", err)
			}
		}()
	}
	if p.Setup != nil {
		if err := bounded(pctx, p.Setup); err != nil {
			return fail(StepSetup, "", err)
		}
	}
	for _, t := range p.Transports {
		if pctx.Err() != nil {
			return fail(StepInvoke, t, context.Cause(pctx))
		}
		var obs Observation
		err := bounded(pctx, func(ctx context.Context) error {
			var err error
			obs, err = drivers[t].Invoke(ctx, p.Fixture)
			return err
		})
		if err != nil {
			return fail(StepInvoke, t, err)
		}
		if err := obs.Validate(); err != nil {
			return fail(StepInvoke, t, fmt.Errorf("driver returned an invalid observation: %w", err))
		}
		obs.Diagnostic = truncateUTF8(obs.Diagnostic, o.MaxDiagnosticBytes)
		if exp := p.Expected[t]; !exp.Equal(obs) {
			if pctx.Err() != nil {
				// The driver answered as the deadline passed (typically an
				// aborted observation): the deadline is the failure.
				return fail(StepInvoke, t, context.Cause(pctx))
			}
			return &ProbeError{Probe: p.Name, Step: StepInvoke, Transport: t, Expected: &exp, Actual: &obs}
		}
	}
	return nil
}

// runTeardown runs teardown within the probe's deadline, or, when that is
// already over, with a fresh context of grace carrying ctx's values.
func runTeardown(ctx, pctx context.Context, teardown func(context.Context) error, grace time.Duration) error {
	if pctx.Err() == nil {
		return bounded(pctx, teardown)
	}
	gctx, cancel := context.WithTimeoutCause(context.WithoutCancel(ctx), grace, fmt.Errorf("teardown grace of %v exceeded: %w", grace, context.DeadlineExceeded))
	defer cancel()
	if err := bounded(gctx, teardown); err != nil {
		return err
	}
	// Teardown finished, but the probe had already overrun its deadline.
	return context.Cause(pctx)
}

// bounded runs f in its own goroutine and waits for it or for ctx, which
// ever comes first; a result that is already there wins over a deadline
// passing at the same moment. A panic in f becomes an error.
func bounded(ctx context.Context, f func(context.Context) error) error {
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("panic: %v", r)
			}
		}()
		done <- f(ctx)
	}()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		select {
		case err = <-done:
		default:
			return context.Cause(ctx)
		}
	}
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		// f gave up because ctx ended: report why it ended.
		return context.Cause(ctx)
	}
	return err
}
