package realtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"stitchkit.dev/stitchkit/pkg/mount"
	"stitchkit.dev/stitchkit/pkg/realtime"
)

// handshake sends an upgrade request with the given headers and returns
// the HTTP status and body of a refusal (or 101).
func handshake(t *testing.T, url string, header http.Header) (int, map[string]any, http.Header) {
	t.Helper()
	d := websocket.Dialer{HandshakeTimeout: 3 * time.Second}
	ws, resp, err := d.Dial(url, header)
	if err == nil {
		ws.Close()
		return resp.StatusCode, nil, resp.Header
	}
	if resp == nil {
		t.Fatalf("no HTTP response: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("refusal body %q is not JSON: %v", body, err)
	}
	return resp.StatusCode, m, resp.Header
}

func errCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

func TestHandshakeRefusals(t *testing.T) {
	c := chatContract(t)
	h := newHarness(t, c, &realtime.Options[string]{
		Handshake: func(r *http.Request) (string, error) {
			switch r.Header.Get("Authorization") {
			case "Bearer alice":
				return "alice", nil
			case "Bearer banned":
				return "", mount.NewError("FORBIDDEN", "banned")
			case "Bearer panic":
				panic("boom")
			case "Bearer down":
				return "", mount.NewError("SERVICE_UNAVAILABLE", "auth backend down")
			}
			return "", errors.New("no or unknown token")
		},
	})
	proto := func(hdr http.Header) http.Header {
		hdr.Set("Sec-WebSocket-Protocol", realtime.Subprotocol)
		return hdr
	}
	cases := []struct {
		name   string
		header http.Header
		status int
		code   string
		// selected is the subprotocol a 101 response must name.
		selected string
	}{
		{"accepted", proto(http.Header{"Authorization": {"Bearer alice"}}), 101, "", realtime.Subprotocol},
		{"no token", proto(http.Header{}), 401, "UNAUTHORIZED", ""},
		{"hook refuses with a code", proto(http.Header{"Authorization": {"Bearer banned"}}), 403, "FORBIDDEN", ""},
		{"hook says unavailable", proto(http.Header{"Authorization": {"Bearer down"}}), 503, "SERVICE_UNAVAILABLE", ""},
		{"hook panics", proto(http.Header{"Authorization": {"Bearer panic"}}), 500, "INTERNAL_SERVER_ERROR", ""},
		// A client that offers no subprotocol (new WebSocket(url)) gets
		// version 1, and a response that names none (RFC 6455 §4.2.2).
		{"no subprotocol offered", http.Header{"Authorization": {"Bearer alice"}}, 101, "", ""},
		{"ours among others", http.Header{"Authorization": {"Bearer alice"}, "Sec-WebSocket-Protocol": {"chat, " + realtime.Subprotocol}}, 101, "", realtime.Subprotocol},
		{"only other subprotocols", http.Header{"Authorization": {"Bearer alice"}, "Sec-WebSocket-Protocol": {"stitchkit.realtime.v0, chat"}}, 400, "BAD_REQUEST", ""},
		{"foreign origin", proto(http.Header{"Authorization": {"Bearer alice"}, "Origin": {"https://evil.example"}}), 403, "FORBIDDEN", ""},
		{"same origin", proto(http.Header{"Authorization": {"Bearer alice"}, "Origin": {h.hs.URL}}), 101, "", realtime.Subprotocol},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			status, body, hdr := handshake(t, h.url, tc.header)
			if status != tc.status || errCode(body) != tc.code {
				t.Fatalf("status %d code %q, want %d %q (%v)", status, errCode(body), tc.status, tc.code, body)
			}
			if got := hdr.Get("Sec-WebSocket-Protocol"); status == 101 && got != tc.selected {
				t.Fatalf("selected subprotocol %q, want %q", got, tc.selected)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Fatalf("refusal took %s", d)
			}
		})
	}
	t.Run("a peer that offered no subprotocol speaks version 1", func(t *testing.T) {
		h.handle("say", func(context.Context, *realtime.Conn[string], realtime.Args) (any, error) {
			return map[string]any{"n": 1}, nil
		})
		ws, _, err := (&websocket.Dialer{HandshakeTimeout: 5 * time.Second}).Dial(h.url, http.Header{"Authorization": {"Bearer alice"}})
		if err != nil {
			t.Fatal(err)
		}
		defer ws.Close()
		writeText(t, ws, `{"type":"event","id":1,"event":"say","args":[{"text":"hi"}]}`)
		if f := readFrame(t, ws); f.Type != "ack" || string(f.Ack) != `{"n":1}` {
			t.Fatalf("%+v", f)
		}
	})
	t.Run("supported protocols are named", func(t *testing.T) {
		_, body, _ := handshake(t, h.url, http.Header{"Sec-WebSocket-Protocol": {"graphql-ws"}})
		details := body["error"].(map[string]any)["details"].(map[string]any)
		if got := canon(t, details["supported"]); got != `["`+realtime.Subprotocol+`"]` {
			t.Fatalf("supported = %s", got)
		}
	})
	t.Run("plain GET and POST", func(t *testing.T) {
		resp, err := http.Get(h.hs.URL + "/realtime/chat")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Fatalf("GET without upgrade: %d", resp.StatusCode)
		}
		resp, err = http.Post(h.hs.URL+"/realtime/chat", "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET" {
			t.Fatalf("POST: %d Allow=%q", resp.StatusCode, resp.Header.Get("Allow"))
		}
	})
	t.Run("Dial reports the refusal as a mount.Error", func(t *testing.T) {
		_, err := realtime.Dial(ctx5(t), h.url, c, &realtime.DialOptions{Header: http.Header{"Authorization": {"Bearer banned"}}})
		me := mustCode(t, err, "FORBIDDEN")
		if me.Status != 403 || me.Message != "banned" {
			t.Fatalf("%+v", me)
		}
	})
	t.Run("identity reaches handlers", func(t *testing.T) {
		got := make(chan string, 1)
		h.handle("typing", func(_ context.Context, c *realtime.Conn[string], _ realtime.Args) (any, error) {
			got <- c.Identity()
			return nil, nil
		})
		cl := h.dial(t, nil, &realtime.DialOptions{Header: http.Header{"Authorization": {"Bearer alice"}}})
		if err := cl.Emit(ctx5(t), "typing", true); err != nil {
			t.Fatal(err)
		}
		select {
		case id := <-got:
			if id != "alice" {
				t.Fatalf("identity %q", id)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("handler not called")
		}
	})
	if s := h.srv.Stats(); s.Refused != 10 {
		t.Errorf("refused handshakes counted: %+v", s)
	}
}

func TestOriginAllowList(t *testing.T) {
	h := newHarness(t, chatContract(t), &realtime.Options[string]{AllowedOrigins: []string{"https://app.example.com"}})
	hdr := func(origin string) http.Header {
		return http.Header{"Sec-WebSocket-Protocol": {realtime.Subprotocol}, "Origin": {origin}}
	}
	for origin, want := range map[string]int{
		"https://app.example.com":  101,
		"https://APP.example.com":  101,
		"http://app.example.com":   403,
		"https://evil.example.com": 403,
		h.hs.URL:                   403, // the allow-list replaces same-origin
	} {
		if status, body, _ := handshake(t, h.url, hdr(origin)); status != want {
			t.Errorf("origin %s: %d %v, want %d", origin, status, body, want)
		}
	}
	if _, err := realtime.NewServer(chatContract(t), &realtime.Options[string]{AllowedOrigins: []string{"app.example.com"}}); err == nil {
		t.Error("an origin without scheme was accepted")
	}
}

func TestEventsReachHandlersValidated(t *testing.T) {
	h := newHarness(t, chatContract(t), nil)
	var n int64
	h.handle("say", func(_ context.Context, _ *realtime.Conn[string], a realtime.Args) (any, error) {
		var msg struct{ Text string }
		if err := a.Decode(&msg); err != nil {
			return nil, err
		}
		n++
		return map[string]any{"n": n}, nil
	})
	typed := make(chan bool, 1)
	h.handle("typing", func(_ context.Context, _ *realtime.Conn[string], a realtime.Args) (any, error) {
		var b bool
		if err := a.Decode(&b); err != nil {
			return nil, err
		}
		typed <- b
		return nil, nil
	})
	cl := h.dial(t, nil, nil)
	for i := 1; i <= 3; i++ {
		ack, err := cl.Request(ctx5(t), 0, "say", map[string]any{"text": "hello"})
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"n":` + string(rune('0'+i)) + `}`; string(ack) != want {
			t.Fatalf("ack %s, want %s", ack, want)
		}
	}
	if err := cl.Emit(ctx5(t), "typing", true); err != nil {
		t.Fatal(err)
	}
	if !recv(t, typed, "the typing event") {
		t.Fatal("typing false")
	}
	h.noRejection(t)
}

// TestInboundRejections drives the server with a raw peer: every frame the
// contract does not admit is reported with the taxonomy, answered with the
// rejection envelope when it asked for an ack, and never reaches a
// handler.
func TestInboundRejections(t *testing.T) {
	h := newHarness(t, chatContract(t), nil)
	acks := map[string]any{"say": map[string]any{"n": 1}, "typing": nil, "join": map[string]any{"ok": true}}
	for ev, ack := range acks {
		h.handle(ev, func(context.Context, *realtime.Conn[string], realtime.Args) (any, error) { return ack, nil })
	}
	ws := h.raw(t)
	cases := []struct {
		name, frame string
		key         string // direction/phase/reason/fault
		answer      string // expected rejection envelope (canonical), "" when no answer is due
	}{
		{"unknown event", `{"type":"event","id":1,"event":"shout","args":["x"]}`,
			"server-inbound/arguments/unknown-event/peer",
			`{"event":"shout","message":"unknown event \"shout\"","reason":"unknown-event"}`},
		{"invalid arguments", `{"type":"event","id":2,"event":"say","args":[{"text":""}]}`,
			"server-inbound/arguments/invalid-arguments/peer",
			`{"event":"say","issues":[{"keyword":"minLength","message":"minLength: got 0, want 1","path":"/0/text"}],"message":"invalid arguments for \"say\"","reason":"invalid-arguments"}`},
		{"arguments not a tuple", `{"type":"event","id":3,"event":"say","args":{"text":"x"}}`,
			"server-inbound/arguments/invalid-arguments/peer", ""},
		{"too many arguments", `{"type":"event","id":4,"event":"say","args":[{"text":"x"},1]}`,
			"server-inbound/arguments/invalid-arguments/peer", ""},
		{"missing arguments", `{"type":"event","id":5,"event":"say"}`,
			"server-inbound/arguments/invalid-arguments/peer", ""},
		{"unexpected acknowledgement", `{"type":"event","id":6,"event":"typing","args":[true]}`,
			"server-inbound/acknowledgement/unexpected-acknowledgement/peer",
			`{"event":"typing","message":"event \"typing\" takes no acknowledgement","reason":"unexpected-acknowledgement"}`},
		{"missing acknowledgement", `{"type":"event","event":"say","args":[{"text":"x"}]}`,
			"server-inbound/acknowledgement/missing-acknowledgement/peer", ""},
		{"unknown event without ack", `{"type":"event","event":"shout","args":[]}`,
			"server-inbound/arguments/unknown-event/peer", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			writeText(t, ws, tc.frame)
			r := h.nextRejection(t)
			if got := rejectionKey(r); got != tc.key {
				t.Fatalf("rejection %s, want %s", got, tc.key)
			}
			if r.Err == nil || r.Err.Code != realtime.CodeContractViolation || r.Err.Details["reason"] != string(r.Reason) {
				t.Fatalf("rejection error %+v", r.Err)
			}
			var f frameIn
			if strings.Contains(tc.frame, `"id"`) {
				f = readFrame(t, ws)
				if f.Type != "rejection" || f.ID == 0 {
					t.Fatalf("answer %+v", f)
				}
				if tc.answer != "" {
					if got := canon(t, f.Rejection); got != tc.answer {
						t.Fatalf("envelope\n got %s\nwant %s", got, tc.answer)
					}
				}
			}
			// A valid request right after proves the connection is alive and
			// that nothing else was answered for the rejected frame.
			writeText(t, ws, `{"type":"event","id":99,"event":"say","args":[{"text":"ok"}]}`)
			if f := readFrame(t, ws); f.Type != "ack" || f.ID != 99 {
				t.Fatalf("after %s: %+v", tc.name, f)
			}
		})
	}
	if got := h.callCount("say") + h.callCount("typing") + h.callCount("join"); got != int64(len(cases)) {
		t.Fatalf("handlers called %d times, want %d (only the valid follow-ups)", got, len(cases))
	}
	if s := h.srv.Stats(); s.Rejected != uint64(len(cases)) {
		t.Fatalf("stats %+v", s)
	}
}

type frameIn struct {
	Type      string          `json:"type"`
	ID        int64           `json:"id"`
	Event     string          `json:"event"`
	Args      json.RawMessage `json:"args"`
	Ack       json.RawMessage `json:"ack"`
	Rejection map[string]any  `json:"rejection"`
}

func readFrame(t testing.TB, ws *websocket.Conn) frameIn {
	t.Helper()
	_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, data, err := ws.ReadMessage()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var f frameIn
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("frame %s: %v", data, err)
	}
	return f
}

func TestHandlerAnswers(t *testing.T) {
	h := newHarness(t, chatContract(t), nil)
	h.handle("say", func(_ context.Context, _ *realtime.Conn[string], a realtime.Args) (any, error) {
		var m struct{ Text string }
		_ = a.Decode(&m)
		switch m.Text {
		case "bad ack":
			return map[string]any{"n": -1}, nil
		case "refuse":
			return nil, mount.NewError("CONFLICT", "already said")
		case "plain error":
			return nil, errors.New("database exploded at 10.0.0.7")
		case "panic":
			panic("secret panic value")
		}
		return map[string]any{"n": 7}, nil
	})
	ws := h.raw(t)
	send := func(text string) frameIn {
		writeText(t, ws, `{"type":"event","id":1,"event":"say","args":[{"text":"`+text+`"}]}`)
		return readFrame(t, ws)
	}
	if f := send("fine"); f.Type != "ack" || string(f.Ack) != `{"n":7}` {
		t.Fatalf("fine: %+v", f)
	}
	// An acknowledgement the contract does not allow is the server's fault:
	// reported with the full issues, answered scrubbed.
	f := send("bad ack")
	if got := canon(t, f.Rejection); got != `{"event":"say","message":"the receiver failed to produce a valid answer","reason":"invalid-acknowledgement-value"}` {
		t.Fatalf("bad ack answer %s", got)
	}
	r := h.nextRejection(t)
	if rejectionKey(r) != "server-outbound/acknowledgement/invalid-acknowledgement-value/local" || len(r.Issues) == 0 {
		t.Fatalf("bad ack rejection %+v", r)
	}
	if got := canon(t, send("refuse").Rejection); got != `{"code":"CONFLICT","event":"say","message":"already said","reason":"refused"}` {
		t.Fatalf("refusal %s", got)
	}
	if got := canon(t, send("plain error").Rejection); got != `{"code":"INTERNAL_SERVER_ERROR","event":"say","message":"Internal server error","reason":"refused"}` {
		t.Fatalf("plain error %s", got)
	}
	if got := canon(t, send("panic").Rejection); got != `{"code":"INTERNAL_SERVER_ERROR","event":"say","message":"Internal server error","reason":"refused"}` {
		t.Fatalf("panic %s", got)
	}
	select {
	case err := <-h.errs:
		if !strings.Contains(err.Error(), "secret panic value") {
			t.Fatalf("OnError %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("panic not reported")
	}
	// No handler: refused with NOT_IMPLEMENTED.
	writeText(t, ws, `{"type":"event","id":5,"event":"join","args":["room"]}`)
	if got := canon(t, readFrame(t, ws).Rejection); got != `{"code":"NOT_IMPLEMENTED","event":"join","message":"no handler for \"join\"","reason":"refused"}` {
		t.Fatalf("no handler %s", got)
	}
	h.noRejection(t)
}

func TestProtocolErrorsClose(t *testing.T) {
	h := newHarness(t, chatContract(t), &realtime.Options[string]{MaxFrameBytes: 1024})
	h.handle("say", func(context.Context, *realtime.Conn[string], realtime.Args) (any, error) {
		return map[string]any{"n": 1}, nil
	})
	cases := []struct {
		name string
		send func(*websocket.Conn) error
		code int
	}{
		{"binary frame", func(ws *websocket.Conn) error { return ws.WriteMessage(websocket.BinaryMessage, []byte(`{}`)) }, 1003},
		{"not JSON", text(`{"type":`), 1007},
		{"trailing data", text(`{"type":"event"} {}`), 1007},
		{"repeated key", text(`{"type":"event","type":"ack"}`), 1007},
		{"too deep", text(`{"type":"event","id":1,"event":"say","args":` + strings.Repeat("[", 80) + strings.Repeat("]", 80) + `}`), 1007},
		{"not an object", text(`[1,2]`), 1002},
		{"no type", text(`{"event":"say"}`), 1002},
		{"id zero", text(`{"type":"event","id":0,"event":"say","args":[]}`), 1002},
		{"id fraction", text(`{"type":"event","id":1.5,"event":"say","args":[]}`), 1002},
		{"id beyond 2^53", text(`{"type":"event","id":9007199254740992,"event":"say","args":[]}`), 1002},
		{"id string", text(`{"type":"event","id":"1","event":"say","args":[]}`), 1002},
		{"event missing", text(`{"type":"event","id":1,"args":[]}`), 1002},
		{"ack without id", text(`{"type":"ack","ack":{}}`), 1002},
		{"rejection body not an object", text(`{"type":"rejection","id":1,"rejection":"no"}`), 1002},
		{"frame too big", text(`{"type":"event","event":"say","args":["` + strings.Repeat("x", 2000) + `"]}`), 1009},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := h.raw(t)
			if err := tc.send(ws); err != nil {
				t.Fatal(err)
			}
			if got := closeCode(t, ws); got != tc.code {
				t.Fatalf("close %d, want %d", got, tc.code)
			}
		})
	}
	t.Run("unknown frame types are ignored", func(t *testing.T) {
		ws := h.raw(t)
		writeText(t, ws, `{"type":"presence","who":"me"}`)
		writeText(t, ws, `{"type":"ack","id":12345,"ack":{}}`) // nothing pending: late, ignored
		writeText(t, ws, `{"type":"event","id":1,"event":"say","args":[{"text":"x"}],"future":true}`)
		if f := readFrame(t, ws); f.Type != "ack" || f.ID != 1 {
			t.Fatalf("%+v", f)
		}
	})
	if got := h.callCount("say"); got != 1 {
		t.Fatalf("handler called %d times", got)
	}
	s := h.srv.Stats()
	if s.UnknownFrames != 1 || s.LateAnswers != 1 || s.ProtocolErrors < uint64(len(cases)-1) {
		t.Fatalf("stats %+v", s)
	}
}

func text(s string) func(*websocket.Conn) error {
	return func(ws *websocket.Conn) error { return ws.WriteMessage(websocket.TextMessage, []byte(s)) }
}

// TestEmitValidatesFirst: every local mistake is an error at the call
// site, and nothing reaches the wire.
func TestEmitValidatesFirst(t *testing.T) {
	h := newHarness(t, chatContract(t), nil)
	joined := make(chan *realtime.Conn[string], 1)
	h.handle("join", func(_ context.Context, c *realtime.Conn[string], _ realtime.Args) (any, error) {
		joined <- c
		return map[string]any{"ok": true}, nil
	})
	ws := h.raw(t)
	writeText(t, ws, `{"type":"event","id":1,"event":"join","args":["x"]}`)
	conn := recv(t, joined, "the join handler")
	readFrame(t, ws)
	ctx := ctx5(t)
	cases := []struct {
		name string
		err  error
		key  string
	}{
		{"server emit, bad args", h.srv.Emit(ctx, "message", map[string]any{"text": ""}), "server-outbound/arguments/invalid-arguments/local"},
		{"room emit, unknown event", h.srv.Room("r").Emit(ctx, "nope"), "server-outbound/arguments/unknown-event/local"},
		{"conn emit, bad args", conn.Emit(ctx, "message", "not an object"), "server-outbound/arguments/invalid-arguments/local"},
		{"conn emit, arg not JSON", conn.Emit(ctx, "message", func() {}), "server-outbound/arguments/invalid-arguments/local"},
		{"emit of an event that takes an ack", conn.Emit(ctx, "confirm", map[string]any{"question": "?"}), "server-outbound/acknowledgement/missing-acknowledgement/local"},
		{"broadcast of an event that takes an ack", h.srv.Emit(ctx, "confirm", map[string]any{"question": "?"}), "server-outbound/acknowledgement/missing-acknowledgement/local"},
		{"request of an event without ack", func() error {
			_, err := conn.Request(ctx, 0, "message", map[string]any{"text": "a", "from": "b"})
			return err
		}(), "server-outbound/acknowledgement/unexpected-acknowledgement/local"},
		{"request, bad args", func() error { _, err := conn.Request(ctx, 0, "confirm", map[string]any{}); return err }(), "server-outbound/arguments/invalid-arguments/local"},
	}
	for _, tc := range cases {
		me := mustCode(t, tc.err, realtime.CodeContractViolation)
		d := me.Details
		if got := d["direction"].(string) + "/" + d["phase"].(string) + "/" + d["reason"].(string) + "/" + d["fault"].(string); got != tc.key {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.key)
		}
	}
	// Nothing was written: the next frame the peer sees is this one.
	if err := conn.Emit(ctx, "message", map[string]any{"text": "real", "from": "srv"}); err != nil {
		t.Fatal(err)
	}
	if f := readFrame(t, ws); f.Event != "message" || string(f.Args) != `[{"from":"srv","text":"real"}]` {
		t.Fatalf("%+v %s", f, f.Args)
	}
	h.noRejection(t)
}

func TestHandleUnknownEvent(t *testing.T) {
	srv, err := realtime.NewServer[string](chatContract(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	if err := srv.Handle("message", nil); err == nil || !strings.Contains(err.Error(), `no clientToServer event "message"`) {
		t.Fatalf("Handle of a serverToClient event: %v", err)
	}
	if _, err := realtime.NewServer(chatContract(t), &realtime.Options[string]{SlowConsumerCode: 1000}); err == nil {
		t.Fatal("SlowConsumerCode 1000 accepted")
	}
	if _, err := realtime.NewContract(projecttest.New(t, compileCUE(t, "testdata/chat/chat.cue"), nil), "nope"); err == nil ||
		!strings.Contains(err.Error(), "it has: chat, empty") {
		t.Fatalf("unknown contract: %v", err)
	}
}

// TestEdgeAuthentication: the runner's one edge authenticator
// (mount.Options.Authenticate) runs on the upgrade request's headers
// before Handshake: a refusal is 401 with the runner's challenge (or 403);
// the principal is in the context Handshake sees and in every handler's.
func TestEdgeAuthentication(t *testing.T) {
	p := projecttest.New(t, compileCUE(t, "testdata/chat/chat.cue"), nil)
	runner, err := mount.New(mount.NewImplementation(p.Graph()), &mount.Options{Projection: p, Challenge: `Bearer realm="chat"`,
		Authenticate: func(_ context.Context, r *mount.EdgeRequest) (*mount.Principal, error) {
			if r.Source != realtime.SourceRealtime {
				return nil, errors.New("wrong source " + string(r.Source))
			}
			switch r.Header.Get("Authorization") {
			case "Bearer alice":
				return &mount.Principal{Subject: "alice"}, nil
			case "Bearer mallory":
				return nil, mount.Forbidden("")
			}
			return nil, errors.New("no token")
		}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := realtime.NewContract(runner.Projection(), "chat")
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, c, &realtime.Options[string]{Edge: runner,
		Handshake: func(r *http.Request) (string, error) { return mount.PrincipalFrom(r.Context()).Subject, nil }})
	h.handle("say", func(ctx context.Context, conn *realtime.Conn[string], _ realtime.Args) (any, error) {
		if conn.Identity() != "alice" || mount.PrincipalFrom(ctx).Subject != "alice" {
			return nil, mount.Forbidden("no principal in the handler")
		}
		return map[string]any{"n": 1}, nil
	})
	proto := http.Header{"Sec-WebSocket-Protocol": {realtime.Subprotocol}}
	status, body, hdr := handshake(t, h.url, proto)
	if status != 401 || errCode(body) != "UNAUTHORIZED" || hdr.Get("WWW-Authenticate") != `Bearer realm="chat"` {
		t.Fatalf("no token: %d %v %v", status, body, hdr)
	}
	if status, body, _ := handshake(t, h.url, http.Header{"Sec-WebSocket-Protocol": {realtime.Subprotocol}, "Authorization": {"Bearer mallory"}}); status != 403 || errCode(body) != "FORBIDDEN" {
		t.Fatalf("mallory: %d %v", status, body)
	}
	ws, _, err := (&websocket.Dialer{HandshakeTimeout: 5 * time.Second}).Dial(h.url, http.Header{"Authorization": {"Bearer alice"}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	writeText(t, ws, `{"type":"event","id":1,"event":"say","args":[{"text":"hi"}]}`)
	if f := readFrame(t, ws); f.Type != "ack" || string(f.Ack) != `{"n":1}` {
		t.Fatalf("%+v", f)
	}
}
