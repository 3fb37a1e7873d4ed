package openapi_test

import (
	"testing"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// taskSchema is the 2020-12 shape CUE generates for #Task.
var taskSchema = map[string]any{
	"type":                 "object",
	"additionalProperties": false,
	"required":             []any{"id", "title", "done"},
	"properties": map[string]any{
		"id":    map[string]any{"type": "string", "pattern": "^t_[a-z0-9]+$"},
		"title": map[string]any{"type": "string", "minLength": 1, "maxLength": 200},
		"done":  map[string]any{"type": "boolean"},
		"tags":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
	},
}

func withDefs(root map[string]any, defs map[string]any) map[string]any {
	out := map[string]any{"$schema": "https://json-schema.org/draft/2020-12/schema"}
	for k, v := range root {
		out[k] = v
	}
	if defs != nil {
		out["$defs"] = defs
	}
	return out
}

func ref(name string) map[string]any { return map[string]any{"$ref": "#/$defs/" + name} }

func add(t *testing.T, g *graph.Graph, s map[string]any) graph.Digest {
	t.Helper()
	d, err := g.AddSchema(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// tasksGraph builds the DESIGN §3 tasks contract by hand. reverse builds
// the services and schemas in the opposite order.
func tasksGraph(t *testing.T, reverse bool) *graph.Graph {
	t.Helper()
	g := &graph.Graph{GraphVersion: graph.GraphVersion, DigestVersion: graph.DigestVersion,
		Name: "tasks", Version: "1.0.0", Info: graph.Info{Title: "Tasks API", Description: "Track tasks."}}
	g.Errors = []graph.ErrorCode{{Code: "TASK_NOT_FOUND", Status: 404, Message: "Task not found"}, {Code: "TASK_GONE", Status: 404, Message: "Gone"}}
	task := withDefs(ref("Task"), map[string]any{"Task": taskSchema})
	var (
		listQuery, listOut, createIn, taskOut, getParams, fileParams graph.Digest
	)
	adders := []func(){
		func() {
			listQuery = add(t, g, withDefs(map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{
				"limit":  map[string]any{"type": "integer", "minimum": 1, "maximum": 100},
				"cursor": map[string]any{"type": "string"},
				"tag":    map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			}, "required": []any{"tag"}}, nil))
		},
		func() {
			listOut = add(t, g, withDefs(map[string]any{"type": "object", "required": []any{"items"}, "properties": map[string]any{
				"items": map[string]any{"type": "array", "items": ref("Task")},
				"next":  map[string]any{"type": "string"},
			}}, map[string]any{"Task": taskSchema}))
		},
		func() {
			createIn = add(t, g, withDefs(map[string]any{"type": "object", "required": []any{"title"}, "properties": map[string]any{
				"title": map[string]any{"type": "string", "minLength": 1}}}, nil))
		},
		func() { taskOut = add(t, g, task) },
		func() {
			getParams = add(t, g, withDefs(map[string]any{"type": "object", "required": []any{"id"}, "properties": map[string]any{
				"id": map[string]any{"type": "string"}}}, nil))
		},
		func() {
			fileParams = add(t, g, withDefs(map[string]any{"type": "object", "required": []any{"id", "rest"}, "properties": map[string]any{
				"id": map[string]any{"type": "string"}, "rest": map[string]any{"type": "string"}}}, nil))
		},
	}
	if reverse {
		for i := len(adders) - 1; i >= 0; i-- {
			adders[i]()
		}
	} else {
		for _, f := range adders {
			f()
		}
	}
	all := []graph.Transport{graph.HTTP, graph.MCP, graph.AGENT}
	tasks := graph.Service{Name: "tasks", Prefix: "/tasks", Scope: "user", Operations: []graph.Operation{
		{Service: "tasks", Action: "complete", Method: "POST", Path: "/{id}/complete", Desc: "Mark a task done", Scope: "user", Expose: all, Params: getParams, ParamsSynthesized: true, Output: taskOut},
		{Service: "tasks", Action: "create", Method: "POST", Path: "/", Desc: "Create a task", Scope: "user", Expose: all, Input: createIn, Output: taskOut},
		{Service: "tasks", Action: "file", Method: "GET", Path: "/{id}/files/{rest...}", Desc: "Read a task file", Scope: "user", Expose: all, Params: fileParams, Output: taskOut},
		{Service: "tasks", Action: "get", Method: "GET", Path: "/{id}", Desc: "Get one task", Scope: "user", Expose: all, Params: getParams, Output: taskOut, Errors: []string{"TASK_GONE", "TASK_NOT_FOUND"}},
		{Service: "tasks", Action: "list", Method: "GET", Path: "/", Desc: "List tasks", Scope: "user", Expose: []graph.Transport{graph.HTTP, graph.MCP, graph.AGENT, graph.CLI}, Query: listQuery, Output: listOut},
		{Service: "tasks", Action: "mcponly", Method: "POST", Path: "/mcp-only", Desc: "Not on HTTP", Scope: "user", Expose: []graph.Transport{graph.MCP}},
		{Service: "tasks", Action: "purge", Method: "DELETE", Path: "/", Desc: "Delete all tasks", Scope: "admin", Expose: []graph.Transport{graph.HTTP}},
	}}
	health := graph.Service{Name: "health", Prefix: "/health", Scope: "public", Operations: []graph.Operation{
		{Service: "health", Action: "ping", Method: "GET", Path: "/", Desc: "Liveness", Scope: "public", Expose: all},
		{Service: "health", Action: "probe", Method: "HEAD", Path: "/", Desc: "Liveness (headers)", Scope: "public", Expose: []graph.Transport{graph.HTTP}},
	}}
	if reverse {
		g.Services = []graph.Service{tasks, health}
	} else {
		g.Services = []graph.Service{health, tasks}
	}
	rtIn := add(t, g, withDefs(map[string]any{"type": "object"}, nil))
	g.RuntimeTools = []graph.RuntimeTool{{Name: "whoami", Desc: "Runtime tool", Identity: graph.Identity{Service: "auth", Action: "whoami", Method: "GET", Scope: "user"}, Input: rtIn, Transports: []graph.Transport{graph.MCP}}}
	return g
}
