package mcpdriver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"stitchkit.dev/stitchkit/pkg/project"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"stitchkit.dev/stitchkit/pkg/conformance"
	"stitchkit.dev/stitchkit/pkg/conformance/mcpdriver"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
	mcpmount "stitchkit.dev/stitchkit/pkg/mount/mcp"
)

// Probe the member MCP surface of the tasks example through the official
// SDK client, which the caller connects and closes.
func ExampleNew() {
	data, err := os.ReadFile("../../compile/testdata/tasks.graph.json") // `stitch compile examples/tasks`
	if err != nil {
		fmt.Println(err)
		return
	}
	g, _ := graph.Load(data)
	impl := mount.NewImplementation(g)
	_ = impl.Handle("tasks", "get", func(context.Context, *mount.Call) (json.RawMessage, error) {
		return nil, mount.NewError("TASK_NOT_FOUND", "")
	})
	runner, _ := mount.New(impl, nil)
	h, _ := mcpmount.New(runner, nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp/", h)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "probe", Version: "1"}, nil).
		Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp/member", DisableStandaloneSSE: true}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()
	proj, err := project.New(g, nil) // the one projection
	if err != nil {
		fmt.Println(err)
		return
	}
	d, _ := mcpdriver.New(proj, cs, "member")
	o, err := d.Invoke(ctx, conformance.Call{Operation: "tasks.get", Args: map[string]any{"id": "t_9"}})
	b, _ := o.Canonical()
	fmt.Println(string(b), err)
	names, _ := mcpdriver.ToolNames(ctx, cs)
	fmt.Println(names)
	// Output:
	// {"code":"TASK_NOT_FOUND","outcome":"domain_error"} <nil>
	// [complete_task create_task get_task list_tasks search_task task_stats]
}
