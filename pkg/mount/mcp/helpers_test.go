package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"stitchkit.dev/stitchkit/internal/mounttest"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
)

func TestMain(m *testing.M) {
	// A re-executed test binary serves stdio (see TestStdioChildProcess).
	if os.Getenv(stdioChildEnv) != "" {
		os.Exit(stdioChild())
	}
	goleak.VerifyTestMain(m)
}

// tasks compiles examples/tasks once per test binary.
func tasks(tb testing.TB) *graph.Graph { return mounttest.Tasks(tb) }

// exampleRunner is a runner of g whose handlers answer each operation's
// first example output; handlers in bind replace them, keyed
// "service.action".
func exampleRunner(tb testing.TB, g *graph.Graph, opts *mount.Options, bind map[string]mount.Handler) *mount.Runner {
	tb.Helper()
	r, err := mounttest.ExampleRunner(g, opts, bind)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// newHandler is New on an example runner of the tasks graph.
func newHandler(tb testing.TB, opts *Options) *Handler {
	tb.Helper()
	h, err := New(exampleRunner(tb, tasks(tb), nil, nil), opts)
	if err != nil {
		tb.Fatal(err)
	}
	return h
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
