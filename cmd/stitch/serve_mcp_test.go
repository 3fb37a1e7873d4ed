package main

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"stitchkit.dev/stitchkit/internal/mounttest"
	"stitchkit.dev/stitchkit/pkg/conformance"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/project"
)

// mcpSurfaces is what stitch serve must serve on MCP: each surface's path
// below /mcp and its tools, from the projector (the manifest's source).
func mcpSurfaces(t *testing.T, g *graph.Graph) []project.Surface {
	ts, err := project.ToolSurfaces(g)
	if err != nil {
		t.Fatal(err)
	}
	var out []project.Surface
	for _, s := range ts.Surfaces {
		if s.Transport == graph.MCP {
			out = append(out, s)
		}
	}
	return out
}

func mcpPath(surface string) string {
	if surface == "" {
		return "/mcp"
	}
	return "/mcp/" + surface
}

// exampleArgs are the flat tool arguments of an operation's first example
// (its params, query and input side by side), or nil when it has none.
func exampleArgs(tool *project.Tool) map[string]any {
	var raws []json.RawMessage
	if tool.Op != nil {
		raws = tool.Op.Examples
	} else if tool.Runtime != nil {
		raws = tool.Runtime.Examples
	}
	if len(raws) == 0 {
		return nil
	}
	var ex map[string]map[string]any
	if json.Unmarshal(raws[0], &ex) != nil {
		return nil
	}
	args := map[string]any{}
	for _, part := range []string{"params", "query", "input"} {
		for k, v := range ex[part] {
			args[k] = v
		}
	}
	return args
}

// stitch serve speaks MCP for any contract: each surface lists what the
// manifest says (through the SDK client), a tool with an example answers
// it, and invalid arguments come back as isError with the registry code.
func TestServeMCP(t *testing.T) {
	defer goleak.VerifyNone(t)
	dirs := []string{"../../examples/tasks", "../../examples/minimal"}
	for _, name := range unseenContracts {
		dirs = append(dirs, mounttest.UnseenDir(name))
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			g, err := loadContract(context.Background(), dir, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			m, err := conformance.BuildManifest(projecttest.Prefixed(t, g, "/api"), nil)
			if err != nil {
				t.Fatal(err)
			}
			s := startServe(t, dir)
			defer func() {
				if err := s.stop(); err != nil {
					t.Error(err)
				}
			}()
			if !strings.Contains(s.out.String(), s.base+"/mcp") {
				t.Errorf("the MCP endpoints are not printed:\n%s", s.out.String())
			}
			ctx := context.Background()
			client := sdk.NewClient(&sdk.Implementation{Name: "serve-test", Version: "1"}, nil)
			for _, surface := range mcpSurfaces(t, g) {
				cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: s.base + mcpPath(surface.Name), HTTPClient: s.client, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
				if err != nil {
					t.Fatal(err)
				}
				list, err := cs.ListTools(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, tool := range list.Tools {
					names = append(names, tool.Name)
				}
				obs := conformance.Observed{ToolSurfaces: []conformance.ObservedSurface{{Transport: "MCP", Surface: surface.Name, Names: names}}}
				if err := conformance.AssertDiscovery(m, obs); err != nil {
					t.Error(err)
				}
				called := 0
				for i := range surface.Tools {
					tool := &surface.Tools[i]
					if args := exampleArgs(tool); args != nil {
						res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool.Name, Arguments: args})
						if err != nil || res.IsError {
							t.Errorf("%s %s with its example: %v %+v", surface.Name, tool.Name, err, res)
						}
						called++
					}
					res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool.Name, Arguments: json.RawMessage(`"not an object"`)})
					if err != nil || !res.IsError || !strings.HasPrefix(res.Content[0].(*sdk.TextContent).Text, `{"error":"VALIDATION_ERROR"`) {
						t.Errorf("%s %s with invalid arguments: %v %+v", surface.Name, tool.Name, err, res)
					}
				}
				if called == 0 && len(surface.Tools) > 0 && dir != "../../examples/minimal" {
					t.Errorf("surface %q: no tool with an example was called", surface.Name)
				}
				cs.Close()
			}
			// An unknown surface is our 404, never the SDK's.
			st, _, body := s.do(t, "POST", "/mcp/no-such-surface", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
			if st != 404 || errorCode(t, "unknown surface", body) != "NOT_FOUND" {
				t.Errorf("unknown surface: %d %s", st, body)
			}
		})
	}
}

// The official MCP Inspector CLI drives stitch serve: every surface listed
// as the manifest says, a tool called, invalid arguments answered with
// isError and the registry code.
func TestServeMCPInspector(t *testing.T) {
	defer goleak.VerifyNone(t)
	const dir = "../../examples/tasks"
	g, err := loadContract(context.Background(), dir, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	m, err := conformance.BuildManifest(projecttest.Prefixed(t, g, "/api"), nil)
	if err != nil {
		t.Fatal(err)
	}
	mounttest.Inspector(t) // install before the server starts
	s := startServe(t, dir)
	defer func() {
		if err := s.stop(); err != nil {
			t.Error(err)
		}
	}()
	var observed []conformance.ObservedSurface
	for _, surface := range mcpSurfaces(t, g) {
		out := mounttest.RunInspector(t, s.base+mcpPath(surface.Name), 0, "--method", "tools/list")
		var names []string
		for _, tool := range out["tools"].([]any) {
			names = append(names, tool.(map[string]any)["name"].(string))
		}
		observed = append(observed, conformance.ObservedSurface{Transport: "MCP", Surface: surface.Name, Names: names})
	}
	if err := conformance.AssertDiscovery(m, conformance.Observed{ToolSurfaces: observed}); err != nil {
		t.Fatal(err)
	}
	url := s.base + "/mcp/member"
	out := mounttest.RunInspector(t, url, 0, "--method", "tools/call", "--tool-name", "get_task", "--tool-arg", "id=t_1")
	if sc, _ := out["structuredContent"].(map[string]any); sc["id"] != "t_1" {
		t.Fatalf("get_task: %v", out)
	}
	out = mounttest.RunInspector(t, url, 5, "--method", "tools/call", "--tool-name", "list_tasks", "--tool-arg", "limit=1000")
	text := out["content"].([]any)[0].(map[string]any)["text"].(string)
	if out["isError"] != true || !strings.HasPrefix(text, `{"error":"VALIDATION_ERROR","details":{"issues":[{"in":"query","path":"/limit","keyword":"maximum"`) {
		t.Fatalf("invalid arguments: %v", out)
	}
}

// unseenContracts are the probe contracts of internal/mounttest (contracts
// no example shares shapes with) every stitch serve test also runs on.
var unseenContracts = []string{"library", "fleet", "ledger"}

// The Inspector on the probe contracts: every surface (named ones, or the
// default one at /mcp) lists exactly what the manifest says — a tool the
// Inspector's client refuses (an outputSchema that is not an object) would
// be missing — a tool with an example answers it, and unknown arguments
// are isError with VALIDATION_ERROR and its issues.
func TestServeMCPInspectorUnseen(t *testing.T) {
	defer goleak.VerifyNone(t)
	mounttest.Inspector(t) // install before the servers start
	for _, name := range unseenContracts {
		t.Run(name, func(t *testing.T) {
			dir := mounttest.UnseenDir(name)
			g := mounttest.Unseen(t, name)
			m, err := conformance.BuildManifest(projecttest.Prefixed(t, g, "/api"), nil)
			if err != nil {
				t.Fatal(err)
			}
			s := startServe(t, dir)
			defer func() {
				if err := s.stop(); err != nil {
					t.Error(err)
				}
			}()
			var observed []conformance.ObservedSurface
			called := false
			for _, surface := range mcpSurfaces(t, g) {
				url := s.base + mcpPath(surface.Name)
				out := mounttest.RunInspector(t, url, 0, "--method", "tools/list")
				var names []string
				for _, tool := range out["tools"].([]any) {
					names = append(names, tool.(map[string]any)["name"].(string))
				}
				observed = append(observed, conformance.ObservedSurface{Transport: "MCP", Surface: surface.Name, Names: names})
				if called {
					continue
				}
				for i := range surface.Tools {
					tool := &surface.Tools[i]
					args := exampleArgs(tool)
					if args == nil {
						continue
					}
					b, _ := json.Marshal(args)
					out := mounttest.RunInspector(t, url, 0, "--method", "tools/call", "--tool-name", tool.Name, "--tool-args-json", string(b))
					if out["isError"] == true {
						t.Errorf("%s with its example: %v", tool.Name, out)
					}
					args["zz_not_declared"] = 1
					b, _ = json.Marshal(args)
					out = mounttest.RunInspector(t, url, 5, "--method", "tools/call", "--tool-name", tool.Name, "--tool-args-json", string(b))
					text, _ := out["content"].([]any)[0].(map[string]any)["text"].(string)
					if out["isError"] != true || !strings.HasPrefix(text, `{"error":"VALIDATION_ERROR","details":{"issues":[`) {
						t.Errorf("%s with an undeclared argument: %v", tool.Name, out)
					}
					called = true
					break
				}
			}
			if err := conformance.AssertDiscovery(m, conformance.Observed{ToolSurfaces: observed}); err != nil {
				t.Error(err)
			}
			if !called {
				t.Error("no tool with an example was called")
			}
		})
	}
}
