package openapi_test

import (
	"encoding/json"
	"fmt"
	"stitchkit.dev/stitchkit/pkg/project"

	"stitchkit.dev/stitchkit/pkg/export/openapi"
	"stitchkit.dev/stitchkit/pkg/graph"
)

// A graph normally comes from compile.Compile or graph.Load; this one is
// built by hand.
func ExampleGenerate() {
	g := &graph.Graph{Name: "tasks", Version: "1.0.0"}
	out, _ := g.AddSchema(map[string]any{
		"$ref":  "#/$defs/Task",
		"$defs": map[string]any{"Task": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}}},
	})
	params, _ := g.AddSchema(map[string]any{"type": "object", "required": []any{"id"}, "properties": map[string]any{"id": map[string]any{"type": "string"}}})
	g.Services = []graph.Service{{Name: "tasks", Prefix: "/tasks", Scope: "user", Operations: []graph.Operation{{
		Service: "tasks", Action: "get", Method: "GET", Path: "/{id}", Desc: "Get one task",
		Scope: "user", Expose: []graph.Transport{graph.HTTP}, Params: params, Output: out,
	}}}}

	proj, err := project.New(g, &project.Options{HTTPPrefix: "/api"}) // the one projection
	if err != nil {
		fmt.Println(err)
		return
	}
	doc, err := openapi.Generate(proj, nil)
	if err != nil {
		panic(err)
	}
	var d struct {
		Paths map[string]map[string]struct {
			OperationID string           `json:"operationId"`
			Security    []map[string]any `json:"security"`
			Responses   map[string]any   `json:"responses"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		panic(err)
	}
	op := d.Paths["/api/tasks/{id}"]["get"]
	fmt.Println(op.OperationID, op.Security)
	fmt.Println(len(op.Responses), "responses")
	for name := range d.Components.Schemas {
		fmt.Println("component", name)
	}
	// Output:
	// tasks_get [map[stitchkit:[user]]]
	// 5 responses
	// component Task
}
