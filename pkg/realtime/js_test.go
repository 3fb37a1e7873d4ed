package realtime_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"stitchkit.dev/stitchkit/pkg/mount"
	"stitchkit.dev/stitchkit/pkg/realtime"
)

// nodeCommand returns node with what it needs for a global WebSocket:
// node 20 has it behind --experimental-websocket, node 22+ by default. A
// missing node fails the test: the ES module client is part of the
// deliverable and must be checked against the real server, not skipped.
func nodeCommand(t *testing.T) []string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node (≥ 20) is not on PATH: the ES module client test needs it (install nodejs): %v", err)
	}
	probe := `process.exit(typeof WebSocket === "function" ? 0 : 1)`
	if exec.Command(node, "-e", probe).Run() == nil {
		return []string{node}
	}
	if exec.Command(node, "--experimental-websocket", "-e", probe).Run() == nil {
		return []string{node, "--experimental-websocket"}
	}
	out, _ := exec.Command(node, "--version").CombinedOutput()
	t.Fatalf("node %s has no WebSocket, even with --experimental-websocket: node ≥ 20 is needed", bytes.TrimSpace(out))
	return nil
}

// TestJSClient runs js/realtime_test.mjs with node's own WebSocket against
// the Go server.
func TestJSClient(t *testing.T) {
	cmd := nodeCommand(t)
	var o realtime.Options[string]
	h := newHarness(t, chatContract(t), &o)
	// "slow" waits for "release-slow" from another connection: an answer
	// that is late whatever the scheduler does (a sleep was not, when node
	// did not run for longer than it).
	slow := make(chan struct{})
	var releaseSlow sync.Once
	t.Cleanup(func() { releaseSlow.Do(func() { close(slow) }) }) // before the harness shuts down
	var n atomic.Int64
	var typed atomic.Bool
	h.handle("typing", func(_ context.Context, _ *realtime.Conn[string], a realtime.Args) (any, error) {
		var b bool
		err := a.Decode(&b)
		typed.Store(b)
		return nil, err
	})
	h.handle("say", func(ctx context.Context, c *realtime.Conn[string], a realtime.Args) (any, error) {
		var m struct{ Text string }
		if err := a.Decode(&m); err != nil {
			return nil, err
		}
		report := func(text string) {
			_ = c.Emit(context.Background(), "message", map[string]any{"text": text, "from": "server"})
		}
		ask := func(question string) {
			go func() {
				ack, err := c.Request(context.Background(), 2*time.Second, "confirm", map[string]any{"question": question})
				if err != nil {
					me, _ := mount.AsError(err)
					report("error:" + string(me.Code))
					return
				}
				var v struct{ Answer string }
				_ = json.Unmarshal(ack, &v)
				report("answer:" + v.Answer)
			}()
		}
		switch m.Text {
		case "push":
			report("pushed")
		case "ask":
			ask("ready?")
		case "bad-ask":
			ask("bad?")
		case "slow":
			<-slow // a handler held by the test; released by "release-slow" or the cleanup
		case "release-slow":
			releaseSlow.Do(func() { close(slow) })
		case "hang":
			c.Close()
		}
		return map[string]any{"n": n.Add(1)}, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	run := exec.CommandContext(ctx, cmd[0], append(cmd[1:], "js/realtime_test.mjs", h.url)...)
	var out bytes.Buffer
	run.Stdout, run.Stderr = &out, &out
	err := run.Run()
	t.Logf("node:\n%s", out.String())
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	if strings.Contains(out.String(), "FAIL") || strings.Count(out.String(), "ok ") < 13 {
		t.Fatal("not every step passed")
	}
	if !typed.Load() {
		t.Fatal("emit from node did not reach the typing handler")
	}
	// What the server reported while node drove it.
	var keys []string
	for len(h.rej) > 0 {
		keys = append(keys, rejectionKey(<-h.rej)) // len > 0: never blocks
	}
	want := []string{
		"server-inbound/arguments/invalid-arguments/peer",
		"server-inbound/arguments/unknown-event/peer",
		"server-inbound/acknowledgement/invalid-acknowledgement-value/peer",
	}
	if strings.Join(keys, " ") != strings.Join(want, " ") {
		t.Fatalf("server rejections %v, want %v", keys, want)
	}
}

// TestJSClientClose runs js/close_test.mjs: close() resolves whether the
// server answers the closing handshake, cannot read it (its reader waits
// behind a full inbox), or drops the connection instead.
func TestJSClientClose(t *testing.T) {
	cmd := nodeCommand(t)
	release := make(chan struct{})
	var once sync.Once
	h := newHarness(t, chatContract(t), &realtime.Options[string]{Inbox: 1})
	t.Cleanup(func() { once.Do(func() { close(release) }) }) // before the harness shuts down
	h.handle("typing", func(context.Context, *realtime.Conn[string], realtime.Args) (any, error) { return nil, nil })
	h.handle("say", func(_ context.Context, _ *realtime.Conn[string], a realtime.Args) (any, error) {
		var m struct{ Text string }
		if err := a.Decode(&m); err != nil {
			return nil, err
		}
		switch m.Text {
		case "stall":
			<-release // a handler held by the test; released at the latest by its cleanup
		case "release":
			once.Do(func() { close(release) })
		}
		return map[string]any{"n": 1}, nil
	})

	// The dropping peer: it closes the TCP connection on the client's close
	// frame, without an answer.
	up := websocket.Upgrader{Subprotocols: []string{realtime.Subprotocol}}
	drop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		ws.SetCloseHandler(func(int, string) error { return ws.NetConn().Close() })
		for {
			if _, _, err := ws.ReadMessage(); err != nil {
				return
			}
		}
	}))
	defer drop.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	run := exec.CommandContext(ctx, cmd[0], append(cmd[1:], "js/close_test.mjs", h.url, "ws"+strings.TrimPrefix(drop.URL, "http"))...)
	var out bytes.Buffer
	run.Stdout, run.Stderr = &out, &out
	err := run.Run()
	t.Logf("node:\n%s", out.String())
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	if strings.Contains(out.String(), "FAIL") || strings.Count(out.String(), "ok ") != 4 {
		t.Fatal("not every step passed")
	}
}

func TestJSHandler(t *testing.T) {
	hs := httptest.NewServer(realtime.JSHandler())
	defer hs.Close()
	resp, err := http.Get(hs.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want, err := os.ReadFile("js/realtime.js")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/javascript; charset=utf-8" || !bytes.Equal(body, want) {
		t.Fatalf("%d %s, %d bytes", resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
	}
	if !bytes.Equal(realtime.JSModule(), want) {
		t.Fatal("JSModule differs from js/realtime.js")
	}
	resp, err = http.Post(hs.URL, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 {
		t.Fatalf("POST: %d", resp.StatusCode)
	}
}
