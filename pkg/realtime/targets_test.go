package realtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"stitchkit.dev/stitchkit/pkg/realtime"
	"stitchkit.dev/stitchkit/pkg/validate"
)

// connected tracks server-side connections by the identity-free order in
// which they arrive.
type connected struct {
	mu    sync.Mutex
	conns []*realtime.Conn[string]
	ch    chan *realtime.Conn[string]
}

func trackConns(o *realtime.Options[string]) *connected {
	cs := &connected{ch: make(chan *realtime.Conn[string], 64)}
	o.OnConnect = func(c *realtime.Conn[string]) {
		cs.mu.Lock()
		cs.conns = append(cs.conns, c)
		cs.mu.Unlock()
		cs.ch <- c
	}
	return cs
}

func (cs *connected) next(t testing.TB) *realtime.Conn[string] {
	t.Helper()
	select {
	case c := <-cs.ch:
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("no connection")
	}
	return nil
}

// inbox collects the messages a client receives.
func inbox(t testing.TB, cl *realtime.Client) chan string {
	t.Helper()
	ch := make(chan string, 64)
	if _, err := cl.On("message", func(_ context.Context, a realtime.Args) (any, error) {
		var m struct{ Text string }
		if err := a.Decode(&m); err != nil {
			return nil, err
		}
		ch <- m.Text
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	return ch
}

func expect(t testing.TB, ch chan string, want string) {
	t.Helper()
	select {
	case got := <-ch:
		if got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("no %q", want)
	}
}

// expectNothing is an absence check: a frame that should not arrive
// would, on a quiet machine, within the 50 ms; a loaded one can only make
// the check miss it, never fail a correct server.
func expectNothing(t testing.TB, ch chan string) {
	t.Helper()
	select {
	case got := <-ch:
		t.Fatalf("unexpected %q", got)
	case <-time.After(50 * time.Millisecond):
	}
}

func TestTargets(t *testing.T) {
	o := realtime.Options[string]{Handshake: func(r *http.Request) (string, error) { return r.Header.Get("X-Name"), nil }}
	cs := trackConns(&o)
	h := newHarness(t, chatContract(t), &o)
	named := func(name string) (*realtime.Client, *realtime.Conn[string]) {
		cl := h.dial(t, nil, &realtime.DialOptions{Header: http.Header{"X-Name": {name}}})
		conn := cs.next(t)
		if conn.Identity() != name {
			t.Fatalf("connection of %q arrived as %q", name, conn.Identity())
		}
		return cl, conn
	}
	a, ca := named("a")
	b, cb := named("b")
	c, cc := named("c")
	ia, ib, ic := inbox(t, a), inbox(t, b), inbox(t, c)
	ctx := ctx5(t)
	msg := func(text string) map[string]any { return map[string]any{"text": text, "from": "srv"} }

	// One connection.
	if err := cb.Emit(ctx, "message", msg("just b")); err != nil {
		t.Fatal(err)
	}
	expect(t, ib, "just b")

	// A room.
	for _, c := range []*realtime.Conn[string]{ca, cc} {
		if err := c.Join("blue"); err != nil {
			t.Fatal(err)
		}
	}
	if err := ca.Join("blue"); err != nil { // joining twice is harmless
		t.Fatal(err)
	}
	if got := ca.Rooms(); len(got) != 1 || got[0] != "blue" {
		t.Fatalf("rooms %v", got)
	}
	if err := h.srv.Room("blue").Emit(ctx, "message", msg("blue room")); err != nil {
		t.Fatal(err)
	}
	expect(t, ia, "blue room")
	expect(t, ic, "blue room")
	if err := h.srv.Room("nobody").Emit(ctx, "message", msg("empty room")); err != nil {
		t.Fatal(err)
	}

	// Everyone.
	if err := h.srv.Emit(ctx, "message", msg("all")); err != nil {
		t.Fatal(err)
	}
	expect(t, ia, "all")
	expect(t, ib, "all")
	expect(t, ic, "all")

	// Leave, and membership ends with the connection.
	ca.Leave("blue")
	if err := h.srv.Room("blue").Emit(ctx, "message", msg("blue again")); err != nil {
		t.Fatal(err)
	}
	expect(t, ic, "blue again")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return !cc.Connected() })
	if err := cc.Join("green"); err == nil {
		t.Fatal("a closed connection joined a room")
	}
	if err := cc.Emit(ctx, "message", msg("gone")); err == nil {
		t.Fatal("emit to a closed connection succeeded")
	} else {
		mustCode(t, err, realtime.CodeRequestDisconnect)
	}
	if err := h.srv.Room("blue").Emit(ctx, "message", msg("nobody left")); err != nil {
		t.Fatal(err)
	}
	expectNothing(t, ia)
	expectNothing(t, ib)
	waitFor(t, func() bool { return h.srv.Stats().Connections == 2 })
}

func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10s")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestServerRequest covers every outcome of Conn.Request.
func TestServerRequest(t *testing.T) {
	var o realtime.Options[string]
	cs := trackConns(&o)
	h := newHarness(t, chatContract(t), &o)
	question := map[string]any{"question": "ready?"}

	t.Run("ack", func(t *testing.T) {
		cl := h.dial(t, nil, nil)
		conn := cs.next(t)
		if _, err := cl.On("confirm", func(_ context.Context, a realtime.Args) (any, error) {
			return map[string]any{"answer": "yes"}, nil
		}); err != nil {
			t.Fatal(err)
		}
		ack, err := conn.Request(ctx5(t), 0, "confirm", question)
		if err != nil || string(ack) != `{"answer":"yes"}` {
			t.Fatalf("%s %v", ack, err)
		}
	})
	t.Run("timeout, then the late answer is ignored", func(t *testing.T) {
		ws := h.raw(t)
		conn := cs.next(t)
		late := h.srv.Stats().LateAnswers
		start := time.Now()
		_, err := conn.Request(ctx5(t), 50*time.Millisecond, "confirm", question)
		mustCode(t, err, realtime.CodeRequestTimeout)
		if d := time.Since(start); d < 50*time.Millisecond || d > 4*time.Second { // below ctx5's 5 s
			t.Fatalf("timed out after %s", d)
		}
		f := readFrame(t, ws)
		writeText(t, ws, fmt.Sprintf(`{"type":"ack","id":%d,"ack":{"answer":"yes"}}`, f.ID))
		waitFor(t, func() bool { return h.srv.Stats().LateAnswers == late+1 })
		h.noRejection(t)
	})
	t.Run("disconnected before sending", func(t *testing.T) {
		cl := h.dial(t, nil, nil)
		conn := cs.next(t)
		_ = cl.Close()
		waitFor(t, func() bool { return !conn.Connected() })
		_, err := conn.Request(ctx5(t), 0, "confirm", question)
		if me := mustCode(t, err, realtime.CodeRequestDisconnect); me.Details["sent"] != false {
			t.Fatalf("details %v", me.Details)
		}
	})
	t.Run("disconnected in flight", func(t *testing.T) {
		ws := h.raw(t)
		conn := cs.next(t)
		go func() {
			readFrame(t, ws)
			ws.Close()
		}()
		_, err := conn.Request(ctx5(t), 5*time.Second, "confirm", question)
		if me := mustCode(t, err, realtime.CodeRequestDisconnect); me.Details["sent"] != true {
			t.Fatalf("details %v", me.Details)
		}
	})
	t.Run("invalid acknowledgement", func(t *testing.T) {
		ws := h.raw(t)
		conn := cs.next(t)
		go func() {
			f := readFrame(t, ws)
			writeText(t, ws, fmt.Sprintf(`{"type":"ack","id":%d,"ack":{"answer":"maybe"}}`, f.ID))
		}()
		_, err := conn.Request(ctx5(t), 0, "confirm", question)
		me := mustCode(t, err, realtime.CodeRequestInvalidAck)
		if len(me.Details["issues"].([]validate.Issue)) == 0 {
			t.Fatalf("no issues: %v", me.Details)
		}
		if r := h.nextRejection(t); rejectionKey(r) != "server-inbound/acknowledgement/invalid-acknowledgement-value/peer" {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("ack frame without a value", func(t *testing.T) {
		ws := h.raw(t)
		conn := cs.next(t)
		go func() {
			f := readFrame(t, ws)
			writeText(t, ws, fmt.Sprintf(`{"type":"ack","id":%d}`, f.ID))
		}()
		_, err := conn.Request(ctx5(t), 0, "confirm", question)
		mustCode(t, err, realtime.CodeRequestInvalidAck)
		h.nextRejection(t)
	})
	t.Run("rejected by the peer", func(t *testing.T) {
		cl := h.dial(t, nil, nil) // no handler for confirm: it refuses
		conn := cs.next(t)
		_ = cl
		_, err := conn.Request(ctx5(t), 0, "confirm", question)
		me := mustCode(t, err, realtime.CodeRequestRejected)
		if me.Details["reason"] != "refused" || me.Details["code"] != "NOT_IMPLEMENTED" {
			t.Fatalf("details %v", me.Details)
		}
		r := h.nextRejection(t)
		if rejectionKey(r) != "server-inbound/arguments/rejected-by-peer/local" || r.Peer == nil || r.Peer.Code != "NOT_IMPLEMENTED" {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("rejection envelope with unknown reason is still a refusal", func(t *testing.T) {
		ws := h.raw(t)
		conn := cs.next(t)
		go func() {
			f := readFrame(t, ws)
			writeText(t, ws, fmt.Sprintf(`{"type":"rejection","id":%d,"rejection":{"event":"confirm","reason":"from-the-future","message":7,"issues":"x"}}`, f.ID))
		}()
		_, err := conn.Request(ctx5(t), 0, "confirm", question)
		me := mustCode(t, err, realtime.CodeRequestRejected)
		if me.Details["reason"] != "from-the-future" {
			t.Fatalf("%v", me.Details)
		}
		h.nextRejection(t)
	})
	t.Run("caller cancels", func(t *testing.T) {
		h.raw(t)
		conn := cs.next(t)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(20*time.Millisecond, cancel)
		_, err := conn.Request(ctx, 5*time.Second, "confirm", question)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%v", err)
		}
	})
	t.Run("settles exactly once under a race of answer and timeout", func(t *testing.T) {
		ws := h.raw(t)
		conn := cs.next(t)
		go func() {
			for {
				_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
				_, data, err := ws.ReadMessage()
				if err != nil {
					return
				}
				var f frameIn
				_ = json.Unmarshal(data, &f)
				// Answer twice: the second is late whatever happens.
				for range 2 {
					_ = ws.WriteMessage(websocket.TextMessage, []byte(fmt.Sprintf(`{"type":"ack","id":%d,"ack":{"answer":"no"}}`, f.ID)))
				}
			}
		}()
		late := h.srv.Stats().LateAnswers
		var ok, timedOut int
		for range 50 {
			ack, err := conn.Request(ctx5(t), time.Millisecond, "confirm", question)
			switch {
			case err == nil && string(ack) == `{"answer":"no"}`:
				ok++
			case err != nil && strings.Contains(err.Error(), string(realtime.CodeRequestTimeout)):
				timedOut++
			default:
				t.Fatalf("%s %v", ack, err)
			}
		}
		// Every request got exactly one outcome; every other answer was late.
		waitFor(t, func() bool { return h.srv.Stats().LateAnswers-late == uint64(100-ok) })
	})
}

// TestConcurrentJoins: many connections joining one new room at once
// share one subscription, and all of them are members.
func TestConcurrentJoins(t *testing.T) {
	var o realtime.Options[string]
	cs := trackConns(&o)
	h := newHarness(t, chatContract(t), &o)
	const n = 20
	var inboxes []chan string
	var conns []*realtime.Conn[string]
	for range n {
		inboxes = append(inboxes, inbox(t, h.dial(t, nil, nil)))
		conns = append(conns, cs.next(t))
	}
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Join("crowd"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if err := h.srv.Room("crowd").Emit(ctx5(t), "message", map[string]any{"text": "all of you", "from": "srv"}); err != nil {
		t.Fatal(err)
	}
	for _, ch := range inboxes {
		expect(t, ch, "all of you")
	}
}
