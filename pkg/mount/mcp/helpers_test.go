package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"stitchkit.dev/stitchkit/pkg/compile"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
	"stitchkit.dev/stitchkit/pkg/project"
)

func TestMain(m *testing.M) {
	// A re-executed test binary serves stdio (see TestStdioChildProcess).
	if os.Getenv(stdioChildEnv) != "" {
		os.Exit(stdioChild())
	}
	goleak.VerifyTestMain(m)
}

var (
	tasksOnce  sync.Once
	tasksGraph *graph.Graph
	tasksErr   error
)

// tasks compiles examples/tasks once per test binary.
func tasks(tb testing.TB) *graph.Graph {
	tb.Helper()
	tasksOnce.Do(func() {
		tasksGraph, tasksErr = compile.Compile(context.Background(), "../../../examples/tasks")
	})
	if tasksErr != nil {
		tb.Fatal(tasksErr)
	}
	return tasksGraph
}

// exampleCaller answers each tool with its first example output, or
// NOT_IMPLEMENTED.
type exampleCaller struct{}

func (exampleCaller) callTool(ctx context.Context, t *project.Tool, args json.RawMessage) (json.RawMessage, error) {
	var examples []json.RawMessage
	if t.Op != nil {
		examples = t.Op.Examples
	} else if t.Runtime != nil {
		examples = t.Runtime.Examples
	}
	for _, ex := range examples {
		var e struct {
			Output json.RawMessage `json:"output"`
		}
		if json.Unmarshal(ex, &e) == nil && e.Output != nil {
			return e.Output, nil
		}
	}
	return nil, mount.NewError("NOT_IMPLEMENTED", "")
}

// serve starts the handler on a loopback listener under /mcp.
func serve(tb testing.TB, h *Handler) *httptest.Server {
	tb.Helper()
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	mux.Handle("/mcp/", h)
	srv := httptest.NewServer(mux)
	tb.Cleanup(srv.Close)
	return srv
}

// connect opens an SDK client session to url.
func connect(tb testing.TB, url string, opts *sdk.ClientSessionOptions) *sdk.ClientSession {
	tb.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "stitchkit-test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, MaxRetries: -1}, opts)
	if err != nil {
		tb.Fatalf("connect %s: %v", url, err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}

func listNames(tb testing.TB, cs *sdk.ClientSession) ([]string, *sdk.ListToolsResult) {
	tb.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	names := make([]string, len(res.Tools))
	for i, t := range res.Tools {
		names[i] = t.Name
	}
	return names, res
}

func textOf(tb testing.TB, res *sdk.CallToolResult) string {
	tb.Helper()
	if len(res.Content) != 1 {
		tb.Fatalf("content has %d blocks, want 1: %+v", len(res.Content), res.Content)
	}
	tc, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		tb.Fatalf("content[0] is %T, want text", res.Content[0])
	}
	return tc.Text
}
