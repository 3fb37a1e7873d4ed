package realtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"stitchkit.dev/stitchkit/pkg/mount"
)

// Conn is one client connection of a [Server]. Its methods are safe for
// concurrent use.
//
// An idle connection costs one goroutine (its reader) and a few small
// structs: the writer and the handler goroutines exist only while there
// is something to write or to handle, and write buffers come from a pool.
type Conn[I any] struct {
	srv      *Server[I]
	ws       *websocket.Conn
	id       string
	identity I
	ctx      context.Context
	cancel   context.CancelFunc
	lastSeen atomic.Int64 // unix nanoseconds of the last frame or pong
	// waiting says that a sweep has claimed the connection but not yet
	// reached it: frames queued meanwhile wait for the server, not for
	// this client, so they do not count against SendQueue (the sweep
	// hands the connection a writer of its own within a tick of stalling).
	waiting atomic.Bool
	// deadlineSet says that the gorilla connection carries a write
	// deadline (writeLoop sets one per frame; a sweep's writes carry
	// none). Only the connection's current writer touches it.
	deadlineSet bool

	mu    sync.Mutex
	cond  sync.Cond // signals inbox space (L = &mu)
	queue []outFrame
	// grace counts the frames at the head of queue that were queued while
	// a sweep had claimed the connection but not reached it (waiting):
	// the server's delay, not the client's, so they do not count against
	// SendQueue.
	grace       int
	writing     bool
	closing     bool // a close frame is queued: no more frames are accepted
	closed      bool // torn down
	closeTimer  *time.Timer
	inbox       []inFrame
	dispatching bool
	rooms       map[string]struct{}
	pending     map[int64]*pendingCall
	nextReqID   int64
}

// outFrame is one queued write: a prepared broadcast frame, a frame of
// this connection only, a ping, or a close.
type outFrame struct {
	pm        *websocket.PreparedMessage
	data      []byte
	ping      bool
	closeCode int
	closeText string
}

// inFrame is one admitted event waiting for its handler.
type inFrame struct {
	spec *eventSpec
	args Args
	id   int64
}

type pendingCall struct {
	done chan answer // buffered: the one settler never blocks
}

// answer settles a pending request: a frame (ack or rejection) or a
// disconnect.
type answer struct {
	f            frame
	disconnected bool
}

var (
	errConnClosed = errors.New("realtime: connection closed")
	errSlow       = errors.New("realtime: slow consumer")
)

// ID returns the connection's identifier, unique within its server.
func (c *Conn[I]) ID() string { return c.id }

// Identity returns what the Handshake hook returned for this connection.
func (c *Conn[I]) Identity() I { return c.identity }

// Context returns a context that is cancelled when the connection closes.
func (c *Conn[I]) Context() context.Context { return c.ctx }

// Connected reports whether the connection is open and not closing.
func (c *Conn[I]) Connected() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.closed && !c.closing
}

// Rooms returns the rooms the connection is in, sorted.
func (c *Conn[I]) Rooms() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.rooms))
	for r := range c.rooms {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

// Join adds the connection to a room on this instance; the instance
// subscribes to the room on the broker when this is its first member. A
// broker failure is a SERVICE_UNAVAILABLE error and the connection is not
// added. Membership ends with Leave or when the connection closes.
func (c *Conn[I]) Join(room string) error { return c.srv.join(c, room) }

// Leave removes the connection from a room.
func (c *Conn[I]) Leave(room string) {
	c.srv.mu.Lock()
	defer c.srv.mu.Unlock()
	c.mu.Lock()
	_, in := c.rooms[room]
	delete(c.rooms, room)
	c.mu.Unlock()
	if in {
		c.srv.leaveLocked(c, []string{room})
	}
}

// Close starts the close handshake with code 1000 after the frames already
// queued.
func (c *Conn[I]) Close() { c.startClose(CloseNormal, "", false) }

// Emit sends a serverToClient event without acknowledgement to this
// connection. The arguments are validated first: a mismatch, an unknown
// event, or an event that requires an acknowledgement (use Request) is a
// REALTIME_CONTRACT_VIOLATION error and nothing is sent. A closed
// connection, or one just closed as a slow consumer, is
// REALTIME_REQUEST_DISCONNECTED.
func (c *Conn[I]) Emit(ctx context.Context, event string, args ...any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s := c.srv
	spec, err := s.contract.outbound(ServerOutbound, s.contract.s2c, event, false)
	if err != nil {
		return err
	}
	raw, issues := spec.encodeArgs(args, s.opts.MaxDepth)
	if issues != nil {
		return s.contract.violation(event, ServerOutbound, PhaseArguments, ReasonInvalidArguments, FaultLocal, issues).Err
	}
	if err := c.enqueue(outFrame{data: appendEventFrame(nil, 0, event, raw)}); err != nil {
		return requestDisconnected(event, false).WithCause(err)
	}
	return nil
}

// Request sends a serverToClient event that takes an acknowledgement and
// waits for it. timeout 0 means Options.RequestTimeout. It settles exactly
// once; an answer that arrives later is ignored. Outcomes:
//
//   - the validated acknowledgement (raw JSON);
//   - REALTIME_CONTRACT_VIOLATION before sending: unknown event, an event
//     without an ack schema, arguments that do not match;
//   - REALTIME_REQUEST_DISCONNECTED: not connected (nothing sent), or the
//     connection closed while waiting (details.sent says which);
//   - REALTIME_REQUEST_TIMEOUT: no answer within the timeout;
//   - REALTIME_REQUEST_INVALID_ACKNOWLEDGEMENT: the ack does not match its
//     schema (also reported to OnRejected);
//   - REALTIME_REQUEST_REJECTED: the client answered with a rejection
//     envelope (also reported to OnRejected as rejected-by-peer);
//   - ctx.Err() when ctx ends first.
//
// A handler may Request its own connection: handlers run off the reader,
// which keeps reading acknowledgements. It stops reading only while the
// connection's inbox (Options.Inbox) is full, so a client that floods
// events while the server waits for its ack makes that Request time out
// rather than deadlock.
func (c *Conn[I]) Request(ctx context.Context, timeout time.Duration, event string, args ...any) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := c.srv
	spec, err := s.contract.outbound(ServerOutbound, s.contract.s2c, event, true)
	if err != nil {
		return nil, err
	}
	raw, issues := spec.encodeArgs(args, s.opts.MaxDepth)
	if issues != nil {
		return nil, s.contract.violation(event, ServerOutbound, PhaseArguments, ReasonInvalidArguments, FaultLocal, issues).Err
	}
	if timeout <= 0 {
		timeout = s.opts.RequestTimeout
	}
	call := &pendingCall{done: make(chan answer, 1)}
	c.mu.Lock()
	if c.closed || c.closing {
		c.mu.Unlock()
		return nil, requestDisconnected(event, false)
	}
	c.nextReqID++
	id := c.nextReqID
	if c.pending == nil {
		c.pending = map[int64]*pendingCall{}
	}
	c.pending[id] = call
	if err := c.enqueueLocked(outFrame{data: appendEventFrame(nil, id, event, raw)}); err != nil {
		delete(c.pending, id)
		c.mu.Unlock()
		return nil, requestDisconnected(event, false).WithCause(err)
	}
	c.mu.Unlock()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var a answer
	select {
	case a = <-call.done:
	case <-timer.C:
		if c.forget(id) {
			return nil, requestTimeout(event, timeout)
		}
		a = <-call.done
	case <-ctx.Done():
		if c.forget(id) {
			return nil, ctx.Err()
		}
		a = <-call.done
	}
	return c.finish(spec, a)
}

// forget removes a pending request; false means an answer already took it
// (and is on its way through done).
func (c *Conn[I]) forget(id int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.pending[id]; ok {
		delete(c.pending, id)
		return true
	}
	return false
}

func (c *Conn[I]) finish(spec *eventSpec, a answer) (json.RawMessage, error) {
	s := c.srv
	if a.disconnected {
		return nil, requestDisconnected(spec.name, true)
	}
	if a.f.typ == FrameRejection {
		r := peerRejection(s.contract.name, spec.name, ServerInbound, a.f.rejection)
		c.rejected(r)
		return nil, requestRejected(spec.name, a.f.rejection)
	}
	ack, issues := spec.checkAck(a.f.ack, a.f.hasAck)
	if issues != nil {
		c.rejected(s.contract.violation(spec.name, ServerInbound, PhaseAcknowledgement, ReasonInvalidAck, FaultPeer, issues))
		return nil, requestInvalidAck(spec.name, issues)
	}
	return ack, nil
}

// enqueue queues a frame for the writer.
func (c *Conn[I]) enqueue(f outFrame) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.enqueueLocked(f)
}

func (c *Conn[I]) enqueueLocked(f outFrame) error {
	if c.closed || c.closing {
		return errConnClosed
	}
	if n := len(c.queue); n-c.grace >= c.srv.opts.SendQueue && !c.waiting.Load() || n >= waitingQueueFactor*c.srv.opts.SendQueue {
		c.srv.stats.slow.Add(1)
		c.startCloseLocked(c.srv.opts.SlowConsumerCode, "slow consumer", true)
		return errSlow
	}
	if !c.writing {
		// The common case of a broadcast to idle connections: the frame
		// goes to a new writer directly, without a queue allocation.
		c.writing = true
		c.srv.wg.Add(1)
		go c.writeLoop(f)
		return nil
	}
	if c.waiting.Load() {
		c.grace++
	}
	c.queue = append(c.queue, f)
	return nil
}

// claimOrQueue is enqueue for a prepared broadcast frame, except that an
// idle connection is claimed instead (true): the caller then writes pm to
// it with writeClaimed.
//
// It runs for every connection of a broadcast, so it unlocks by hand: the
// wrapper a deferred unlock calls showed in a profile of the fan-out
// benchmark.
func (c *Conn[I]) claimOrQueue(pm *websocket.PreparedMessage) bool {
	c.mu.Lock()
	if !c.writing && !c.closed && !c.closing {
		c.writing = true
		c.waiting.Store(true)
		c.mu.Unlock()
		return true
	}
	_ = c.enqueueLocked(outFrame{pm: pm})
	c.mu.Unlock()
	return false
}

// writeClaimed writes pm to a claimed connection, then releases it, or
// hands it to a writer goroutine when frames queued up meanwhile. The
// write has no socket deadline: the sweep's watchdog bounds it (see
// sweep), so a deadline a writeLoop left behind is cleared first.
func (c *Conn[I]) writeClaimed(pm *websocket.PreparedMessage) {
	if c.deadlineSet {
		_ = c.ws.SetWriteDeadline(time.Time{})
		c.deadlineSet = false
	}
	err := c.ws.WritePreparedMessage(pm)
	c.mu.Lock() // unlocked by hand, as in claimOrQueue
	switch {
	case err != nil:
		c.writeFailedLocked()
	case len(c.queue) > 0 && !c.closed:
		c.srv.wg.Add(1) // the reader holds a count: the connection is open
		go c.writeLoop(outFrame{})
	default:
		c.writing = false
	}
	c.mu.Unlock()
}

// waitingQueueFactor bounds the frames a connection a sweep has claimed
// but not reached may queue, as a multiple of SendQueue: they are the
// server's delay, not the client's, but memory stays bounded.
const waitingQueueFactor = 16

// handoff gives a claimed connection the sweep has not reached a writer
// of its own, which writes pm and then what queued meanwhile.
func (c *Conn[I]) handoff(pm *websocket.PreparedMessage) {
	c.waiting.Store(false)
	c.srv.wg.Add(1) // the sweep holds a count: it is above zero
	go c.writeLoop(outFrame{pm: pm})
}

// writeExpired ends a claimed write that has outlived the write timeout,
// as an expired socket deadline would: the network connection is closed,
// the write fails, and the reader tears the connection down.
func (c *Conn[I]) writeExpired() { _ = c.ws.Close() }

// writeFailedLocked gives up writing: the network connection is closed
// and the reader tears the connection down.
func (c *Conn[I]) writeFailedLocked() {
	_ = c.ws.Close()
	c.writing = false
	clear(c.queue)
	c.queue = nil
	c.grace = 0
	c.closing = true
}

func (c *Conn[I]) wakeWriterLocked() {
	if !c.writing {
		c.writing = true
		c.srv.wg.Add(1)
		go c.writeLoop(outFrame{})
	}
}

// startClose queues a close frame (after the queued frames, or instead of
// them when drop is set) and bounds the close handshake.
func (c *Conn[I]) startClose(code int, text string, drop bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.startCloseLocked(code, text, drop)
}

func (c *Conn[I]) startCloseLocked(code int, text string, drop bool) {
	if c.closed || c.closing {
		return
	}
	c.closing = true
	if drop {
		clear(c.queue)
		c.queue = c.queue[:0]
		c.grace = 0
	}
	if len(text) > 123 { // a close frame's payload is at most 125 bytes
		text = text[:123]
	}
	c.queue = append(c.queue, outFrame{closeCode: code, closeText: text})
	c.wakeWriterLocked()
	c.closeTimer = time.AfterFunc(c.srv.opts.CloseTimeout, func() { _ = c.ws.Close() })
	c.cond.Broadcast()
}

// kill closes the network connection at once; the read loop then tears
// the connection down.
func (c *Conn[I]) kill() {
	c.mu.Lock()
	c.closing = true
	c.cond.Broadcast()
	c.mu.Unlock()
	_ = c.ws.Close()
}

// writeLoop writes first (unless it is empty), then drains the queue,
// and exits when it is empty: an idle connection has no writer goroutine.
func (c *Conn[I]) writeLoop(first outFrame) {
	defer c.srv.wg.Done()
	f := first
	for {
		if f.isEmpty() {
			c.mu.Lock()
			if len(c.queue) == 0 || c.closed {
				c.writing = false
				c.queue = nil
				c.grace = 0
				c.mu.Unlock()
				return
			}
			f = c.queue[0]
			c.queue[0] = outFrame{}
			c.queue = c.queue[1:]
			if c.grace > 0 {
				c.grace--
			}
			c.mu.Unlock()
		}

		deadline := time.Now().Add(c.srv.opts.WriteTimeout)
		var err error
		switch {
		case f.pm != nil:
			_ = c.ws.SetWriteDeadline(deadline)
			c.deadlineSet = true
			err = c.ws.WritePreparedMessage(f.pm)
		case f.ping:
			err = c.ws.WriteControl(websocket.PingMessage, nil, deadline)
		case f.closeCode != 0:
			err = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(f.closeCode, f.closeText), deadline)
			if err == nil {
				// Nothing more may be written; the reader waits for the
				// peer's close frame (or the close timer).
				err = errConnClosed
			}
		default:
			_ = c.ws.SetWriteDeadline(deadline)
			c.deadlineSet = true
			err = c.ws.WriteMessage(websocket.TextMessage, f.data)
		}
		if err != nil {
			if !errors.Is(err, errConnClosed) {
				_ = c.ws.Close()
			}
			c.mu.Lock()
			c.writing = false
			clear(c.queue)
			c.queue = nil
			c.grace = 0
			c.closing = true
			c.mu.Unlock()
			return
		}
		f = outFrame{}
	}
}

func (f *outFrame) isEmpty() bool {
	return f.pm == nil && f.data == nil && !f.ping && f.closeCode == 0
}

func (c *Conn[I]) pong(string) error {
	c.lastSeen.Store(time.Now().UnixNano())
	return nil
}

// peerClosed answers the peer's close frame; the read loop then tears the
// connection down. gorilla's own answer gives up after one second waiting
// for the write lock, which a busy writer or a loaded machine can exceed,
// and the peer is then left with 1006 instead of its close code.
func (c *Conn[I]) peerClosed(code int, _ string) error {
	return answerClose(c.ws, code, c.srv.opts.CloseTimeout)
}

// peerPinged answers a peer's ping (see answerPing: gorilla's own answer
// ends the read loop when its pong misses a one-second deadline).
func (c *Conn[I]) peerPinged(data string) error {
	c.lastSeen.Store(time.Now().UnixNano())
	return answerPing(c.ws, data, c.srv.opts.WriteTimeout)
}

// frameSink is what readFrames feeds: a server connection.
type frameSink interface {
	started()
	handle(typ int, data []byte)
	teardown(err error)
}

// readFrames reads frames until the connection fails or closes, then
// tears it down. An idle connection parks here, so this loop is what
// every idle connection pays for in stack: it is a plain function (a
// generic method's frames are larger, enough to push the reader's stack
// past 2 KiB) and hands each frame to a function of its own.
func readFrames(ws *websocket.Conn, sink frameSink) {
	sink.started()
	var err error
	for {
		var typ int
		var data []byte
		if typ, data, err = ws.ReadMessage(); err != nil {
			break
		}
		sink.handle(typ, data)
	}
	sink.teardown(err)
}

func (c *Conn[I]) started() {
	if c.srv.opts.OnConnect != nil {
		c.connected()
	}
}

//go:noinline
func (c *Conn[I]) connected() {
	h := c.srv.opts.OnConnect
	c.hook(func() { h(c) })
}

// handle deals with one frame.
//
//go:noinline
func (c *Conn[I]) handle(typ int, data []byte) {
	c.lastSeen.Store(time.Now().UnixNano())
	c.mu.Lock()
	closing := c.closing
	c.mu.Unlock()
	if closing {
		return // waiting for the peer's close frame
	}
	if typ != websocket.TextMessage {
		c.protocolError(CloseUnsupportedData, "frames are JSON text")
		return
	}
	f, ferr := parseFrame(data, c.srv.opts.MaxDepth)
	if ferr != nil {
		c.protocolError(ferr.code, ferr.reason)
		return
	}
	switch f.typ {
	case FrameEvent:
		c.inbound(f)
	case FrameAck, FrameRejection:
		c.settle(f)
	default:
		c.srv.stats.unknown.Add(1)
	}
}

func (c *Conn[I]) protocolError(code int, reason string) {
	c.srv.stats.protocol.Add(1)
	c.startClose(code, reason, false)
}

// inbound admits a valid event or rejects it; a rejected event never
// reaches a handler.
func (c *Conn[I]) inbound(f frame) {
	ct := c.srv.contract
	spec := ct.c2s[f.event]
	switch {
	case spec == nil:
		c.reject(f, ct.violation(f.event, ServerInbound, PhaseArguments, ReasonUnknownEvent, FaultPeer, nil))
		return
	case spec.ack != nil && f.id == 0:
		c.reject(f, ct.violation(f.event, ServerInbound, PhaseAcknowledgement, ReasonMissingAck, FaultPeer, nil))
		return
	case spec.ack == nil && f.id != 0:
		c.reject(f, ct.violation(f.event, ServerInbound, PhaseAcknowledgement, ReasonUnexpectedAck, FaultPeer, nil))
		return
	}
	args, issues := spec.checkArgs(f.args)
	if issues != nil {
		c.reject(f, ct.violation(f.event, ServerInbound, PhaseArguments, ReasonInvalidArguments, FaultPeer, issues))
		return
	}
	c.mu.Lock()
	for len(c.inbox) >= c.srv.opts.Inbox && !c.closing && !c.closed {
		c.cond.Wait()
	}
	if c.closing || c.closed {
		c.mu.Unlock()
		return
	}
	c.inbox = append(c.inbox, inFrame{spec: spec, args: args, id: f.id})
	if !c.dispatching {
		c.dispatching = true
		c.srv.wg.Add(1)
		go c.dispatch()
	}
	c.mu.Unlock()
}

// reject reports a rejection and, when the frame asked for an
// acknowledgement, answers with the rejection envelope.
func (c *Conn[I]) reject(f frame, r Rejection) {
	c.rejected(r)
	if f.id != 0 {
		_ = c.enqueue(outFrame{data: appendRejectionFrame(nil, f.id, r.envelope())})
	}
}

func (c *Conn[I]) rejected(r Rejection) {
	c.srv.stats.rejected.Add(1)
	if h := c.srv.opts.OnRejected; h != nil {
		c.hook(func() { h(c, r) })
	}
}

// hook runs an application hook; a panic is reported, never propagated.
func (c *Conn[I]) hook(fn func()) {
	defer func() {
		if p := recover(); p != nil {
			if c.srv.opts.OnError != nil {
				func() {
					defer func() { _ = recover() }()
					c.srv.opts.OnError(c, fmt.Errorf("realtime: hook panicked: %v", p))
				}()
			}
		}
	}()
	fn()
}

// dispatch runs admitted events' handlers one at a time and exits when the
// inbox is empty.
func (c *Conn[I]) dispatch() {
	defer c.srv.wg.Done()
	for {
		c.mu.Lock()
		if len(c.inbox) == 0 || c.closed {
			c.dispatching = false
			c.inbox = nil
			c.mu.Unlock()
			return
		}
		in := c.inbox[0]
		c.inbox[0] = inFrame{}
		c.inbox = c.inbox[1:]
		c.cond.Signal()
		c.mu.Unlock()
		c.run(in)
	}
}

func (c *Conn[I]) run(in inFrame) {
	s := c.srv
	h := s.handler(in.spec.name)
	if h == nil {
		if in.id != 0 {
			c.answer(in.id, Envelope{Event: in.spec.name, Reason: ReasonRefused, Code: codeNotImplemented,
				Message: fmt.Sprintf("no handler for %q", in.spec.name)})
		}
		return
	}
	ack, err := c.call(h, in.args)
	if in.id == 0 {
		if err != nil {
			s.report(c, fmt.Errorf("realtime: handler of %q: %w", in.spec.name, err))
		}
		return
	}
	if err != nil {
		c.answer(in.id, refusal(in.spec.name, err))
		return
	}
	raw, issues := in.spec.encodeAck(ack, s.opts.MaxDepth)
	if issues != nil {
		r := s.contract.violation(in.spec.name, ServerOutbound, PhaseAcknowledgement, ReasonInvalidAck, FaultLocal, issues)
		c.rejected(r)
		c.answer(in.id, r.envelope())
		return
	}
	_ = c.enqueue(outFrame{data: appendAckFrame(nil, in.id, raw)})
}

func (c *Conn[I]) answer(id int64, env Envelope) {
	_ = c.enqueue(outFrame{data: appendRejectionFrame(nil, id, env)})
}

// call runs a handler; a panic becomes INTERNAL_SERVER_ERROR (the peer
// never sees the panic value) and is reported.
func (c *Conn[I]) call(h Handler[I], args Args) (ack any, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.srv.report(c, fmt.Errorf("realtime: handler panicked: %v", p))
			ack, err = nil, mount.NewError(codeInternal, "")
		}
	}()
	return h(c.ctx, c, args)
}

// settle hands an ack or rejection to its pending request; one for no
// pending request (a late answer) is counted and ignored.
func (c *Conn[I]) settle(f frame) {
	c.mu.Lock()
	call := c.pending[f.id]
	delete(c.pending, f.id)
	c.mu.Unlock()
	if call == nil {
		c.srv.stats.late.Add(1)
		return
	}
	call.done <- answer{f: f}
}

// teardown releases everything the connection holds, once.
func (c *Conn[I]) teardown(err error) {
	defer c.srv.wg.Done()
	c.mu.Lock()
	c.closed = true
	c.closing = true
	pending := c.pending
	c.pending = nil
	rooms := make([]string, 0, len(c.rooms))
	for r := range c.rooms {
		rooms = append(rooms, r)
	}
	c.rooms = nil
	clear(c.inbox)
	c.inbox = nil
	if c.closeTimer != nil {
		c.closeTimer.Stop()
	}
	c.cond.Broadcast()
	c.mu.Unlock()
	if errors.Is(err, websocket.ErrReadLimit) {
		lingerDrain(c.ws.NetConn())
	}
	_ = c.ws.Close()
	c.cancel()
	for _, call := range pending {
		call.done <- answer{disconnected: true}
	}
	c.srv.remove(c, rooms)
	if h := c.srv.opts.OnDisconnect; h != nil {
		c.hook(func() { h(c, err) })
	}
}

// Lingering after a frame beyond the read limit: gorilla has sent the
// close frame (1009) while the peer is most likely still sending the rest
// of its frame. Closing at once, with those bytes unread, makes the kernel
// answer with a reset, which can destroy the close frame before the peer
// reads it (browsers then see 1006, not 1009). So the reader discards what
// keeps arriving, for a short time and a bounded amount, as net/http does
// before closing a connection whose request body it did not read.
const (
	lingerTime  = 500 * time.Millisecond
	lingerBytes = 4 << 20
)

func lingerDrain(nc net.Conn) {
	if nc == nil {
		return
	}
	_ = nc.SetReadDeadline(time.Now().Add(lingerTime))
	_, _ = io.Copy(io.Discard, io.LimitReader(nc, lingerBytes))
}
