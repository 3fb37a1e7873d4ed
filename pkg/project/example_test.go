package project_test

import (
	"fmt"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/project"
)

// A graph with one operation that takes a path parameter, a query and a
// body; real graphs come from compile.Compile or graph.Load.
func exampleGraph() *graph.Graph {
	g := &graph.Graph{Name: "notes", Policy: graph.Policy{MCP: graph.MCPPolicy{SchemaValidation: graph.ValidationThrow}}}
	obj := func(props map[string]any, required ...string) graph.Digest {
		d, err := g.AddSchema(map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false})
		if err != nil {
			panic(err)
		}
		return d
	}
	str := map[string]any{"type": "string"}
	g.Services = []graph.Service{{Name: "notes", Prefix: "/notes", Scope: "public", Operations: []graph.Operation{{
		Service: "notes", Action: "retitle", Method: "PATCH", Path: "/{id}", Desc: "Change a note's title", Scope: "public",
		Expose: []graph.Transport{graph.HTTP, graph.MCP, graph.AGENT},
		Params: obj(map[string]any{"id": str}, "id"),
		Query:  obj(map[string]any{"notify": map[string]any{"type": "boolean"}}),
		Input:  obj(map[string]any{"title": str}, "title"),
	}}}}
	return g
}

func ExampleToolSurfaces() {
	g := exampleGraph()
	ts, err := project.ToolSurfaces(g)
	if err != nil {
		panic(err)
	}
	for _, s := range ts.Surfaces {
		fmt.Println(project.SurfaceLabel(s.Transport, s.Name), s.Names())
	}
	// The advertised input is one flat object: params + query + body.
	tool := ts.Surface(graph.MCP, "").Tool("retitle_note")
	fmt.Println(string(tool.Input))
	// Output:
	// AGENT [retitle_note]
	// CLI []
	// MCP [retitle_note]
	// {"$schema":"https://json-schema.org/draft/2020-12/schema","additionalProperties":false,"properties":{"id":{"type":"string"},"notify":{"type":"boolean"},"title":{"type":"string"}},"required":["id","title"],"type":"object"}
}

func ExampleHTTPRoutes() {
	for _, r := range project.HTTPRoutes(exampleGraph(), project.HTTPOptions{Prefix: "/api"}) {
		fmt.Println(r.Pattern(), r.Op.ID())
	}
	// Output:
	// PATCH /api/notes/{id} notes.retitle
}
