package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
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

// exampleRunner is a runner of g whose handlers answer each operation's
// first example output (nothing for an operation without output); handlers
// in bind replace them, keyed "service.action".
func exampleRunner(tb testing.TB, g *graph.Graph, opts *mount.Options, bind map[string]mount.Handler) *mount.Runner {
	tb.Helper()
	r, err := newExampleRunner(g, opts, bind)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

func newExampleRunner(g *graph.Graph, opts *mount.Options, bind map[string]mount.Handler) (*mount.Runner, error) {
	impl := mount.NewImplementation(g)
	var errs []error
	bindExample := func(service, action string, examples []json.RawMessage) {
		h, ok := bind[service+"."+action]
		if !ok {
			var out json.RawMessage
			for _, ex := range examples {
				var e struct {
					Output json.RawMessage `json:"output"`
				}
				if json.Unmarshal(ex, &e) == nil && e.Output != nil {
					out = e.Output
					break
				}
			}
			if len(examples) == 0 {
				return // unbound: NOT_IMPLEMENTED
			}
			h = func(context.Context, *mount.Call) (json.RawMessage, error) { return out, nil }
		}
		errs = append(errs, impl.Handle(service, action, h))
	}
	for _, op := range g.Operations() {
		bindExample(op.Service, op.Action, op.Examples)
	}
	for _, rt := range g.RuntimeTools {
		bindExample(rt.Identity.Service, rt.Identity.Action, rt.Examples)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if opts == nil {
		opts = &mount.Options{Logger: slog.New(slog.DiscardHandler)}
	}
	return mount.New(impl, opts)
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
