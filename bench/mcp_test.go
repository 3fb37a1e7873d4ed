package bench

// MCP rows: the MCP mount against the official MCP Go SDK used by hand,
// both serving stateless streamable HTTP with JSON responses on a loopback
// listener in this process, driven by the same raw JSON-RPC POSTs (what
// any client sends; the client's own decoding is left out so the servers
// are what is measured):
//
//   - mcp-call-vs-gosdk (goal 1.0): one tools/call of items.update
//     (params + input + output, all validated) through our mount and the
//     runner, vs the same tool registered with the SDK's generic
//     mcp.AddTool[In, Out], which validates input and output itself;
//   - mcp-list-vs-gosdk (goal 1.05): tools/list of a 1,000-tool surface,
//     ours vs a hand-built SDK server with the same tools and schemas,
//     built once and reused across requests;
//   - mcp-list-prepared-vs-rebuild (goal 0.10): the same list, ours vs a
//     handler that prepares the surface per request — projects the tools
//     and builds the SDK server — as a mount without prepared surfaces
//     does.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
	mcpmount "stitchkit.dev/stitchkit/pkg/mount/mcp"
	"stitchkit.dev/stitchkit/pkg/project"
)

const (
	mcpListTools = 1000
	// mcpProtocol is sent on every request: a stateless server then serves
	// each POST alone, with no initialize round trip.
	mcpProtocol = "2025-06-18"
	mcpCallBody = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"update_item","arguments":{"id":"i_42","name":"Write the benchmark","count":3,"tags":["bench","mcp"]}}}`
	mcpListBody = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
)

// itemsGraph is items.update (as in the HTTP rows) on MCP, plus n-1 more
// tools with schemas that all differ.
func itemsGraph(tb testing.TB, n int) *graph.Graph {
	g := &graph.Graph{GraphVersion: graph.GraphVersion, DigestVersion: graph.DigestVersion, Name: "items", Version: "1.0.0",
		Policy: graph.Policy{MCP: graph.MCPPolicy{SchemaValidation: graph.ValidationThrow}}}
	ops := []graph.Operation{{
		Service: "items", Action: "update", Method: "POST", Path: "/{id}", Desc: "Update an item", Scope: "public",
		Expose: []graph.Transport{graph.MCP},
		Params: benchSchema(tb, g, benchParams), Input: benchSchema(tb, g, benchInput), Output: benchSchema(tb, g, benchOutput),
	}}
	for i := 1; i < n; i++ {
		in := fmt.Sprintf(`{"type":"object","properties":{"name":{"type":"string","minLength":1,"maxLength":%d},"count%d":{"type":"integer","minimum":0},"tags":{"type":"array","items":{"type":"string"},"maxItems":10}},"required":["name"],"additionalProperties":false}`, 10+i, i)
		out := fmt.Sprintf(`{"type":"object","properties":{"items":{"type":"array","items":{"type":"string"}},"total%d":{"type":"integer"}},"required":["items"]}`, i)
		ops = append(ops, graph.Operation{Service: "items", Action: fmt.Sprintf("op%04d", i), Method: "POST", Path: fmt.Sprintf("/op%04d/{id}", i),
			Desc: fmt.Sprintf("Operation %d on an item", i), Scope: "public", Expose: []graph.Transport{graph.MCP},
			Params: benchSchema(tb, g, benchParams), Input: benchSchema(tb, g, in), Output: benchSchema(tb, g, out)})
	}
	g.Services = []graph.Service{{Name: "items", Prefix: "/items", Scope: "public", Operations: ops}}
	return g
}

// oursMCP is the MCP mount of g with the typed items.update handler.
func oursMCP(tb testing.TB, g *graph.Graph) http.Handler {
	impl := mount.NewImplementation(g)
	err := impl.Handle("items", "update", func(ctx context.Context, c *mount.Call) (json.RawMessage, error) {
		var in itemIn
		if err := c.DecodeInput(&in); err != nil {
			return nil, err
		}
		return json.Marshal(update(c.Params["id"].(string), in))
	})
	if err != nil {
		tb.Fatal(err)
	}
	r, err := mount.New(impl, &mount.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	h, err := mcpmount.New(r, &mcpmount.Options{Prefix: "/"})
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

// mcpItemIn is the flat argument object of update_item for the SDK's
// generic AddTool.
type mcpItemIn struct {
	ID    string   `json:"id"`
	Name  string   `json:"name"`
	Count int      `json:"count"`
	Tags  []string `json:"tags,omitempty"`
}

// sdkServer is the hand-built peer: every tool of g's MCP surface with the
// same advertised schemas; update_item through the generic mcp.AddTool
// (the SDK validates input and output), the others with Server.AddTool.
func sdkServer(tb testing.TB, g *graph.Graph) *sdk.Server {
	ts, err := project.ToolSurfaces(g)
	if err != nil {
		tb.Fatal(err)
	}
	return buildSDKServer(ts.Surface(graph.MCP, ""))
}

func buildSDKServer(s *project.Surface) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "items", Version: "1.0.0"}, &sdk.ServerOptions{Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}}})
	for i := range s.Tools {
		t := &s.Tools[i]
		tool := &sdk.Tool{Name: t.Name, Description: t.Description, InputSchema: t.Input, OutputSchema: t.Output}
		if t.Name == "update_item" {
			sdk.AddTool(srv, tool, func(ctx context.Context, req *sdk.CallToolRequest, in mcpItemIn) (*sdk.CallToolResult, itemOut, error) {
				return nil, update(in.ID, itemIn{Name: in.Name, Count: in.Count, Tags: in.Tags}), nil
			})
			continue
		}
		srv.AddTool(tool, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{}, nil
		})
	}
	return srv
}

func sdkHandler(getServer func(*http.Request) *sdk.Server) http.Handler {
	return sdk.NewStreamableHTTPHandler(getServer, &sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true, MaxRequestBodyBytes: 1 << 20})
}

// rebuildHandler prepares the surface for every request: the projection
// and the SDK server, once per HTTP request (the SDK asks getServer twice
// per POST, so the server is built in front of it).
func rebuildHandler(g *graph.Graph) http.Handler {
	type key struct{}
	inner := sdkHandler(func(r *http.Request) *sdk.Server { return r.Context().Value(key{}).(*sdk.Server) })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts, err := project.ToolSurfaces(g)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		srv := buildSDKServer(ts.Surface(graph.MCP, ""))
		inner.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), key{}, srv)))
	})
}

// mcpPost sends one JSON-RPC request and returns the response body.
func mcpPost(client *http.Client, url, body string) ([]byte, error) {
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", mcpProtocol)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	return b, err
}

// checkCall requires update_item's structured result (and, with an
// invalid argument, an isError result), so no side is measured failing.
func checkCall(tb testing.TB, client *http.Client, url string) {
	b, err := mcpPost(client, url, mcpCallBody)
	if err != nil {
		tb.Fatal(err)
	}
	var resp struct {
		Result struct {
			IsError           bool    `json:"isError"`
			StructuredContent itemOut `json:"structuredContent"`
		}
	}
	if err := json.Unmarshal(b, &resp); err != nil || resp.Result.IsError || resp.Result.StructuredContent.Count != 4 || resp.Result.StructuredContent.ID != "i_42" {
		tb.Fatalf("%s: %s", url, b)
	}
	bad := strings.Replace(mcpCallBody, `"count":3`, `"count":-1`, 1)
	b, err = mcpPost(client, url, bad)
	if err != nil || !bytes.Contains(b, []byte(`"isError":true`)) {
		tb.Fatalf("%s: invalid arguments answered %s %v", url, b, err)
	}
}

// checkList requires the whole surface in one page.
func checkList(tb testing.TB, client *http.Client, url string, n int) {
	b, err := mcpPost(client, url, mcpListBody)
	if err != nil {
		tb.Fatal(err)
	}
	var resp struct {
		Result struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
	}
	if err := json.Unmarshal(b, &resp); err != nil || len(resp.Result.Tools) != n || resp.Result.NextCursor != "" {
		tb.Fatalf("%s: %d tools, cursor %q, %v", url, len(resp.Result.Tools), resp.Result.NextCursor, err)
	}
}

// benchPost measures one JSON-RPC POST to url, b.N times.
func benchPost(client *http.Client, url, body string) func(*testing.B) {
	return func(b *testing.B) {
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if _, err := mcpPost(client, url, body); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// loopback serves h on 127.0.0.1 for the benchmark's lifetime.
func loopback(tb testing.TB, h http.Handler) (*http.Client, string) {
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	return srv.Client(), srv.URL
}

// BenchmarkMCPCallVsGoSDK is the mcp-call-vs-gosdk row.
func BenchmarkMCPCallVsGoSDK(b *testing.B) {
	g := itemsGraph(b, 1)
	oc, ou := loopback(b, oursMCP(b, g))
	srv := sdkServer(b, g)
	pc, pu := loopback(b, sdkHandler(func(*http.Request) *sdk.Server { return srv }))
	checkCall(b, oc, ou)
	checkCall(b, pc, pu)
	sideBySide(b, benchPost(oc, ou, mcpCallBody), benchPost(pc, pu, mcpCallBody))
}

// BenchmarkMCPListVsGoSDK is the mcp-list-vs-gosdk row.
func BenchmarkMCPListVsGoSDK(b *testing.B) {
	g := itemsGraph(b, mcpListTools)
	oc, ou := loopback(b, oursMCP(b, g))
	srv := sdkServer(b, g)
	pc, pu := loopback(b, sdkHandler(func(*http.Request) *sdk.Server { return srv }))
	checkList(b, oc, ou, mcpListTools)
	checkList(b, pc, pu, mcpListTools)
	sideBySide(b, benchPost(oc, ou, mcpListBody), benchPost(pc, pu, mcpListBody))
}

// BenchmarkMCPListPreparedVsRebuild is the mcp-list-prepared-vs-rebuild
// row.
func BenchmarkMCPListPreparedVsRebuild(b *testing.B) {
	g := itemsGraph(b, mcpListTools)
	oc, ou := loopback(b, oursMCP(b, g))
	pc, pu := loopback(b, rebuildHandler(g))
	checkList(b, oc, ou, mcpListTools)
	checkList(b, pc, pu, mcpListTools)
	sideBySide(b, benchPost(oc, ou, mcpListBody), benchPost(pc, pu, mcpListBody))
}

// TestMCPBenchSides runs every side once, so `go test ./bench` proves
// they answer (and refuse) alike without running the benchmarks.
func TestMCPBenchSides(t *testing.T) {
	g := itemsGraph(t, 1)
	srv := sdkServer(t, g)
	for _, h := range []http.Handler{oursMCP(t, g), sdkHandler(func(*http.Request) *sdk.Server { return srv })} {
		c, u := loopback(t, h)
		checkCall(t, c, u)
		checkList(t, c, u, 1)
	}
	big := itemsGraph(t, 50)
	for _, h := range []http.Handler{oursMCP(t, big), rebuildHandler(big)} {
		c, u := loopback(t, h)
		checkList(t, c, u, 50)
	}
}
