package conformance_test

import (
	"fmt"

	"stitchkit.dev/stitchkit/pkg/conformance"
	"stitchkit.dev/stitchkit/pkg/graph"
)

func ExampleBuildManifest() {
	// A one-operation graph, built by hand; real graphs come from
	// compile.Compile or graph.Load.
	g := &graph.Graph{Name: "notes", Policy: graph.Policy{MCP: graph.MCPPolicy{SchemaValidation: graph.ValidationThrow}}}
	input, _ := g.AddSchema(map[string]any{
		"type":       "object",
		"properties": map[string]any{"text": map[string]any{"type": "string"}},
		"required":   []string{"text"},
	})
	g.Services = []graph.Service{{Name: "notes", Prefix: "/notes", Scope: "public", Operations: []graph.Operation{{
		Service: "notes", Action: "create", Method: "POST", Path: "/", Desc: "Create a note", Scope: "public",
		Expose: []graph.Transport{graph.HTTP, graph.MCP, graph.AGENT}, Input: input,
	}}}}

	m, err := conformance.BuildManifest(g, &conformance.Options{HTTPPrefix: "/api"})
	if err != nil {
		panic(err)
	}
	for _, op := range m.Operations {
		fmt.Println(op.Service+"."+op.Action, op.HTTP)
	}
	for _, s := range m.ToolSurfaces {
		for _, t := range s.Tools {
			fmt.Println(s.Transport, t.Name)
		}
	}
	fmt.Println(conformance.AssertDiscovery(m, conformance.Observed{MCP: []string{"create_note"}}))
	fmt.Println(conformance.AssertDiscovery(m, conformance.Observed{MCP: []string{}}))
	// Output:
	// notes.create [{POST /api/notes}]
	// AGENT create_note
	// MCP create_note
	// <nil>
	// MCP discovery mismatch
	// expected: create_note
	// actual: (empty)
}
