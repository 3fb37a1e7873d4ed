package realtime

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
)

// Defaults of [Options].
const (
	DefaultMaxFrameBytes  = 64 << 10
	DefaultWriteTimeout   = 10 * time.Second
	DefaultSendQueue      = 256
	DefaultInbox          = 16
	DefaultRequestTimeout = 10 * time.Second
	DefaultPingInterval   = 30 * time.Second
	DefaultCloseTimeout   = 2 * time.Second
	DefaultReadBufferSize = 512
	writeBufferSize       = 4096
)

// Handler answers one clientToServer event. It receives arguments that
// have been validated against the event's tuple schema; it is never called
// for a frame that was rejected. For an event with an ack schema the
// returned value is the acknowledgement (validated before it is sent; an
// invalid one is reported and the client gets a rejection); an error
// becomes a refusal (reason "refused", the error's registry code). For an
// event without an ack schema the ack is ignored.
//
// Handlers of one connection run one at a time, in arrival order, on a
// goroutine of their own: a handler may call [Conn.Request] on its own
// connection. ctx is cancelled when the connection closes.
type Handler[I any] func(ctx context.Context, c *Conn[I], args Args) (ack any, err error)

// Options configures a [Server]. A nil *Options, and every zero field,
// means the default.
type Options[I any] struct {
	// Handshake authenticates an upgrade request before any frame is
	// exchanged and returns the connection's identity. An error refuses
	// the handshake with an HTTP status: a *mount.Error answers with its
	// code and status, any other error with 401 UNAUTHORIZED. Nil accepts
	// every request with the zero identity.
	Handshake func(r *http.Request) (I, error)
	// Edge is the runner whose authenticator (mount.Options.Authenticate,
	// the one edge hook of every transport) runs on the upgrade request's
	// headers first: a refusal is its envelope (401 with the runner's
	// WWW-Authenticate challenge, or 403); the principal it resolves is in
	// the request context Handshake sees and in every handler's context
	// (mount.PrincipalFrom). Nil, or a runner without an authenticator,
	// skips it.
	Edge *mount.Runner
	// AllowedOrigins lists the origins ("https://app.example.com", scheme
	// and host as in the Origin header) a browser may connect from. Empty
	// means same-origin only: the Origin's host must equal the request's
	// Host. A request without Origin (not a browser) is always allowed;
	// "*" allows every origin.
	AllowedOrigins []string
	// MaxFrameBytes bounds one inbound frame (default 64 KiB); a larger
	// frame closes the connection with 1009.
	MaxFrameBytes int64
	// MaxDepth bounds the nesting of argument and ack values
	// (default validate.DefaultMaxDepth).
	MaxDepth int
	// WriteTimeout bounds each frame write (default 10 s); a write that
	// outlives it closes the connection. Frames of one connection carry
	// it as a socket deadline; a broadcast written straight to idle
	// connections is bounded by its sweep's watchdog instead, which
	// closes the connection at most 10 ms after the timeout. A client
	// behind a stalled write waits at most two 10 ms ticks for it: the
	// sweep then hands every connection it has not reached a writer of
	// its own.
	WriteTimeout time.Duration
	// SendQueue bounds the frames waiting to be written to one connection
	// (default 256: a quarter of a second of broadcasts at 1,000 a second,
	// room for a client on a busy machine to wait for the CPU). A
	// connection whose queue is full is a slow consumer: it is closed with
	// SlowConsumerCode and counted in Stats. Only frames its own socket
	// has not taken count: frames that wait while a broadcast is stalled
	// on another client's socket do not (see sweep), so one slow consumer
	// never gets another client closed.
	SendQueue int
	// SlowConsumerCode is the close code for a slow consumer: 1013 (try
	// again later, the default) or 1008 (policy violation).
	SlowConsumerCode int
	// Inbox bounds the admitted events waiting for their handler on one
	// connection (default 16); when it is full the server stops reading
	// from that connection until a handler finishes. Meanwhile it reads
	// no pong or close frame either: a peer's close is answered late, and
	// a connection whose inbox stays full for two ping intervals is
	// dropped as silent.
	Inbox int
	// RequestTimeout is the timeout of [Conn.Request] when the call gives
	// none (default 10 s).
	RequestTimeout time.Duration
	// PingInterval is how often the server pings each connection
	// (default 30 s; negative disables). A connection that has sent
	// nothing, not even a pong, for two intervals is closed.
	PingInterval time.Duration
	// CloseTimeout bounds the close handshake (default 2 s). When the
	// server closes, the network connection is closed after it whether or
	// not the peer answered; when the peer closes, the server's answer gets
	// this long to be written, and the network connection is closed right
	// after. A peer's close frame is read like any frame, so while the
	// connection's inbox is full (see Inbox) it waits for a handler to
	// finish.
	CloseTimeout time.Duration
	// ReadBufferSize is the read buffer of each connection (default 512
	// bytes, which keeps an idle connection small; frames larger than the
	// buffer are read in several steps). Writes use buffers from a pool
	// shared by all connections.
	ReadBufferSize int
	// Broker carries room and broadcast frames between instances. Nil
	// means an in-process broker owned by the server.
	Broker Broker
	// OnConnect is called once per connection after the handshake,
	// before its first frame is read (a good place to Join rooms).
	OnConnect func(c *Conn[I])
	// OnDisconnect is called once when a connection has closed; err says
	// why (a *websocket.CloseError for a close frame).
	OnDisconnect func(c *Conn[I], err error)
	// OnRejected is called for every frame that was not admitted, and for
	// every acknowledgement of a handler that did not match its schema.
	// It runs on the connection's read goroutine: keep it short.
	OnRejected func(c *Conn[I], r Rejection)
	// OnError is called for failures nobody else hears about: a handler
	// error on an event without an ack, a recovered panic, a broker
	// delivery that could not be prepared. c is nil when no connection
	// is concerned.
	OnError func(c *Conn[I], err error)
}

// Server serves one realtime contract over WebSocket: it is the
// http.Handler of the contract's endpoint. Create it with [NewServer],
// register handlers with [Server.Handle], mount it on a mux, and stop it
// with [Server.Shutdown].
type Server[I any] struct {
	contract *Contract
	opts     Options[I]
	upgrader websocket.Upgrader
	broker   Broker
	ownsBkr  bool
	ctx      context.Context
	cancel   context.CancelFunc

	mu       sync.RWMutex
	handlers map[string]Handler[I]
	conns    map[*Conn[I]]struct{}
	rooms    map[string]*roomState[I]
	closing  bool
	unsubAll func() error
	pingStop chan struct{}
	pingDone chan struct{}

	wg     sync.WaitGroup // connection goroutines
	nextID atomic.Uint64
	stats  counters
}

type roomState[I any] struct {
	members map[*Conn[I]]struct{}
	unsub   func() error
	// ready is closed when the room's broker subscription is made; nil
	// once it is. A room being subscribed has no members yet.
	ready chan struct{}
}

type counters struct {
	accepted, refused, rejected, slow, protocol, unknown, late, deliveryFailed atomic.Uint64
}

// Stats are a server's counters since it started.
type Stats struct {
	// Connections is the number of open connections now.
	Connections int
	// Accepted and Refused count handshakes.
	Accepted, Refused uint64
	// Rejected counts frames that were not admitted (each was reported to
	// OnRejected).
	Rejected uint64
	// SlowConsumers counts connections closed because their send queue
	// was full.
	SlowConsumers uint64
	// ProtocolErrors counts connections closed for a frame outside the
	// protocol (1002, 1003, 1007).
	ProtocolErrors uint64
	// UnknownFrames counts frames of a type this version does not know,
	// which are ignored.
	UnknownFrames uint64
	// LateAnswers counts acks and rejections for no pending request (the
	// request had already timed out, for example), which are ignored.
	LateAnswers uint64
}

var writePool sync.Pool // shared by every server: idle connections hold no write buffer

// NewServer returns the server of contract c. It subscribes to the
// contract's broadcast topic on the broker; an error means the broker
// refused.
func NewServer[I any](c *Contract, opts *Options[I]) (*Server[I], error) {
	if c == nil {
		return nil, errors.New("realtime: NewServer needs a contract")
	}
	var o Options[I]
	if opts != nil {
		o = *opts
	}
	if o.MaxFrameBytes <= 0 {
		o.MaxFrameBytes = DefaultMaxFrameBytes
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = c.maxDepth
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.SendQueue <= 0 {
		o.SendQueue = DefaultSendQueue
	}
	switch o.SlowConsumerCode {
	case 0:
		o.SlowConsumerCode = CloseTryAgainLater
	case CloseTryAgainLater, ClosePolicyViolation:
	default:
		return nil, fmt.Errorf("realtime: SlowConsumerCode must be %d or %d, not %d", CloseTryAgainLater, ClosePolicyViolation, o.SlowConsumerCode)
	}
	if o.Inbox <= 0 {
		o.Inbox = DefaultInbox
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.PingInterval == 0 {
		o.PingInterval = DefaultPingInterval
	}
	if o.CloseTimeout <= 0 {
		o.CloseTimeout = DefaultCloseTimeout
	}
	if o.ReadBufferSize <= 0 {
		o.ReadBufferSize = DefaultReadBufferSize
	}
	for _, origin := range o.AllowedOrigins {
		if origin == "*" {
			continue
		}
		if u, err := url.Parse(origin); err != nil || u.Scheme == "" || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return nil, fmt.Errorf("realtime: allowed origin %q is not scheme://host[:port]", origin)
		}
	}
	s := &Server[I]{
		contract: c,
		opts:     o,
		broker:   o.Broker,
		handlers: map[string]Handler[I]{},
		conns:    map[*Conn[I]]struct{}{},
		rooms:    map[string]*roomState[I]{},
	}
	if s.broker == nil {
		s.broker = NewMemoryBroker()
		s.ownsBkr = true
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.upgrader = websocket.Upgrader{
		ReadBufferSize:  o.ReadBufferSize,
		WriteBufferSize: writeBufferSize,
		WriteBufferPool: &writePool,
		Subprotocols:    []string{Subprotocol},
		// The origin was checked before Upgrade, with our envelope.
		CheckOrigin:      func(*http.Request) bool { return true },
		HandshakeTimeout: o.WriteTimeout,
		Error: func(w http.ResponseWriter, r *http.Request, status int, reason error) {
			writeHTTPError(w, &mount.Error{Code: codeForStatus(status), Status: status, Message: reason.Error()})
		},
	}
	unsub, err := s.broker.Subscribe(topicAll(c.name), s.deliverAll)
	if err != nil {
		s.cancel()
		return nil, mount.Errorf(codeServiceUnavailable, "realtime broker: %v", err).WithCause(err)
	}
	s.unsubAll = unsub
	return s, nil
}

// Contract returns the contract the server serves.
func (s *Server[I]) Contract() *Contract { return s.contract }

// Name returns the contract's name.
func (s *Server[I]) Name() string { return s.contract.name }

// Handle registers the handler of a clientToServer event, replacing any
// earlier one. An event the contract does not declare is an error. A valid
// event without a handler is dropped, or refused with NOT_IMPLEMENTED when
// it asked for an acknowledgement.
func (s *Server[I]) Handle(event string, h Handler[I]) error {
	if s.contract.c2s[event] == nil {
		return fmt.Errorf("realtime: contract %q has no clientToServer event %q (it has: %s)", s.contract.name, event,
			listOrNone(s.contract.Events(graph.ClientToServer)))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if h == nil {
		delete(s.handlers, event)
	} else {
		s.handlers[event] = h
	}
	return nil
}

func (s *Server[I]) handler(event string) Handler[I] {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.handlers[event]
}

// Stats returns the server's counters.
func (s *Server[I]) Stats() Stats {
	s.mu.RLock()
	n := len(s.conns)
	s.mu.RUnlock()
	return Stats{
		Connections:    n,
		Accepted:       s.stats.accepted.Load(),
		Refused:        s.stats.refused.Load(),
		Rejected:       s.stats.rejected.Load(),
		SlowConsumers:  s.stats.slow.Load(),
		ProtocolErrors: s.stats.protocol.Load(),
		UnknownFrames:  s.stats.unknown.Load(),
		LateAnswers:    s.stats.late.Load(),
	}
}

// ServeHTTP upgrades a handshake request. Every refusal is an HTTP status
// with the JSON error envelope, sent before any frame: 405 for a method
// other than GET, 400 for a request that is not a WebSocket upgrade or
// offers subprotocols but not [Subprotocol], 403 for a foreign Origin,
// the Handshake hook's status, 503 while shutting down. A request that
// offers no subprotocol is served as version 1, and its response names
// none (RFC 6455 §4.2.2).
func (s *Server[I]) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if e := s.precheck(r); e != nil {
		s.stats.refused.Add(1)
		if e.Code == mount.CodeMethodNotAllowed {
			w.Header().Set("Allow", http.MethodGet)
		}
		writeHTTPError(w, e)
		return
	}
	var principal *mount.Principal
	if s.opts.Edge != nil && s.opts.Edge.Authenticates() {
		ctx, e := s.opts.Edge.Authenticate(r.Context(), mount.NewEdgeRequest(SourceRealtime, r))
		if e != nil {
			s.stats.refused.Add(1)
			if e.Code == mount.CodeUnauthorized {
				w.Header().Set("WWW-Authenticate", s.opts.Edge.Challenge())
			}
			writeHTTPError(w, e)
			return
		}
		r = r.WithContext(ctx)
		principal = mount.PrincipalFrom(ctx)
	}
	var identity I
	if s.opts.Handshake != nil {
		id, err := s.handshake(r)
		if err != nil {
			s.stats.refused.Add(1)
			writeHTTPError(w, err)
			return
		}
		identity = id
	}
	ws, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		// Upgrade has answered with the envelope (Upgrader.Error).
		s.stats.refused.Add(1)
		return
	}
	s.start(ws, identity, principal)
}

func (s *Server[I]) precheck(r *http.Request) *mount.Error {
	s.mu.RLock()
	closing := s.closing
	s.mu.RUnlock()
	if closing {
		return mount.NewError(codeServiceUnavailable, "the realtime server is shutting down")
	}
	if r.Method != http.MethodGet {
		return mount.NewError(mount.CodeMethodNotAllowed, "a WebSocket handshake is a GET request")
	}
	if !websocket.IsWebSocketUpgrade(r) {
		return &mount.Error{Code: mount.CodeBadRequest, Message: "this endpoint accepts WebSocket upgrade requests only (subprotocol " + Subprotocol + ")"}
	}
	if !s.originAllowed(r) {
		return &mount.Error{Code: mount.CodeForbidden, Message: "origin not allowed",
			Details: map[string]any{"origin": r.Header.Get("Origin")}}
	}
	// A request that offers no subprotocol at all is served as version 1
	// (a plain `new WebSocket(url)` offers none); one that offers others
	// but not ours speaks a protocol this server does not.
	if offered := websocket.Subprotocols(r); len(offered) > 0 && !slices.Contains(offered, Subprotocol) {
		return &mount.Error{Code: mount.CodeBadRequest, Message: "none of the offered WebSocket subprotocols is supported: offer " + Subprotocol + " (docs/realtime-protocol.md)",
			Details: map[string]any{"supported": []string{Subprotocol}, "offered": offered}}
	}
	return nil
}

// handshake runs the hook, turning a panic into a refusal.
func (s *Server[I]) handshake(r *http.Request) (id I, e *mount.Error) {
	defer func() {
		if p := recover(); p != nil {
			s.report(nil, fmt.Errorf("realtime: Handshake panicked: %v", p))
			e = mount.NewError(codeInternal, "")
		}
	}()
	id, err := s.opts.Handshake(r)
	if err == nil {
		return id, nil
	}
	if me, ok := mount.AsError(err); ok {
		return id, me
	}
	return id, &mount.Error{Code: mount.CodeUnauthorized, Message: registryMessage(mount.CodeUnauthorized)}
}

// originAllowed: no Origin (not a browser) passes; otherwise the
// allow-list, or same-origin when the list is empty.
func (s *Server[I]) originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	if len(s.opts.AllowedOrigins) > 0 {
		for _, a := range s.opts.AllowedOrigins {
			if a == "*" || strings.EqualFold(strings.TrimSuffix(a, "/"), origin) {
				return true
			}
		}
		return false
	}
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}

// start registers an upgraded connection and starts its read loop. The
// handler goroutine returns at once, so net/http's per-request state (its
// buffers, the request) is released: an idle connection keeps only what
// it needs.
func (s *Server[I]) start(ws *websocket.Conn, identity I, principal *mount.Principal) {
	c := &Conn[I]{srv: s, ws: ws, identity: identity, id: "c" + strconv.FormatUint(s.nextID.Add(1), 10)}
	c.cond.L = &c.mu
	c.lastSeen.Store(time.Now().UnixNano())
	ws.SetReadLimit(s.opts.MaxFrameBytes)
	ws.SetPongHandler(c.pong)
	ws.SetCloseHandler(c.peerClosed)
	ws.SetPingHandler(c.peerPinged)
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(CloseGoingAway, "server shutting down"), time.Now().Add(s.opts.CloseTimeout))
		_ = ws.Close()
		return
	}
	c.ctx, c.cancel = context.WithCancel(s.ctx)
	if principal != nil {
		c.ctx = mount.WithPrincipal(c.ctx, principal)
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	if s.pingStop == nil && s.opts.PingInterval > 0 {
		s.pingStop, s.pingDone = make(chan struct{}), make(chan struct{})
		go s.pingLoop(s.pingStop, s.pingDone)
	}
	s.mu.Unlock()
	s.stats.accepted.Add(1)
	go readFrames(ws, c)
}

// pingLoop pings every connection each interval (one goroutine per
// server, not a timer per connection) and closes the ones that have been
// silent for two.
func (s *Server[I]) pingLoop(stop, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(s.opts.PingInterval)
	defer t.Stop()
	var conns []*Conn[I]
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			conns = conns[:0]
			s.mu.RLock()
			for c := range s.conns {
				conns = append(conns, c)
			}
			s.mu.RUnlock()
			silent := now.Add(-2 * s.opts.PingInterval).UnixNano()
			for _, c := range conns {
				if c.lastSeen.Load() < silent {
					c.kill()
					continue
				}
				_ = c.enqueue(outFrame{ping: true})
			}
			clear(conns)
		}
	}
}

// Emit sends a serverToClient event to every connection of every
// instance. The arguments are validated first: a mismatch is a
// REALTIME_CONTRACT_VIOLATION error and nothing is sent. A broker failure
// is a SERVICE_UNAVAILABLE error.
func (s *Server[I]) Emit(ctx context.Context, event string, args ...any) error {
	return s.publish(ctx, topicAll(s.contract.name), event, args)
}

// Room is an emit-only target: the members of one room on every instance.
type Room[I any] struct {
	s    *Server[I]
	name string
}

// Room returns the room called name. Rooms need no declaration; a room is
// empty until a connection joins it.
func (s *Server[I]) Room(name string) Room[I] { return Room[I]{s: s, name: name} }

// Name returns the room's name.
func (r Room[I]) Name() string { return r.name }

// Emit sends a serverToClient event to every member of the room on every
// instance, validated first like [Server.Emit].
func (r Room[I]) Emit(ctx context.Context, event string, args ...any) error {
	return r.s.publish(ctx, topicRoom(r.s.contract.name, r.name), event, args)
}

func (s *Server[I]) publish(ctx context.Context, topic, event string, args []any) error {
	spec, err := s.contract.outbound(ServerOutbound, s.contract.s2c, event, false)
	if err != nil {
		return err
	}
	raw, issues := spec.encodeArgs(args, s.opts.MaxDepth)
	if issues != nil {
		return s.contract.violation(event, ServerOutbound, PhaseArguments, ReasonInvalidArguments, FaultLocal, issues).Err
	}
	msg := appendEventFrame(make([]byte, 0, len(raw)+len(event)+40), 0, event, raw)
	if err := s.broker.Publish(ctx, topic, msg); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return mount.Errorf(codeServiceUnavailable, "realtime broker: %v", err).WithCause(err)
	}
	return nil
}

func (s *Server[I]) deliverAll(msg []byte) {
	pm, err := websocket.NewPreparedMessage(websocket.TextMessage, msg)
	if err != nil {
		s.report(nil, fmt.Errorf("realtime: preparing a broadcast frame: %w", err))
		return
	}
	s.mu.RLock()
	claimed := s.claim(maps.Keys(s.conns), len(s.conns), pm)
	s.mu.RUnlock()
	s.sweep(claimed, pm)
}

func (s *Server[I]) deliverRoom(room string) func([]byte) {
	return func(msg []byte) {
		pm, err := websocket.NewPreparedMessage(websocket.TextMessage, msg)
		if err != nil {
			s.report(nil, fmt.Errorf("realtime: preparing a frame for room %q: %w", room, err))
			return
		}
		s.mu.RLock()
		var claimed []*Conn[I]
		if rs := s.rooms[room]; rs != nil {
			claimed = s.claim(maps.Keys(rs.members), len(rs.members), pm)
		}
		s.mu.RUnlock()
		s.sweep(claimed, pm)
	}
}

// claim hands pm to every connection: a busy one queues it behind what
// it is writing; an idle one is claimed for the sweep, which writes to it
// directly.
func (s *Server[I]) claim(conns iter.Seq[*Conn[I]], n int, pm *websocket.PreparedMessage) []*Conn[I] {
	claimed := make([]*Conn[I], 0, n)
	for c := range conns {
		if c.claimOrQueue(pm) {
			claimed = append(claimed, c)
		}
	}
	return claimed
}

// join adds c to room, subscribing this instance to the room's topic when
// c is its first local member. The subscription (a broker round trip) is
// made without holding the server's lock, so deliveries and other joins
// go on meanwhile; joiners of a room being subscribed wait for it.
func (s *Server[I]) join(c *Conn[I], room string) error {
	for {
		s.mu.Lock()
		c.mu.Lock()
		closed := c.closed
		_, in := c.rooms[room]
		c.mu.Unlock()
		if closed || in {
			s.mu.Unlock()
			if closed {
				return requestDisconnected("join "+room, false)
			}
			return nil
		}
		rs := s.rooms[room]
		if rs != nil && rs.ready != nil {
			ready := rs.ready
			s.mu.Unlock()
			<-ready
			continue
		}
		if rs != nil {
			s.addMemberLocked(rs, c, room)
			s.mu.Unlock()
			return nil
		}
		rs = &roomState[I]{members: map[*Conn[I]]struct{}{}, ready: make(chan struct{})}
		s.rooms[room] = rs
		s.mu.Unlock()

		unsub, err := s.broker.Subscribe(topicRoom(s.contract.name, room), s.deliverRoom(room))
		s.mu.Lock()
		close(rs.ready)
		rs.ready = nil
		if err != nil {
			delete(s.rooms, room)
			s.mu.Unlock()
			return mount.Errorf(codeServiceUnavailable, "realtime broker: joining room %q: %v", room, err).WithCause(err)
		}
		rs.unsub = unsub
		c.mu.Lock()
		closed = c.closed
		c.mu.Unlock()
		if closed {
			// c went away while the room was being subscribed.
			delete(s.rooms, room)
			s.mu.Unlock()
			_ = unsub()
			return requestDisconnected("join "+room, false)
		}
		s.addMemberLocked(rs, c, room)
		s.mu.Unlock()
		return nil
	}
}

func (s *Server[I]) addMemberLocked(rs *roomState[I], c *Conn[I], room string) {
	rs.members[c] = struct{}{}
	c.mu.Lock()
	if c.rooms == nil {
		c.rooms = map[string]struct{}{}
	}
	c.rooms[room] = struct{}{}
	c.mu.Unlock()
}

// leave removes c from rooms; s.mu is held by the caller.
func (s *Server[I]) leaveLocked(c *Conn[I], rooms []string) {
	for _, room := range rooms {
		rs := s.rooms[room]
		if rs == nil || rs.ready != nil {
			continue
		}
		delete(rs.members, c)
		if len(rs.members) == 0 {
			delete(s.rooms, room)
			if err := rs.unsub(); err != nil {
				s.report(nil, fmt.Errorf("realtime: leaving room %q: %w", room, err))
			}
		}
	}
}

func (s *Server[I]) remove(c *Conn[I], rooms []string) {
	s.mu.Lock()
	delete(s.conns, c)
	s.leaveLocked(c, rooms)
	s.mu.Unlock()
}

// report hands an error to OnError, if any; a panicking hook is ignored
// so that it cannot break the transport.
func (s *Server[I]) report(c *Conn[I], err error) {
	if s.opts.OnError == nil {
		return
	}
	defer func() { _ = recover() }()
	s.opts.OnError(c, err)
}

// Shutdown stops accepting handshakes (503), closes every connection with
// 1001 after the frames already queued for it, and waits until the
// connections and their handlers are done or ctx ends. When ctx ends
// first, the remaining connections are closed without a close handshake,
// handler contexts are cancelled and ctx's error is returned. Pending
// requests fail with REALTIME_REQUEST_DISCONNECTED.
func (s *Server[I]) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	already := s.closing
	s.closing = true
	conns := make([]*Conn[I], 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	stop, done := s.pingStop, s.pingDone
	s.pingStop = nil
	s.mu.Unlock()
	if !already && stop != nil {
		close(stop)
		<-done
	}
	for _, c := range conns {
		c.startClose(CloseGoingAway, "server shutting down", false)
	}
	finished := make(chan struct{})
	go func() { s.wg.Wait(); close(finished) }()
	var err error
	select {
	case <-finished:
	case <-ctx.Done():
		err = ctx.Err()
		s.cancel()
		s.mu.RLock()
		for c := range s.conns {
			c.kill()
		}
		s.mu.RUnlock()
		for _, c := range conns {
			c.kill()
		}
	}
	s.cancel()
	if !already {
		s.mu.Lock()
		unsubAll := s.unsubAll
		s.unsubAll = nil
		s.mu.Unlock()
		if unsubAll != nil {
			if uerr := unsubAll(); uerr != nil && err == nil {
				err = uerr
			}
		}
		if s.ownsBkr {
			_ = s.broker.(*MemoryBroker).Close()
		}
	}
	return err
}
