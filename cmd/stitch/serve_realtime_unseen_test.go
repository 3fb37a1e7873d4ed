package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/goleak"

	"stitchkit.dev/stitchkit/pkg/realtime"
)

// An unseen contract of another domain: three realtime contracts (one
// empty), events with and without examples and acknowledgements, an
// event whose first example has no ack and whose second acks null, acks
// that are objects and strings, and argument tuples mixing strings,
// numbers, booleans, closed structs, lists and nullable values.
const orchestraContract = `package orchestra

import (
	"list"
	"strings"
	"stitchkit.dev/stitchkit/schema"
)

#Seat: {row: string & =~"^[A-Z]$", number: int & >=1 & <=40}

schema.#Contract & {
	name:    "orchestra"
	version: "2.0.0"
	realtime: {
		stage: {
			serverToClient: {
				cue: {#args: [string, int & >=0], examples: [{args: ["violins", 3]}]}
				applause: {#args: []}
				encore: {#args: [{piece: string}], #ack: {accepted: bool}}
			}
			clientToServer: {
				tuneUp: {
					#args: [string & strings.MinRunes(1), number & >=400 & <=480, bool]
					#ack: {inTune: bool, offsetCents: number}
					examples: [{args: ["oboe", 440, true], ack: {inTune: true, offsetCents: 0}}]
				}
				bow: {#args: [int & >=1 & <=3]}
				requestSolo: {#args: [string, [...string]], #ack: {granted: bool}}
				heartbeat: {
					#args: []
					#ack: null | {t: int}
					examples: [{args: []}, {args: [], ack: null}]
				}
			}
		}
		box_office: {
			clientToServer: {
				reserve: {
					#args: [#Seat, [...#Seat] & list.MaxItems(4), null | string]
					#ack: {ticket: string & =~"^T[0-9]+$", seats: int}
					examples: [{args: [{row: "A", number: 1}, [], null], ack: {ticket: "T100", seats: 1}}]
				}
				cancel: {#args: [string], #ack: "cancelled" | "too-late", examples: [{args: ["T1"], ack: "too-late"}]}
				browse: {#args: [{from?: int, to?: int}], examples: [{args: [{}]}]}
			}
			serverToClient: soldOut: {#args: [string]}
		}
		"green-room": {}
	}
}
`

// TestServeRealtimeUnseenWire probes /realtime/{contract} of stitch serve
// on orchestraContract the way a client that knows only the protocol page
// does — raw frames over gorilla — and then abuses it: whatever arrives,
// the server answers by the page, closes a broken connection with the
// page's code, and keeps serving everyone else.
func TestServeRealtimeUnseenWire(t *testing.T) {
	defer goleak.VerifyNone(t)
	dir := filepath.Join(t.TempDir(), "orchestra")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "orchestra.cue"), []byte(orchestraContract), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, dir)
	defer func() {
		if err := s.stop(); err != nil {
			t.Error(err)
		}
	}()
	for _, c := range []string{"/realtime/box_office", "/realtime/green-room", "/realtime/stage"} {
		if !strings.Contains(s.out.String(), c) {
			t.Errorf("the listing does not name %s:\n%s", c, s.out.String())
		}
	}
	base := "ws" + strings.TrimPrefix(s.base, "http")
	proto := http.Header{"Sec-WebSocket-Protocol": {realtime.Subprotocol}}
	dial := func(t *testing.T, path string, h http.Header) *websocket.Conn {
		t.Helper()
		want := strings.Join(h["Sec-WebSocket-Protocol"], ", ") // the literal key is not canonical
		ws, resp, err := (&websocket.Dialer{HandshakeTimeout: 10 * time.Second}).Dial(base+path, h.Clone())
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if resp.Header.Get("Sec-WebSocket-Protocol") != want {
			t.Fatalf("%s selected %q, want %q", path, resp.Header.Get("Sec-WebSocket-Protocol"), want)
		}
		t.Cleanup(func() { ws.Close() })
		return ws
	}
	exchange := func(t *testing.T, ws *websocket.Conn, frame string) string {
		t.Helper()
		if err := ws.WriteMessage(websocket.TextMessage, []byte(frame)); err != nil {
			t.Fatal(err)
		}
		_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, msg, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("after %s: %v", frame, err)
		}
		return string(msg)
	}
	rejection := func(t *testing.T, answer string) map[string]any {
		t.Helper()
		var f struct {
			Type      string         `json:"type"`
			Rejection map[string]any `json:"rejection"`
		}
		if err := json.Unmarshal([]byte(answer), &f); err != nil || f.Type != "rejection" {
			t.Fatalf("want a rejection frame, got %s", answer)
		}
		return f.Rejection
	}

	t.Run("valid events are acked from their examples", func(t *testing.T) {
		for _, tc := range []struct{ path, frame, want string }{
			{"/realtime/stage", `{"type":"event","id":1,"event":"tuneUp","args":["oboe",441.5,false]}`, `{"type":"ack","id":1,"ack":{"inTune":true,"offsetCents":0}}`},
			// The first example with an ack answers, even when it is null.
			{"/realtime/stage", `{"type":"event","id":2,"event":"heartbeat","args":[]}`, `{"type":"ack","id":2,"ack":null}`},
			{"/realtime/stage", `{"type":"event","id":3,"event":"heartbeat"}`, `{"type":"ack","id":3,"ack":null}`},
			{"/realtime/box_office", `{"type":"event","id":4,"event":"reserve","args":[{"row":"B","number":12},[{"row":"B","number":13}],"vip"]}`, `{"type":"ack","id":4,"ack":{"seats":1,"ticket":"T100"}}`},
			{"/realtime/box_office", `{"type":"event","id":5,"event":"cancel","args":["T9"]}`, `{"type":"ack","id":5,"ack":"too-late"}`},
		} {
			if got := exchange(t, dial(t, tc.path, proto), tc.frame); got != tc.want {
				t.Errorf("%s %s:\n got %s\nwant %s", tc.path, tc.frame, got, tc.want)
			}
		}
	})
	t.Run("a plain WebSocket that offers no subprotocol speaks version 1", func(t *testing.T) {
		ws := dial(t, "/realtime/stage", http.Header{})
		if got := exchange(t, ws, `{"type":"event","id":1,"event":"tuneUp","args":["oboe",440,true]}`); !strings.HasPrefix(got, `{"type":"ack","id":1,`) {
			t.Fatalf("got %s", got)
		}
	})
	t.Run("an event with an ack but no example ack is NOT_IMPLEMENTED", func(t *testing.T) {
		ws := dial(t, "/realtime/stage", proto)
		r := rejection(t, exchange(t, ws, `{"type":"event","id":7,"event":"requestSolo","args":["me",["cadenza"]]}`))
		if r["reason"] != "refused" || r["code"] != "NOT_IMPLEMENTED" || r["event"] != "requestSolo" {
			t.Fatalf("%v", r)
		}
	})
	t.Run("invalid frames are rejected with the envelope, the connection lives on", func(t *testing.T) {
		ws := dial(t, "/realtime/box_office", proto)
		for _, tc := range []struct{ frame, reason string }{
			{`{"type":"event","id":1,"event":"reserve","args":[{"row":"B","number":12}]}`, "invalid-arguments"},
			{`{"type":"event","id":2,"event":"reserve","args":[{"row":"B","number":12},[],null,"extra"]}`, "invalid-arguments"},
			{`{"type":"event","id":3,"event":"reserve","args":[{"row":"B","number":12,"vip":true},[],null]}`, "invalid-arguments"},
			{`{"type":"event","id":4,"event":"reserve","args":[{"row":"B","number":1.5},[],null]}`, "invalid-arguments"},
			{`{"type":"event","id":5,"event":"reserve","args":[{"row":"B","number":1},[{"row":"C","number":1},{"row":"C","number":2},{"row":"C","number":3},{"row":"C","number":4},{"row":"C","number":5}],null]}`, "invalid-arguments"},
			{`{"type":"event","id":6,"event":"reserve","args":[{"row":"B","number":1},[],7]}`, "invalid-arguments"},
			{`{"type":"event","id":7,"event":"cancel","args":{"ticket":"T1"}}`, "invalid-arguments"},
			{`{"type":"event","id":8,"event":"refund","args":["T1"]}`, "unknown-event"},
			{`{"type":"event","id":9,"event":"soldOut","args":["x"]}`, "unknown-event"}, // a serverToClient event
			{`{"type":"event","id":10,"event":"browse","args":[{}]}`, "unexpected-acknowledgement"},
		} {
			r := rejection(t, exchange(t, ws, tc.frame))
			if r["reason"] != tc.reason {
				t.Errorf("%s: %v, want reason %s", tc.frame, r, tc.reason)
			}
		}
		// Frames that ask for no answer get none: the next answer is the
		// sync request's.
		for _, f := range []string{
			`{"type":"event","event":"browse","args":[{"from":1}]}`,
			`{"type":"event","event":"browse","args":["not an object"]}`,
			`{"type":"event","event":"cancel","args":["T1"]}`,
			`{"type":"event","event":"nothing","args":[]}`,
			`{"type":"encore","x":1}`,
			`{"type":"ack","id":99999,"ack":true}`,
			`{"type":"rejection","id":99998,"rejection":{}}`,
		} {
			if err := ws.WriteMessage(websocket.TextMessage, []byte(f)); err != nil {
				t.Fatal(err)
			}
		}
		if got := exchange(t, ws, `{"type":"event","id":11,"event":"cancel","args":["T1"]}`); got != `{"type":"ack","id":11,"ack":"too-late"}` {
			t.Fatalf("sync: %s", got)
		}
	})
	t.Run("the empty contract upgrades and knows no event", func(t *testing.T) {
		r := rejection(t, exchange(t, dial(t, "/realtime/green-room", proto), `{"type":"event","id":1,"event":"hello","args":[]}`))
		if r["reason"] != "unknown-event" {
			t.Fatalf("%v", r)
		}
	})
	t.Run("handshakes refused with a status", func(t *testing.T) {
		for _, tc := range []struct {
			path   string
			header http.Header
			status int
			code   string
		}{
			{"/realtime/stage", proto, 101, ""},
			{"/realtime/stage", http.Header{"Sec-WebSocket-Protocol": {realtime.Subprotocol}, "Origin": {s.base}}, 101, ""},
			{"/realtime/opera", proto, 404, "NOT_FOUND"},
			{"/realtime/opera", http.Header{}, 404, "NOT_FOUND"},
			{"/realtime/Stage", proto, 404, "NOT_FOUND"},
			{"/realtime/stage/", proto, 404, "NOT_FOUND"},
			{"/realtime/stage", http.Header{"Sec-WebSocket-Protocol": {realtime.Subprotocol}, "Origin": {"https://evil.example"}}, 403, "FORBIDDEN"},
			{"/realtime/stage", http.Header{"Sec-WebSocket-Protocol": {realtime.Subprotocol}, "Origin": {"null"}}, 403, "FORBIDDEN"},
			{"/realtime/stage", http.Header{"Sec-WebSocket-Protocol": {"graphql-ws"}}, 400, "BAD_REQUEST"},
		} {
			ws, resp, err := (&websocket.Dialer{HandshakeTimeout: 10 * time.Second}).Dial(base+tc.path, tc.header)
			if err == nil {
				ws.Close()
			}
			if resp == nil {
				t.Fatalf("%s: no response: %v", tc.path, err)
			}
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status || (tc.code != "" && errorCode(t, tc.path, body) != tc.code) {
				t.Errorf("%s %v: %d %s, want %d %s", tc.path, tc.header, resp.StatusCode, body, tc.status, tc.code)
			}
		}
	})
	t.Run("broken frames close the connection with the page's code", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			typ  int
			data string
			code int
		}{
			{"beyond the 64 KiB limit", websocket.TextMessage, `{"type":"event","event":"bow","args":["` + strings.Repeat("x", 70<<10) + `"]}`, realtime.CloseMessageTooBig},
			{"not UTF-8", websocket.TextMessage, "\x00\xff\xfe garbage", realtime.CloseInvalidPayload},
			{"not JSON", websocket.TextMessage, "hello", realtime.CloseInvalidPayload},
			{"too deep", websocket.TextMessage, `{"type":"event","id":1,"event":"bow","args":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`, realtime.CloseInvalidPayload},
			{"not an object", websocket.TextMessage, `[1,2,3]`, realtime.CloseProtocolError},
			{"id not an integer", websocket.TextMessage, `{"type":"event","id":"7","event":"bow","args":[1]}`, realtime.CloseProtocolError},
			{"binary", websocket.BinaryMessage, "\x01\x02\x03", realtime.CloseUnsupportedData},
		} {
			ws := dial(t, "/realtime/stage", proto)
			// (A write cut short by the server's close is fine: the
			// close frame is what counts.)
			_ = ws.WriteMessage(tc.typ, []byte(tc.data))
			_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
			var ce *websocket.CloseError
			for {
				_, _, err := ws.ReadMessage()
				if err == nil {
					continue
				}
				if !errors.As(err, &ce) {
					t.Fatalf("%s: ended without a close frame: %v", tc.name, err)
				}
				break
			}
			if ce.Code != tc.code {
				t.Errorf("%s: closed with %d, want %d", tc.name, ce.Code, tc.code)
			}
		}
	})
	t.Run("many connections at once", func(t *testing.T) {
		const conns, requests = 100, 10
		var wg sync.WaitGroup
		errs := make(chan error, conns)
		for i := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ws, _, err := (&websocket.Dialer{HandshakeTimeout: 30 * time.Second}).Dial(base+"/realtime/stage", proto)
				if err != nil {
					errs <- err
					return
				}
				defer ws.Close()
				_ = ws.SetReadDeadline(time.Now().Add(60 * time.Second))
				for j := 1; j <= requests; j++ {
					if err := ws.WriteMessage(websocket.TextMessage, []byte(fmt.Sprintf(`{"type":"event","id":%d,"event":"tuneUp","args":["c%d",440,true]}`, j, i))); err != nil {
						errs <- err
						return
					}
					_, msg, err := ws.ReadMessage()
					if want := fmt.Sprintf(`{"type":"ack","id":%d,"ack":{"inTune":true,"offsetCents":0}}`, j); err != nil || string(msg) != want {
						errs <- fmt.Errorf("connection %d request %d: %s %v", i, j, msg, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
	t.Run("still healthy", func(t *testing.T) {
		if got := exchange(t, dial(t, "/realtime/stage", proto), `{"type":"event","id":1,"event":"heartbeat","args":[]}`); got != `{"type":"ack","id":1,"ack":null}` {
			t.Fatalf("%s", got)
		}
		if st, _, _ := s.do(t, "GET", "/graph.json", "", nil); st != 200 {
			t.Fatalf("/graph.json: %d", st)
		}
	})
}
