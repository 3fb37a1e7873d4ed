package conformance_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"stitchkit.dev/stitchkit/pkg/conformance"
	"stitchkit.dev/stitchkit/pkg/mount"
)

// fakeTransport is a test double of a realtime client the application
// owns: a connection flag, a rejection hook with subscribers, and a handler
// counter. The driver must leave it connected and unsubscribed.
type fakeTransport struct {
	mu        sync.Mutex
	connected bool
	hooks     map[int]func(conformance.RealtimeRejected)
	next      int
	handled   int
	// captured are the onRejected callbacks of every binding, to replay
	// a late rejection.
	captured []func(conformance.RealtimeRejected)
}

func newFakeTransport() *fakeTransport {
	return &fakeTransport{connected: true, hooks: map[int]func(conformance.RealtimeRejected){}}
}

func (f *fakeTransport) reject(r conformance.RealtimeRejected) {
	f.mu.Lock()
	hooks := make([]func(conformance.RealtimeRejected), 0, len(f.hooks))
	for _, h := range f.hooks {
		hooks = append(hooks, h)
	}
	f.mu.Unlock()
	for _, h := range hooks {
		h(r)
	}
}

func (f *fakeTransport) setConnected(c bool) {
	f.mu.Lock()
	f.connected = c
	f.mu.Unlock()
}

func (f *fakeTransport) handlerCalls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.handled
}

// action is what one scenario does on the fake transport.
type action func(ctx context.Context, f *fakeTransport) (any, error)

// fakeAdapter is the transport bound for one invocation.
type fakeAdapter struct {
	f   *fakeTransport
	id  int
	act action
}

func (a *fakeAdapter) Connected() bool {
	a.f.mu.Lock()
	defer a.f.mu.Unlock()
	return a.f.connected
}

func (a *fakeAdapter) Invoke(ctx context.Context, fx conformance.RealtimeFixture) (any, error) {
	return a.act(ctx, a.f)
}

func (a *fakeAdapter) Dispose() error {
	a.f.mu.Lock()
	defer a.f.mu.Unlock()
	delete(a.f.hooks, a.id)
	return nil
}

// binder binds the fake transport; the fixture value is the action.
func (f *fakeTransport) binder() conformance.RealtimeBinder {
	return func(onRejected func(conformance.RealtimeRejected), fx conformance.RealtimeFixture) (conformance.RealtimeAdapter, error) {
		act, ok := fx.Value.(action)
		if !ok {
			return nil, errors.New("fixture value is not an action")
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		f.next++
		f.hooks[f.next] = onRejected
		f.captured = append(f.captured, onRejected)
		return &fakeAdapter{f: f, id: f.next, act: act}, nil
	}
}

var (
	violation   = mount.NewError(conformance.CodeRealtimeContractViolation, "Realtime contract violation")
	invalidArgs = conformance.RealtimeRejected{Code: string(conformance.CodeRealtimeContractViolation), Rejection: conformance.Rejection{
		Direction: conformance.ClientInbound, Phase: conformance.PhaseArguments, Reason: conformance.ReasonInvalidArguments, Fault: conformance.FaultPeer}}
	invalidAck = conformance.RealtimeRejected{Code: string(conformance.CodeRealtimeContractViolation), Rejection: conformance.Rejection{
		Direction: conformance.ClientInbound, Phase: conformance.PhaseAcknowledgement, Reason: conformance.ReasonInvalidAcknowledgement, Fault: conformance.FaultPeer}}
	peerRefusal = conformance.RealtimeRejected{Code: string(conformance.CodeRealtimeContractViolation), Rejection: conformance.Rejection{
		Direction: conformance.ClientInbound, Phase: conformance.PhaseArguments, Reason: conformance.ReasonRejectedByPeer, Fault: conformance.FaultLocal}}
)

func zero() *int { n := 0; return &n }

func mustRealtimeProbe(t *testing.T, p conformance.RealtimeProbe) conformance.Probe {
	t.Helper()
	probe, err := conformance.DefineRealtimeProbe(p)
	if err != nil {
		t.Fatal(err)
	}
	return probe
}

// The eight scenarios over the fake transport (research §11, "Realtime").
func TestRealtimeScenarios(t *testing.T) {
	f := newFakeTransport()
	rejected := func(r conformance.RealtimeRejected, code string) conformance.Observation {
		rej := r.Rejection
		return conformance.Observation{Outcome: conformance.OutcomeRealtimeRejected, Code: code, Rejection: &rej, HandlerCalls: zero()}
	}
	probes := []conformance.Probe{
		mustRealtimeProbe(t, conformance.RealtimeProbe{Name: "event", Scenario: conformance.ScenarioEvent,
			Fixture:  action(func(context.Context, *fakeTransport) (any, error) { return true, nil }),
			Expected: conformance.Observation{Outcome: conformance.OutcomeSuccess, Data: true, HandlerCalls: zero()}}),
		mustRealtimeProbe(t, conformance.RealtimeProbe{Name: "ack", Scenario: conformance.ScenarioAcknowledgement,
			Fixture:  action(func(context.Context, *fakeTransport) (any, error) { return 3, nil }),
			Expected: conformance.Observation{Outcome: conformance.OutcomeSuccess, Data: 3, HandlerCalls: zero()}}),
		mustRealtimeProbe(t, conformance.RealtimeProbe{Name: "invalid args", Scenario: conformance.ScenarioInvalidArguments,
			// The peer pushes a bad payload: the transport rejects it
			// before the handler and reports it through the hook.
			Fixture:  action(func(_ context.Context, f *fakeTransport) (any, error) { f.reject(invalidArgs); return nil, nil }),
			Expected: rejected(invalidArgs, string(conformance.CodeRealtimeContractViolation))}),
		mustRealtimeProbe(t, conformance.RealtimeProbe{Name: "invalid ack", Scenario: conformance.ScenarioInvalidAcknowledgement,
			Fixture: action(func(_ context.Context, f *fakeTransport) (any, error) {
				f.reject(invalidAck)
				return nil, mount.NewError(conformance.CodeRealtimeInvalidAcknowledgment, "Invalid realtime acknowledgement")
			}),
			Expected: rejected(invalidAck, string(conformance.CodeRealtimeInvalidAcknowledgment))}),
		mustRealtimeProbe(t, conformance.RealtimeProbe{Name: "peer rejection", Scenario: conformance.ScenarioPeerRejection,
			Fixture: action(func(_ context.Context, f *fakeTransport) (any, error) {
				f.reject(peerRefusal)
				return nil, mount.NewError(conformance.CodeRealtimeRejected, "Realtime request rejected by peer")
			}),
			Expected: rejected(peerRefusal, string(conformance.CodeRealtimeContractViolation))}),
		mustRealtimeProbe(t, conformance.RealtimeProbe{Name: "disconnected", Scenario: conformance.ScenarioDisconnected,
			Setup:    func(context.Context) error { f.setConnected(false); return nil },
			Teardown: func(context.Context) error { f.setConnected(true); return nil },
			Fixture: action(func(context.Context, *fakeTransport) (any, error) {
				return nil, mount.NewError(conformance.CodeRealtimeDisconnected, "Realtime peer disconnected")
			}),
			Expected: conformance.Observation{Outcome: conformance.OutcomeDisconnected, Code: string(conformance.CodeRealtimeDisconnected),
				Disconnect: &conformance.Disconnect{Phase: conformance.BeforeInvoke}, HandlerCalls: zero()}}),
		mustRealtimeProbe(t, conformance.RealtimeProbe{Name: "in flight", Scenario: conformance.ScenarioInFlightDisconnect,
			Teardown: func(context.Context) error { f.setConnected(true); return nil },
			Fixture: action(func(_ context.Context, f *fakeTransport) (any, error) {
				f.setConnected(false)
				return nil, mount.NewError(conformance.CodeRealtimeDisconnected, "Realtime peer disconnected")
			}),
			Expected: conformance.Observation{Outcome: conformance.OutcomeDisconnected, Code: string(conformance.CodeRealtimeDisconnected),
				Disconnect: &conformance.Disconnect{Phase: conformance.InFlight}, HandlerCalls: zero()}}),
		mustRealtimeProbe(t, conformance.RealtimeProbe{Name: "timeout", Scenario: conformance.ScenarioTimeout,
			Fixture: action(func(context.Context, *fakeTransport) (any, error) {
				return nil, mount.NewError(conformance.CodeRealtimeTimeout, "Realtime request timed out")
			}),
			Expected: conformance.Observation{Outcome: conformance.OutcomeTimeout, Code: string(conformance.CodeRealtimeTimeout), HandlerCalls: zero()}}),
	}
	driver := conformance.NewRealtimeDriver(f.binder(), &conformance.RealtimeDriverOptions{HandlerCalls: f.handlerCalls})
	if err := conformance.RunProbes(context.Background(), probes, conformance.Drivers{conformance.TransportREALTIME: driver}, nil); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.hooks) != 0 || !f.connected || f.next != len(probes) {
		t.Errorf("after the probes: %d hooks left, connected %v, %d bindings", len(f.hooks), f.connected, f.next)
	}
}

// A rejection that arrives late for an earlier invocation lands in that
// invocation's slot, never in the next probe's.
func TestRealtimeLateRejectionIsolation(t *testing.T) {
	f := newFakeTransport()
	driver := conformance.NewRealtimeDriver(f.binder(), nil)
	first := mustRealtimeProbe(t, conformance.RealtimeProbe{Name: "times out", Scenario: conformance.ScenarioTimeout,
		Fixture: action(func(context.Context, *fakeTransport) (any, error) {
			return nil, mount.NewError(conformance.CodeRealtimeTimeout, "Realtime request timed out")
		}),
		Expected: conformance.Observation{Outcome: conformance.OutcomeTimeout, Code: string(conformance.CodeRealtimeTimeout)}})
	second := mustRealtimeProbe(t, conformance.RealtimeProbe{Name: "event", Scenario: conformance.ScenarioEvent,
		Fixture: action(func(_ context.Context, f *fakeTransport) (any, error) {
			// The first invocation's rejection callback fires now, while
			// the second invocation is in flight — as a callback already
			// queued by the transport would, after the first probe ended.
			f.mu.Lock()
			late := f.captured[0]
			f.mu.Unlock()
			late(invalidAck)
			return "ok", nil
		}),
		Expected: conformance.Observation{Outcome: conformance.OutcomeSuccess, Data: "ok"}})
	if err := conformance.RunProbes(context.Background(), []conformance.Probe{first, second},
		conformance.Drivers{conformance.TransportREALTIME: driver}, &conformance.RunOptions{Timeout: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
}

// The same, with a callback that arrives on its own goroutine, as a timer
// or the transport's reader would deliver it: the first invocation's
// rejection callback fires on a 5 ms timer while the second probe waits
// for it. Upstream armed the timer in the first probe's fixture and gave
// each probe a 10 ms deadline; on a loaded machine the timer then fired
// while the first probe was still being observed (its own, on-time
// rejection), or the deadline cut the first probe before the timer was
// armed. Here the second fixture arms it, so the callback is late by
// construction, and the deadline (10 s) only bounds a hang.
func TestRealtimeLateRejectionTimed(t *testing.T) {
	f := newFakeTransport()
	driver := conformance.NewRealtimeDriver(f.binder(), nil)
	fired := make(chan struct{})
	var late func(conformance.RealtimeRejected)
	first := mustRealtimeProbe(t, conformance.RealtimeProbe{Name: "times out", Scenario: conformance.ScenarioTimeout,
		Fixture: action(func(context.Context, *fakeTransport) (any, error) {
			f.mu.Lock()
			late = f.captured[len(f.captured)-1]
			f.mu.Unlock()
			return nil, mount.NewError(conformance.CodeRealtimeTimeout, "Realtime request timed out")
		}),
		Expected: conformance.Observation{Outcome: conformance.OutcomeTimeout, Code: string(conformance.CodeRealtimeTimeout)}})
	second := mustRealtimeProbe(t, conformance.RealtimeProbe{Name: "event", Scenario: conformance.ScenarioEvent,
		Fixture: action(func(ctx context.Context, _ *fakeTransport) (any, error) {
			time.AfterFunc(5*time.Millisecond, func() { late(invalidAck); close(fired) })
			select {
			case <-fired:
				return "ok", nil
			case <-ctx.Done():
				return nil, fmt.Errorf("the late callback did not fire before the probe deadline: %w", ctx.Err())
			}
		}),
		Expected: conformance.Observation{Outcome: conformance.OutcomeSuccess, Data: "ok"}})
	if err := conformance.RunProbes(context.Background(), []conformance.Probe{first, second},
		conformance.Drivers{conformance.TransportREALTIME: driver}, &conformance.RunOptions{Timeout: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-fired:
	default:
		t.Fatal("the second probe ended before the late callback fired")
	}
}

func TestDefineRealtimeProbeValidation(t *testing.T) {
	rej := func(phase conformance.RejectionPhase, reason conformance.RejectionReason) *conformance.Rejection {
		return &conformance.Rejection{Direction: conformance.ClientInbound, Phase: phase, Reason: reason, Fault: conformance.FaultPeer}
	}
	one := 1
	for _, tc := range []struct {
		scenario conformance.RealtimeScenario
		expected conformance.Observation
		want     string
	}{
		{conformance.ScenarioTimeout, conformance.Observation{Outcome: conformance.OutcomeSuccess}, `Realtime probe scenario "timeout" requires outcome "timeout"`},
		{conformance.ScenarioEvent, conformance.Observation{Outcome: conformance.OutcomeAborted}, `Realtime probe scenario "event" requires outcome "success"`},
		{conformance.ScenarioAcknowledgement, conformance.Observation{Outcome: conformance.OutcomeDomainError}, `Realtime probe scenario "acknowledgement" requires outcome "success"`},
		{conformance.ScenarioInvalidArguments, conformance.Observation{Outcome: conformance.OutcomeRealtimeRejected}, `Realtime probe "p" expectation: outcome "realtime_rejected" requires a rejection`},
		{conformance.ScenarioInvalidArguments, conformance.Observation{Outcome: conformance.OutcomeValidationError}, `Realtime probe scenario "invalid_arguments" requires outcome "realtime_rejected"`},
		{conformance.ScenarioInvalidArguments, conformance.Observation{Outcome: conformance.OutcomeRealtimeRejected, Rejection: rej(conformance.PhaseAcknowledgement, conformance.ReasonInvalidArguments), HandlerCalls: zero()}, `Realtime probe scenario "invalid_arguments" has incompatible rejection phase`},
		{conformance.ScenarioInvalidArguments, conformance.Observation{Outcome: conformance.OutcomeRealtimeRejected, Rejection: rej(conformance.PhaseArguments, conformance.ReasonInvalidArguments)}, `Realtime probe scenario "invalid_arguments" requires handlerCalls: 0`},
		{conformance.ScenarioInvalidArguments, conformance.Observation{Outcome: conformance.OutcomeRealtimeRejected, Rejection: rej(conformance.PhaseArguments, conformance.ReasonInvalidArguments), HandlerCalls: &one}, `Realtime probe scenario "invalid_arguments" requires handlerCalls: 0`},
		{conformance.ScenarioInvalidAcknowledgement, conformance.Observation{Outcome: conformance.OutcomeTimeout}, `Realtime probe scenario "invalid_acknowledgement" requires outcome "realtime_rejected"`},
		{conformance.ScenarioInvalidAcknowledgement, conformance.Observation{Outcome: conformance.OutcomeRealtimeRejected, Rejection: rej(conformance.PhaseArguments, conformance.ReasonInvalidAcknowledgement)}, `Realtime probe scenario "invalid_acknowledgement" has incompatible rejection phase`},
		{conformance.ScenarioPeerRejection, conformance.Observation{Outcome: conformance.OutcomeRealtimeRejected, Rejection: rej(conformance.PhaseArguments, conformance.ReasonInvalidArguments)}, `Realtime probe scenario "peer_rejection" requires a rejected-by-peer outcome`},
		{conformance.ScenarioPeerRejection, conformance.Observation{Outcome: conformance.OutcomeSuccess}, `Realtime probe scenario "peer_rejection" requires outcome "realtime_rejected"`},
		{conformance.ScenarioDisconnected, conformance.Observation{Outcome: conformance.OutcomeDisconnected, Disconnect: &conformance.Disconnect{Phase: conformance.InFlight}}, `Realtime probe scenario "disconnected" requires disconnect phase "before-invoke"`},
		{conformance.ScenarioDisconnected, conformance.Observation{Outcome: conformance.OutcomeTimeout}, `Realtime probe scenario "disconnected" requires outcome "disconnected"`},
		{conformance.ScenarioInFlightDisconnect, conformance.Observation{Outcome: conformance.OutcomeDisconnected, Disconnect: &conformance.Disconnect{Phase: conformance.BeforeInvoke}}, `Realtime probe scenario "in_flight_disconnect" requires disconnect phase "in-flight"`},
		{"handshake", conformance.Observation{Outcome: conformance.OutcomeSuccess}, `Realtime probe scenario "handshake" is not one of event, acknowledgement, invalid_arguments, invalid_acknowledgement, peer_rejection, disconnected, in_flight_disconnect, timeout`},
	} {
		_, err := conformance.DefineRealtimeProbe(conformance.RealtimeProbe{Name: "p", Scenario: tc.scenario, Expected: tc.expected})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s %+v: %v\nwant %s", tc.scenario, tc.expected, err, tc.want)
		}
	}
	p, err := conformance.DefineRealtimeProbe(conformance.RealtimeProbe{Name: "ok", Scenario: conformance.ScenarioPeerRejection, Fixture: 7,
		Expected: conformance.Observation{Outcome: conformance.OutcomeRealtimeRejected, Rejection: rej(conformance.PhaseArguments, conformance.ReasonRejectedByPeer)}})
	if err != nil || len(p.Transports) != 1 || p.Transports[0] != conformance.TransportREALTIME ||
		p.Fixture != (conformance.RealtimeFixture{Scenario: conformance.ScenarioPeerRejection, Value: 7}) || p.Expected[conformance.TransportREALTIME].Outcome != conformance.OutcomeRealtimeRejected {
		t.Errorf("DefineRealtimeProbe = %+v, %v", p, err)
	}
}

// The remaining normalisation rules, straight on the driver.
func TestRealtimeDriverNormalisation(t *testing.T) {
	f := newFakeTransport()
	driver := conformance.NewRealtimeDriver(f.binder(), nil)
	invoke := func(ctx context.Context, act action) (conformance.Observation, error) {
		return driver.Invoke(ctx, conformance.RealtimeFixture{Scenario: conformance.ScenarioEvent, Value: act})
	}
	outbound := conformance.Rejection{Direction: conformance.ClientOutbound, Phase: conformance.PhaseArguments, Reason: conformance.ReasonInvalidArguments, Fault: conformance.FaultLocal}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		act  action
		want conformance.Observation
	}{
		{"no data", context.Background(), func(context.Context, *fakeTransport) (any, error) { return nil, nil },
			conformance.Observation{Outcome: conformance.OutcomeSuccess}},
		{"resolved with a rejection", context.Background(), func(_ context.Context, f *fakeTransport) (any, error) {
			f.reject(invalidArgs)
			f.reject(invalidAck)
			return true, nil
		},
			conformance.Observation{Outcome: conformance.OutcomeRealtimeRejected, Code: string(conformance.CodeRealtimeContractViolation), Rejection: &invalidAck.Rejection}},
		{"invalid ack, nothing recorded", context.Background(), func(context.Context, *fakeTransport) (any, error) {
			return nil, mount.NewError(conformance.CodeRealtimeInvalidAcknowledgment, "bad ack")
		}, conformance.Observation{Outcome: conformance.OutcomeRealtimeRejected, Code: string(conformance.CodeRealtimeInvalidAcknowledgment), Rejection: &invalidAck.Rejection}},
		{"already aborted", cancelled, func(context.Context, *fakeTransport) (any, error) {
			t.Error("invoked despite a done context")
			return nil, nil
		},
			conformance.Observation{Outcome: conformance.OutcomeAborted}},
		{"aborted in flight", context.Background(), func(context.Context, *fakeTransport) (any, error) { return nil, context.Canceled },
			conformance.Observation{Outcome: conformance.OutcomeDomainError, Diagnostic: "context canceled"}},
		{"local violation", context.Background(), func(context.Context, *fakeTransport) (any, error) {
			return nil, &mount.Error{Code: conformance.CodeRealtimeContractViolation, Message: "invalid arguments for \"watch\"",
				Details: map[string]any{"event": "watch", "direction": "client-outbound", "phase": "arguments", "reason": "invalid-arguments", "fault": "local"}}
		},
			conformance.Observation{Outcome: conformance.OutcomeRealtimeRejected, Code: string(conformance.CodeRealtimeContractViolation), Rejection: &outbound}},
		{"details without a rejection", context.Background(), func(context.Context, *fakeTransport) (any, error) {
			return nil, &mount.Error{Code: conformance.CodeRealtimeContractViolation, Message: "bad", Details: map[string]any{"direction": "client-outbound"}}
		}, conformance.Observation{Outcome: conformance.OutcomeDomainError, Code: string(conformance.CodeRealtimeContractViolation), Diagnostic: "REALTIME_CONTRACT_VIOLATION: bad"}},
		{"domain error", context.Background(), func(context.Context, *fakeTransport) (any, error) {
			return nil, mount.NewError("TASK_NOT_FOUND", "Task not found")
		},
			conformance.Observation{Outcome: conformance.OutcomeDomainError, Code: "TASK_NOT_FOUND", Diagnostic: "TASK_NOT_FOUND: Task not found"}},
		{"plain error", context.Background(), func(context.Context, *fakeTransport) (any, error) { return nil, errors.New("socket closed") },
			conformance.Observation{Outcome: conformance.OutcomeDomainError, Diagnostic: "socket closed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := invoke(tc.ctx, tc.act)
			if err != nil || !got.Equal(tc.want) {
				b, _ := got.Canonical()
				w, _ := tc.want.Canonical()
				t.Errorf("got %s, %v\nwant %s", b, err, w)
			}
		})
	}
	// A context that ends during the invocation is "aborted".
	ctx, stop := context.WithCancel(context.Background())
	got, err := invoke(ctx, func(ctx context.Context, _ *fakeTransport) (any, error) { stop(); <-ctx.Done(); return nil, ctx.Err() }) // stop() has just ended ctx
	if err != nil || got.Outcome != conformance.OutcomeAborted {
		t.Errorf("aborted: %+v %v", got, err)
	}
	if _, err := driver.Invoke(context.Background(), "not a fixture"); err == nil || !strings.Contains(err.Error(), "needs a conformance.RealtimeFixture") {
		t.Errorf("wrong fixture: %v", err)
	}
	if len(f.hooks) != 0 {
		t.Errorf("%d hooks left subscribed", len(f.hooks))
	}
}

type failingAdapter struct{ disposed *int }

func (failingAdapter) Connected() bool { return true }
func (failingAdapter) Invoke(context.Context, conformance.RealtimeFixture) (any, error) {
	return true, nil
}
func (a failingAdapter) Dispose() error { *a.disposed++; return errors.New("unsubscribe failed") }

func TestRealtimeBindAndDisposeErrors(t *testing.T) {
	fx := conformance.RealtimeFixture{Scenario: conformance.ScenarioEvent}
	bindErr := errors.New("no transport")
	d := conformance.NewRealtimeDriver(func(func(conformance.RealtimeRejected), conformance.RealtimeFixture) (conformance.RealtimeAdapter, error) {
		return nil, bindErr
	}, nil)
	if _, err := d.Invoke(context.Background(), fx); !errors.Is(err, bindErr) {
		t.Errorf("bind error: %v", err)
	}
	disposed := 0
	d = conformance.NewRealtimeDriver(func(func(conformance.RealtimeRejected), conformance.RealtimeFixture) (conformance.RealtimeAdapter, error) {
		return failingAdapter{&disposed}, nil
	}, nil)
	if _, err := d.Invoke(context.Background(), fx); err == nil || err.Error() != "dispose: unsubscribe failed" || disposed != 1 {
		t.Errorf("dispose error: %v (disposed %d)", err, disposed)
	}
	// A rejection outside the enum makes the observation invalid, so the
	// probe fails rather than passes.
	bad := conformance.NewRealtimeDriver(func(on func(conformance.RealtimeRejected), _ conformance.RealtimeFixture) (conformance.RealtimeAdapter, error) {
		f := newFakeTransport()
		return &fakeAdapter{f: f, act: func(context.Context, *fakeTransport) (any, error) {
			on(conformance.RealtimeRejected{Code: "X", Rejection: conformance.Rejection{Direction: conformance.ClientInbound, Phase: conformance.PhaseArguments, Reason: "made-up", Fault: conformance.FaultPeer}})
			return nil, nil
		}}, nil
	}, nil)
	probe := mustRealtimeProbe(t, conformance.RealtimeProbe{Name: "bad reason", Scenario: conformance.ScenarioEvent, Expected: conformance.Observation{Outcome: conformance.OutcomeSuccess}})
	err := conformance.RunProbes(context.Background(), []conformance.Probe{probe}, conformance.Drivers{conformance.TransportREALTIME: bad}, nil)
	if err == nil || !strings.Contains(err.Error(), `invalid observation: unknown rejection reason "made-up"`) {
		t.Errorf("bad reason: %v", err)
	}
}
