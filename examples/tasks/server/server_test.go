package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"stitchkit.dev/stitchkit/examples/tasks/server"
	"stitchkit.dev/stitchkit/examples/tasks/tasksapi"
	"stitchkit.dev/stitchkit/pkg/mount"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// client talks to the app over real loopback HTTP.
type client struct {
	t    *testing.T
	base string
	http *http.Client
}

// start serves a fresh app (httptest listens on 127.0.0.1 only).
func start(t *testing.T, opts *server.Options) (*client, *server.App) {
	t.Helper()
	app, err := server.New(server.NewMemoryStore(nil), opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(app.Handler())
	t.Cleanup(srv.Close)
	return &client{t: t, base: srv.URL, http: srv.Client()}, app
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (c *client) do(method, path string, body any) response {
	c.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			c.t.Fatal(err)
		}
		r = strings.NewReader(string(j))
	}
	req, err := http.NewRequest(method, c.base+path, r)
	if err != nil {
		c.t.Fatal(err)
	}
	if r != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, b}
}

// ok requires status and decodes the body into out (when not nil).
func (c *client) ok(res response, status int, out any) {
	c.t.Helper()
	if res.status != status {
		c.t.Fatalf("status %d, want %d: %s", res.status, status, res.body)
	}
	if out != nil {
		if err := json.Unmarshal(res.body, out); err != nil {
			c.t.Fatalf("%v: %s", err, res.body)
		}
	}
}

// fails requires an error envelope with status and code and returns its
// message.
func (c *client) fails(res response, status int, code string) string {
	c.t.Helper()
	var env struct {
		Error struct {
			Code, Message string
			Details       map[string]any
		}
	}
	if res.status != status || json.Unmarshal(res.body, &env) != nil || env.Error.Code != code {
		c.t.Fatalf("got %d %s, want %d %s", res.status, res.body, status, code)
	}
	return env.Error.Message
}

func (c *client) create(title string, tags ...string) tasksapi.Task {
	c.t.Helper()
	in := map[string]any{"title": title}
	if len(tags) > 0 {
		in["tags"] = tags
	}
	var t tasksapi.Task
	c.ok(c.do("POST", "/api/tasks", in), 200, &t)
	return t
}

func TestTasksLifecycle(t *testing.T) {
	var changes []string
	var mu sync.Mutex
	c, _ := start(t, &server.Options{OnChange: func(_ context.Context, t tasksapi.Task) {
		mu.Lock()
		defer mu.Unlock()
		changes = append(changes, fmt.Sprintf("%s:%s:%v", t.ID, t.Title, t.Done))
	}})

	// create
	a := c.create("Write docs", "docs")
	if a.ID != "t_1" || a.Title != "Write docs" || a.Done || len(a.Tags) != 1 {
		t.Fatalf("created %+v", a)
	}
	b := c.create("Ship it")
	c.fails(c.do("POST", "/api/tasks", map[string]any{"title": "Write docs"}), 409, "TASK_CONFLICT")
	c.fails(c.do("POST", "/api/tasks", map[string]any{"title": ""}), 400, "VALIDATION_ERROR")
	c.fails(c.do("POST", "/api/tasks", map[string]any{"title": "x", "tags": []string{"Not A Tag"}}), 400, "VALIDATION_ERROR")
	c.fails(c.do("POST", "/api/tasks", map[string]any{"title": "x", "owner": "me"}), 400, "VALIDATION_ERROR")
	c.fails(c.do("POST", "/api/tasks", `{"title":`), 400, "BAD_REQUEST")

	// get, exists
	var got tasksapi.Task
	c.ok(c.do("GET", "/api/tasks/t_1", nil), 200, &got)
	if got.Title != "Write docs" {
		t.Errorf("get: %+v", got)
	}
	c.fails(c.do("GET", "/api/tasks/t_404", nil), 404, "TASK_NOT_FOUND")
	c.fails(c.do("GET", "/api/tasks/nope", nil), 400, "VALIDATION_ERROR")
	if res := c.do("HEAD", "/api/tasks/t_1/exists", nil); res.status != 200 || len(res.body) != 0 {
		t.Errorf("HEAD exists: %d %q", res.status, res.body)
	}
	if res := c.do("HEAD", "/api/tasks/t_404/exists", nil); res.status != 404 || len(res.body) != 0 {
		t.Errorf("HEAD missing: %d %q", res.status, res.body)
	}

	// update, rename, complete
	var up tasksapi.Task
	c.ok(c.do("PUT", "/api/tasks/"+string(b.ID), map[string]any{"title": "Ship it now", "done": false, "tags": []string{"release"}}), 200, &up)
	if up.Title != "Ship it now" || up.Tags[0] != "release" {
		t.Errorf("update: %+v", up)
	}
	c.fails(c.do("PUT", "/api/tasks/"+string(b.ID), map[string]any{"title": "Write docs", "done": false}), 409, "TASK_CONFLICT")
	c.fails(c.do("PUT", "/api/tasks/t_404", map[string]any{"title": "z", "done": true}), 404, "TASK_NOT_FOUND")
	c.fails(c.do("PUT", "/api/tasks/"+string(b.ID), map[string]any{"title": "z"}), 400, "VALIDATION_ERROR")
	c.ok(c.do("PATCH", "/api/tasks/t_1/title", map[string]any{"title": "Write more docs"}), 200, &got)
	if got.Title != "Write more docs" || got.Tags[0] != "docs" {
		t.Errorf("rename: %+v", got)
	}
	msg := c.fails(c.do("PATCH", "/api/tasks/t_1/title", map[string]any{"title": "Ship it now"}), 400, "VALIDATION_ERROR")
	if !strings.Contains(msg, "another task has this title") {
		t.Errorf("rename conflict message %q", msg)
	}
	c.fails(c.do("PATCH", "/api/tasks/t_404/title", map[string]any{"title": "q"}), 404, "TASK_NOT_FOUND")
	c.ok(c.do("POST", "/api/tasks/t_1/complete", nil), 200, &got)
	if !got.Done {
		t.Errorf("complete: %+v", got)
	}
	c.ok(c.do("POST", "/api/tasks/t_1/complete", nil), 200, &got) // idempotent
	c.fails(c.do("POST", "/api/tasks/t_404/complete", nil), 404, "TASK_NOT_FOUND")

	// notify: both union arms, a bad arm, a missing task
	var sent tasksapi.TasksNotifyOutput
	c.ok(c.do("POST", "/api/tasks/t_1/notify", map[string]any{"kind": "email", "address": "ada@example.com"}), 200, &sent)
	c.ok(c.do("POST", "/api/tasks/t_1/notify", map[string]any{"kind": "sms", "phone": "+15550100"}), 200, &sent)
	if !sent.Sent {
		t.Error("notify: not sent")
	}
	c.fails(c.do("POST", "/api/tasks/t_1/notify", map[string]any{"kind": "sms", "address": "ada@example.com"}), 400, "VALIDATION_ERROR")
	c.fails(c.do("POST", "/api/tasks/t_1/notify", map[string]any{"kind": "fax", "phone": "+15550100"}), 400, "VALIDATION_ERROR")
	c.fails(c.do("POST", "/api/tasks/t_404/notify", map[string]any{"kind": "email", "address": "a@b"}), 404, "TASK_NOT_FOUND")

	// delete
	c.ok(c.do("DELETE", "/api/tasks/"+string(b.ID), nil), 204, nil)
	c.fails(c.do("DELETE", "/api/tasks/"+string(b.ID), nil), 404, "TASK_NOT_FOUND")
	c.fails(c.do("GET", "/api/tasks/"+string(b.ID), nil), 404, "TASK_NOT_FOUND")

	// The change feed saw every create and change, in order.
	mu.Lock()
	defer mu.Unlock()
	want := []string{"t_1:Write docs:false", "t_2:Ship it:false", "t_2:Ship it now:false", "t_1:Write more docs:false", "t_1:Write more docs:true", "t_1:Write more docs:true"}
	if strings.Join(changes, " ") != strings.Join(want, " ") {
		t.Errorf("OnChange saw %v, want %v", changes, want)
	}
}

func TestListSearchAndPurge(t *testing.T) {
	now := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	var clock struct {
		sync.Mutex
		t time.Time
	}
	clock.t = now.Add(-30 * 24 * time.Hour)
	tick := func() time.Time { clock.Lock(); defer clock.Unlock(); return clock.t }
	app, err := server.New(server.NewMemoryStore(tick), &server.Options{Now: tick})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(app.Handler())
	defer srv.Close()
	c := &client{t: t, base: srv.URL, http: srv.Client()}

	for i := range 25 {
		tags := []string{"all"}
		if i%2 == 0 {
			tags = append(tags, "even")
		}
		c.create(fmt.Sprintf("Task %02d", i), tags...)
	}
	c.ok(c.do("POST", "/api/tasks/t_1/complete", nil), 200, nil)

	// The app's default page size (the contract declares none): 20.
	var page tasksapi.TasksListOutput
	c.ok(c.do("GET", "/api/tasks", nil), 200, &page)
	if len(page.Items) != server.DefaultListLimit || page.Next == nil {
		t.Fatalf("first page: %d items, next %v", len(page.Items), page.Next)
	}
	var rest tasksapi.TasksListOutput
	c.ok(c.do("GET", "/api/tasks?cursor="+*page.Next, nil), 200, &rest)
	if len(rest.Items) != 5 || rest.Next != nil || rest.Items[0].Title != "Task 20" {
		t.Fatalf("second page: %+v", rest)
	}
	// Query coercion: integers, booleans, repeated keys.
	c.ok(c.do("GET", "/api/tasks?limit=3&tag=all&tag=even", nil), 200, &page)
	if len(page.Items) != 3 || page.Items[1].Title != "Task 02" {
		t.Errorf("limit+tags: %+v", page.Items)
	}
	c.ok(c.do("GET", "/api/tasks?done=true", nil), 200, &page)
	if len(page.Items) != 1 || page.Items[0].ID != "t_1" {
		t.Errorf("done=true: %+v", page.Items)
	}
	for _, q := range []string{"limit=0", "limit=101", "limit=ten", "done=maybe", "tag=Bad", "cursor=zz", "colour=red"} {
		c.fails(c.do("GET", "/api/tasks?"+q, nil), 400, "VALIDATION_ERROR")
	}

	var found tasksapi.TasksSearchOutput
	c.ok(c.do("GET", "/api/tasks/search?q=task%2001", nil), 200, &found)
	if len(found.Items) != 1 || found.Items[0].Title != "Task 01" {
		t.Errorf("search: %+v", found)
	}
	c.ok(c.do("GET", "/api/tasks/search?q=even&fields=title", nil), 200, &found)
	if len(found.Items) != 0 {
		t.Errorf("search titles for a tag: %+v", found)
	}
	c.ok(c.do("GET", "/api/tasks/search?q=even&fields=tags&limit=2", nil), 200, &found)
	if len(found.Items) != 2 {
		t.Errorf("search tags: %+v", found)
	}
	c.fails(c.do("GET", "/api/tasks/search", nil), 400, "VALIDATION_ERROR")
	c.fails(c.do("GET", "/api/tasks/search?q=a&fields=body", nil), 400, "VALIDATION_ERROR")
	c.fails(c.do("GET", "/api/tasks/search?q=a&fields=title&fields=title", nil), 400, "VALIDATION_ERROR")

	// The runtime tool has no route; it runs on the same runner.
	res := app.Runner().Endpoint("tasks", "stats").CallTool(context.Background(), mount.SourceInternal, json.RawMessage(`{"tag":"even"}`), nil)
	if res.Err != nil || string(res.Output) != `{"done":1,"open":12}` {
		t.Errorf("task_stats: %s %v", res.Output, res.Err)
	}

	// Purge: the 25 tasks above were created 30 days ago, Fresh now.
	clock.Lock()
	clock.t = now
	clock.Unlock()
	c.create("Fresh")
	c.fails(c.do("DELETE", "/api/tasks?olderThanDays=0", nil), 400, "VALIDATION_ERROR")
	c.ok(c.do("DELETE", "/api/tasks?olderThanDays=7", nil), 204, nil)
	c.ok(c.do("GET", "/api/tasks", nil), 200, &page)
	if len(page.Items) != 1 || page.Items[0].Title != "Fresh" {
		t.Errorf("after purge: %+v", page.Items)
	}
	c.ok(c.do("DELETE", "/api/tasks", nil), 204, nil)
	c.ok(c.do("GET", "/api/tasks", nil), 200, &page)
	if len(page.Items) != 0 {
		t.Errorf("after purging all: %+v", page.Items)
	}
	if string(c.do("GET", "/api/tasks", nil).body) != `{"items":[]}` {
		t.Error("an empty list is not {\"items\":[]}")
	}
}

func TestFiles(t *testing.T) {
	c, _ := start(t, nil)
	var f tasksapi.File
	c.ok(c.do("PUT", "/api/v1/files/content/t_1/notes/plan.md", map[string]any{"content": "héllo"}), 200, &f)
	if f.Path != "t_1/notes/plan.md" || f.Size != 6 {
		t.Errorf("upload: %+v", f)
	}
	c.ok(c.do("PUT", "/api/v1/files/content/readme.md", map[string]any{"content": ""}), 200, &f)
	c.ok(c.do("GET", "/api/v1/files/content/t_1/notes/plan.md", nil), 200, &f)
	if f.Size != 6 {
		t.Errorf("get: %+v", f)
	}
	c.fails(c.do("GET", "/api/v1/files/content/nothing/here", nil), 404, "FILE_NOT_FOUND")
	var list tasksapi.FilesListOutput
	c.ok(c.do("GET", "/api/v1/files?task=t_1", nil), 200, &list)
	if len(list.Items) != 1 || list.Items[0].Path != "t_1/notes/plan.md" {
		t.Errorf("list by task: %+v", list)
	}
	c.ok(c.do("GET", "/api/v1/files", nil), 200, &list)
	if len(list.Items) != 2 {
		t.Errorf("list: %+v", list)
	}
	c.fails(c.do("GET", "/api/v1/files?task=nope", nil), 400, "VALIDATION_ERROR")
	// 65536 characters pass the schema; in UTF-8 they are 131072 bytes,
	// over the app's byte limit: the contract's FILE_TOO_LARGE.
	c.fails(c.do("PUT", "/api/v1/files/content/big.txt", map[string]any{"content": strings.Repeat("é", 65536)}), 413, "FILE_TOO_LARGE")
	c.fails(c.do("PUT", "/api/v1/files/content/big.txt", map[string]any{"content": strings.Repeat("a", 65537)}), 400, "VALIDATION_ERROR")
	c.fails(c.do("PUT", "/api/v1/files/content/x", `{"content":"a"}`+strings.Repeat(" ", 2<<20)), 413, "PAYLOAD_TOO_LARGE")
}

func TestTransportRefusals(t *testing.T) {
	c, _ := start(t, nil)
	c.fails(c.do("PATCH", "/api/tasks", `{}`), 405, "METHOD_NOT_ALLOWED")
	c.fails(c.do("GET", "/api/projects", nil), 404, "NOT_FOUND")
	res := c.do("POST", "/api/tasks", nil)
	c.fails(res, 400, "VALIDATION_ERROR") // an empty body is {}: title is missing
	req, _ := http.NewRequest("POST", c.base+"/api/tasks", strings.NewReader(`{"title":"x"}`))
	req.Header.Set("Content-Type", "text/plain")
	resp, err := c.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	c.fails(response{resp.StatusCode, resp.Header, b}, 415, "UNSUPPORTED_MEDIA_TYPE")
	c.fails(c.do("POST", "/api/tasks", `{"title":`+strings.Repeat("[", 200)+strings.Repeat("]", 200)+`}`), 400, "BAD_REQUEST")

	g := c.do("GET", "/graph.json", nil)
	if g.status != 200 || !strings.Contains(string(g.body), `"name": "tasks"`) {
		t.Errorf("graph.json: %d %.100s", g.status, g.body)
	}
}

// TestConcurrentClients creates, completes and reads tasks from many
// clients at once (run with -race): every id is unique and every task is
// stored once.
func TestConcurrentClients(t *testing.T) {
	c, _ := start(t, nil)
	const workers, each = 8, 15
	var wg sync.WaitGroup
	ids := make(chan tasksapi.TaskID, workers*each)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				task := c.create(fmt.Sprintf("w%d-%d", w, i))
				c.ok(c.do("POST", "/api/tasks/"+string(task.ID)+"/complete", nil), 200, nil)
				c.ok(c.do("GET", "/api/tasks?limit=5", nil), 200, nil)
				ids <- task.ID
			}
		})
	}
	wg.Wait()
	close(ids)
	seen := map[tasksapi.TaskID]bool{}
	for id := range ids {
		if seen[id] {
			t.Fatalf("id %s issued twice", id)
		}
		seen[id] = true
	}
	var all tasksapi.TasksListOutput
	c.ok(c.do("GET", "/api/tasks?limit=100&done=true", nil), 200, &all)
	next := all.Next
	n := len(all.Items)
	for next != nil {
		var p tasksapi.TasksListOutput
		c.ok(c.do("GET", "/api/tasks?limit=100&done=true&cursor="+*next, nil), 200, &p)
		n += len(p.Items)
		next = p.Next
	}
	if n != workers*each {
		t.Errorf("%d done tasks listed, want %d", n, workers*each)
	}
}
