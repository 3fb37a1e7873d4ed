package realtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/goleak"

	"stitchkit.dev/stitchkit/internal/graphfixture"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
	"stitchkit.dev/stitchkit/pkg/realtime"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// compileCUE loads the compiled fixture of a contract file: the graph.json
// beside it (internal/graphfixture; pkg/compile keeps it fresh).
func compileCUE(t testing.TB, path string) *graph.Graph {
	t.Helper()
	return graphfixture.Load(t, filepath.Dir(path))
}

func chatContract(t testing.TB) *realtime.Contract {
	t.Helper()
	c, err := realtime.NewContract(projecttest.New(t, compileCUE(t, "testdata/chat/chat.cue"), nil), "chat")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// harness is one server on a loopback httptest server.
type harness struct {
	t    testing.TB
	srv  *realtime.Server[string]
	hs   *httptest.Server
	url  string
	rej  chan realtime.Rejection
	errs chan error
	// calls counts handler invocations per event.
	calls sync.Map // event → *atomic.Int64
	// sockBuf, when not 0, is the kernel send and receive buffer size of
	// both ends of every connection (see newHarnessSockBuf).
	sockBuf int
}

// newHarness starts a server for c; configure may set options and
// handlers before it serves. Handlers registered through h.handle are
// counted.
func newHarness(t testing.TB, c *realtime.Contract, opts *realtime.Options[string]) *harness {
	t.Helper()
	return newHarnessSockBuf(t, c, opts, 0)
}

// newHarnessSockBuf is newHarness whose connections, server end (every
// accepted socket) and raw client end alike, have kernel socket buffers of
// sockBuf bytes (0: the system's, which on loopback grow to megabytes).
// A test that must fill the socket buffers then does so with a payload of
// a few hundred KiB, not tens of MiB: the same property at a cost that
// does not depend on the machine's speed.
func newHarnessSockBuf(t testing.TB, c *realtime.Contract, opts *realtime.Options[string], sockBuf int) *harness {
	t.Helper()
	h := &harness{t: t, rej: make(chan realtime.Rejection, 1024), errs: make(chan error, 1024), sockBuf: sockBuf}
	var o realtime.Options[string]
	if opts != nil {
		o = *opts
	}
	userRejected, userErr := o.OnRejected, o.OnError
	o.OnRejected = func(c *realtime.Conn[string], r realtime.Rejection) {
		select {
		case h.rej <- r:
		default:
		}
		if userRejected != nil {
			userRejected(c, r)
		}
	}
	o.OnError = func(c *realtime.Conn[string], err error) {
		select {
		case h.errs <- err:
		default:
		}
		if userErr != nil {
			userErr(c, err)
		}
	}
	srv, err := realtime.NewServer(c, &o)
	if err != nil {
		t.Fatal(err)
	}
	h.srv = srv
	mux := http.NewServeMux()
	mux.Handle("/realtime/chat", srv)
	h.hs = httptest.NewUnstartedServer(mux)
	if sockBuf > 0 {
		h.hs.Listener = sockBufListener{h.hs.Listener, sockBuf}
	}
	h.hs.Start()
	h.url = "ws" + strings.TrimPrefix(h.hs.URL, "http") + "/realtime/chat"
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		h.hs.Close()
	})
	return h
}

// handle registers a counted handler.
func (h *harness) handle(event string, fn realtime.Handler[string]) {
	h.t.Helper()
	n := &atomic.Int64{}
	h.calls.Store(event, n)
	if err := h.srv.Handle(event, func(ctx context.Context, c *realtime.Conn[string], a realtime.Args) (any, error) {
		n.Add(1)
		return fn(ctx, c, a)
	}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) callCount(event string) int64 {
	if n, ok := h.calls.Load(event); ok {
		return n.(*atomic.Int64).Load()
	}
	return 0
}

func (h *harness) dial(t testing.TB, c *realtime.Contract, opts *realtime.DialOptions) *realtime.Client {
	t.Helper()
	if c == nil {
		c = h.srv.Contract()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cl, err := realtime.Dial(ctx, h.url, c, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// raw dials with gorilla directly, offering the subprotocol: a peer that
// can send anything.
func (h *harness) raw(t testing.TB) *websocket.Conn {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{realtime.Subprotocol}, HandshakeTimeout: 5 * time.Second}
	if h.sockBuf > 0 {
		d.NetDialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return c, setSockBuf(c, h.sockBuf)
		}
	}
	ws, _, err := d.Dial(h.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.Close() })
	return ws
}

// sockBufListener sets the socket buffers of each connection it accepts.
type sockBufListener struct {
	net.Listener
	size int
}

func (l sockBufListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if err := setSockBuf(c, l.size); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func setSockBuf(c net.Conn, size int) error {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return fmt.Errorf("not a TCP connection: %T", c)
	}
	if err := tc.SetReadBuffer(size); err != nil {
		return err
	}
	return tc.SetWriteBuffer(size)
}

// recv returns the next value from ch, or fails the test, naming what it
// waited for, after 10 s (what it waits for takes milliseconds).
func recv[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("waited 10s for %s", what)
	}
	var zero T
	return zero
}

// nextRejection waits for a reported rejection.
func (h *harness) nextRejection(t testing.TB) realtime.Rejection {
	t.Helper()
	select {
	case r := <-h.rej:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("no rejection reported")
	}
	return realtime.Rejection{}
}

func (h *harness) noRejection(t testing.TB) {
	t.Helper()
	select {
	case r := <-h.rej:
		t.Fatalf("unexpected rejection %+v", r)
	default:
	}
}

// readJSON reads one text frame as a generic JSON object.
func readJSON(t testing.TB, ws *websocket.Conn) map[string]any {
	t.Helper()
	_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	typ, data, err := ws.ReadMessage()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if typ != websocket.TextMessage {
		t.Fatalf("frame type %d", typ)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("frame %s: %v", data, err)
	}
	return m
}

func writeText(t testing.TB, ws *websocket.Conn, s string) {
	t.Helper()
	if err := ws.WriteMessage(websocket.TextMessage, []byte(s)); err != nil {
		t.Fatal(err)
	}
}

// closeCode reads until the connection ends and returns the close code.
func closeCode(t testing.TB, ws *websocket.Conn) int {
	t.Helper()
	_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		_, _, err := ws.ReadMessage()
		if err == nil {
			continue
		}
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			return ce.Code
		}
		t.Fatalf("connection ended without a close frame: %v", err)
	}
}

func mustCode(t testing.TB, err error, code mount.Code) *mount.Error {
	t.Helper()
	me, ok := mount.AsError(err)
	if !ok {
		t.Fatalf("error %v (%T) is not a *mount.Error, want %s", err, err, code)
	}
	if me.Code != code {
		t.Fatalf("code %s (%v), want %s", me.Code, err, code)
	}
	return me
}

func canon(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	_ = json.Unmarshal(b, &x)
	out, err := graph.Canonical(x)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func rejectionKey(r realtime.Rejection) string {
	return string(r.Direction) + "/" + string(r.Phase) + "/" + string(r.Reason) + "/" + string(r.Fault)
}

func ctx5(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}
