package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"stitchkit.dev/stitchkit/examples/tasks/server"
	"stitchkit.dev/stitchkit/examples/tasks/tasksapi"
	"stitchkit.dev/stitchkit/pkg/realtime"
)

// startLive serves a fresh app and shuts its WebSockets down at the end.
func startLive(t *testing.T) (*client, string) {
	t.Helper()
	app, err := server.New(server.NewMemoryStore(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(app.Handler())
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := app.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	return &client{t: t, base: srv.URL, http: srv.Client()}, "ws" + strings.TrimPrefix(srv.URL, "http") + server.BoardPath
}

// watcher is a Go client watching one board.
func watcher(t *testing.T, url, board string) chan tasksapi.Task {
	t.Helper()
	c, err := realtime.NewContract(tasksapi.Graph(), "board", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cl, err := realtime.Dial(ctx, url, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	got := make(chan tasksapi.Task, 16)
	if _, err := cl.On("taskChanged", func(_ context.Context, args realtime.Args) (any, error) {
		var a tasksapi.BoardTaskChangedArgs
		if err := json.Unmarshal(args.JSON(), &a); err != nil {
			return nil, err
		}
		got <- a.Item0
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	ack, err := cl.Request(ctx, 0, "watch", map[string]any{"board": board})
	if err != nil || string(ack) != `{"ok":true}` {
		t.Fatalf("watch %s: %s %v", board, ack, err)
	}
	return got
}

func changed(t *testing.T, ch chan tasksapi.Task, want tasksapi.Task) {
	t.Helper()
	select {
	case got := <-ch:
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if !bytes.Equal(g, w) {
			t.Fatalf("taskChanged %s, want %s", g, w)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("no taskChanged for %s", want.ID)
	}
}

func quiet(t *testing.T, ch chan tasksapi.Task) {
	t.Helper()
	select {
	case got := <-ch:
		t.Fatalf("unexpected taskChanged %+v", got)
	case <-time.After(50 * time.Millisecond):
	}
}

// TestBoardLive: creating or completing a task over HTTP emits
// taskChanged to the watchers of the main board and of the task's tags'
// boards, and to nobody else.
func TestBoardLive(t *testing.T) {
	c, url := startLive(t)
	main, docs, ops := watcher(t, url, server.MainBoard), watcher(t, url, "docs"), watcher(t, url, "ops")

	task := c.create("Write docs", "docs")
	changed(t, main, task)
	changed(t, docs, task)
	quiet(t, ops)

	plain := c.create("Untagged")
	changed(t, main, plain)
	quiet(t, docs)

	var done tasksapi.Task
	c.ok(c.do("POST", "/api/tasks/"+string(task.ID)+"/complete", nil), 200, &done)
	if !done.Done {
		t.Fatal("not done")
	}
	changed(t, main, done)
	changed(t, docs, done)
	quiet(t, ops)

	// A refused change emits nothing.
	c.fails(c.do("POST", "/api/tasks", map[string]any{"title": ""}), 400, "VALIDATION_ERROR")
	quiet(t, main)
}

// TestBoardPage: / is the live board page, which loads the ES module
// client from /realtime.js and watches the main board.
func TestBoardPage(t *testing.T) {
	c, _ := startLive(t)
	page := c.do("GET", "/", nil)
	if page.status != 200 || !strings.HasPrefix(page.header.Get("Content-Type"), "text/html") ||
		!bytes.Contains(page.body, []byte(`import { connect } from "/realtime.js"`)) ||
		!bytes.Contains(page.body, []byte(`rt.request("watch", [{ board: "main" }])`)) {
		t.Fatalf("page: %d %s", page.status, page.header.Get("Content-Type"))
	}
	js := c.do("GET", "/realtime.js", nil)
	if js.status != 200 || !bytes.Equal(js.body, realtime.JSModule()) {
		t.Fatalf("/realtime.js: %d", js.status)
	}
	if res := c.do("GET", "/nothing-here", nil); res.status != 404 {
		t.Fatalf("unknown path: %d", res.status)
	}
}

// TestBoardInNode is the page's flow in node with its own WebSocket and
// fetch: the ES module client watches the main board, a task is created
// over HTTP, and the event arrives.
func TestBoardInNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node (≥ 20) is not on PATH: the live board test needs it (install nodejs): %v", err)
	}
	args := []string{}
	probe := `process.exit(typeof WebSocket === "function" ? 0 : 1)`
	if exec.Command(node, "-e", probe).Run() != nil {
		args = append(args, "--experimental-websocket")
	}
	c, url := startLive(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "realtime.js"), realtime.JSModule(), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `import { connect } from "./realtime.js";
const [ws, base] = process.argv.slice(2);
const rt = await connect(ws);
const seen = new Promise((resolve) => rt.on("taskChanged", resolve));
const ack = await rt.request("watch", [{ board: "main" }]);
if (!ack.ok) throw new Error("watch not acknowledged");
const res = await fetch(base + "/api/tasks", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ title: "From node" }) });
if (res.status !== 200) throw new Error("create: " + res.status);
const task = await Promise.race([seen, new Promise((_, reject) => setTimeout(() => reject(new Error("no taskChanged")), 5000))]);
console.log(JSON.stringify(task));
await rt.close();
`
	if err := os.WriteFile(filepath.Join(dir, "board.mjs"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, append(args, filepath.Join(dir, "board.mjs"), url, c.base)...).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != `{"done":false,"id":"t_1","title":"From node"}` {
		t.Fatalf("node saw %s", got)
	}
}

// TestShutdownClosesWatchers: App.Shutdown closes the board's
// WebSockets with 1001.
func TestShutdownClosesWatchers(t *testing.T) {
	app, err := server.New(server.NewMemoryStore(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(app.Handler())
	defer srv.Close()
	ws, _, err := (&websocket.Dialer{Subprotocols: []string{realtime.Subprotocol}}).Dial("ws"+strings.TrimPrefix(srv.URL, "http")+server.BoardPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	closed := make(chan error, 1)
	go func() {
		_, _, err := ws.ReadMessage()
		closed <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := app.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	var ce *websocket.CloseError
	if err := <-closed; !errors.As(err, &ce) || ce.Code != realtime.CloseGoingAway {
		t.Fatalf("closed with %v", err)
	}
}
