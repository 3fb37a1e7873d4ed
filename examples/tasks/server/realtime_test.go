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
	"stitchkit.dev/stitchkit/internal/projecttest"
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
	c, err := realtime.NewContract(projecttest.New(t, tasksapi.Graph(), nil), "board")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := realtime.Dial(ctx, url, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	got := make(chan tasksapi.Task, 16)
	if _, err := cl.On("taskChanged", func(ctx context.Context, args realtime.Args) (any, error) {
		var a tasksapi.BoardTaskChangedArgs
		if err := json.Unmarshal(args.JSON(), &a); err != nil {
			return nil, err
		}
		select {
		case got <- a.Task:
		case <-ctx.Done(): // Close waits for handlers: never block it
		}
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
	case <-time.After(10 * time.Second):
		t.Fatalf("no taskChanged for %s", want.ID)
	}
}

// quiet is an absence check: a slow machine can only make it miss a stray
// event, never fail a correct server.
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
	// The script traces each step to stderr with the time since it started,
	// so that a failure says where node was. It must exit by itself: a
	// timer left running, or a socket close() did not end, keeps it alive,
	// and the unref'd watchdog turns that into a failure that says so.
	script := `import { connect } from "./realtime.js";
const [ws, base] = process.argv.slice(2);
const t0 = Date.now();
const trace = (what) => console.error(` + "`${Date.now() - t0} ms: ${what}`" + `);
const rt = await connect(ws, { closeTimeout: 20000 }); // the close code is checked: wait for the answer even on a loaded machine
trace("connected");
const seen = new Promise((resolve) => rt.on("taskChanged", resolve));
const ack = await rt.request("watch", [{ board: "main" }]);
if (!ack.ok) throw new Error("watch not acknowledged");
trace("watching");
const res = await fetch(base + "/api/tasks", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ title: "From node" }) });
if (res.status !== 200) throw new Error("create: " + res.status);
await res.arrayBuffer();
trace("created");
let timer;
const late = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error("no taskChanged in 15 s")), 15000); });
const task = await Promise.race([seen, late]).finally(() => clearTimeout(timer));
trace("taskChanged");
console.log(JSON.stringify(task));
const closed = await rt.close();
trace("closed " + JSON.stringify(closed));
setTimeout(() => { trace("still running 10 s after close(): a handle keeps node alive"); process.exit(3); }, 10000).unref();
`
	if err := os.WriteFile(filepath.Join(dir, "board.mjs"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	// Generous: node's start-up on a loaded 2-core CI machine is slow, and
	// a hang is caught inside the script with a message.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, node, append(args, filepath.Join(dir, "board.mjs"), url, c.base)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\nstdout: %s\nstderr:\n%s", err, out, stderr.String())
	}
	if got := strings.TrimSpace(string(out)); got != `{"done":false,"id":"t_1","title":"From node"}` {
		t.Fatalf("node saw %s\nstderr:\n%s", got, stderr.String())
	}
	if !strings.Contains(stderr.String(), `closed {"code":1000,"reason":""}`) {
		t.Fatalf("the board's close handshake did not end with 1000:\n%s", stderr.String())
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
	_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second)) // bounds <-closed below
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
