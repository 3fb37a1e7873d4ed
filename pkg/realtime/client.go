package realtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// DialOptions configures [Dial]; nil means defaults.
type DialOptions struct {
	// Header is sent with the handshake (Authorization, Cookie, Origin…).
	Header http.Header
	// Dialer dials the connection; nil means a dialer with a 10 s
	// handshake timeout. Its Subprotocols are replaced by [Subprotocol].
	Dialer *websocket.Dialer
	// RequestTimeout is Request's timeout when the call gives none
	// (default 10 s).
	RequestTimeout time.Duration
	// MaxFrameBytes bounds one inbound frame (default 64 KiB).
	MaxFrameBytes int64
	// MaxDepth bounds the nesting of inbound values (default
	// validate.DefaultMaxDepth).
	MaxDepth int
	// WriteTimeout bounds each frame write (default 10 s).
	WriteTimeout time.Duration
	// OnError hears handler errors on events without an ack, recovered
	// panics and failed replies.
	OnError func(error)
}

// Client is a connection to a realtime server made by [Dial]: a [Binding]
// plus the lifecycle (Close, Done) that a bound foreign connection does
// not have. Frames are validated in both directions.
type Client struct {
	*Bound
	t *wsTransport
}

// Dial connects to the realtime endpoint at url (ws:// or wss://) for
// contract c. A refused handshake is a *mount.Error with the server's code
// and HTTP status (401, 403, 404, …).
func Dial(ctx context.Context, url string, c *Contract, opts *DialOptions) (*Client, error) {
	var o DialOptions
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
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second, Proxy: http.ProxyFromEnvironment}
	if o.Dialer != nil {
		d = *o.Dialer
	}
	d.Subprotocols = []string{Subprotocol}
	ws, resp, err := d.DialContext(ctx, url, o.Header)
	if err != nil {
		if errors.Is(err, websocket.ErrBadHandshake) && resp != nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			return nil, handshakeError(resp.StatusCode, body).WithCause(err)
		}
		return nil, fmt.Errorf("realtime: dial %s: %w", url, err)
	}
	if ws.Subprotocol() != Subprotocol {
		_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(CloseProtocolError, "no subprotocol"), time.Now().Add(time.Second))
		_ = ws.Close()
		return nil, fmt.Errorf("realtime: %s did not select the subprotocol %s (got %q)", url, Subprotocol, ws.Subprotocol())
	}
	ws.SetReadLimit(o.MaxFrameBytes)
	ws.SetCloseHandler(func(code int, _ string) error { return answerClose(ws, code, DefaultCloseTimeout) })
	ws.SetPingHandler(func(data string) error { return answerPing(ws, data, o.WriteTimeout) })
	t := &wsTransport{ws: ws, writeTimeout: o.WriteTimeout, maxDepth: o.MaxDepth, connected: true,
		subs: map[*inSub]struct{}{}, changes: map[*changeSub]struct{}{}, done: make(chan struct{})}
	b := Bind(t, c, &BindOptions{RequestTimeout: o.RequestTimeout, MaxDepth: o.MaxDepth, OnError: o.OnError})
	go t.readLoop()
	return &Client{Bound: b, t: t}, nil
}

// Close closes the connection with 1000: it sends the close frame (a
// write in progress does not hold it up) and waits at most
// DefaultCloseTimeout for the server's answer, then closes the network
// connection whether or not the server answered. It then waits for running
// handlers to return; their context is cancelled.
func (c *Client) Close() error {
	err := c.t.close(CloseNormal, "", DefaultCloseTimeout)
	c.Unbind()
	return err
}

// Done is closed when the connection has ended, whichever side closed it.
func (c *Client) Done() <-chan struct{} { return c.t.done }

// Err says why the connection ended (a *websocket.CloseError carries the
// server's close code, 1001 on shutdown); nil while it is open.
func (c *Client) Err() error {
	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	return c.t.err
}

// wsTransport is the raw [Transport] over one gorilla connection.
type wsTransport struct {
	ws           *websocket.Conn
	writeTimeout time.Duration
	maxDepth     int
	wmu          sync.Mutex // gorilla allows one writer at a time (control frames excepted)

	mu        sync.Mutex
	connected bool
	err       error
	pending   map[int64]chan wsAnswer
	nextID    int64
	subs      map[*inSub]struct{}
	changes   map[*changeSub]struct{}
	done      chan struct{}
}

type inSub struct{ fn func(Inbound) }
type changeSub struct{ fn func(bool) }

type wsAnswer struct {
	reply        Reply
	disconnected bool
}

func (t *wsTransport) Connected() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.connected
}

func (t *wsTransport) Subscribe(fn func(Inbound)) func() {
	s := &inSub{fn: fn}
	t.mu.Lock()
	t.subs[s] = struct{}{}
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		delete(t.subs, s)
		t.mu.Unlock()
	}
}

func (t *wsTransport) OnConnectionChange(fn func(bool)) func() {
	s := &changeSub{fn: fn}
	t.mu.Lock()
	t.changes[s] = struct{}{}
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		delete(t.changes, s)
		t.mu.Unlock()
	}
}

func (t *wsTransport) write(data []byte) error {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	_ = t.ws.SetWriteDeadline(time.Now().Add(t.writeTimeout))
	if err := t.ws.WriteMessage(websocket.TextMessage, data); err != nil {
		_ = t.ws.Close() // the read loop notices and reports the disconnect
		return fmt.Errorf("%w: %v", ErrDisconnected, err)
	}
	return nil
}

func (t *wsTransport) Send(ctx context.Context, event string, args json.RawMessage) error {
	if !t.Connected() {
		return ErrDisconnected
	}
	return t.write(appendEventFrame(nil, 0, event, args))
}

func (t *wsTransport) SendWithAck(ctx context.Context, event string, args json.RawMessage) (Reply, error) {
	ch := make(chan wsAnswer, 1)
	t.mu.Lock()
	if !t.connected {
		t.mu.Unlock()
		return Reply{}, ErrDisconnected
	}
	t.nextID++
	id := t.nextID
	if t.pending == nil {
		t.pending = map[int64]chan wsAnswer{}
	}
	t.pending[id] = ch
	t.mu.Unlock()
	if err := t.write(appendEventFrame(nil, id, event, args)); err != nil {
		t.forget(id)
		return Reply{}, err
	}
	var a wsAnswer
	select {
	case a = <-ch:
	case <-ctx.Done():
		if t.forget(id) {
			return Reply{}, ctx.Err()
		}
		a = <-ch
	}
	if a.disconnected {
		return Reply{}, ErrDisconnected
	}
	return a.reply, nil
}

func (t *wsTransport) forget(id int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.pending[id]; ok {
		delete(t.pending, id)
		return true
	}
	return false
}

func (t *wsTransport) readLoop() {
	var err error
	for {
		var typ int
		var data []byte
		typ, data, err = t.ws.ReadMessage()
		if err != nil {
			break
		}
		if typ != websocket.TextMessage {
			err = t.protocolClose(CloseUnsupportedData, "frames are JSON text")
			break
		}
		f, ferr := parseFrame(data, t.maxDepth)
		if ferr != nil {
			err = t.protocolClose(ferr.code, ferr.reason)
			break
		}
		switch f.typ {
		case FrameEvent:
			t.deliver(f)
		case FrameAck, FrameRejection:
			t.settle(f)
		}
	}
	t.mu.Lock()
	t.connected = false
	t.err = err
	pending := t.pending
	t.pending = nil
	changes := make([]*changeSub, 0, len(t.changes))
	for s := range t.changes {
		changes = append(changes, s)
	}
	t.mu.Unlock()
	_ = t.ws.Close()
	for _, ch := range pending {
		ch <- wsAnswer{disconnected: true}
	}
	for _, s := range changes {
		func() {
			defer func() { _ = recover() }()
			s.fn(false)
		}()
	}
	close(t.done)
}

func (t *wsTransport) protocolClose(code int, reason string) error {
	_ = t.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
	return &websocket.CloseError{Code: code, Text: reason}
}

func (t *wsTransport) deliver(f frame) {
	in := Inbound{Event: f.event}
	if f.args != nil {
		b, err := marshal(f.args)
		if err != nil {
			return // a decoded JSON value always marshals
		}
		in.Args = b
	}
	if f.id != 0 {
		id := f.id
		var once sync.Once
		in.Reply = func(r Reply) error {
			err := ErrDisconnected
			once.Do(func() {
				var frame []byte
				if r.Rejected != nil {
					frame = appendRejectionFrame(nil, id, *r.Rejected)
				} else {
					frame = appendAckFrame(nil, id, r.Ack)
				}
				err = t.write(frame)
			})
			return err
		}
	}
	t.mu.Lock()
	subs := make([]*inSub, 0, len(t.subs))
	for s := range t.subs {
		subs = append(subs, s)
	}
	t.mu.Unlock()
	for _, s := range subs {
		s.fn(in)
	}
}

func (t *wsTransport) settle(f frame) {
	t.mu.Lock()
	ch := t.pending[f.id]
	delete(t.pending, f.id)
	t.mu.Unlock()
	if ch == nil {
		return // late or unknown: ignored
	}
	var r Reply
	if f.typ == FrameRejection {
		r.Rejected = ptr(f.rejection)
	} else if f.hasAck {
		b, err := marshal(f.ack)
		if err == nil {
			r.Ack = b
		}
	}
	ch <- wsAnswer{reply: r}
}

func (t *wsTransport) close(code int, text string, wait time.Duration) error {
	start := time.Now()
	select {
	case <-t.done:
		return nil // already closed
	default:
	}
	// Not under wmu: gorilla lets WriteControl run beside a data write,
	// and a data write stuck on a full socket may hold wmu for the whole
	// write timeout. WriteControl waits for gorilla's own write lock only
	// until the deadline.
	err := t.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, text), time.Now().Add(wait))
	select {
	case <-t.done:
	case <-time.After(wait - time.Since(start)):
		_ = t.ws.Close()
		<-t.done
	}
	if errors.Is(err, websocket.ErrCloseSent) {
		return nil
	}
	return err
}

// answerClose is the close handler of both ends: it answers a peer's close
// frame with its code, giving the write up to timeout (gorilla's default
// handler gives it one second). It returns nil whatever the write did, so
// that the read loop ends with the peer's *websocket.CloseError; a failed
// answer (we had closed first, or the socket is gone) costs the peer only
// a clean close code.
func answerClose(ws *websocket.Conn, code int, timeout time.Duration) error {
	_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, ""), time.Now().Add(timeout))
	return nil
}

// answerPing is the client's ping handler. gorilla's default gives the pong
// one second, and a pong whose write outlives it (the goroutine was not
// run in time, or waited for the write lock behind a data write) ends the
// read loop with an i/o timeout: a loaded client would drop a healthy
// connection. This one gives the pong the write timeout and never fails
// the read loop: when pongs do not get through, the server's ping check
// closes the connection, and a broken socket fails the next write.
func answerPing(ws *websocket.Conn, data string, timeout time.Duration) error {
	_ = ws.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(timeout))
	return nil
}
