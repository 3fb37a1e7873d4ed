package httpmount_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
	httpmount "stitchkit.dev/stitchkit/pkg/mount/http"
	"stitchkit.dev/stitchkit/pkg/project"
)

// Example serves the tasks example contract: graph.Load → bind a handler
// → mount → http.Handle. Unbound operations answer 501 NOT_IMPLEMENTED.
func Example() {
	data, err := os.ReadFile("../../compile/testdata/tasks.graph.json") // `stitch compile examples/tasks`
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := graph.Load(data)
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := project.New(g, &project.Options{HTTPPrefix: "/api"}) // the one projection: the prefix is stated here, once
	if err != nil {
		fmt.Println(err)
		return
	}
	impl := mount.NewImplementation(g)
	_ = impl.Handle("tasks", "create", func(ctx context.Context, c *mount.Call) (json.RawMessage, error) {
		var in struct {
			Title string `json:"title"`
		}
		if err := c.DecodeInput(&in); err != nil {
			return nil, err
		}
		return json.Marshal(map[string]any{"id": "t_1", "title": in.Title, "done": false})
	})
	runner, err := mount.New(impl, &mount.Options{Projection: p})
	if err != nil {
		fmt.Println(err)
		return
	}
	h, err := httpmount.New(runner, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	mux := http.NewServeMux()
	mux.Handle("/api/", h) // or http.Handle on the default mux; then http.ListenAndServe

	for _, r := range []*http.Request{
		httptest.NewRequest("POST", "/api/tasks", strings.NewReader(`{"title":"Write docs"}`)),
		httptest.NewRequest("POST", "/api/tasks", strings.NewReader(`{"title":""}`)),
		httptest.NewRequest("GET", "/api/tasks/t_1", nil),
		httptest.NewRequest("PUT", "/api/tasks", nil),
	} {
		r.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, r)
		fmt.Println(rec.Code, strings.TrimSpace(rec.Body.String()))
	}
	// Output:
	// 200 {"done":false,"id":"t_1","title":"Write docs"}
	// 400 {"error":{"code":"VALIDATION_ERROR","message":"Invalid input: /title: minLength: got 0, want 1","details":{"issues":[{"in":"input","path":"/title","keyword":"minLength","message":"minLength: got 0, want 1"}]}}}
	// 501 {"error":{"code":"NOT_IMPLEMENTED","message":"tasks.get is not implemented"}}
	// 405 {"error":{"code":"METHOD_NOT_ALLOWED","message":"Method not allowed"}}
}
