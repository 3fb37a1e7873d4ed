package asyncapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"stitchkit.dev/stitchkit/pkg/check"
	"stitchkit.dev/stitchkit/pkg/export/asyncapi"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/realtime"
)

// TestProtocolDocAgrees holds docs/realtime-protocol.md, the AsyncAPI
// export and this implementation together, for the tasks example's board
// contract: the subprotocol and addresses are the same in all three; the
// reason and close-code tables list exactly the constants; every example
// frame parses; each event's args and each ack match the AsyncAPI
// message payload the document says they are; every client frame, sent to
// a real server, is answered with exactly the frame the page shows next;
// and the server frame is exactly what the server emits.
func TestProtocolDocAgrees(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/realtime-protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	g, err := check.Compile(context.Background(), "../../../examples/tasks")
	if err != nil {
		t.Fatal(err)
	}
	aDoc, err := asyncapi.Generate(projecttest.New(t, g, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Subprotocol string `json:"x-stitchkit-subprotocol"`
		Channels    map[string]struct {
			Address  string                     `json:"address"`
			Messages map[string]json.RawMessage `json:"messages"`
		} `json:"channels"`
	}
	if err := json.Unmarshal(aDoc, &a); err != nil {
		t.Fatal(err)
	}

	t.Run("subprotocol", func(t *testing.T) {
		if asyncapi.Subprotocol != realtime.Subprotocol || a.Subprotocol != realtime.Subprotocol {
			t.Fatalf("realtime %q, asyncapi constant %q, exported %q", realtime.Subprotocol, asyncapi.Subprotocol, a.Subprotocol)
		}
		for _, want := range []string{"Sec-WebSocket-Protocol: " + realtime.Subprotocol, "`x-stitchkit-subprotocol` at the top level: `" + realtime.Subprotocol + "`"} {
			if !strings.Contains(text, want) {
				t.Errorf("the page does not say %q", want)
			}
		}
	})
	t.Run("addresses", func(t *testing.T) {
		if realtime.DefaultPrefix != asyncapi.DefaultPrefix {
			t.Fatalf("prefix %q here, %q in the AsyncAPI export", realtime.DefaultPrefix, asyncapi.DefaultPrefix)
		}
		if got := a.Channels["board"].Address; got != realtime.DefaultPrefix+"/board" || !strings.Contains(text, "(`"+got+"`)") {
			t.Fatalf("board channel address %q", got)
		}
		if !strings.Contains(text, "`"+realtime.DefaultPrefix+"/{contract}`") {
			t.Fatal("the page does not give the endpoint path")
		}
	})
	t.Run("reason table", func(t *testing.T) {
		want := []string{string(realtime.ReasonUnknownEvent), string(realtime.ReasonInvalidArguments), string(realtime.ReasonInvalidAck), string(realtime.ReasonMissingAck),
			string(realtime.ReasonUnexpectedAck), string(realtime.ReasonRefused), string(realtime.ReasonRejectedByPeer)}
		if got := tableKeys(text, "| reason |"); !sameSet(got, want) {
			t.Fatalf("reasons in the page %v, in the code %v", got, want)
		}
	})
	t.Run("close code table", func(t *testing.T) {
		var want []string
		for _, c := range []int{realtime.CloseNormal, realtime.CloseGoingAway, realtime.CloseProtocolError, realtime.CloseUnsupportedData, realtime.CloseInvalidPayload,
			realtime.ClosePolicyViolation, realtime.CloseMessageTooBig, realtime.CloseInternalError, realtime.CloseTryAgainLater} {
			want = append(want, strconv.Itoa(c))
		}
		if got := tableKeys(text, "| code | meaning |"); !sameSet(got, want) {
			t.Fatalf("close codes in the page %v, in the code %v", got, want)
		}
	})

	frames := exampleFrames(t, text)
	if len(frames) < 6 {
		t.Fatalf("%d example frames", len(frames))
	}
	payloads := asyncPayloads(t, aDoc, a.Channels["board"].Messages)
	t.Run("frames parse and match the AsyncAPI payloads", func(t *testing.T) {
		for _, ex := range frames {
			// The server's own parser reads these frames in the next subtest;
			// here their fields are read as the page documents them.
			var f struct {
				Typ       string `json:"type"`
				Event     string `json:"event"`
				Rejection struct {
					Reason string `json:"reason"`
				} `json:"rejection"`
			}
			if err := json.Unmarshal(ex.raw, &f); err != nil {
				t.Fatalf("%s: %s: %v", ex.label, ex.raw, err)
			}
			var v any
			_ = json.Unmarshal(ex.raw, &v)
			m := v.(map[string]any)
			switch {
			case ex.kind == "":
				if f.Typ != realtime.FrameEvent || ex.direction+"."+f.Event != ex.event {
					t.Fatalf("%s: frame %s", ex.label, ex.raw)
				}
				if s := payloads[ex.event]; s != nil {
					if err := s.Validate(m["args"]); (err != nil) != ex.invalid {
						t.Fatalf("%s (invalid: %v): against the AsyncAPI payload: %v", ex.label, ex.invalid, err)
					}
				} else if _, known := a.Channels["board"].Messages[ex.event]; known {
					t.Fatalf("%s: no payload schema", ex.label)
				}
			case ex.kind == "ack":
				if f.Typ != realtime.FrameAck {
					t.Fatalf("%s: frame %s", ex.label, ex.raw)
				}
				if err := payloads[ex.event+".ack"].Validate(m["ack"]); err != nil {
					t.Fatalf("%s: ack does not match the AsyncAPI payload: %v", ex.label, err)
				}
			case ex.kind == "rejection":
				if f.Typ != realtime.FrameRejection || !slices.Contains(tableKeys(text, "| reason |"), f.Rejection.Reason) {
					t.Fatalf("%s: frame %s", ex.label, ex.raw)
				}
			}
		}
	})

	t.Run("a real server answers as the page shows", func(t *testing.T) {
		mux, err := realtime.ServeExamples(projecttest.New(t, g, nil), "", nil)
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(mux)
		defer func() {
			_ = mux.Shutdown(context.Background())
			hs.Close()
		}()
		d := websocket.Dialer{Subprotocols: []string{realtime.Subprotocol}}
		ws, _, err := d.Dial("ws"+strings.TrimPrefix(hs.URL, "http")+mux.Path("board"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ws.Close()
		answered := 0
		for _, ex := range frames {
			if ex.direction != graph.ClientToServer || ex.kind != "" || !bytes.Contains(ex.raw, []byte(`"id":`)) {
				continue
			}
			answer := answerOf(frames, ex)
			if answer == nil {
				t.Fatalf("%s: the page shows no answer to %s", ex.label, ex.raw)
			}
			if err := ws.WriteMessage(websocket.TextMessage, ex.raw); err != nil {
				t.Fatal(err)
			}
			_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, got, err := ws.ReadMessage()
			if err != nil {
				t.Fatal(err)
			}
			if c, w := canonical(t, got), canonical(t, answer.raw); c != w {
				t.Fatalf("%s: the server answered\n%s\nthe page shows\n%s", ex.label, c, w)
			}
			answered++
		}
		if answered < 3 {
			t.Fatalf("only %d client frames checked", answered)
		}
	})

	t.Run("the server emits the page's server frame", func(t *testing.T) {
		c, err := realtime.NewContract(projecttest.New(t, g, nil), "board")
		if err != nil {
			t.Fatal(err)
		}
		srv, err := realtime.NewServer[struct{}](c, nil)
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(srv)
		defer func() { _ = srv.Shutdown(context.Background()); hs.Close() }()
		d := websocket.Dialer{Subprotocols: []string{realtime.Subprotocol}}
		ws, _, err := d.Dial("ws"+strings.TrimPrefix(hs.URL, "http"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ws.Close()
		for deadline := time.Now().Add(10 * time.Second); srv.Stats().Connections == 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the server did not register the connection in 10s")
			}
		}
		checked := 0
		for _, ex := range frames {
			if ex.direction != graph.ServerToClient || ex.kind != "" {
				continue
			}
			var f struct {
				Event string
				Args  []any
			}
			_ = json.Unmarshal(ex.raw, &f)
			if err := srv.Emit(context.Background(), f.Event, f.Args...); err != nil {
				t.Fatal(err)
			}
			_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, got, err := ws.ReadMessage()
			if err != nil {
				t.Fatal(err)
			}
			if c, w := canonical(t, got), canonical(t, ex.raw); c != w {
				t.Fatalf("%s: the server sent\n%s\nthe page shows\n%s", ex.label, c, w)
			}
			checked++
		}
		if checked == 0 {
			t.Fatal("no server frame on the page")
		}
	})
}

// answerOf finds the ack or rejection frame the page shows for a
// request: same event, same id.
func answerOf(frames []docFrame, req docFrame) *docFrame {
	var r struct{ ID int64 }
	_ = json.Unmarshal(req.raw, &r)
	for i, f := range frames {
		var a struct{ ID int64 }
		_ = json.Unmarshal(f.raw, &a)
		if f.kind != "" && f.event == req.event && a.ID == r.ID {
			return &frames[i]
		}
	}
	return nil
}

type docFrame struct {
	label     string // the fence's frame= value
	direction string
	event     string // "<direction>.<event>"
	kind      string // "", "ack" or "rejection"
	// invalid marks a frame the page shows being rejected: its args must
	// not match.
	invalid bool
	raw     []byte
}

var fence = regexp.MustCompile("(?ms)^```json frame=(\\S+)( invalid)?\n(.*?)\n```")

func exampleFrames(t *testing.T, text string) []docFrame {
	t.Helper()
	var out []docFrame
	for _, m := range fence.FindAllStringSubmatch(text, -1) {
		parts := strings.Split(m[1], ".")
		if len(parts) < 2 || len(parts) > 3 {
			t.Fatalf("fence label %q is not <direction>.<event>[.ack|.rejection]", m[1])
		}
		ex := docFrame{label: m[1], direction: parts[0], event: parts[0] + "." + parts[1], invalid: m[2] != "", raw: []byte(strings.TrimSpace(m[3]))}
		if len(parts) == 3 {
			ex.kind = parts[2]
		}
		if ex.direction != graph.ServerToClient && ex.direction != graph.ClientToServer {
			t.Fatalf("fence label %q: unknown direction", m[1])
		}
		out = append(out, ex)
	}
	return out
}

// asyncPayloads compiles each message payload of the channel from the
// AsyncAPI document itself (its $refs point into the document's
// components).
func asyncPayloads(t *testing.T, doc []byte, messages map[string]json.RawMessage) map[string]*jsonschema.Schema {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const url = "stitchkit:///asyncapi.json"
	if err := c.AddResource(url, v); err != nil {
		t.Fatal(err)
	}
	out := map[string]*jsonschema.Schema{}
	for key := range messages {
		s, err := c.Compile(url + "#/channels/board/messages/" + key + "/payload/schema")
		if err != nil {
			t.Fatalf("message %s: %v", key, err)
		}
		out[key] = s
	}
	return out
}

// tableKeys returns the first cell (without backticks) of every row of the
// markdown table whose header row starts with header.
func tableKeys(text, header string) []string {
	var keys []string
	in := false
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, header):
			in = true
		case in && strings.HasPrefix(line, "|---"):
		case in && strings.HasPrefix(line, "|"):
			cell := strings.TrimSpace(strings.Split(line, "|")[1])
			keys = append(keys, strings.Trim(cell, "`"))
		case in:
			return keys
		}
	}
	return keys
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func canonical(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	out, err := graph.Canonical(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
