package realtime_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"stitchkit.dev/stitchkit/pkg/realtime"
)

// fakeServer is a raw gorilla server that speaks the subprotocol and
// does whatever the test scripts: the peer that can send anything to a
// client.
type fakeServer struct {
	url   string
	conns chan *websocket.Conn
}

func newFakeServer(t *testing.T, subprotocol string) *fakeServer {
	t.Helper()
	fs := &fakeServer{conns: make(chan *websocket.Conn, 4)}
	up := websocket.Upgrader{Subprotocols: []string{subprotocol}}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		fs.conns <- ws
	}))
	t.Cleanup(func() {
		hs.Close()
		close(fs.conns)
		for ws := range fs.conns {
			ws.Close()
		}
	})
	fs.url = "ws" + strings.TrimPrefix(hs.URL, "http")
	return fs
}

func (fs *fakeServer) accept(t *testing.T) *websocket.Conn {
	t.Helper()
	select {
	case ws := <-fs.conns:
		t.Cleanup(func() { ws.Close() })
		return ws
	case <-time.After(5 * time.Second):
		t.Fatal("no connection")
	}
	return nil
}

// dialFake connects a client to the fake server and records its
// rejections.
func dialFake(t *testing.T, fs *fakeServer) (*realtime.Client, *websocket.Conn, chan realtime.Rejection) {
	t.Helper()
	cl, err := realtime.Dial(ctx5(t), fs.url, chatContract(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	rej := make(chan realtime.Rejection, 16)
	cl.OnRejected(func(r realtime.Rejection) { rej <- r })
	return cl, fs.accept(t), rej
}

func nextRej(t *testing.T, ch chan realtime.Rejection) realtime.Rejection {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("no rejection")
	}
	return realtime.Rejection{}
}

// TestClientInbound: what a client does with each frame a server may
// send.
func TestClientInbound(t *testing.T) {
	fs := newFakeServer(t, realtime.Subprotocol)
	cl, ws, rej := dialFake(t, fs)
	var calls atomic.Int64
	got := make(chan string, 8)
	if _, err := cl.On("message", func(_ context.Context, a realtime.Args) (any, error) {
		calls.Add(1)
		got <- string(a.JSON())
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.On("confirm", func(_ context.Context, a realtime.Args) (any, error) {
		calls.Add(1)
		var q struct{ Question string }
		_ = a.Decode(&q)
		if q.Question == "bad" {
			return map[string]any{"answer": "maybe"}, nil
		}
		return map[string]any{"answer": "yes"}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.On("confirm", func(context.Context, realtime.Args) (any, error) { return nil, nil }); err == nil {
		t.Fatal("a second handler for an event with an ack was accepted")
	}
	if _, err := cl.On("say", func(context.Context, realtime.Args) (any, error) { return nil, nil }); err == nil {
		t.Fatal("On accepted a clientToServer event")
	}

	writeText(t, ws, `{"type":"event","event":"message","args":[{"text":"hi","from":"s"}]}`)
	if g := recv(t, got, "the message handler"); g != `[{"from":"s","text":"hi"}]` {
		t.Fatalf("args %s", g)
	}
	writeText(t, ws, `{"type":"event","id":1,"event":"confirm","args":[{"question":"ok?"}]}`)
	if f := readFrame(t, ws); f.Type != "ack" || f.ID != 1 || string(f.Ack) != `{"answer":"yes"}` {
		t.Fatalf("%+v", f)
	}

	before := calls.Load()
	cases := []struct {
		frame, key, answer string
	}{
		{`{"type":"event","event":"message","args":[{"text":"","from":"s"}]}`, "client-inbound/arguments/invalid-arguments/peer", ""},
		{`{"type":"event","id":2,"event":"confirm","args":[{}]}`, "client-inbound/arguments/invalid-arguments/peer", "invalid-arguments"},
		{`{"type":"event","id":3,"event":"nope","args":[]}`, "client-inbound/arguments/unknown-event/peer", "unknown-event"},
		{`{"type":"event","event":"confirm","args":[{"question":"x"}]}`, "client-inbound/acknowledgement/missing-acknowledgement/peer", ""},
		{`{"type":"event","id":4,"event":"message","args":[{"text":"a","from":"b"}]}`, "client-inbound/acknowledgement/unexpected-acknowledgement/peer", "unexpected-acknowledgement"},
	}
	for _, tc := range cases {
		writeText(t, ws, tc.frame)
		if r := nextRej(t, rej); rejectionKey(r) != tc.key {
			t.Fatalf("%s: %s, want %s", tc.frame, rejectionKey(r), tc.key)
		}
		if tc.answer != "" {
			if f := readFrame(t, ws); f.Type != "rejection" || f.Rejection["reason"] != tc.answer {
				t.Fatalf("%s: answer %+v", tc.frame, f)
			}
		}
	}
	if calls.Load() != before {
		t.Fatalf("a handler saw a rejected frame")
	}
	// The client's own ack is checked too: a local fault, answered scrubbed.
	writeText(t, ws, `{"type":"event","id":5,"event":"confirm","args":[{"question":"bad"}]}`)
	if r := nextRej(t, rej); rejectionKey(r) != "client-outbound/acknowledgement/invalid-acknowledgement-value/local" {
		t.Fatalf("%+v", r)
	}
	if f := readFrame(t, ws); f.Type != "rejection" || f.Rejection["issues"] != nil {
		t.Fatalf("%+v", f)
	}
	// A protocol error from the server closes the client with its code.
	writeText(t, ws, `{"type":"event","id":"x"}`)
	if got := closeCode(t, ws); got != realtime.CloseProtocolError {
		t.Fatalf("close %d", got)
	}
	recv(t, cl.Done(), "the client to end")
	if cl.Connected() {
		t.Fatal("still connected")
	}
}

// TestClientRequest covers every outcome of the client's Request.
func TestClientRequest(t *testing.T) {
	fs := newFakeServer(t, realtime.Subprotocol)
	say := map[string]any{"text": "hello"}
	answer := func(ws *websocket.Conn, format string) {
		go func() {
			f := readFrame(t, ws)
			writeText(t, ws, fmt.Sprintf(format, f.ID))
		}()
	}
	t.Run("ack", func(t *testing.T) {
		cl, ws, _ := dialFake(t, fs)
		answer(ws, `{"type":"ack","id":%d,"ack":{"n":3}}`)
		ack, err := cl.Request(ctx5(t), 0, "say", say)
		if err != nil || string(ack) != `{"n":3}` {
			t.Fatalf("%s %v", ack, err)
		}
	})
	t.Run("invalid acknowledgement", func(t *testing.T) {
		cl, ws, rej := dialFake(t, fs)
		answer(ws, `{"type":"ack","id":%d,"ack":{"n":-3}}`)
		_, err := cl.Request(ctx5(t), 0, "say", say)
		mustCode(t, err, realtime.CodeRequestInvalidAck)
		if r := nextRej(t, rej); rejectionKey(r) != "client-inbound/acknowledgement/invalid-acknowledgement-value/peer" {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("rejected by peer", func(t *testing.T) {
		cl, ws, rej := dialFake(t, fs)
		answer(ws, `{"type":"rejection","id":%d,"rejection":{"event":"say","reason":"invalid-arguments","message":"no","issues":[{"path":"/0/text","keyword":"maxLength","message":"too long"}]}}`)
		_, err := cl.Request(ctx5(t), 0, "say", say)
		me := mustCode(t, err, realtime.CodeRequestRejected)
		if me.Details["reason"] != "invalid-arguments" {
			t.Fatalf("%v", me.Details)
		}
		r := nextRej(t, rej)
		if rejectionKey(r) != "client-inbound/arguments/rejected-by-peer/local" || r.Err.Code != realtime.CodeContractViolation || len(r.Issues) != 1 {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		cl, _, _ := dialFake(t, fs)
		_, err := cl.Request(ctx5(t), 30*time.Millisecond, "say", say)
		mustCode(t, err, realtime.CodeRequestTimeout)
		if !cl.Connected() {
			t.Fatal("a timeout disconnected the client")
		}
	})
	t.Run("in-flight disconnect", func(t *testing.T) {
		cl, ws, _ := dialFake(t, fs)
		changes := make(chan bool, 2)
		cl.OnConnectionChange(func(up bool) { changes <- up })
		go func() {
			readFrame(t, ws)
			ws.Close()
		}()
		_, err := cl.Request(ctx5(t), 5*time.Second, "say", say)
		if me := mustCode(t, err, realtime.CodeRequestDisconnect); me.Details["sent"] != true {
			t.Fatalf("%v", me.Details)
		}
		if up := recv(t, changes, "a connection change"); up {
			t.Fatal("connection change true")
		}
	})
	t.Run("disconnected before invoking", func(t *testing.T) {
		cl, ws, _ := dialFake(t, fs)
		go func() { // answers the close handshake
			for {
				if _, _, err := ws.ReadMessage(); err != nil {
					return
				}
			}
		}()
		_ = cl.Close()
		_, err := cl.Request(ctx5(t), 0, "say", say)
		if me := mustCode(t, err, realtime.CodeRequestDisconnect); me.Details["sent"] != false {
			t.Fatalf("%v", me.Details)
		}
		mustCode(t, cl.Emit(ctx5(t), "typing", true), realtime.CodeRequestDisconnect)
	})
	t.Run("local violations", func(t *testing.T) {
		cl, _, _ := dialFake(t, fs)
		ctx := ctx5(t)
		for name, err := range map[string]error{
			"client-outbound/arguments/invalid-arguments/local":                cl.Emit(ctx, "typing", "yes"),
			"client-outbound/arguments/unknown-event/local":                    cl.Emit(ctx, "message", 1),
			"client-outbound/acknowledgement/missing-acknowledgement/local":    cl.Emit(ctx, "say", say),
			"client-outbound/acknowledgement/unexpected-acknowledgement/local": func() error { _, err := cl.Request(ctx, 0, "typing", true); return err }(),
		} {
			d := mustCode(t, err, realtime.CodeContractViolation).Details
			if got := d["direction"].(string) + "/" + d["phase"].(string) + "/" + d["reason"].(string) + "/" + d["fault"].(string); got != name {
				t.Errorf("%s, want %s", got, name)
			}
		}
	})
	t.Run("caller cancels", func(t *testing.T) {
		cl, _, _ := dialFake(t, fs)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(20*time.Millisecond, cancel)
		if _, err := cl.Request(ctx, 5*time.Second, "say", say); !errors.Is(err, context.Canceled) {
			t.Fatalf("%v", err)
		}
	})
}

func TestDialRefusesServerWithoutSubprotocol(t *testing.T) {
	fs := newFakeServer(t, "something.else")
	_, err := realtime.Dial(ctx5(t), fs.url, chatContract(t), nil)
	if err == nil || !strings.Contains(err.Error(), "did not select the subprotocol") {
		t.Fatalf("%v", err)
	}
	if ws := fs.accept(t); ws != nil {
		if got := closeCode(t, ws); got != realtime.CloseProtocolError {
			t.Fatalf("close %d", got)
		}
	}
}

// TestClientAgainstNewerServer: a client one generation behind the
// server. The server's contract accepts longer texts; the client's older
// contract refuses them locally, and a server that grew stricter rejects
// the client's data with an envelope the client reports as
// rejected-by-peer.
func TestClientAgainstStricterServer(t *testing.T) {
	strict := compileCUE(t, "testdata/chatstrict/chat.cue") // chat.cue with strings.MaxRunes(3)
	sc, err := realtime.NewContract(projecttest.New(t, strict, nil), "chat")
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, sc, nil)
	h.handle("say", func(context.Context, *realtime.Conn[string], realtime.Args) (any, error) {
		return map[string]any{"n": 1}, nil
	})
	cl := h.dial(t, chatContract(t), nil)
	rej := make(chan realtime.Rejection, 4)
	cl.OnRejected(func(r realtime.Rejection) { rej <- r })
	_, err = cl.Request(ctx5(t), 0, "say", map[string]any{"text": "too long for the new server"})
	me := mustCode(t, err, realtime.CodeRequestRejected)
	if me.Details["reason"] != "invalid-arguments" {
		t.Fatalf("%v", me.Details)
	}
	if r := nextRej(t, rej); rejectionKey(r) != "client-inbound/arguments/rejected-by-peer/local" {
		t.Fatalf("%+v", r)
	}
	if r := h.nextRejection(t); rejectionKey(r) != "server-inbound/arguments/invalid-arguments/peer" {
		t.Fatalf("%+v", r)
	}
	if h.callCount("say") != 0 {
		t.Fatal("the handler saw the rejected frame")
	}
}

// TestClientCloseBounded: Close returns within DefaultCloseTimeout (and a
// margin for a loaded machine) even when the server never reads, so that
// a data write is stuck on a full socket for its whole write timeout and
// the close frame cannot follow it.
func TestClientCloseBounded(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	up := websocket.Upgrader{Subprotocols: []string{realtime.Subprotocol}}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		if tc, ok := ws.NetConn().(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(4 << 10)
		}
		<-stop // never reads, never answers the close frame (the deferred close(stop) ends it)
	}))
	defer hs.Close()
	small := &websocket.Dialer{NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetWriteBuffer(4 << 10)
		}
		return c, err
	}}
	cl, err := realtime.Dial(ctx5(t), "ws"+strings.TrimPrefix(hs.URL, "http"), chatContract(t),
		&realtime.DialOptions{Dialer: small, WriteTimeout: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	// Emit until one write has been stuck for half a second: with 4 KiB
	// socket buffers and a peer that never reads, the socket is full.
	var inWrite atomic.Int64 // unix nanoseconds the current Emit started; 0 between
	emitted := make(chan error, 1)
	go func() {
		for {
			inWrite.Store(time.Now().UnixNano())
			if err := cl.Emit(context.Background(), "typing", true); err != nil {
				inWrite.Store(0)
				emitted <- err
				return
			}
		}
	}()
	waitFor(t, func() bool {
		s := inWrite.Load()
		return s != 0 && time.Since(time.Unix(0, s)) > 500*time.Millisecond
	})

	start := time.Now()
	closed := make(chan error, 1)
	go func() { closed <- cl.Close() }()
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return in 30s (it waits behind the stuck write)")
	}
	// The stuck write would hold Close for its 10-minute timeout; the
	// margin above DefaultCloseTimeout is for a loaded machine.
	if d := time.Since(start); d > realtime.DefaultCloseTimeout+8*time.Second {
		t.Fatalf("Close took %s, want about %s", d, realtime.DefaultCloseTimeout)
	}
	select {
	case <-cl.Done():
	default:
		t.Fatal("Close returned before the connection ended")
	}
	mustCode(t, recv(t, emitted, "the stuck emit to fail"), realtime.CodeRequestDisconnect) // the stuck write failed with the connection
}
