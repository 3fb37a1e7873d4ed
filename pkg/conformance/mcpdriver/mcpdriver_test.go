package mcpdriver

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"stitchkit.dev/stitchkit/internal/graphfixture"
	"stitchkit.dev/stitchkit/pkg/conformance"
)

// session connects a real SDK client to a real SDK server whose tools
// answer as the stitchkit MCP mount does (structuredContent, or isError
// with the tool error envelope), over in-memory transports.
func session(t *testing.T) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	srv := mcp.NewServer(&mcp.Implementation{Name: "tasks", Version: "1"}, nil)
	obj := &mcp.Tool{InputSchema: json.RawMessage(`{"type":"object"}`)}
	add := func(name string, h mcp.ToolHandler) {
		tool := *obj
		tool.Name = name
		srv.AddTool(&tool, h)
	}
	add("get_task", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args map[string]any
		_ = json.Unmarshal(req.Params.Arguments, &args)
		if args["id"] != "t_1" {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: `{"error":"TASK_NOT_FOUND","details":{"message":"Task not found"}}`}}}, nil
		}
		out := json.RawMessage(`{"id":"t_1","title":"Write docs","done":false}`)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(out)}}, StructuredContent: out}, nil
	})
	add("create_task", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
			Text: `{"error":"VALIDATION_ERROR","details":{"issues":[{"in":"input","path":"/title","keyword":"minLength"}]}}`}}}, nil
	})
	add("complete_task", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{}}, nil
	})
	add("list_tasks", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "boom"}}}, nil
	})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "probe", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

func TestDriver(t *testing.T) {
	g, err := graphfixture.Read(filepath.Join("..", "..", "..", "examples", "tasks"))
	if err != nil {
		t.Fatal(err)
	}
	cs := session(t)
	d, err := New(projecttest.New(t, g, nil), cs, "member")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		call conformance.Call
		want string
	}{
		{conformance.Call{Operation: "tasks.get", Args: map[string]any{"id": "t_1"}}, `{"data":{"done":false,"id":"t_1","title":"Write docs"},"outcome":"success"}`},
		{conformance.Call{Operation: "tasks.get", Args: map[string]any{"id": "t_2"}}, `{"code":"TASK_NOT_FOUND","outcome":"domain_error"}`},
		{conformance.Call{Operation: "tasks.create"}, `{"code":"VALIDATION_ERROR","data":{"issues":[{"in":"input","keyword":"minLength","path":"/title"}]},"outcome":"validation_error"}`},
		{conformance.Call{Operation: "tasks.complete", Args: map[string]any{"id": "t_1"}}, `{"outcome":"success"}`},
		{conformance.Call{Operation: "tasks.list"}, `{"diagnostic":"tool error without an error envelope: boom","outcome":"domain_error"}`},
		// search_task is on the surface but not served: a JSON-RPC error.
		{conformance.Call{Operation: "tasks.search", Args: map[string]any{"q": "x"}}, `{"diagnostic":"MCP error -32602: unknown tool \"search_task\"","outcome":"domain_error"}`},
	} {
		o, err := d.Invoke(context.Background(), tc.call)
		if err != nil {
			t.Errorf("%s: %v", tc.call.Operation, err)
			continue
		}
		if b, _ := o.Canonical(); string(b) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.call.Operation, b, tc.want)
		}
	}
	if _, err := d.Invoke(context.Background(), conformance.Call{Operation: "tasks.delete"}); err == nil || err.Error() != `operation "tasks.delete" is not a tool of MCP surface "member"` {
		t.Errorf("operation off the surface: %v", err)
	}
	if _, err := New(projecttest.New(t, g, nil), cs, "guest"); err == nil || !strings.Contains(err.Error(), `no MCP surface "guest"`) {
		t.Errorf("unknown surface: %v", err)
	}
	names, err := ToolNames(context.Background(), cs)
	slices.Sort(names)
	if err != nil || !slices.Equal(names, []string{"complete_task", "create_task", "get_task", "list_tasks"}) {
		t.Errorf("ToolNames = %v, %v", names, err)
	}
}
