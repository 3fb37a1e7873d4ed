package realtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/validate"
)

// Binding is the client side of a realtime contract on a connection
// someone else owns: it validates every frame in both directions and
// reports rejections, but it neither opens nor closes the connection.
// [*Client] (from [Dial]) is a Binding; [Bind] makes one from any
// [Transport], such as an application's own WebSocket code. The
// conformance kit's realtime probes drive a Binding.
type Binding interface {
	// Connected reports whether the connection is up now.
	Connected() bool
	// On subscribes h to a serverToClient event. It is called with
	// validated arguments only; an event with an ack schema has at most
	// one handler, whose return value is the acknowledgement. The
	// returned function removes this subscription only.
	On(event string, h ClientHandler) (unsubscribe func(), err error)
	// Emit sends a clientToServer event that takes no acknowledgement,
	// after validating the arguments (a mismatch is a
	// REALTIME_CONTRACT_VIOLATION error and nothing is sent). Not
	// connected: REALTIME_REQUEST_DISCONNECTED.
	Emit(ctx context.Context, event string, args ...any) error
	// Request sends a clientToServer event that takes an acknowledgement
	// and returns the validated ack. timeout 0 means the binding's
	// default. Errors carry the codes REALTIME_CONTRACT_VIOLATION (bad
	// call, nothing sent), REALTIME_REQUEST_DISCONNECTED (details.sent
	// false: not connected, nothing sent; true: lost while waiting),
	// REALTIME_REQUEST_TIMEOUT, REALTIME_REQUEST_INVALID_ACKNOWLEDGEMENT
	// and REALTIME_REQUEST_REJECTED; or ctx.Err(). It settles once.
	Request(ctx context.Context, timeout time.Duration, event string, args ...any) (json.RawMessage, error)
	// OnConnectionChange calls fn with the new state on every change.
	OnConnectionChange(fn func(connected bool)) (unsubscribe func())
	// OnRejected calls fn for every rejection this side reports: inbound
	// events that were not admitted, acknowledgements that did not match,
	// and peer rejections of our requests (rejected-by-peer).
	OnRejected(fn func(Rejection)) (unsubscribe func())
}

// ClientHandler answers one serverToClient event on the client side; see
// [Handler] for the meaning of ack and err.
type ClientHandler func(ctx context.Context, args Args) (ack any, err error)

// Transport is a connection that carries raw (unvalidated) events: what
// [Bind] needs from an application's connection. Implementations speak
// whatever engine they like; this package's own is the WebSocket
// transport behind [Dial].
type Transport interface {
	// Connected reports whether the connection is up now.
	Connected() bool
	// Subscribe delivers every inbound event, whatever its name, to fn
	// until the returned function is called.
	Subscribe(fn func(Inbound)) (unsubscribe func())
	// Send sends an event that asks for no acknowledgement. args is a JSON
	// array. A connection that is down returns an error wrapping
	// [ErrDisconnected].
	Send(ctx context.Context, event string, args json.RawMessage) error
	// SendWithAck sends an event that asks for an acknowledgement and
	// waits for the peer's answer. It returns ctx.Err() when ctx ends
	// first (the binding uses that for its timeout) and an error wrapping
	// [ErrDisconnected] when the connection is, or goes, down. An answer
	// arriving after it returned is dropped.
	SendWithAck(ctx context.Context, event string, args json.RawMessage) (Reply, error)
	// OnConnectionChange calls fn with the new state on every change.
	OnConnectionChange(fn func(connected bool)) (unsubscribe func())
}

// Inbound is one event as a Transport received it.
type Inbound struct {
	Event string
	// Args is the raw argument value (normally a JSON array; nil when the
	// frame had none).
	Args json.RawMessage
	// Reply answers the peer; nil when it asked for no acknowledgement.
	Reply func(Reply) error
}

// Reply is a peer's answer to an event that asked for an
// acknowledgement: an ack value or a rejection envelope.
type Reply struct {
	// Ack is the raw acknowledgement value; nil when the answer has none.
	Ack json.RawMessage
	// Rejected is set when the peer refused the event.
	Rejected *Envelope
}

// ErrDisconnected is wrapped by Transport errors that mean the connection
// is down.
var ErrDisconnected = errors.New("realtime: disconnected")

// BindOptions configures [Bind]; nil means defaults.
type BindOptions struct {
	// RequestTimeout is Request's timeout when the call gives none
	// (default 10 s).
	RequestTimeout time.Duration
	// MaxDepth bounds the nesting of inbound values (default
	// validate.DefaultMaxDepth).
	MaxDepth int
	// OnError hears handler errors on events without an ack and recovered
	// panics.
	OnError func(error)
}

// Bound is the [Binding] [Bind] returns.
type Bound struct {
	t        Transport
	c        *Contract
	timeout  time.Duration
	maxDepth int
	onError  func(error)
	unsubT   func()
	ctx      context.Context
	cancel   context.CancelFunc

	mu          sync.Mutex
	handlers    map[string][]*clientSub
	rejectSubs  map[*rejectSub]struct{}
	inbox       []boundEvent
	dispatching bool
	idle        *sync.Cond
}

type clientSub struct{ h ClientHandler }
type rejectSub struct{ fn func(Rejection) }

type boundEvent struct {
	spec  *eventSpec
	args  Args
	reply func(Reply) error
}

// Bind validates contract c over transport t. It subscribes to t's
// inbound events; [Bound.Unbind] removes that subscription. Neither opens
// nor closes t.
func Bind(t Transport, c *Contract, opts *BindOptions) *Bound {
	var o BindOptions
	if opts != nil {
		o = *opts
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = c.maxDepth
	}
	b := &Bound{t: t, c: c, timeout: o.RequestTimeout, maxDepth: o.MaxDepth, onError: o.OnError,
		handlers: map[string][]*clientSub{}, rejectSubs: map[*rejectSub]struct{}{}}
	b.idle = sync.NewCond(&b.mu)
	b.ctx, b.cancel = context.WithCancel(context.Background())
	b.unsubT = t.Subscribe(b.inbound)
	return b
}

// Unbind stops validating and dispatching t's events and waits for a
// running handler to return. The connection stays as it is.
func (b *Bound) Unbind() {
	b.unsubT()
	b.cancel()
	b.mu.Lock()
	b.inbox = nil
	for b.dispatching {
		b.idle.Wait()
	}
	b.mu.Unlock()
}

// Contract returns the bound contract.
func (b *Bound) Contract() *Contract { return b.c }

// Connected reports whether the transport is up.
func (b *Bound) Connected() bool { return b.t.Connected() }

// OnConnectionChange observes the transport's state.
func (b *Bound) OnConnectionChange(fn func(bool)) func() { return b.t.OnConnectionChange(fn) }

// OnRejected registers a rejection observer.
func (b *Bound) OnRejected(fn func(Rejection)) func() {
	s := &rejectSub{fn: fn}
	b.mu.Lock()
	b.rejectSubs[s] = struct{}{}
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		delete(b.rejectSubs, s)
		b.mu.Unlock()
	}
}

// On subscribes h to a serverToClient event.
func (b *Bound) On(event string, h ClientHandler) (func(), error) {
	spec := b.c.s2c[event]
	if spec == nil {
		return nil, fmt.Errorf("realtime: contract %q has no serverToClient event %q (it has: %s)", b.c.name, event,
			listOrNone(b.c.Events(graph.ServerToClient)))
	}
	if h == nil {
		return nil, errors.New("realtime: On needs a handler")
	}
	s := &clientSub{h: h}
	b.mu.Lock()
	defer b.mu.Unlock()
	if spec.ack != nil && len(b.handlers[event]) > 0 {
		return nil, fmt.Errorf("realtime: %q takes an acknowledgement and already has a handler", event)
	}
	b.handlers[event] = append(b.handlers[event], s)
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		list := b.handlers[event]
		for i, x := range list {
			if x == s {
				b.handlers[event] = append(list[:i:i], list[i+1:]...)
				break
			}
		}
	}, nil
}

// Emit validates and sends an event without acknowledgement.
func (b *Bound) Emit(ctx context.Context, event string, args ...any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	spec, err := b.c.outbound(ClientOutbound, b.c.c2s, event, false)
	if err != nil {
		return err
	}
	raw, issues := spec.encodeArgs(args, b.maxDepth)
	if issues != nil {
		return b.c.violation(event, ClientOutbound, PhaseArguments, ReasonInvalidArguments, FaultLocal, issues).Err
	}
	if !b.t.Connected() {
		return requestDisconnected(event, false)
	}
	if err := b.t.Send(ctx, event, raw); err != nil {
		if errors.Is(err, ErrDisconnected) {
			return requestDisconnected(event, false).WithCause(err)
		}
		return err
	}
	return nil
}

// Request validates and sends an event, then waits for its validated
// acknowledgement.
func (b *Bound) Request(ctx context.Context, timeout time.Duration, event string, args ...any) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	spec, err := b.c.outbound(ClientOutbound, b.c.c2s, event, true)
	if err != nil {
		return nil, err
	}
	raw, issues := spec.encodeArgs(args, b.maxDepth)
	if issues != nil {
		return nil, b.c.violation(event, ClientOutbound, PhaseArguments, ReasonInvalidArguments, FaultLocal, issues).Err
	}
	if !b.t.Connected() {
		return nil, requestDisconnected(event, false)
	}
	if timeout <= 0 {
		timeout = b.timeout
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	rep, err := b.t.SendWithAck(tctx, event, raw)
	if err != nil {
		switch {
		case errors.Is(err, ErrDisconnected):
			return nil, requestDisconnected(event, true).WithCause(err)
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case tctx.Err() != nil:
			return nil, requestTimeout(event, timeout)
		}
		return nil, err
	}
	if rep.Rejected != nil {
		b.report(peerRejection(b.c.name, event, ClientInbound, *rep.Rejected))
		return nil, requestRejected(event, *rep.Rejected)
	}
	var v any
	present := rep.Ack != nil
	if present {
		if v, err = validate.DecodeJSON(rep.Ack, &validate.DecodeOptions{MaxDepth: b.maxDepth}); err != nil {
			issues := []validate.Issue{{Message: err.Error()}}
			b.report(b.c.violation(event, ClientInbound, PhaseAcknowledgement, ReasonInvalidAck, FaultPeer, issues))
			return nil, requestInvalidAck(event, issues)
		}
	}
	ack, issues := spec.checkAck(v, present)
	if issues != nil {
		b.report(b.c.violation(event, ClientInbound, PhaseAcknowledgement, ReasonInvalidAck, FaultPeer, issues))
		return nil, requestInvalidAck(event, issues)
	}
	return ack, nil
}

func (b *Bound) report(r Rejection) {
	b.mu.Lock()
	subs := make([]*rejectSub, 0, len(b.rejectSubs))
	for s := range b.rejectSubs {
		subs = append(subs, s)
	}
	b.mu.Unlock()
	for _, s := range subs {
		func() {
			defer func() {
				if p := recover(); p != nil {
					b.fail(fmt.Errorf("realtime: OnRejected panicked: %v", p))
				}
			}()
			s.fn(r)
		}()
	}
}

func (b *Bound) fail(err error) {
	if b.onError == nil {
		return
	}
	defer func() { _ = recover() }()
	b.onError(err)
}

// inbound validates one event from the transport. A rejected event never
// reaches a handler; it is reported and, when the peer asked for an
// acknowledgement, answered with the rejection envelope.
func (b *Bound) inbound(in Inbound) {
	spec := b.c.s2c[in.Event]
	wantsAck := in.Reply != nil
	reject := func(r Rejection) {
		b.report(r)
		if wantsAck {
			if err := in.Reply(Reply{Rejected: ptr(r.envelope())}); err != nil {
				b.fail(err)
			}
		}
	}
	switch {
	case spec == nil:
		reject(b.c.violation(in.Event, ClientInbound, PhaseArguments, ReasonUnknownEvent, FaultPeer, nil))
		return
	case spec.ack != nil && !wantsAck:
		reject(b.c.violation(in.Event, ClientInbound, PhaseAcknowledgement, ReasonMissingAck, FaultPeer, nil))
		return
	case spec.ack == nil && wantsAck:
		reject(b.c.violation(in.Event, ClientInbound, PhaseAcknowledgement, ReasonUnexpectedAck, FaultPeer, nil))
		return
	}
	var v any
	if in.Args != nil {
		var err error
		if v, err = validate.DecodeJSON(in.Args, &validate.DecodeOptions{MaxDepth: b.maxDepth}); err != nil {
			reject(b.c.violation(in.Event, ClientInbound, PhaseArguments, ReasonInvalidArguments, FaultPeer,
				[]validate.Issue{{Message: err.Error()}}))
			return
		}
	}
	args, issues := spec.checkArgs(v)
	if issues != nil {
		reject(b.c.violation(in.Event, ClientInbound, PhaseArguments, ReasonInvalidArguments, FaultPeer, issues))
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ctx.Err() != nil {
		return
	}
	b.inbox = append(b.inbox, boundEvent{spec: spec, args: args, reply: in.Reply})
	if !b.dispatching {
		b.dispatching = true
		go b.dispatch()
	}
}

// dispatch runs handlers one at a time, off the transport's goroutine (so
// a handler may itself Request), and exits when there is nothing to do.
func (b *Bound) dispatch() {
	for {
		b.mu.Lock()
		if len(b.inbox) == 0 {
			b.dispatching = false
			b.inbox = nil
			b.idle.Broadcast()
			b.mu.Unlock()
			return
		}
		ev := b.inbox[0]
		b.inbox[0] = boundEvent{}
		b.inbox = b.inbox[1:]
		subs := append([]*clientSub(nil), b.handlers[ev.spec.name]...)
		b.mu.Unlock()
		b.run(ev, subs)
	}
}

func (b *Bound) run(ev boundEvent, subs []*clientSub) {
	name := ev.spec.name
	if len(subs) == 0 {
		if ev.reply != nil {
			b.replyWith(ev.reply, Reply{Rejected: &Envelope{Event: name, Reason: ReasonRefused, Code: codeNotImplemented,
				Message: fmt.Sprintf("no handler for %q", name)}})
		}
		return
	}
	if ev.reply == nil {
		for _, s := range subs {
			if _, err := b.call(s.h, ev.args); err != nil {
				b.fail(fmt.Errorf("realtime: handler of %q: %w", name, err))
			}
		}
		return
	}
	ack, err := b.call(subs[0].h, ev.args)
	if err != nil {
		b.replyWith(ev.reply, Reply{Rejected: ptr(refusal(name, err))})
		return
	}
	raw, issues := ev.spec.encodeAck(ack, b.maxDepth)
	if issues != nil {
		r := b.c.violation(name, ClientOutbound, PhaseAcknowledgement, ReasonInvalidAck, FaultLocal, issues)
		b.report(r)
		b.replyWith(ev.reply, Reply{Rejected: ptr(r.envelope())})
		return
	}
	b.replyWith(ev.reply, Reply{Ack: raw})
}

func (b *Bound) replyWith(reply func(Reply) error, r Reply) {
	if err := reply(r); err != nil {
		b.fail(err)
	}
}

func (b *Bound) call(h ClientHandler, args Args) (ack any, err error) {
	defer func() {
		if p := recover(); p != nil {
			b.fail(fmt.Errorf("realtime: handler panicked: %v", p))
			ack, err = nil, fmt.Errorf("handler panicked")
		}
	}()
	return h(b.ctx, args)
}

func ptr[T any](v T) *T { return &v }
