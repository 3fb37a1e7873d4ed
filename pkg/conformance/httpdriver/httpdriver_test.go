package httpdriver

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"strings"
	"sync"
	"testing"

	"stitchkit.dev/stitchkit/internal/graphfixture"
	"stitchkit.dev/stitchkit/pkg/conformance"
	"stitchkit.dev/stitchkit/pkg/graph"
)

var (
	tasksOnce  sync.Once
	tasksGraph *graph.Graph
	tasksErr   error
)

func tasks(t *testing.T) *graph.Graph {
	t.Helper()
	tasksOnce.Do(func() {
		tasksGraph, tasksErr = graphfixture.Read(filepath.Join("..", "..", "..", "examples", "tasks"))
	})
	if tasksErr != nil {
		t.Fatal(tasksErr)
	}
	return tasksGraph
}

// seen is one request as the server received it.
type seen struct {
	method, path, rawPath, query, body, contentType, auth string
}

// recorder answers every request with status and body and records it.
func recorder(t *testing.T, status int, body string) (*httptest.Server, func() seen) {
	var mu sync.Mutex
	var last seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		last = seen{r.Method, r.URL.Path, r.URL.RawPath, r.URL.RawQuery, string(b), r.Header.Get("Content-Type"), r.Header.Get("Authorization")}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, func() seen { mu.Lock(); defer mu.Unlock(); return last }
}

// The request a Call becomes: route, escaped path wildcards (a final
// wildcard keeps its slashes), repeated list query values, JSON body.
func TestRequests(t *testing.T) {
	g := tasks(t)
	srv, last := recorder(t, 200, `{"ok":true}`)
	d, err := New(projecttest.Prefixed(t, g, "/api"), &Options{BaseURL: srv.URL + "/", Client: srv.Client(), Header: http.Header{"Authorization": {"Bearer caller-token"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		call conformance.Call
		want seen
	}{
		{conformance.Call{Operation: "tasks.list", Args: map[string]any{"limit": 2, "tag": []string{"docs", "a b"}, "done": false}},
			seen{method: "GET", path: "/api/tasks", query: "done=false&limit=2&tag=docs&tag=a+b"}},
		{conformance.Call{Operation: "tasks.get", Args: map[string]any{"id": "t_1/x"}},
			seen{method: "GET", path: "/api/tasks/t_1/x", rawPath: "/api/tasks/t_1%2Fx"}},
		{conformance.Call{Operation: "tasks.rename", Args: map[string]any{"id": "t_1", "title": "New <title>"}},
			seen{method: "PATCH", path: "/api/tasks/t_1/title", body: `{"title":"New \u003ctitle\u003e"}`, contentType: "application/json"}},
		{conformance.Call{Operation: "tasks.complete", Args: map[string]any{"id": "t_1"}},
			seen{method: "POST", path: "/api/tasks/t_1/complete"}},
		{conformance.Call{Operation: "tasks.create", Args: map[string]any{}},
			seen{method: "POST", path: "/api/tasks", body: `{}`, contentType: "application/json"}},
		{conformance.Call{Operation: "files.get", Args: map[string]any{"path": "docs/read me.md"}},
			seen{method: "GET", path: "/api/v1/files/content/docs/read me.md"}},
		{conformance.Call{Operation: "tasks.purge", Args: map[string]any{"olderThanDays": 30}},
			seen{method: "DELETE", path: "/api/tasks", query: "olderThanDays=30"}},
	} {
		if _, err := d.Invoke(context.Background(), tc.call); err != nil {
			t.Errorf("%s: %v", tc.call.Operation, err)
			continue
		}
		tc.want.auth = "Bearer caller-token"
		// RawPath is set only where the escaping is not the default one
		// (an escaped slash).
		got := last()
		if got != tc.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.call.Operation, got, tc.want)
		}
	}
	for _, tc := range []struct {
		call conformance.Call
		want string
	}{
		{conformance.Call{Operation: "tasks.stats"}, `operation "tasks.stats" has no HTTP route`},
		{conformance.Call{Operation: "tasks.get"}, `tasks.get: no argument for the path parameter "id"`},
		{conformance.Call{Operation: "tasks.get", Args: map[string]any{"id": map[string]any{}}}, `tasks.get: path parameter "id": {} cannot travel as a string`},
	} {
		if _, err := d.Invoke(context.Background(), tc.call); err == nil || err.Error() != tc.want {
			t.Errorf("%+v: %v, want %q", tc.call, err, tc.want)
		}
	}
	if _, err := d.Invoke(context.Background(), "fixture"); err == nil || !strings.Contains(err.Error(), "must be a conformance.Call") {
		t.Errorf("bad fixture: %v", err)
	}
}

// How answers normalise.
func TestAnswers(t *testing.T) {
	g := tasks(t)
	call := conformance.Call{Operation: "tasks.get", Args: map[string]any{"id": "t_1"}}
	for _, tc := range []struct {
		status int
		body   string
		want   string
	}{
		{200, `{"id":"t_1","title":"x","done":false}`, `{"data":{"done":false,"id":"t_1","title":"x"},"outcome":"success"}`},
		{204, ``, `{"outcome":"success"}`},
		{400, `{"error":{"code":"VALIDATION_ERROR","message":"Invalid params","details":{"issues":[{"in":"params","path":"/id"}]}}}`,
			`{"code":"VALIDATION_ERROR","data":{"issues":[{"in":"params","path":"/id"}]},"outcome":"validation_error"}`},
		{400, `{"error":{"code":"BAD_REQUEST","message":"Malformed JSON"}}`, `{"code":"BAD_REQUEST","outcome":"validation_error"}`},
		{404, `{"error":{"code":"TASK_NOT_FOUND","message":"Task not found"}}`, `{"code":"TASK_NOT_FOUND","outcome":"domain_error"}`},
		{502, `<html>bad gateway</html>`, `{"diagnostic":"HTTP 502 without an error envelope: <html>bad gateway</html>","outcome":"domain_error"}`},
		{200, `not json`, `{"diagnostic":"HTTP 200 with a body that is not JSON: not json","outcome":"domain_error"}`},
	} {
		srv, _ := recorder(t, tc.status, tc.body)
		d, err := New(projecttest.Prefixed(t, g, "/api"), &Options{BaseURL: srv.URL, Client: srv.Client()})
		if err != nil {
			t.Fatal(err)
		}
		o, err := d.Invoke(context.Background(), call)
		if err != nil {
			t.Errorf("%d %s: %v", tc.status, tc.body, err)
			continue
		}
		if b, _ := o.Canonical(); string(b) != tc.want {
			t.Errorf("%d %s:\n got %s\nwant %s", tc.status, tc.body, b, tc.want)
		}
	}
	srv, _ := recorder(t, 200, strings.Repeat(" ", 100))
	d, _ := New(projecttest.Prefixed(t, g, "/api"), &Options{BaseURL: srv.URL, Client: srv.Client(), MaxResponseBytes: 10})
	if _, err := d.Invoke(context.Background(), call); err == nil || err.Error() != "response body over 10 bytes" {
		t.Errorf("oversized body: %v", err)
	}
	if _, err := New(projecttest.New(t, g, nil), nil); err == nil {
		t.Error("no BaseURL accepted")
	}
}
