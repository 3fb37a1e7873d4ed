package realtime_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"stitchkit.dev/stitchkit/pkg/realtime"
)

// TestSlowConsumer: a client that stops reading fills its send queue and
// is closed with the configured code; other clients are unaffected.
func TestSlowConsumer(t *testing.T) {
	for _, code := range []int{realtime.CloseTryAgainLater, realtime.ClosePolicyViolation} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			o := realtime.Options[string]{SendQueue: 4, SlowConsumerCode: code, CloseTimeout: 10 * time.Second}
			cs := trackConns(&o)
			h := newHarness(t, chatContract(t), &o)
			slow := h.raw(t) // never reads until the end
			slowConn := cs.next(t)
			fast := h.dial(t, nil, nil)
			cs.next(t)
			got := inbox(t, fast)
			big := map[string]any{"text": strings.Repeat("x", 60<<10), "from": "srv"}
			var err error
			for i := 0; i < 10000 && err == nil; i++ {
				err = slowConn.Emit(ctx5(t), "message", big)
			}
			mustCode(t, err, realtime.CodeRequestDisconnect)
			if s := h.srv.Stats(); s.SlowConsumers != 1 {
				t.Fatalf("stats %+v", s)
			}
			if err := h.srv.Emit(ctx5(t), "message", map[string]any{"text": "still here", "from": "srv"}); err != nil {
				t.Fatal(err)
			}
			expect(t, got, "still here")
			if c := closeCode(t, slow); c != code {
				t.Fatalf("close %d, want %d", c, code)
			}
		})
	}
}

// TestShutdown: connections are closed with 1001 after their queued
// frames, pending requests fail as disconnected, new handshakes get 503,
// and nothing is left running (goleak in TestMain).
func TestShutdown(t *testing.T) {
	var o realtime.Options[string]
	cs := trackConns(&o)
	h := newHarness(t, chatContract(t), &o)
	cl := h.dial(t, nil, nil)
	conn := cs.next(t)
	got := inbox(t, cl)
	changes := make(chan bool, 1)
	cl.OnConnectionChange(func(up bool) { changes <- up })
	raw := h.raw(t)
	rawConn := cs.next(t)

	requestErr := make(chan error, 1)
	go func() {
		_, err := rawConn.Request(context.Background(), 10*time.Second, "confirm", map[string]any{"question": "?"})
		requestErr <- err
	}()
	readFrame(t, raw) // the request is in flight
	if err := conn.Emit(ctx5(t), "message", map[string]any{"text": "last words", "from": "srv"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		done <- h.srv.Shutdown(ctx)
	}()
	expect(t, got, "last words")
	recv(t, cl.Done(), "the client to end")
	var ce *websocket.CloseError
	if !errors.As(cl.Err(), &ce) || ce.Code != realtime.CloseGoingAway {
		t.Fatalf("client ended with %v", cl.Err())
	}
	if up := recv(t, changes, "a connection change"); up {
		t.Fatal("connection change says up")
	}
	if c := closeCode(t, raw); c != realtime.CloseGoingAway {
		t.Fatalf("raw client closed with %d", c)
	}
	if err := recv(t, done, "Shutdown to return"); err != nil {
		t.Fatal(err)
	}
	mustCode(t, recv(t, requestErr, "the pending request to fail"), realtime.CodeRequestDisconnect)
	status, body, _ := handshake(t, h.url, http.Header{"Sec-WebSocket-Protocol": {realtime.Subprotocol}})
	if status != 503 || errCode(body) != "SERVICE_UNAVAILABLE" {
		t.Fatalf("handshake after shutdown: %d %v", status, body)
	}
	if err := h.srv.Emit(ctx5(t), "message", map[string]any{"text": "x", "from": "y"}); err == nil {
		t.Fatal("emit after shutdown succeeded")
	} else {
		mustCode(t, err, "SERVICE_UNAVAILABLE")
	}
}

// TestShutdownDeadline: a peer that never answers the close frame is cut
// off when the shutdown context ends.
func TestShutdownDeadline(t *testing.T) {
	o := realtime.Options[string]{CloseTimeout: time.Minute}
	cs := trackConns(&o)
	h := newHarness(t, chatContract(t), &o)
	h.raw(t) // never reads, so never answers the close frame
	cs.next(t)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := h.srv.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown: %v", err)
	}
	// CloseTimeout is a minute: anything near it means the deadline was
	// ignored; the margin is for a loaded machine.
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("Shutdown took %s", d)
	}
	waitFor(t, func() bool { return h.srv.Stats().Connections == 0 })
}

// TestPing: a peer that answers pings stays; one that never reads (so
// never pongs) is dropped after two intervals.
//
// The interval is long enough that a loaded CI machine, which may not run
// the answering client for a while, does not make its pong late: the
// server drops a connection after two silent intervals, so the answer has
// a second (a pong takes well under a millisecond idle: a hundred times
// slower still fits). The clock starts before the silent peer dials, so
// the lower bound holds however late the test goroutine runs. The live
// client is then watched for three more intervals: an absence check,
// which a slow machine can only make weaker, never fail.
func TestPing(t *testing.T) {
	const interval = 500 * time.Millisecond
	o := realtime.Options[string]{PingInterval: interval}
	cs := trackConns(&o)
	h := newHarness(t, chatContract(t), &o)
	alive := h.dial(t, nil, nil) // its read loop answers pings
	aliveConn := cs.next(t)
	start := time.Now()
	h.raw(t)
	deadConn := cs.next(t)
	waitFor(t, func() bool { return !deadConn.Connected() })
	if d := time.Since(start); d < interval {
		t.Fatalf("the silent peer was dropped after %s, before two intervals of silence", d)
	}
	time.Sleep(3 * interval)
	if !aliveConn.Connected() || !alive.Connected() {
		t.Fatal("a client answering pings was dropped")
	}
}

// TestBroadcastPastStalledConnections: connections whose sockets are full
// (their clients stopped reading) must not hold up a broadcast to the
// others. Each broadcast sweep has one worker per CPU; when they are all
// stuck in writes, more join, so the reading clients keep getting every
// frame promptly.
func TestBroadcastPastStalledConnections(t *testing.T) {
	h := newHarness(t, chatContract(t), &realtime.Options[string]{SendQueue: 1000, WriteTimeout: time.Minute, CloseTimeout: 100 * time.Millisecond})
	for range 4 {
		h.raw(t) // never reads
	}
	// The reading clients are raw: validating megabytes of text under the
	// race detector would be slower than what this test measures.
	var fast []chan int
	for range 4 {
		ws := h.raw(t)
		ch := make(chan int, 64)
		go func() {
			for {
				_, data, err := ws.ReadMessage()
				if err != nil {
					return
				}
				ch <- len(data)
			}
		}()
		fast = append(fast, ch)
	}
	waitFor(t, func() bool { return h.srv.Stats().Connections == 8 })
	big := strings.Repeat("x", 256<<10)
	for i := range 64 { // 16 MiB per stalled socket: far beyond what loopback buffers hold
		start := time.Now()
		if err := h.srv.Emit(ctx5(t), "message", map[string]any{"text": big, "from": fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
		for _, ch := range fast {
			select {
			case n := <-ch:
				if n < len(big) {
					t.Fatalf("broadcast %d: got %d bytes", i, n)
				}
			// A sweep stalled behind a full socket would wait out the write
			// timeout (a minute); 10 s leaves a loaded machine its margin.
			case <-time.After(10 * time.Second):
				t.Fatalf("broadcast %d did not reach a reading client in 10s (stalled behind a full socket)", i)
			}
		}
		if d := time.Since(start); d > time.Second {
			t.Logf("broadcast %d took %s", i, d)
		}
	}
}

// TestPeerClose: the server answers a client's close frame with the
// client's code, also when the frame had to wait behind a full inbox: it
// is read (and answered) once a handler finishes, and until then the
// connection is open.
func TestPeerClose(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	disconnected := make(chan error, 4)
	o := realtime.Options[string]{Inbox: 1, OnDisconnect: func(_ *realtime.Conn[string], err error) { disconnected <- err }}
	cs := trackConns(&o)
	h := newHarness(t, chatContract(t), &o)
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	h.handle("typing", func(context.Context, *realtime.Conn[string], realtime.Args) (any, error) { return nil, nil })
	h.handle("say", func(context.Context, *realtime.Conn[string], realtime.Args) (any, error) {
		<-release // a handler held by the test; released at the latest by its cleanup
		return map[string]any{"n": 1}, nil
	})
	peerCode := func(err error) int {
		var ce *websocket.CloseError
		if !errors.As(err, &ce) {
			t.Fatalf("disconnected with %v, want the peer's close frame", err)
		}
		return ce.Code
	}
	sendClose := func(ws *websocket.Conn, code int) {
		if err := ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, "bye"), time.Now().Add(5*time.Second)); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("answered", func(t *testing.T) {
		ws := h.raw(t)
		cs.next(t)
		sendClose(ws, 4000)
		if c := closeCode(t, ws); c != 4000 {
			t.Fatalf("answered with %d", c)
		}
		if c := peerCode(recv(t, disconnected, "OnDisconnect")); c != 4000 {
			t.Fatalf("OnDisconnect heard %d", c)
		}
	})
	t.Run("behind a full inbox", func(t *testing.T) {
		ws := h.raw(t)
		conn := cs.next(t)
		// One event runs and blocks, one waits in the inbox, one in the
		// reader: the close frame behind them is not read yet.
		writeText(t, ws, `{"type":"event","id":1,"event":"say","args":[{"text":"stall"}]}`)
		writeText(t, ws, `{"type":"event","event":"typing","args":[true]}`)
		writeText(t, ws, `{"type":"event","event":"typing","args":[true]}`)
		sendClose(ws, 4001)
		// An absence check: a reader that wrongly went past the full
		// inbox would read the close frame and end the connection within
		// milliseconds; waiting can only miss that on a very slow
		// machine, never fail a correct server.
		time.Sleep(300 * time.Millisecond)
		if !conn.Connected() {
			t.Fatal("the close frame was read past a full inbox")
		}
		once.Do(func() { close(release) })
		if c := closeCode(t, ws); c != 4001 {
			t.Fatalf("answered with %d", c)
		}
		if c := peerCode(recv(t, disconnected, "OnDisconnect")); c != 4001 {
			t.Fatalf("OnDisconnect heard %d", c)
		}
	})
}

// TestPingAnswered: both Go ends answer a peer's ping with its payload
// (their own handler, which gives the pong the write timeout instead of
// gorilla's one second).
func TestPingAnswered(t *testing.T) {
	pongs := func(ws *websocket.Conn) chan string {
		ch := make(chan string, 1)
		ws.SetPongHandler(func(data string) error { ch <- data; return nil })
		go func() {
			for {
				if _, _, err := ws.ReadMessage(); err != nil {
					return
				}
			}
		}()
		return ch
	}
	ping := func(t *testing.T, ws *websocket.Conn, ch chan string) {
		t.Helper()
		if err := ws.WriteControl(websocket.PingMessage, []byte("are you there"), time.Now().Add(5*time.Second)); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-ch:
			if got != "are you there" {
				t.Fatalf("pong %q", got)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no pong")
		}
	}
	t.Run("server", func(t *testing.T) {
		h := newHarness(t, chatContract(t), nil)
		ws := h.raw(t)
		ping(t, ws, pongs(ws))
	})
	t.Run("client", func(t *testing.T) {
		fs := newFakeServer(t, realtime.Subprotocol)
		_, ws, _ := dialFake(t, fs)
		ping(t, ws, pongs(ws))
	})
}

// TestWriteDeadline: a peer that stops reading while its socket is full
// is cut off by the write deadline, not left holding a writer: with a send
// queue too large to overflow (no slow-consumer close) the connection
// ends once a write has waited WriteTimeout — on the direct path
// (Conn.Emit, a socket deadline per frame), on the broadcast path
// (Server.Emit: the first frame goes out in a sweep, the rest queue behind
// it), and for one broadcast frame larger than the socket buffers, whose
// sweep write itself stalls (the sweep's watchdog cuts it). The controls,
// with a write timeout of a minute, are still connected after the flood.
//
// Both ends' socket buffers are shrunk to sockBuf (the kernel may double
// it), so that 512 KiB — sixteen times what the two buffers hold — is
// "beyond the socket buffers": with the system's loopback buffers, that
// took a 32 MiB frame, whose encoding alone outlasted the 5 s emit context
// under -race on a slow CPU. The cut cases prove the buffers are small:
// if the frames fitted, no write would stall and nothing would cut them.
func TestWriteDeadline(t *testing.T) {
	const sockBuf = 8 << 10
	big := map[string]any{"text": strings.Repeat("x", sockBuf), "from": "srv"}
	huge := map[string]any{"text": strings.Repeat("x", 64*sockBuf), "from": "srv"}
	const frames = 64 // 64 × sockBuf: far more than the two socket buffers hold
	for _, tc := range []struct {
		name      string
		timeout   time.Duration
		broadcast bool
		huge      bool // one frame, instead of frames
		cut       bool
	}{
		{"direct", 300 * time.Millisecond, false, false, true},
		{"broadcast", 300 * time.Millisecond, true, false, true},
		{"one broadcast frame beyond the socket buffers", 300 * time.Millisecond, true, true, true},
		{"control", time.Minute, false, false, false},
		{"control, one broadcast frame beyond the socket buffers", time.Minute, true, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			disconnected := make(chan error, 1)
			o := realtime.Options[string]{WriteTimeout: tc.timeout, SendQueue: 2 * frames, PingInterval: -1,
				CloseTimeout: 100 * time.Millisecond,
				OnDisconnect: func(_ *realtime.Conn[string], err error) { disconnected <- err }}
			cs := trackConns(&o)
			h := newHarnessSockBuf(t, chatContract(t), &o, sockBuf)
			h.raw(t) // never reads
			conn := cs.next(t)
			n, payload := frames, big
			if tc.huge {
				n, payload = 1, huge
			}
			for i := 0; i < n && conn.Connected(); i++ {
				var err error
				if tc.broadcast {
					err = h.srv.Emit(ctx5(t), "message", payload)
				} else {
					err = conn.Emit(ctx5(t), "message", payload)
				}
				if err != nil && conn.Connected() {
					t.Fatal(err)
				}
			}
			if !tc.cut {
				// An absence check: the writes are stalled now, and a
				// connection cut by a wrong (short) deadline would be gone
				// within about 300 ms; waiting longer can only miss such a
				// bug on a very slow machine, never fail a correct server.
				time.Sleep(time.Second)
				if !conn.Connected() {
					t.Fatal("a connection whose writes wait less than the write timeout was closed")
				}
				return
			}
			select {
			case err := <-disconnected:
				var ce *websocket.CloseError
				if errors.As(err, &ce) {
					t.Fatalf("ended with a close frame (%v): not by the write deadline", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("a stalled write was not cut off by the write deadline")
			}
			if s := h.srv.Stats(); s.SlowConsumers != 0 {
				t.Fatalf("closed as a slow consumer, not by the write deadline: %+v", s)
			}
		})
	}
}
