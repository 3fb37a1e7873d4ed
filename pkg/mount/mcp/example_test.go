package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
	mcpmount "stitchkit.dev/stitchkit/pkg/mount/mcp"
)

// greetGraph is a contract with one operation, greet.hello (POST
// /greet/{name}, an input with a default, an output); real graphs come from
// compile.Compile or graph.Load.
func greetGraph() *graph.Graph {
	g := &graph.Graph{Name: "greet", Version: "1.0.0", Policy: graph.Policy{MCP: graph.MCPPolicy{SchemaValidation: graph.ValidationThrow}}}
	obj := func(props map[string]any, required ...any) graph.Digest {
		s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
		if len(required) > 0 {
			s["required"] = required
		}
		d, err := g.AddSchema(s)
		if err != nil {
			panic(err)
		}
		return d
	}
	g.Services = []graph.Service{{Name: "greet", Prefix: "/greet", Scope: "public", Operations: []graph.Operation{{
		Service: "greet", Action: "hello", Method: "POST", Path: "/{name}", Desc: "Say hello", Scope: "public",
		Expose: []graph.Transport{graph.HTTP, graph.MCP, graph.AGENT, graph.CLI},
		Params: obj(map[string]any{"name": map[string]any{"type": "string", "minLength": 1}}, "name"),
		Input:  obj(map[string]any{"greeting": map[string]any{"type": "string", "default": "Hello"}}),
		Output: obj(map[string]any{"text": map[string]any{"type": "string"}}, "text"),
	}}}}
	return g
}

// A graph's MCP surface served over stateless streamable HTTP, and called
// with the official SDK client: the arguments are one flat object, invalid
// ones come back as an isError result with the registry code.
func ExampleNew() {
	impl := mount.NewImplementation(greetGraph())
	impl.Handle("greet", "hello", func(ctx context.Context, c *mount.Call) (json.RawMessage, error) {
		in := c.Input.(map[string]any)
		return json.Marshal(map[string]string{"text": in["greeting"].(string) + ", " + c.Params["name"].(string)})
	})
	runner, err := mount.New(impl, nil)
	if err != nil {
		panic(err)
	}
	h, err := mcpmount.New(runner, nil) // serves /mcp (the default surface)
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	ctx := context.Background()
	client := sdk.NewClient(&sdk.Implementation{Name: "example", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp", DisableStandaloneSSE: true}, nil)
	if err != nil {
		panic(err)
	}
	defer cs.Close()
	list, _ := cs.ListTools(ctx, nil)
	fmt.Println(list.Tools[0].Name)
	res, _ := cs.CallTool(ctx, &sdk.CallToolParams{Name: "hello_greet", Arguments: map[string]any{"name": "Ada"}})
	fmt.Println(res.IsError, res.Content[0].(*sdk.TextContent).Text)
	res, _ = cs.CallTool(ctx, &sdk.CallToolParams{Name: "hello_greet", Arguments: map[string]any{"name": ""}})
	fmt.Println(res.IsError, res.Content[0].(*sdk.TextContent).Text)
	// Output:
	// hello_greet
	// false {"text":"Hello, Ada"}
	// true {"error":"VALIDATION_ERROR","details":{"issues":[{"in":"params","path":"/name","keyword":"minLength","message":"minLength: got 0, want 1"}]}}
}
