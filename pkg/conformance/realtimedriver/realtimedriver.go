// Package realtimedriver binds pkg/realtime to the conformance kit's
// realtime probe driver: a probe's action runs on a [realtime.Binding] the
// caller owns (a *realtime.Client from Dial, or realtime.Bind over the
// application's own connection), with the binding's rejection hook routed
// to the probe, and every subscription the action made removed afterwards
// — the connection itself is never touched.
//
//	client, err := realtime.Dial(ctx, wsURL, contract, nil)
//	d := realtimedriver.New(&realtimedriver.Options{HandlerCalls: handled.Load})
//	p, err := conformance.DefineRealtimeProbe(conformance.RealtimeProbe{
//		Name: "watch is acknowledged", Scenario: conformance.ScenarioAcknowledgement,
//		Fixture: realtimedriver.Action{Binding: client, Do: func(ctx context.Context, b realtime.Binding) (any, error) {
//			return b.Request(ctx, 0, "watch", map[string]any{"board": "main"})
//		}},
//		Expected: conformance.Observation{Outcome: conformance.OutcomeSuccess, Data: map[string]any{"ok": true}},
//	})
package realtimedriver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"stitchkit.dev/stitchkit/pkg/conformance"
	"stitchkit.dev/stitchkit/pkg/realtime"
)

// Action is the fixture value of a realtime probe: the binding to drive
// and the scenario's contract-specific action on it (a Request, an Emit,
// making the peer push a payload, closing the connection mid-request …).
// Do returns what the action resolved to — a request's ack, an emitted
// event's acceptance — or the binding's error.
type Action struct {
	Binding realtime.Binding
	Do      func(ctx context.Context, b realtime.Binding) (any, error)
}

// Options configures [New]; nil means defaults.
type Options struct {
	// HandlerCalls counts calls of the application's handlers; see
	// conformance.RealtimeDriverOptions.
	HandlerCalls func() int
}

// New returns the REALTIME driver for probes whose fixture value is an
// [Action]: conformance.NewRealtimeDriver with [Bind].
func New(opts *Options) conformance.Driver {
	var o conformance.RealtimeDriverOptions
	if opts != nil {
		o.HandlerCalls = opts.HandlerCalls
	}
	return conformance.NewRealtimeDriver(Bind, &o)
}

// Bind is the conformance.RealtimeBinder of [Action] fixtures: it
// subscribes onRejected to the action's binding for this invocation only.
func Bind(onRejected func(conformance.RealtimeRejected), fixture conformance.RealtimeFixture) (conformance.RealtimeAdapter, error) {
	act, ok := fixture.Value.(Action)
	if !ok {
		return nil, fmt.Errorf("the realtime probe fixture must be a realtimedriver.Action, got %T", fixture.Value)
	}
	if act.Binding == nil || act.Do == nil {
		return nil, errors.New("the realtime probe's Action needs a Binding and Do")
	}
	a := &adapter{act: act}
	a.tracked = &tracking{Binding: act.Binding}
	a.tracked.track(act.Binding.OnRejected(func(r realtime.Rejection) { onRejected(Rejected(r)) }))
	return a, nil
}

// Rejected converts a realtime rejection into the kit's.
func Rejected(r realtime.Rejection) conformance.RealtimeRejected {
	out := conformance.RealtimeRejected{Rejection: conformance.Rejection{
		Direction: conformance.RejectionDirection(r.Direction), Phase: conformance.RejectionPhase(r.Phase),
		Reason: conformance.RejectionReason(r.Reason), Fault: conformance.RejectionFault(r.Fault)}}
	if r.Err != nil {
		out.Code = string(r.Err.Code)
	}
	return out
}

type adapter struct {
	act     Action
	tracked *tracking
}

func (a *adapter) Connected() bool { return a.act.Binding.Connected() }

func (a *adapter) Invoke(ctx context.Context, _ conformance.RealtimeFixture) (any, error) {
	v, err := a.act.Do(ctx, a.tracked)
	if raw, ok := v.(json.RawMessage); ok && raw == nil {
		v = nil
	}
	return v, err
}

func (a *adapter) Dispose() error { a.tracked.dispose(); return nil }

// tracking is the binding an action sees: every subscription made through
// it is removed when the invocation ends.
type tracking struct {
	realtime.Binding
	mu     sync.Mutex
	unsubs []func()
}

func (t *tracking) track(unsub func()) func() {
	t.mu.Lock()
	t.unsubs = append(t.unsubs, unsub)
	t.mu.Unlock()
	return unsub
}

func (t *tracking) dispose() {
	t.mu.Lock()
	unsubs := t.unsubs
	t.unsubs = nil
	t.mu.Unlock()
	for i := len(unsubs) - 1; i >= 0; i-- {
		unsubs[i]()
	}
}

func (t *tracking) On(event string, h realtime.ClientHandler) (func(), error) {
	unsub, err := t.Binding.On(event, h)
	if err != nil {
		return nil, err
	}
	return t.track(unsub), nil
}

func (t *tracking) OnRejected(fn func(realtime.Rejection)) func() {
	return t.track(t.Binding.OnRejected(fn))
}

func (t *tracking) OnConnectionChange(fn func(bool)) func() {
	return t.track(t.Binding.OnConnectionChange(fn))
}

// The remaining methods pass through unchanged.
var _ realtime.Binding = (*tracking)(nil)
