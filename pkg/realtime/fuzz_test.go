package realtime_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/realtime"
	"stitchkit.dev/stitchkit/pkg/validate"
)

// syncID numbers the valid request the fuzzer sends after each input: its
// ack proves the server has dealt with the input and is still serving.
// The ids start far above what inputs use, and never repeat.
var syncID int64 = 1 << 52

// FuzzServerFrames sends arbitrary frames to a live server. The server
// must never panic (a panic in any of its goroutines kills the fuzzer),
// must keep serving (or close the connection with a protocol code), and
// no handler may ever see arguments that its event's schema refuses:
// every handler re-validates what it got with validators compiled
// independently from the graph's schema bytes.
func FuzzServerFrames(f *testing.F) {
	seeds := []string{
		`{"type":"event","id":1,"event":"say","args":[{"text":"hi"}]}`,
		`{"type":"event","event":"typing","args":[true]}`,
		`{"type":"event","id":2,"event":"join","args":["room"]}`,
		`{"type":"event","id":3,"event":"say","args":[{"text":""}]}`,
		`{"type":"event","id":4,"event":"say","args":{"text":"x"}}`,
		`{"type":"event","id":5,"event":"say","args":[{"text":"x","extra":1}]}`,
		`{"type":"event","event":"say","args":[{"text":"no id"}]}`,
		`{"type":"event","id":6,"event":"typing","args":["yes"]}`,
		`{"type":"event","id":7,"event":"nope","args":[]}`,
		`{"type":"ack","id":1,"ack":{"answer":"yes"}}`,
		`{"type":"rejection","id":1,"rejection":{"event":"confirm","reason":"x","message":"y"}}`,
		`{"type":"presence"}`,
		`{"type":"event","id":1e3,"event":"say","args":[]}`,
		`{"type":"event","event":"say","args":[{"text":"\ud800"}]}`,
		`{"type":"event","event":"typing","args":[true],"args":[false]}`,
		`[[[[[[[[[[]]]]]]]]]]`,
		`{"type":"event","id":1,"event":"join","args":["` + strings.Repeat("é", 40) + `"]}`,
		"\xff\xfe",
		``,
	}
	for _, s := range seeds {
		f.Add([]byte(s), false)
	}
	f.Add([]byte(`{"type":"event","event":"typing","args":[true]}`), true)

	g := compileCUE(f, "testdata/chat/chat.cue")
	c, err := realtime.NewContract(projecttest.New(f, g, nil), "chat")
	if err != nil {
		f.Fatal(err)
	}
	independent := independentValidators(f, g)
	var (
		mu         sync.Mutex
		violations []string
	)
	srv, err := realtime.NewServer(c, &realtime.Options[string]{MaxFrameBytes: 8 << 10})
	if err != nil {
		f.Fatal(err)
	}
	acks := map[string]any{"say": map[string]any{"n": 1}, "typing": nil, "join": map[string]any{"ok": true}}
	for event, ack := range acks {
		if err := srv.Handle(event, func(_ context.Context, _ *realtime.Conn[string], a realtime.Args) (any, error) {
			v, err := validate.DecodeJSON(a.JSON(), nil)
			if err == nil {
				err = independent[event].Validate(v)
			}
			if err != nil {
				mu.Lock()
				violations = append(violations, event+": "+string(a.JSON())+": "+err.Error())
				mu.Unlock()
			}
			return ack, nil
		}); err != nil {
			f.Fatal(err)
		}
	}
	hs := httptest.NewServer(srv)
	url := "ws" + strings.TrimPrefix(hs.URL, "http")
	var ws *websocket.Conn
	f.Cleanup(func() {
		if ws != nil {
			ws.Close()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		hs.Close()
	})
	d := websocket.Dialer{Subprotocols: []string{realtime.Subprotocol}, HandshakeTimeout: 5 * time.Second}

	f.Fuzz(func(t *testing.T, data []byte, binary bool) {
		if ws == nil {
			var err error
			if ws, _, err = d.Dial(url, http.Header{}); err != nil {
				t.Fatal(err)
			}
		}
		typ := websocket.TextMessage
		if binary {
			typ = websocket.BinaryMessage
		}
		if err := ws.WriteMessage(typ, data); err != nil {
			ws.Close()
			ws = nil
			return
		}
		syncID++
		want := syncID
		_ = ws.WriteMessage(websocket.TextMessage, []byte(`{"type":"event","id":`+strconv.FormatInt(want, 10)+`,"event":"say","args":[{"text":"sync"}]}`))
		// Read until the sync ack, or until the server closed the
		// connection with a protocol code.
		_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
		for {
			_, msg, err := ws.ReadMessage()
			if err != nil {
				var ce *websocket.CloseError
				if !asCloseError(err, &ce) {
					t.Fatalf("connection ended without a close frame after %q: %v", data, err)
				}
				switch ce.Code {
				case realtime.CloseProtocolError, realtime.CloseUnsupportedData, realtime.CloseInvalidPayload, realtime.CloseMessageTooBig:
				default:
					t.Fatalf("close %d after %q", ce.Code, data)
				}
				ws.Close()
				ws = nil
				break
			}
			var fr struct {
				Type string `json:"type"`
				ID   int64  `json:"id"`
			}
			if err := json.Unmarshal(msg, &fr); err != nil {
				t.Fatalf("server sent %q", msg)
			}
			if fr.Type == "ack" && fr.ID == want {
				break
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if len(violations) > 0 {
			t.Fatalf("a handler saw invalid arguments after %q: %v", data, violations)
		}
	})
}

func asCloseError(err error, ce **websocket.CloseError) bool {
	e, ok := err.(*websocket.CloseError)
	*ce = e
	return ok
}

// independentValidators compiles each clientToServer event's argument
// schema from the graph's bytes, separately from the server's contract.
func independentValidators(tb testing.TB, g *graph.Graph) map[string]*validate.Validator {
	tb.Helper()
	out := map[string]*validate.Validator{}
	for _, rc := range g.Realtime {
		if rc.Name != "chat" {
			continue
		}
		for _, ev := range rc.ClientToServer {
			v, err := validate.Compile(g.Schema(ev.Args))
			if err != nil {
				tb.Fatal(err)
			}
			out[ev.Name] = v
		}
	}
	return out
}
