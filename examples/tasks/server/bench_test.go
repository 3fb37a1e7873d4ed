package server_test

import (
	"context"
	"encoding/json"
	"testing"

	"stitchkit.dev/stitchkit/examples/tasks/server"
	"stitchkit.dev/stitchkit/examples/tasks/tasksapi"
	"stitchkit.dev/stitchkit/pkg/mount"
)

// BenchmarkBinding measures what the generated binding costs over a
// hand-written mount.Handler doing the same work (read the path
// parameter, look the task up, marshal it), both called through the
// runner as a transport calls them:
//
//	go test ./examples/tasks/server -run '^$' -bench Binding -benchmem -count 6
func BenchmarkBinding(b *testing.B) {
	store := server.NewMemoryStore(nil)
	if _, err := store.CreateTask(context.Background(), "Write docs", tasksapi.Tags{"docs"}); err != nil {
		b.Fatal(err)
	}
	app, err := server.New(store, nil)
	if err != nil {
		b.Fatal(err)
	}
	typed := app.Runner().Endpoint("tasks", "get")

	impl := mount.NewImplementation(tasksapi.Graph())
	_ = impl.Handle("tasks", "get", func(ctx context.Context, c *mount.Call) (json.RawMessage, error) {
		t, err := store.GetTask(ctx, tasksapi.TaskID(c.Params["id"].(string)))
		if err != nil {
			return nil, mount.NewError(tasksapi.CodeTaskNotFound, "")
		}
		return json.Marshal(t)
	})
	r, err := mount.New(impl, nil)
	if err != nil {
		b.Fatal(err)
	}
	raw := r.Endpoint("tasks", "get")

	req := func() *mount.Request {
		return &mount.Request{Source: mount.SourceInternal, Params: mount.Fields{Wire: map[string][]string{"id": {"t_1"}}}}
	}
	for _, c := range []struct {
		name string
		ep   *mount.Endpoint
	}{{"generated", typed}, {"handwritten", raw}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if res := c.ep.Call(context.Background(), req()); res.Err != nil {
					b.Fatal(res.Err)
				}
			}
		})
	}
}
