package project

import (
	"errors"
	"slices"
	"testing"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// ToolSurfaces reports every problem at once, each a structured *Error
// naming the nodes a compiler positions it at.
func TestStructuredErrors(t *testing.T) {
	g := tasksGraph(t)
	g.Operation("tasks", "create").Tool = &graph.Tool{Name: "get_task"}   // collides with tasks.get on MCP and AGENT
	g.Operation("tasks", "complete").Tool = &graph.Tool{Name: "do.thing"} // invalid on MCP and AGENT
	g.RuntimeTools[0].Transports = []graph.Transport{graph.MCP}
	g.Surfaces = graph.Surfaces{
		MCP:   &graph.MCPSurfaces{Named: []graph.NamedSelection{{Name: "admin", Selection: graph.Selection{Include: []string{"tasks.purge", "tasks.*"}}}}},
		Agent: &graph.Selection{Include: []string{"tasks.*", "runtime.server_status", "runtime.nope", "tasks.nope"}},
	}
	_, err := ToolSurfaces(g)
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("%T is not project.Errors: %v", err, err)
	}
	var one *Error
	if !errors.As(err, &one) || one != es[0] {
		t.Error("errors.As does not find the first *Error")
	}
	type row struct {
		kind                ErrorKind
		t                   graph.Transport
		surface, sel, field string
		pattern, tool       string
		nodes               []string
	}
	var got []row
	for _, e := range es {
		got = append(got, row{e.Kind, e.Transport, e.Surface, e.Selection, e.Field, e.Pattern, e.Tool, e.Nodes})
		if e.Message == "" || e.Error() != e.Message {
			t.Errorf("%+v: bad message", e)
		}
	}
	want := []row{
		{SelectionNotExposed, graph.MCP, "admin", "surfaces.mcp.named.admin", "include", "tasks.purge", "", []string{"services.tasks.operations.purge"}},
		{InvalidToolName, graph.MCP, "admin", "", "", "", "do.thing", []string{"services.tasks.operations.complete"}},
		{ToolNameCollision, graph.MCP, "admin", "", "", "", "get_task", []string{"services.tasks.operations.create", "services.tasks.operations.get"}},
		{SelectionNotExposed, graph.AGENT, "", "surfaces.agent", "include", "runtime.server_status", "", []string{"runtimeTools.server_status"}},
		{SelectionUnknown, graph.AGENT, "", "surfaces.agent", "include", "runtime.nope", "", nil},
		{SelectionUnknown, graph.AGENT, "", "surfaces.agent", "include", "tasks.nope", "", nil},
		{InvalidToolName, graph.AGENT, "", "", "", "", "do.thing", []string{"services.tasks.operations.complete"}},
		{ToolNameCollision, graph.AGENT, "", "", "", "", "get_task", []string{"services.tasks.operations.create", "services.tasks.operations.get"}},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%v", len(got), len(want), err)
	}
	for i := range want {
		w, g := want[i], got[i]
		if w.kind != g.kind || w.t != g.t || w.surface != g.surface || w.sel != g.sel || w.field != g.field ||
			w.pattern != g.pattern || w.tool != g.tool || !slices.Equal(w.nodes, g.nodes) {
			t.Errorf("problem %d\n got %+v\nwant %+v", i, g, w)
		}
	}
	if !errors.Is(err, es[1].Err) || es[1].Err == nil {
		t.Error("the tool-name cause does not unwrap")
	}
}

func TestCLICollisionNodes(t *testing.T) {
	g := tasksGraph(t)
	g.CliCommands = []graph.CliCommand{{Name: "list_tasks", Desc: "x"}}
	_, err := ToolSurfaces(g)
	var e *Error
	if !errors.As(err, &e) || e.Kind != ToolNameCollision ||
		!slices.Equal(e.Nodes, []string{"services.tasks.operations.list", "cliCommands.list_tasks"}) ||
		!slices.Equal(e.Labels, []string{"contract tasks.list", `CLI-only command "list_tasks"`}) {
		t.Errorf("%+v", e)
	}
}
