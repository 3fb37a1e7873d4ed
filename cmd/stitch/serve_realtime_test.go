package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/goleak"

	"stitchkit.dev/stitchkit/pkg/check"
	"stitchkit.dev/stitchkit/pkg/mount"
	"stitchkit.dev/stitchkit/pkg/realtime"
)

// A realtime contract the implementation has never seen: an event whose
// example gives the ack, one that takes an ack but has no example, one
// without ack, and an empty contract.
const unseenRealtime = `package radio

import (
	"strings"
	"stitchkit.dev/stitchkit/schema"
)

schema.#Contract & {
	name:    "radio"
	version: "0.3.0"
	realtime: {
		station: {
			serverToClient: song: {#args: [{title: string, seconds: int & >=0}]}
			clientToServer: {
				tune: {
					#args: [{frequency: number & >=87.5 & <=108}]
					#ack: {station: string & strings.MinRunes(1)}
					examples: [{args: [{frequency: 101.1}], ack: {station: "KXYZ"}}]
				}
				request: {#args: [string], #ack: {queued: bool}}
				like: {#args: []}
			}
		}
		silence: {}
	}
}
`

// TestServeRealtime probes /realtime/{contract} of stitch serve on the
// contract above and on examples/tasks: a known contract upgrades and
// answers from its examples (or NOT_IMPLEMENTED), invalid frames are
// rejected, an unknown contract is 404, a foreign Origin 403, and
// stopping the server closes WebSockets with 1001.
func TestServeRealtime(t *testing.T) {
	defer goleak.VerifyNone(t)
	dir := filepath.Join(t.TempDir(), "radio")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "radio.cue"), []byte(unseenRealtime), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	g, err := check.Compile(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	station, err := realtime.NewContract(projecttest.New(t, g, nil), "station")
	if err != nil {
		t.Fatal(err)
	}
	s := startServe(t, dir)
	stopped := false
	defer func() {
		if !stopped {
			_ = s.stop()
		}
	}()
	ws := "ws" + strings.TrimPrefix(s.base, "http")
	if !strings.Contains(s.out.String(), "/realtime/station") {
		t.Fatalf("listing does not name the contract:\n%s", s.out.String())
	}

	cl, err := realtime.Dial(ctx, ws+"/realtime/station", station, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if ack, err := cl.Request(rctx, 0, "tune", map[string]any{"frequency": 99.9}); err != nil || string(ack) != `{"station":"KXYZ"}` {
		t.Fatalf("tune: %s %v", ack, err)
	}
	_, err = cl.Request(rctx, 0, "request", "a song")
	if me, ok := mount.AsError(err); !ok || me.Code != realtime.CodeRequestRejected || me.Details["code"] != "NOT_IMPLEMENTED" {
		t.Fatalf("request without example ack: %v", err)
	}
	if err := cl.Emit(rctx, "like"); err != nil {
		t.Fatal(err)
	}
	// Invalid arguments from a client that does not validate (raw gorilla).
	raw, _, err := (&websocket.Dialer{Subprotocols: []string{realtime.Subprotocol}}).Dial(ws+"/realtime/station", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	_ = raw.WriteMessage(websocket.TextMessage, []byte(`{"type":"event","id":1,"event":"tune","args":[{"frequency":200}]}`))
	_ = raw.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, msg, err := raw.ReadMessage(); err != nil || !strings.Contains(string(msg), `"reason":"invalid-arguments"`) {
		t.Fatalf("invalid tune answered %s %v", msg, err)
	}

	proto := http.Header{"Sec-WebSocket-Protocol": {realtime.Subprotocol}}
	for _, tc := range []struct {
		path, origin string
		status       int
		code         string
	}{
		{"/realtime/silence", "", 101, ""},
		{"/realtime/station", s.base, 101, ""},
		{"/realtime/nope", "", 404, "NOT_FOUND"},
		{"/realtime", "", 404, "NOT_FOUND"},
		{"/realtime/station", "https://evil.example", 403, "FORBIDDEN"},
	} {
		h := proto.Clone()
		if tc.origin != "" {
			h.Set("Origin", tc.origin)
		}
		conn, resp, err := (&websocket.Dialer{HandshakeTimeout: 10 * time.Second}).Dial(ws+tc.path, h)
		if err == nil {
			conn.Close()
		}
		if resp == nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != tc.status || (tc.code != "" && errorCode(t, tc.path, body) != tc.code) {
			t.Errorf("%s (origin %q): %d %s, want %d %s", tc.path, tc.origin, resp.StatusCode, body, tc.status, tc.code)
		}
	}
	if st, hdr, body := s.do(t, "GET", "/realtime.js", "", nil); st != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/javascript") || !strings.Contains(string(body), "export function connect") {
		t.Fatalf("/realtime.js: %d %s", st, hdr.Get("Content-Type"))
	}

	raw.Close() // a raw peer that stopped reading would hold shutdown until the close timeout
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	stopped = true
	select {
	case <-cl.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the client was not closed")
	}
	var ce *websocket.CloseError
	if !errors.As(cl.Err(), &ce) || ce.Code != realtime.CloseGoingAway {
		t.Fatalf("client closed with %v, want 1001", cl.Err())
	}
}

// TestServeRealtimeTasks: the example contract's board answers watch with
// its example ack.
func TestServeRealtimeTasks(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	g, err := check.Compile(ctx, "../../examples/tasks")
	if err != nil {
		t.Fatal(err)
	}
	board, err := realtime.NewContract(projecttest.New(t, g, nil), "board")
	if err != nil {
		t.Fatal(err)
	}
	s := startServe(t, "../../examples/tasks")
	defer func() {
		if err := s.stop(); err != nil {
			t.Error(err)
		}
	}()
	cl, err := realtime.Dial(ctx, "ws"+strings.TrimPrefix(s.base, "http")+"/realtime/board", board, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if ack, err := cl.Request(ctx, 0, "watch", map[string]any{"board": "main"}); err != nil || string(ack) != `{"ok":true}` {
		t.Fatalf("watch: %s %v", ack, err)
	}
}
