package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"stitchkit.dev/stitchkit/pkg/mount"
)

// RealtimeScenario is one of the eight realtime probe scenarios; each
// admits exactly one outcome (see [DefineRealtimeProbe]).
type RealtimeScenario string

// The realtime probe scenarios.
const (
	// ScenarioEvent: an event the contract admits is emitted (success).
	ScenarioEvent RealtimeScenario = "event"
	// ScenarioAcknowledgement: a request is acknowledged with a valid ack
	// (success, the ack as data).
	ScenarioAcknowledgement RealtimeScenario = "acknowledgement"
	// ScenarioInvalidArguments: a packet with arguments the contract
	// refuses is rejected before any handler sees it (realtime_rejected in
	// the arguments phase, handlerCalls 0).
	ScenarioInvalidArguments RealtimeScenario = "invalid_arguments"
	// ScenarioInvalidAcknowledgement: an ack the contract refuses
	// (realtime_rejected in the acknowledgement phase).
	ScenarioInvalidAcknowledgement RealtimeScenario = "invalid_acknowledgement"
	// ScenarioPeerRejection: the peer refuses the request with a rejection
	// envelope (realtime_rejected, reason rejected-by-peer).
	ScenarioPeerRejection RealtimeScenario = "peer_rejection"
	// ScenarioDisconnected: a request while disconnected (disconnected,
	// before-invoke).
	ScenarioDisconnected RealtimeScenario = "disconnected"
	// ScenarioInFlightDisconnect: the transport drops during the request
	// (disconnected, in-flight).
	ScenarioInFlightDisconnect RealtimeScenario = "in_flight_disconnect"
	// ScenarioTimeout: the transport's own request timeout fires (timeout).
	ScenarioTimeout RealtimeScenario = "timeout"
)

// Stable codes of the realtime errors the driver normalises: the
// framework registry's, defined once in package mount.
const (
	CodeRealtimeContractViolation     = mount.CodeRealtimeViolation
	CodeRealtimeDisconnected          = mount.CodeRealtimeDisconnected
	CodeRealtimeInvalidAcknowledgment = mount.CodeRealtimeInvalidAck
	CodeRealtimeRejected              = mount.CodeRealtimeRejected
	CodeRealtimeTimeout               = mount.CodeRealtimeTimeout
)

var scenarios = []RealtimeScenario{ScenarioEvent, ScenarioAcknowledgement, ScenarioInvalidArguments, ScenarioInvalidAcknowledgement,
	ScenarioPeerRejection, ScenarioDisconnected, ScenarioInFlightDisconnect, ScenarioTimeout}

// RealtimeFixture is the fixture of a realtime probe: the scenario and the
// caller's value for it (the contract-specific action, the invalid
// payload). The kit never synthesises either.
type RealtimeFixture struct {
	Scenario RealtimeScenario
	Value    any
}

// RealtimeProbe declares a probe of one realtime scenario.
type RealtimeProbe struct {
	Name     string
	Scenario RealtimeScenario
	// Fixture becomes RealtimeFixture.Value.
	Fixture  any
	Expected Observation
	Setup    func(ctx context.Context) error
	Teardown func(ctx context.Context) error
}

// DefineRealtimeProbe returns the [Probe] of one realtime scenario, on the
// REALTIME transport only, with a [RealtimeFixture]. It refuses, when the
// probe is defined, an expectation the scenario can never produce:
//
//	event, acknowledgement   success
//	invalid_arguments        realtime_rejected, phase arguments, handlerCalls exactly 0
//	invalid_acknowledgement  realtime_rejected, phase acknowledgement
//	peer_rejection           realtime_rejected, reason rejected-by-peer
//	disconnected             disconnected, phase before-invoke
//	in_flight_disconnect     disconnected, phase in-flight
//	timeout                  timeout
//
// No scenario admits aborted, validation_error or domain_error.
func DefineRealtimeProbe(p RealtimeProbe) (Probe, error) {
	if err := p.Expected.Validate(); err != nil {
		return Probe{}, fmt.Errorf("Realtime probe %q expectation: %w", p.Name, err)
	}
	if err := checkScenario(p.Scenario, p.Expected); err != nil {
		return Probe{}, err
	}
	return Probe{
		Name:       p.Name,
		Fixture:    RealtimeFixture{Scenario: p.Scenario, Value: p.Fixture},
		Transports: []Transport{TransportREALTIME},
		Expected:   map[Transport]Observation{TransportREALTIME: p.Expected},
		Setup:      p.Setup,
		Teardown:   p.Teardown,
	}, nil
}

func checkScenario(s RealtimeScenario, e Observation) error {
	requires := func(o Outcome) error {
		if e.Outcome != o {
			return fmt.Errorf("Realtime probe scenario %q requires outcome %q", s, o)
		}
		return nil
	}
	phase := func(p RejectionPhase) error {
		if e.Rejection.Phase != p {
			return fmt.Errorf("Realtime probe scenario %q has incompatible rejection phase", s)
		}
		return nil
	}
	disconnect := func(p DisconnectPhase) error {
		if e.Disconnect.Phase != p {
			return fmt.Errorf("Realtime probe scenario %q requires disconnect phase %q", s, p)
		}
		return nil
	}
	switch s {
	case ScenarioEvent, ScenarioAcknowledgement:
		return requires(OutcomeSuccess)
	case ScenarioInvalidArguments:
		if err := requires(OutcomeRealtimeRejected); err != nil {
			return err
		}
		if err := phase(PhaseArguments); err != nil {
			return err
		}
		if e.HandlerCalls == nil || *e.HandlerCalls != 0 {
			return fmt.Errorf("Realtime probe scenario %q requires handlerCalls: 0", s)
		}
		return nil
	case ScenarioInvalidAcknowledgement:
		if err := requires(OutcomeRealtimeRejected); err != nil {
			return err
		}
		return phase(PhaseAcknowledgement)
	case ScenarioPeerRejection:
		if err := requires(OutcomeRealtimeRejected); err != nil {
			return err
		}
		if e.Rejection.Reason != ReasonRejectedByPeer {
			return fmt.Errorf("Realtime probe scenario %q requires a rejected-by-peer outcome", s)
		}
		return nil
	case ScenarioDisconnected:
		if err := requires(OutcomeDisconnected); err != nil {
			return err
		}
		return disconnect(BeforeInvoke)
	case ScenarioInFlightDisconnect:
		if err := requires(OutcomeDisconnected); err != nil {
			return err
		}
		return disconnect(InFlight)
	case ScenarioTimeout:
		return requires(OutcomeTimeout)
	}
	names := make([]string, len(scenarios))
	for i, k := range scenarios {
		names[i] = string(k)
	}
	return fmt.Errorf("Realtime probe scenario %q is not one of %s", s, strings.Join(names, ", "))
}

// RealtimeRejected is what a realtime transport's rejection hook reports:
// where and why a packet was rejected, and the error code it was rejected
// with (in practice REALTIME_CONTRACT_VIOLATION).
type RealtimeRejected struct {
	Rejection
	Code string
}

// RealtimeAdapter is the caller's transport bound for one probe
// invocation.
type RealtimeAdapter interface {
	// Connected reports whether the transport is connected now; the driver
	// reads it before invoking, to tell a before-invoke from an in-flight
	// disconnect.
	Connected() bool
	// Invoke performs the scenario's action (emit, request, make the peer
	// push a bad payload, …) and returns what it resolved to: an emit's
	// acceptance, a request's validated ack. It must return when ctx is
	// done.
	Invoke(ctx context.Context, fixture RealtimeFixture) (any, error)
	// Dispose removes only the subscriptions this binding created (the
	// rejection hook, handlers). It must never disconnect the transport,
	// which belongs to the caller.
	Dispose() error
}

// RealtimeBinder binds the caller's existing transport for one invocation:
// it routes the transport's rejection hook to onRejected (which may be
// called from any goroutine) and returns the adapter. It must not connect
// or disconnect anything the scenario does not call for.
type RealtimeBinder func(onRejected func(RealtimeRejected), fixture RealtimeFixture) (RealtimeAdapter, error)

// RealtimeDriverOptions configures [NewRealtimeDriver]; nil means defaults.
type RealtimeDriverOptions struct {
	// HandlerCalls, when set, counts calls of the application's handler;
	// every observation then carries handlerCalls, the calls made during
	// the invocation, so every expectation must state it.
	HandlerCalls func() int
}

// NewRealtimeDriver returns the REALTIME driver over a transport the
// caller owns. Each invocation binds afresh with a rejection slot of its
// own, so a rejection that arrives late from an earlier probe lands in that
// probe's slot and cannot leak into the next; the last rejection in the
// slot wins. The driver sets no timer and never disconnects: the probe's
// deadline stops the waiting, not the transport.
//
// The adapter's result is normalised by stable error codes, first match
// wins:
//
//   - returned, a rejection in the slot: realtime_rejected with the
//     rejection and its code;
//   - returned, no rejection: success, with the value as data (nil: none);
//   - error, a rejection in the slot: realtime_rejected with the slot's
//     rejection, code REALTIME_REQUEST_INVALID_ACKNOWLEDGEMENT for an
//     invalid-ack error, else the rejection's code;
//   - REALTIME_REQUEST_INVALID_ACKNOWLEDGEMENT: realtime_rejected,
//     {client-inbound, acknowledgement, invalid-acknowledgement-value, peer};
//   - REALTIME_REQUEST_DISCONNECTED: disconnected, in-flight when the
//     transport was connected before invoking, else before-invoke;
//   - REALTIME_REQUEST_TIMEOUT: timeout;
//   - the probe context's own error: aborted;
//   - a [mount.Error] whose details hold a valid rejection (direction,
//     phase, reason, fault), such as an outbound packet refused locally at
//     the call site: realtime_rejected with that rejection and the error's
//     code (REALTIME_CONTRACT_VIOLATION when it has none);
//   - anything else: domain_error with its code, if any, and its message
//     as diagnostic.
//
// Codes are read from a [mount.Error] in the chain. An error from bind or
// Dispose fails the probe instead (Dispose's replaces the result; bind's
// skips Dispose, since nothing was bound).
func NewRealtimeDriver(bind RealtimeBinder, opts *RealtimeDriverOptions) Driver {
	var calls func() int
	if opts != nil {
		calls = opts.HandlerCalls
	}
	return &realtimeDriver{bind: bind, calls: calls}
}

type realtimeDriver struct {
	bind  RealtimeBinder
	calls func() int
}

// rejectionSlot holds the latest rejection of one invocation.
type rejectionSlot struct {
	mu  sync.Mutex
	got *RealtimeRejected
}

func (s *rejectionSlot) set(r RealtimeRejected) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = &r
}

func (s *rejectionSlot) get() *RealtimeRejected {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got
}

func (d *realtimeDriver) Invoke(ctx context.Context, fixture any) (obs Observation, err error) {
	f, ok := fixture.(RealtimeFixture)
	if !ok {
		return Observation{}, fmt.Errorf("the realtime driver needs a conformance.RealtimeFixture (use DefineRealtimeProbe), got %T", fixture)
	}
	slot := &rejectionSlot{}
	adapter, err := d.bind(slot.set, f)
	if err != nil {
		return Observation{}, fmt.Errorf("bind: %w", err)
	}
	if adapter == nil {
		return Observation{}, errors.New("bind returned no adapter")
	}
	connectedBefore := adapter.Connected()
	var callsBefore int
	if d.calls != nil {
		callsBefore = d.calls()
	}
	defer func() {
		if derr := adapter.Dispose(); derr != nil {
			obs, err = Observation{}, fmt.Errorf("dispose: %w", derr)
		}
	}()
	withCalls := func(o Observation) Observation {
		if d.calls != nil {
			n := d.calls() - callsBefore
			o.HandlerCalls = &n
		}
		return o
	}
	if ctx.Err() != nil {
		return withCalls(Observation{Outcome: OutcomeAborted}), nil
	}
	value, ierr := adapter.Invoke(ctx, f)
	rejected := slot.get()
	if ierr == nil {
		if rejected != nil {
			return withCalls(rejectedObservation(rejected.Rejection, rejected.Code)), nil
		}
		return withCalls(Observation{Outcome: OutcomeSuccess, Data: value}), nil
	}
	code := errorCode(ierr)
	switch {
	case rejected != nil:
		c := rejected.Code
		if errors.Is(ierr, CodeRealtimeInvalidAcknowledgment) {
			c = code
		}
		return withCalls(rejectedObservation(rejected.Rejection, c)), nil
	case errors.Is(ierr, CodeRealtimeInvalidAcknowledgment):
		return withCalls(rejectedObservation(Rejection{Direction: ClientInbound, Phase: PhaseAcknowledgement,
			Reason: ReasonInvalidAcknowledgement, Fault: FaultPeer}, code)), nil
	case errors.Is(ierr, CodeRealtimeDisconnected):
		phase := BeforeInvoke
		if connectedBefore {
			phase = InFlight
		}
		return withCalls(Observation{Outcome: OutcomeDisconnected, Code: code, Disconnect: &Disconnect{Phase: phase}}), nil
	case errors.Is(ierr, CodeRealtimeTimeout):
		return withCalls(Observation{Outcome: OutcomeTimeout, Code: code}), nil
	case ctx.Err() != nil && (errors.Is(ierr, ctx.Err()) || errors.Is(ierr, context.Cause(ctx))):
		return withCalls(Observation{Outcome: OutcomeAborted}), nil
	}
	if r, ok := detailsRejection(ierr); ok {
		if code == "" {
			code = string(CodeRealtimeContractViolation)
		}
		return withCalls(rejectedObservation(r, code)), nil
	}
	return withCalls(Observation{Outcome: OutcomeDomainError, Code: code, Diagnostic: ierr.Error()}), nil
}

func rejectedObservation(r Rejection, code string) Observation {
	return Observation{Outcome: OutcomeRealtimeRejected, Code: code, Rejection: &r}
}

// detailsRejection reads a rejection from the details of the first
// [mount.Error] in err's chain.
func detailsRejection(err error) (Rejection, bool) {
	e, ok := mount.AsError(err)
	if !ok {
		return Rejection{}, false
	}
	str := func(k string) string { s, _ := e.Details[k].(string); return s }
	r := Rejection{Direction: RejectionDirection(str("direction")), Phase: RejectionPhase(str("phase")),
		Reason: RejectionReason(str("reason")), Fault: RejectionFault(str("fault"))}
	return r, r.Validate() == nil
}

// errorCode is the registry code of the first [mount.Error] in err's chain.
func errorCode(err error) string {
	if e, ok := mount.AsError(err); ok {
		return string(e.Code)
	}
	return ""
}
