package httpdriver

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"stitchkit.dev/stitchkit/pkg/conformance"
	"stitchkit.dev/stitchkit/pkg/mount"
	httpmount "stitchkit.dev/stitchkit/pkg/mount/http"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The driver against the real HTTP mount: a valid call, an invalid one the
// runner refuses before the handler, a domain error, a path parameter that
// fails its pattern.
func TestAgainstTheHTTPMount(t *testing.T) {
	g := tasks(t)
	impl := mount.NewImplementation(g)
	var calls atomic.Int64
	if err := impl.Handle("tasks", "create", func(_ context.Context, c *mount.Call) (json.RawMessage, error) {
		calls.Add(1)
		var in struct {
			Title string `json:"title"`
		}
		if err := c.DecodeInput(&in); err != nil {
			return nil, err
		}
		return json.Marshal(map[string]any{"id": "t_1", "title": in.Title, "done": false})
	}); err != nil {
		t.Fatal(err)
	}
	if err := impl.Handle("tasks", "get", func(context.Context, *mount.Call) (json.RawMessage, error) {
		calls.Add(1)
		return nil, mount.NewError("TASK_NOT_FOUND", "")
	}); err != nil {
		t.Fatal(err)
	}
	runner, err := mount.New(impl, &mount.Options{Projection: projecttest.Prefixed(t, g, "/api")})
	if err != nil {
		t.Fatal(err)
	}
	h, err := httpmount.New(runner, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	d, err := New(runner.Projection(), &Options{BaseURL: srv.URL, Client: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	d = conformance.WithHandlerCalls(d, func() int { return int(calls.Load()) })
	obs := func(s string) conformance.Observation {
		var o conformance.Observation
		if err := json.Unmarshal([]byte(s), &o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	one, zero := 1, 0
	created := obs(`{"outcome":"success","data":{"id":"t_1","title":"Write docs","done":false}}`)
	created.HandlerCalls = &one
	noTitle := obs(`{"outcome":"validation_error","code":"VALIDATION_ERROR","data":{"issues":[{"in":"input","path":"/title","keyword":"minLength","message":"minLength: got 0, want 1"}]}}`)
	noTitle.HandlerCalls = &zero
	missing := obs(`{"outcome":"domain_error","code":"TASK_NOT_FOUND"}`)
	missing.HandlerCalls = &one
	badID := obs(`{"outcome":"validation_error","code":"VALIDATION_ERROR","data":{"issues":[{"in":"params","path":"/id","keyword":"pattern","message":"'nope' does not match pattern '^t_[a-z0-9]+$'"}]}}`)
	badID.HandlerCalls = &zero
	probe := func(name, op string, args map[string]any, want conformance.Observation) conformance.Probe {
		return conformance.Probe{Name: name, Fixture: conformance.Call{Operation: op, Args: args},
			Transports: []conformance.Transport{conformance.TransportHTTP}, Expected: map[conformance.Transport]conformance.Observation{conformance.TransportHTTP: want}}
	}
	err = conformance.RunProbes(context.Background(), []conformance.Probe{
		probe("create", "tasks.create", map[string]any{"title": "Write docs"}, created),
		probe("create without a title", "tasks.create", map[string]any{"title": ""}, noTitle),
		probe("get a missing task", "tasks.get", map[string]any{"id": "t_9"}, missing),
		probe("get with a bad id", "tasks.get", map[string]any{"id": "nope"}, badID),
	}, conformance.Drivers{conformance.TransportHTTP: d}, nil)
	if err != nil {
		t.Fatal(err)
	}
}
