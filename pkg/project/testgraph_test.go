package project

import (
	"encoding/json"
	"strings"
	"testing"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// schema stores a JSON Schema (written as JSON text) in g.
func schema(t testing.TB, g *graph.Graph, text string) graph.Digest {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("bad test schema %s: %v", text, err)
	}
	d, err := g.AddSchema(v)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

var defaultExpose = []graph.Transport{graph.HTTP, graph.MCP, graph.AGENT}

// tasksGraph is the DESIGN §3 example contract, built by hand.
func tasksGraph(t testing.TB) *graph.Graph {
	t.Helper()
	g := &graph.Graph{GraphVersion: graph.GraphVersion, DigestVersion: graph.DigestVersion, Name: "tasks", Version: "1.0.0",
		Policy: graph.Policy{MCP: graph.MCPPolicy{SchemaValidation: graph.ValidationThrow}}}
	task := `{"type":"object","properties":{"id":{"type":"string","pattern":"^t_[a-z0-9]+$"},"title":{"type":"string","minLength":1},"done":{"type":"boolean"}},"required":["id","title","done"],"additionalProperties":false}`
	taskD := schema(t, g, task)
	g.Services = []graph.Service{{Name: "tasks", Prefix: "/tasks", Scope: "user", Operations: []graph.Operation{
		{Service: "tasks", Action: "complete", Method: "POST", Path: "/{id}/complete", Desc: "Mark a task done", Scope: "user",
			Expose: defaultExpose, Params: schema(t, g, `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"additionalProperties":false}`),
			ParamsSynthesized: true, Output: taskD,
			Tool: &graph.Tool{Name: "complete_task", Annotations: &graph.Annotations{IdempotentHint: new(true)}}},
		{Service: "tasks", Action: "create", Method: "POST", Path: "/", Desc: "Create a task", Scope: "user", Expose: defaultExpose,
			Input:  schema(t, g, `{"type":"object","properties":{"title":{"type":"string","minLength":1}},"required":["title"],"additionalProperties":false}`),
			Output: taskD},
		{Service: "tasks", Action: "get", Method: "GET", Path: "/{id}", Desc: "Get one task", Scope: "user", Expose: defaultExpose,
			Params: schema(t, g, `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"additionalProperties":false}`),
			Output: taskD, Errors: []string{"TASK_NOT_FOUND"}},
		{Service: "tasks", Action: "list", Method: "GET", Path: "/", Desc: "List tasks", Scope: "user",
			Expose: []graph.Transport{graph.HTTP, graph.MCP, graph.AGENT, graph.CLI},
			Query:  schema(t, g, `{"type":"object","properties":{"limit":{"type":"integer","minimum":1,"maximum":100},"cursor":{"type":"string"}},"additionalProperties":false}`),
			Output: schema(t, g, `{"type":"object","properties":{"items":{"type":"array","items":{"$ref":"#/$defs/Task"}},"next":{"type":"string"}},"required":["items"],"additionalProperties":false,"$defs":{"Task":`+task+`}}`)},
		{Service: "tasks", Action: "purge", Method: "DELETE", Path: "/", Desc: "Delete all tasks", Scope: "admin", Expose: []graph.Transport{graph.HTTP}},
	}}}
	g.RuntimeTools = []graph.RuntimeTool{{Name: "server_status", Desc: "Report server status",
		Identity: graph.Identity{Service: "server", Action: "status", Method: "GET"},
		Input:    schema(t, g, `{"type":"object","properties":{},"additionalProperties":false}`), Transports: []graph.Transport{graph.MCP, graph.AGENT}}}
	g.Realtime = []graph.RealtimeContract{{Name: "board",
		ServerToClient: []graph.Event{{Name: "taskChanged", Args: schema(t, g, `{"type":"array","prefixItems":[`+task+`],"items":false}`)}},
		ClientToServer: []graph.Event{{Name: "watch", Args: schema(t, g, `{"type":"array","prefixItems":[{"type":"object","properties":{"board":{"type":"string"}},"required":["board"]}],"items":false}`),
			Ack: schema(t, g, `{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)}}}}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	return g
}

// op builds a one-operation service graph around an input schema.
func unionGraph(t testing.TB, input string, pol graph.Policy) *graph.Graph {
	t.Helper()
	g := &graph.Graph{Name: "u", Policy: pol}
	if g.Policy.MCP.SchemaValidation == "" {
		g.Policy.MCP.SchemaValidation = graph.ValidationThrow
	}
	g.Services = []graph.Service{{Name: "things", Prefix: "/things", Scope: "public", Operations: []graph.Operation{
		{Service: "things", Action: "create", Method: "POST", Path: "/", Desc: "Create a thing", Scope: "public",
			Expose: defaultExpose, Input: schema(t, g, input)},
		{Service: "things", Action: "list", Method: "GET", Path: "/", Desc: "List things", Scope: "public", Expose: defaultExpose},
	}}}
	return g
}

func mustTools(t testing.TB, g *graph.Graph) *Tools {
	t.Helper()
	ts, err := ToolSurfaces(g)
	if err != nil {
		t.Fatalf("ToolSurfaces: %v", err)
	}
	return ts
}

func wantErr(t testing.TB, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q\ndoes not contain %q", err, p)
		}
	}
}

func decode(t testing.TB, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
