package project

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"stitchkit.dev/stitchkit/pkg/graph"
)

func surfaceNames(ts *Tools) []string {
	var out []string
	for _, s := range ts.Surfaces {
		out = append(out, string(s.Transport)+":"+s.Name+"="+strings.Join(s.Names(), ","))
	}
	return out
}

func TestToolSurfacesDefault(t *testing.T) {
	ts := mustTools(t, tasksGraph(t))
	want := []string{
		"AGENT:=complete_task,create_task,get_task,list_tasks,server_status",
		"CLI:=list_tasks",
		"MCP:=complete_task,create_task,get_task,list_tasks,server_status",
	}
	if got := surfaceNames(ts); !slices.Equal(got, want) {
		t.Errorf("surfaces\n got %q\nwant %q", got, want)
	}
	mcp := ts.Surface(graph.MCP, "")
	ct := mcp.Tool("complete_task")
	if ct.Kind != KindContract || ct.ID() != "tasks.complete" || ct.Annotations == nil || !*ct.Annotations.IdempotentHint {
		t.Errorf("complete_task row: %+v", ct)
	}
	if ct.Output == nil || ct.OutputDigest == "" {
		t.Errorf("complete_task has no output schema")
	}
	st := mcp.Tool("server_status")
	if st.Kind != KindRuntime || st.ID() != "server.status" || st.Scope != "public" || st.Op != nil || st.Runtime == nil {
		t.Errorf("server_status row: %+v", st)
	}
	// The list tool advertises the query keys as one flat object.
	in := decode(t, mcp.Tool("list_tasks").Input)
	if props := in["properties"].(map[string]any); props["limit"] == nil || props["cursor"] == nil {
		t.Errorf("list_tasks input %s", mcp.Tool("list_tasks").Input)
	}
	if in["$schema"] != schemaDialect {
		t.Errorf("advertised input carries no $schema: %v", in)
	}
	// Digests are the digests of the advertised bytes.
	for _, s := range ts.Surfaces {
		for _, tool := range s.Tools {
			if graph.DigestBytes(tool.Input) != tool.InputDigest {
				t.Errorf("%s %s: digest does not match the advertised bytes", s.Transport, tool.Name)
			}
		}
	}
}

func TestSelections(t *testing.T) {
	g := tasksGraph(t)
	g.Surfaces = graph.Surfaces{
		MCP: &graph.MCPSurfaces{Named: []graph.NamedSelection{
			{Name: "admin", Selection: graph.Selection{Include: []string{"tasks.*", "runtime.*"}}},
			{Name: "member", Selection: graph.Selection{Include: []string{"tasks.create", "tasks.get", "tasks.list"}}},
			{Name: "reader", Selection: graph.Selection{Include: []string{"*"}, Exclude: []string{"tasks.c*", "runtime.server_status"}}},
		}},
		Agent: &graph.Selection{Include: []string{"tasks.get"}},
		CLI:   &graph.Selection{Include: []string{}},
	}
	ts := mustTools(t, g)
	want := []string{
		"AGENT:=get_task",
		"CLI:=",
		"MCP:admin=complete_task,create_task,get_task,list_tasks,server_status",
		"MCP:member=create_task,get_task,list_tasks",
		"MCP:reader=get_task,list_tasks",
	}
	if got := surfaceNames(ts); !slices.Equal(got, want) {
		t.Errorf("surfaces\n got %q\nwant %q", got, want)
	}
	if ts.Surface(graph.MCP, "") != nil {
		t.Error("named MCP surfaces must not produce a default MCP surface")
	}
	// One operation on several MCP surfaces advertises one document.
	a, m := ts.Surface(graph.MCP, "admin").Tool("get_task"), ts.Surface(graph.MCP, "member").Tool("get_task")
	if a.InputDigest != m.InputDigest {
		t.Error("same tool, same policy, different digests across named surfaces")
	}
}

func TestSelectionErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		surf graph.Surfaces
		want []string
	}{
		{"literal not exposed", graph.Surfaces{MCP: &graph.MCPSurfaces{Default: &graph.Selection{Include: []string{"tasks.purge"}}}},
			[]string{`surfaces.mcp.default.include: "tasks.purge" is not exposed to MCP`}},
		{"literal unknown", graph.Surfaces{Agent: &graph.Selection{Include: []string{"tasks.nope"}}},
			[]string{`surfaces.agent.include: "tasks.nope" names no operation`}},
		{"runtime not on CLI", graph.Surfaces{CLI: &graph.Selection{Exclude: []string{"runtime.server_status"}}},
			[]string{`surfaces.cli.exclude: "runtime.server_status" is not exposed to CLI`}},
		{"named surface", graph.Surfaces{MCP: &graph.MCPSurfaces{Named: []graph.NamedSelection{{Name: "x", Selection: graph.Selection{Include: []string{"tasks.purge"}}}}}},
			[]string{`surfaces.mcp.named.x.include: "tasks.purge"`}},
		{"topology", graph.Surfaces{MCP: &graph.MCPSurfaces{Default: &graph.Selection{}, Named: []graph.NamedSelection{{Name: "x"}}}},
			[]string{"Surface manifest MCP topology must use either one direct surface or named surfaces"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := tasksGraph(t)
			g.Surfaces = tc.surf
			ts, err := ToolSurfaces(g)
			wantErr(t, err, tc.want...)
			if ts != nil {
				t.Error("a failed projection returned tools")
			}
		})
	}
	// A wildcard silently skips what is not exposed.
	g := tasksGraph(t)
	g.Surfaces.MCP = &graph.MCPSurfaces{Default: &graph.Selection{Include: []string{"tasks.p*"}}}
	if got := mustTools(t, g).Surface(graph.MCP, "").Names(); len(got) != 0 {
		t.Errorf("tasks.p* selected %v", got)
	}
	if err := func() error {
		g.Surfaces.MCP = &graph.MCPSurfaces{Default: &graph.Selection{}, Named: []graph.NamedSelection{{Name: "x"}}}
		_, err := ToolSurfaces(g)
		return err
	}(); !errors.Is(err, ErrMCPTopology) {
		t.Errorf("topology error is not ErrMCPTopology: %v", err)
	}
}

func TestMatchPattern(t *testing.T) {
	for _, tc := range []struct {
		pat, key string
		want     bool
	}{
		{"tasks.*", "tasks.list", true}, {"tasks.*", "tasksx.list", false}, {"*", "a.b", true},
		{"*.get", "users.get", true}, {"*.get", "users.getAll", false}, {"t*s.l*t", "tasks.list", true},
		{"tasks.list", "tasks.list", true}, {"tasks.list", "tasks.lis", false}, {"runtime.*", "runtime.x", true},
	} {
		if got := MatchPattern(tc.pat, tc.key); got != tc.want {
			t.Errorf("MatchPattern(%q, %q) = %v", tc.pat, tc.key, got)
		}
	}
}

// Upstream acceptance 17–21: tool names are validated on MCP and Agent,
// never silently fixed; CLI names skip the charset check.
func TestToolNameValidation(t *testing.T) {
	long := strings.Repeat("a", 65)
	for _, tc := range []struct {
		name    string
		edit    func(g *graph.Graph)
		wantErr []string
	}{
		{"17 explicit illegal", func(g *graph.Graph) { g.Operation("tasks", "get").Tool = &graph.Tool{Name: "do.thing"} },
			[]string{"MCP tool name of contract tasks.get", "do.thing", "AGENT tool name of contract tasks.get"}},
		{"17 too long", func(g *graph.Graph) { g.Operation("tasks", "get").Tool = &graph.Tool{Name: long} },
			[]string{"contract tasks.get", "65 characters"}},
		{"18 meaningless service", func(g *graph.Graph) { renameService(g, "tasks", "///") },
			[]string{`service "///" has no ASCII letter or digit`}},
		{"18 rescued by tool.name", func(g *graph.Graph) {
			renameService(g, "tasks", "///")
			for i := range g.Services[0].Operations {
				op := &g.Services[0].Operations[i]
				op.Tool = &graph.Tool{Name: "op_" + op.Action}
			}
		}, nil},
		{"19 duplicate across services", func(g *graph.Graph) {
			other := g.Services[0]
			other.Name, other.Prefix = "task", "/task"
			other.Operations = []graph.Operation{*g.Operation("tasks", "get")}
			other.Operations[0].Service = "task"
			g.Services = append([]graph.Service{other}, g.Services...)
		}, []string{`Duplicate MCP tool name "get_task" across mounted operations: contract task.get and contract tasks.get`,
			`Duplicate agent tool name "get_task"`}},
		{"runtime duplicate", func(g *graph.Graph) { g.RuntimeTools[0].Name = "get_task" },
			[]string{`Duplicate MCP tool name "get_task" across mounted operations: runtime server.status (runtime tool "get_task") and contract tasks.get`}},
		{"CLI-only collision", func(g *graph.Graph) { g.CliCommands = []graph.CliCommand{{Name: "list_tasks", Desc: "x"}} },
			[]string{`Duplicate CLI command "list_tasks" across mounted operations: contract tasks.list and CLI-only command "list_tasks"`}},
		{"21 CLI non-ASCII", func(g *graph.Graph) {
			op := g.Operation("tasks", "purge")
			op.Expose = []graph.Transport{graph.HTTP, graph.CLI}
			op.Tool = &graph.Tool{Name: "tâches-purger"}
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := tasksGraph(t)
			tc.edit(g)
			_, err := ToolSurfaces(g)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantErr(t, err, tc.wantErr...)
		})
	}
}

func renameService(g *graph.Graph, from, to string) {
	s := g.Service(from)
	s.Name = to
	for i := range s.Operations {
		s.Operations[i].Service = to
	}
}

func TestHeadIsNeverATool(t *testing.T) {
	g := tasksGraph(t)
	g.Operation("tasks", "get").Method = "HEAD"
	ts := mustTools(t, g)
	for _, s := range ts.Surfaces {
		if s.Tool("get_task") != nil {
			t.Errorf("HEAD operation listed on %s", s.Transport)
		}
	}
}

func TestMergeConflict(t *testing.T) {
	g := tasksGraph(t)
	op := g.Operation("tasks", "complete")
	op.Input = schema(t, g, `{"type":"object","properties":{"id":{"type":"string"},"note":{"type":"string"}}}`)
	op.Query = schema(t, g, `{"type":"object","properties":{"note":{"type":"string"}}}`)
	_, err := ToolSurfaces(g)
	wantErr(t, err, `tool "complete_task" (contract tasks.complete): Schema merge conflict: id declared in both params and input; note declared in both query and input`)
}

func TestAdvertisedInputMerge(t *testing.T) {
	g := tasksGraph(t)
	op := g.Operation("tasks", "complete")
	op.Query = schema(t, g, `{"type":"object","properties":{"dry":{"type":"boolean"}},"additionalProperties":false}`)
	op.Input = schema(t, g, `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"tags":{"type":"array","items":{"$ref":"#/$defs/Tag"}}},"required":["tags"],"$defs":{"Tag":{"type":"string"}}}`)
	ts := mustTools(t, g)
	in := ts.Surface(graph.MCP, "").Tool("complete_task").Input
	want := `{"$defs":{"input__Tag":{"type":"string"}},"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"dry":{"type":"boolean"},"id":{"type":"string"},"tags":{"items":{"$ref":"#/$defs/input__Tag"},"type":"array"}},"required":["id","tags"],"type":"object"}`
	if string(in) != want {
		t.Errorf("merged input\n got %s\nwant %s", in, want)
	}
	// The input side is open, so the merged object is open; a closed input
	// closes it.
	op.Input = schema(t, g, `{"type":"object","properties":{"tags":{"type":"string"}},"additionalProperties":false}`)
	in = mustTools(t, g).Surface(graph.MCP, "").Tool("complete_task").Input
	if decode(t, in)["additionalProperties"] != false {
		t.Errorf("additionalProperties not taken from the input side: %s", in)
	}
	// No input: the query side decides.
	op.Input = ""
	in = mustTools(t, g).Surface(graph.MCP, "").Tool("complete_task").Input
	if decode(t, in)["additionalProperties"] != false {
		t.Errorf("additionalProperties not taken from the query side: %s", in)
	}
	// No schema at all: an empty object.
	g2 := unionGraph(t, `{"type":"object"}`, graph.Policy{})
	in = mustTools(t, g2).Surface(graph.MCP, "").Tool("list_things").Input
	if string(in) != `{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{},"type":"object"}` {
		t.Errorf("empty input: %s", in)
	}
}

func TestAdvertisedInputNonObjectUsesAllOf(t *testing.T) {
	g := tasksGraph(t)
	g.Policy.MCP.SchemaValidation = graph.ValidationSkip
	op := g.Operation("tasks", "complete")
	op.Input = schema(t, g, `{"oneOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"type":"object","properties":{"b":{"type":"string"}},"required":["b"]}],"$defs":{"X":{"type":"string"}}}`)
	ts := mustTools(t, g)
	if ts.Surface(graph.MCP, "").Tool("complete_task") != nil {
		t.Error("a non-object MCP input was kept under skip")
	}
	// The params object is distributed into each variant: allOf of a
	// closed params object and the variants would admit nothing.
	in := decode(t, ts.Surface(graph.AGENT, "").Tool("complete_task").Input)
	variants, ok := in["oneOf"].([]any)
	if !ok || len(variants) != 2 {
		t.Fatalf("union input not distributed into its variants: %v", in)
	}
	for _, v := range variants {
		if props, _ := v.(map[string]any)["properties"].(map[string]any); props["id"] == nil {
			t.Errorf("variant without the path parameter id: %v", v)
		}
	}
	if _, ok := in["$defs"].(map[string]any)["input__X"]; !ok {
		t.Errorf("$defs not hoisted out of the union: %v", in)
	}
}

func TestRecursiveRootRef(t *testing.T) {
	g := unionGraph(t, `{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#"}}}}`, graph.Policy{})
	in := decode(t, mustTools(t, g).Surface(graph.MCP, "").Tool("create_thing").Input)
	items := in["properties"].(map[string]any)["children"].(map[string]any)["items"].(map[string]any)
	if items["$ref"] != "#/$defs/input" {
		t.Errorf("root ref not namespaced: %v", items)
	}
	if _, ok := in["$defs"].(map[string]any)["input"]; !ok {
		t.Errorf("root copy missing: %v", in)
	}
}

func TestSplitArgs(t *testing.T) {
	g := tasksGraph(t)
	op := g.Operation("tasks", "complete")
	op.Query = schema(t, g, `{"type":"object","properties":{"dry":{"type":"boolean"}}}`)
	op.Input = schema(t, g, `{"type":"object","properties":{"note":{"type":"string"}}}`)
	args := map[string]json.RawMessage{"id": json.RawMessage(`"t_1"`), "dry": json.RawMessage(`true`),
		"note": json.RawMessage(`"x"`), "extra": json.RawMessage(`1`)}
	params, query, input, err := SplitArgs(g, op, args)
	if err != nil {
		t.Fatal(err)
	}
	keys := func(m map[string]json.RawMessage) []string {
		var k []string
		for x := range m {
			k = append(k, x)
		}
		slices.Sort(k)
		return k
	}
	if !slices.Equal(keys(params), []string{"id"}) || !slices.Equal(keys(query), []string{"dry"}) || !slices.Equal(keys(input), []string{"extra", "note"}) {
		t.Errorf("split: params %v query %v input %v", keys(params), keys(query), keys(input))
	}
	tool := mustTools(t, g).Surface(graph.MCP, "").Tool("complete_task")
	p2, q2, i2 := tool.SplitArgs(args)
	if !reflect.DeepEqual([]any{p2, q2, i2}, []any{params, query, input}) {
		t.Error("Tool.SplitArgs and SplitArgs disagree")
	}
	rt := mustTools(t, g).Surface(graph.MCP, "").Tool("server_status")
	p3, q3, i3 := rt.SplitArgs(map[string]json.RawMessage{"id": json.RawMessage(`1`)})
	if p3 != nil || q3 != nil || len(i3) != 1 {
		t.Errorf("runtime split: %v %v %v", p3, q3, i3)
	}
}
