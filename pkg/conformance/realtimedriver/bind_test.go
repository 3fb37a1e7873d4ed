package realtimedriver

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"stitchkit.dev/stitchkit/pkg/conformance"
	"stitchkit.dev/stitchkit/pkg/realtime"
)

// structuralTransport is a realtime.Transport whose peer is the test: the
// upstream acceptance test's "real bound client over a structural fake
// transport". realtime.Bind over it is the real client-side validation.
type structuralTransport struct {
	connected atomic.Bool
	mu        sync.Mutex
	inbound   func(realtime.Inbound)
	// answer is the peer's behaviour for the next SendWithAck.
	answer func(ctx context.Context, event string, args json.RawMessage) (realtime.Reply, error)
}

func (s *structuralTransport) Connected() bool { return s.connected.Load() }

func (s *structuralTransport) Subscribe(fn func(realtime.Inbound)) func() {
	s.mu.Lock()
	s.inbound = fn
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.inbound = nil
		s.mu.Unlock()
	}
}

// push delivers an inbound event as the peer would.
func (s *structuralTransport) push(event string, args string) {
	s.mu.Lock()
	fn := s.inbound
	s.mu.Unlock()
	fn(realtime.Inbound{Event: event, Args: json.RawMessage(args)})
}

func (s *structuralTransport) Send(_ context.Context, event string, _ json.RawMessage) error {
	if !s.Connected() {
		return fmt.Errorf("send %s: %w", event, realtime.ErrDisconnected)
	}
	return nil
}

func (s *structuralTransport) SendWithAck(ctx context.Context, event string, args json.RawMessage) (realtime.Reply, error) {
	if !s.Connected() {
		return realtime.Reply{}, fmt.Errorf("send %s: %w", event, realtime.ErrDisconnected)
	}
	s.mu.Lock()
	answer := s.answer
	s.mu.Unlock()
	return answer(ctx, event, args)
}

func (s *structuralTransport) OnConnectionChange(func(bool)) func() { return func() {} }

func (s *structuralTransport) answerWith(f func(ctx context.Context, event string, args json.RawMessage) (realtime.Reply, error)) {
	s.mu.Lock()
	s.answer = f
	s.mu.Unlock()
}

// The eight scenarios of research conformance §11 ("Realtime"), adapted to
// pkg/realtime's chat contract, over realtime.Bind: the application
// handler is never called.
func TestEightScenariosOverBind(t *testing.T) {
	chat := contract(t, filepath.Join("..", "..", "realtime", "testdata", "chat"))
	tr := &structuralTransport{}
	tr.connected.Store(true)
	b := realtime.Bind(tr, chat, nil)
	defer b.Unbind()
	var handled atomic.Int64
	unsub, err := b.On("message", func(context.Context, realtime.Args) (any, error) { handled.Add(1); return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	defer unsub()

	zero := func() *int { n := 0; return &n }
	rejected := func(code string, dir conformance.RejectionDirection, phase conformance.RejectionPhase, reason conformance.RejectionReason, fault conformance.RejectionFault) conformance.Observation {
		return conformance.Observation{Outcome: conformance.OutcomeRealtimeRejected, Code: code, HandlerCalls: zero(),
			Rejection: &conformance.Rejection{Direction: dir, Phase: phase, Reason: reason, Fault: fault}}
	}
	say := func(ctx context.Context, b realtime.Binding) (any, error) {
		return b.Request(ctx, 0, "say", map[string]any{"text": "hi"})
	}
	ack := func(v string) func(context.Context, string, json.RawMessage) (realtime.Reply, error) {
		return func(context.Context, string, json.RawMessage) (realtime.Reply, error) {
			return realtime.Reply{Ack: json.RawMessage(v)}, nil
		}
	}
	scenarios := []conformance.RealtimeProbe{{
		Name: "event", Scenario: conformance.ScenarioEvent,
		Fixture: Action{Binding: b, Do: func(ctx context.Context, b realtime.Binding) (any, error) {
			if err := b.Emit(ctx, "typing", true); err != nil {
				return nil, err
			}
			return true, nil
		}},
		Expected: conformance.Observation{Outcome: conformance.OutcomeSuccess, Data: true, HandlerCalls: zero()},
	}, {
		Name: "acknowledgement", Scenario: conformance.ScenarioAcknowledgement,
		Setup:    func(context.Context) error { tr.answerWith(ack(`{"n":3}`)); return nil },
		Fixture:  Action{Binding: b, Do: say},
		Expected: conformance.Observation{Outcome: conformance.OutcomeSuccess, Data: map[string]any{"n": 3}, HandlerCalls: zero()},
	}, {
		Name: "invalid arguments", Scenario: conformance.ScenarioInvalidArguments,
		Fixture: Action{Binding: b, Do: func(ctx context.Context, b realtime.Binding) (any, error) {
			seen := make(chan struct{}, 1)
			b.OnRejected(func(realtime.Rejection) {
				select {
				case seen <- struct{}{}:
				default:
				}
			})
			// The peer pushes a message with an empty text.
			tr.push("message", `[{"text":"","from":"peer"}]`)
			select {
			case <-seen:
				return nil, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}},
		Expected: rejected(string(conformance.CodeRealtimeContractViolation), conformance.ClientInbound, conformance.PhaseArguments, conformance.ReasonInvalidArguments, conformance.FaultPeer),
	}, {
		Name: "invalid acknowledgement", Scenario: conformance.ScenarioInvalidAcknowledgement,
		Setup:    func(context.Context) error { tr.answerWith(ack(`{"n":-1}`)); return nil },
		Fixture:  Action{Binding: b, Do: say},
		Expected: rejected(string(conformance.CodeRealtimeInvalidAcknowledgment), conformance.ClientInbound, conformance.PhaseAcknowledgement, conformance.ReasonInvalidAcknowledgement, conformance.FaultPeer),
	}, {
		Name: "peer rejection", Scenario: conformance.ScenarioPeerRejection,
		Setup: func(context.Context) error {
			tr.answerWith(func(_ context.Context, event string, _ json.RawMessage) (realtime.Reply, error) {
				return realtime.Reply{Rejected: &realtime.Envelope{Event: event, Reason: realtime.ReasonInvalidArguments, Message: "invalid arguments"}}, nil
			})
			return nil
		},
		Fixture:  Action{Binding: b, Do: say},
		Expected: rejected(string(conformance.CodeRealtimeContractViolation), conformance.ClientInbound, conformance.PhaseArguments, conformance.ReasonRejectedByPeer, conformance.FaultLocal),
	}, {
		Name: "disconnected", Scenario: conformance.ScenarioDisconnected,
		// The binder's owner marks the transport disconnected.
		Setup:    func(context.Context) error { tr.connected.Store(false); return nil },
		Teardown: func(context.Context) error { tr.connected.Store(true); return nil },
		Fixture:  Action{Binding: b, Do: say},
		Expected: conformance.Observation{Outcome: conformance.OutcomeDisconnected, Code: string(conformance.CodeRealtimeDisconnected),
			Disconnect: &conformance.Disconnect{Phase: conformance.BeforeInvoke}, HandlerCalls: zero()},
	}, {
		Name: "in-flight disconnect", Scenario: conformance.ScenarioInFlightDisconnect,
		Setup: func(context.Context) error {
			// Connected at the start, disconnected during the await.
			tr.answerWith(func(context.Context, string, json.RawMessage) (realtime.Reply, error) {
				tr.connected.Store(false)
				return realtime.Reply{}, fmt.Errorf("connection lost: %w", realtime.ErrDisconnected)
			})
			return nil
		},
		Teardown: func(context.Context) error { tr.connected.Store(true); return nil },
		Fixture:  Action{Binding: b, Do: say},
		Expected: conformance.Observation{Outcome: conformance.OutcomeDisconnected, Code: string(conformance.CodeRealtimeDisconnected),
			Disconnect: &conformance.Disconnect{Phase: conformance.InFlight}, HandlerCalls: zero()},
	}, {
		Name: "timeout", Scenario: conformance.ScenarioTimeout,
		Setup: func(context.Context) error {
			tr.answerWith(func(ctx context.Context, _ string, _ json.RawMessage) (realtime.Reply, error) {
				<-ctx.Done() // the request's 20 ms timeout ends it
				return realtime.Reply{}, ctx.Err()
			})
			return nil
		},
		Fixture: Action{Binding: b, Do: func(ctx context.Context, b realtime.Binding) (any, error) {
			return b.Request(ctx, 20*time.Millisecond, "say", map[string]any{"text": "hi"})
		}},
		Expected: conformance.Observation{Outcome: conformance.OutcomeTimeout, Code: string(conformance.CodeRealtimeTimeout), HandlerCalls: zero()},
	}}
	var probes []conformance.Probe
	for _, s := range scenarios {
		p, err := conformance.DefineRealtimeProbe(s)
		if err != nil {
			t.Fatal(err)
		}
		probes = append(probes, p)
	}
	d := New(&Options{HandlerCalls: func() int { return int(handled.Load()) }})
	if err := conformance.RunProbes(context.Background(), probes, conformance.Drivers{conformance.TransportREALTIME: d}, &conformance.RunOptions{Timeout: 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if n := handled.Load(); n != 0 {
		t.Errorf("the application handler ran %d times", n)
	}
}
