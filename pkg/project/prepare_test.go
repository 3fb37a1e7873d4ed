package project

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/validate"
)

// mediaUnion is upstream acceptance 46–47's input: a discriminated union
// whose variants disagree on media's kind and agree on count.
const mediaUnion = `{"oneOf":[
 {"type":"object","properties":{"kind":{"const":"a"},"media":{"type":"object","properties":{"url":{"type":"string"}}},"count":{"type":"integer","minimum":0,"description":"How many"},"note":{"type":"string"}},"required":["kind","media","count"],"additionalProperties":false},
 {"type":"object","properties":{"kind":{"type":"string","enum":["b"]},"media":{"type":"array","items":{"type":"string"}},"count":{"type":"integer","minimum":0,"description":"How many"},"level":{"enum":["x","y"]}},"required":["kind","count","level"],"additionalProperties":false}
]}`

func flatInput(t *testing.T, input string, pol graph.Policy) map[string]any {
	t.Helper()
	ts := mustTools(t, unionGraph(t, input, pol))
	return decode(t, ts.Surface(graph.MCP, "").Tool("create_thing").Input)
}

// Upstream acceptance 46–47.
func TestFlattenUnion(t *testing.T) {
	in := flatInput(t, mediaUnion, graph.Policy{MCP: graph.MCPPolicy{FlattenUnionInput: true}})
	raw, _ := json.Marshal(in)
	if bytes.Contains(raw, []byte("oneOf")) || bytes.Contains(raw, []byte("anyOf")) {
		t.Errorf("flattened input still has a union: %s", raw)
	}
	props := in["properties"].(map[string]any)
	check := func(name, want string) {
		t.Helper()
		got, _ := json.Marshal(props[name])
		if string(got) != want {
			t.Errorf("%s\n got %s\nwant %s", name, got, want)
		}
	}
	check("kind", `{"enum":["a","b"],"type":"string"}`)
	check("media", `{"description":"Required if kind = a","type":["object","array"]}`)
	check("count", `{"description":"How many","minimum":0,"type":"integer"}`)
	check("note", `{"description":"Available if kind = a","type":"string"}`)
	check("level", `{"description":"Required if kind = b","enum":["x","y"]}`)
	if req := fmt.Sprint(in["required"]); req != "[count kind]" {
		t.Errorf("required = %s", req)
	}
	if in["additionalProperties"] != false || in["type"] != "object" {
		t.Errorf("flat object: %s", raw)
	}
}

func TestFlattenLeavesUnflattenableUnions(t *testing.T) {
	for name, input := range map[string]string{
		"overlapping discriminators":          `{"oneOf":[{"type":"object","properties":{"kind":{"enum":["a","b"]}},"required":["kind"]},{"type":"object","properties":{"kind":{"enum":["b","c"]}},"required":["kind"]}]}`,
		"discriminator missing from a branch": `{"oneOf":[{"type":"object","properties":{"other":{"const":"a"}}},{"type":"object","properties":{"kind":{"const":"b"}},"required":["kind"]}]}`,
		"non-object branch":                   `{"anyOf":[{"type":"object","properties":{"kind":{"const":"a"}},"required":["kind"]},{"type":"string"}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			pol := graph.Policy{MCP: graph.MCPPolicy{FlattenUnionInput: true, SchemaValidation: graph.ValidationSkip}, Agent: graph.AgentPolicy{FlattenUnionInput: true}}
			ts := mustTools(t, unionGraph(t, input, pol))
			if ts.Surface(graph.MCP, "").Tool("create_thing") != nil {
				t.Error("an unflattenable union reached MCP")
			}
			raw := ts.Surface(graph.AGENT, "").Tool("create_thing").Input
			if !bytes.Contains(raw, []byte("Of\"")) {
				t.Errorf("union was flattened: %s", raw)
			}
		})
	}
}

// CUE emits a concrete regular field (`kind: "a"`) as an optional const, so
// a discriminator every branch declares but not every branch requires still
// flattens — and stays optional, so the flat schema accepts all the union
// accepts.
func TestFlattenOptionalDiscriminator(t *testing.T) {
	input := `{"anyOf":[{"type":"object","properties":{"kind":{"const":"email"},"address":{"type":"string"}},"required":["address"],"additionalProperties":false},{"type":"object","properties":{"kind":{"const":"sms"},"phone":{"type":"string"}},"required":["phone","kind"],"additionalProperties":false}]}`
	pol := graph.Policy{MCP: graph.MCPPolicy{FlattenUnionInput: true, SchemaValidation: graph.ValidationThrow}}
	ts := mustTools(t, unionGraph(t, input, pol))
	tool := ts.Surface(graph.MCP, "").Tool("create_thing")
	if tool == nil {
		t.Fatal("a union with a declared (optional) discriminator did not reach MCP")
	}
	var in map[string]any
	if err := json.Unmarshal(tool.Input, &in); err != nil {
		t.Fatal(err)
	}
	props := in["properties"].(map[string]any)
	if got, _ := json.Marshal(props["kind"]); string(got) != `{"enum":["email","sms"],"type":"string"}` {
		t.Errorf("kind = %s", got)
	}
	if got, _ := json.Marshal(props["address"]); string(got) != `{"description":"Required if kind = email","type":"string"}` {
		t.Errorf("address = %s", got)
	}
	if req, ok := in["required"]; ok {
		t.Errorf("required = %v, want none (kind may be omitted in the email branch)", req)
	}
}

// CUE writes disjunctions of definitions as anyOf over $refs; nested unions
// (inside a property, inside array items) are flattened too, and widening
// follows the kind rules.
func TestFlattenNestedAnyOfRefs(t *testing.T) {
	input := `{"type":"object","properties":{"shapes":{"type":"array","items":{"anyOf":[{"$ref":"#/$defs/Circle"},{"$ref":"#/$defs/Square"}]}}},"required":["shapes"],"additionalProperties":false,
	 "$defs":{"Circle":{"type":"object","properties":{"shape":{"const":"circle"},"size":{"type":"number"},"label":{"type":"string","const":"c"}},"required":["shape","size"],"additionalProperties":false},
	          "Square":{"type":"object","properties":{"shape":{"const":"square"},"size":{"type":"integer"},"label":{"enum":["s","q"]},"tag":{"anyOf":[{"type":"string"},{"type":"null"}]}},"required":["shape","size"]}}}`
	in := flatInput(t, input, graph.Policy{MCP: graph.MCPPolicy{FlattenUnionInput: true}})
	items := in["properties"].(map[string]any)["shapes"].(map[string]any)["items"].(map[string]any)
	got, _ := json.Marshal(items)
	want := `{"additionalProperties":{},"properties":{"label":{"enum":["c","s","q"],"type":"string"},"shape":{"enum":["circle","square"],"type":"string"},"size":{"type":"number"},"tag":{"anyOf":[{"type":"string"},{"type":"null"}],"description":"Available if shape = square"}},"required":["shape","size"],"type":"object"}`
	if string(got) != want {
		t.Errorf("flattened items\n got %s\nwant %s", got, want)
	}
}

// The flat document accepts a superset of what the union accepts.
func TestFlattenIsSuperset(t *testing.T) {
	orig := mustCompile(t, mediaUnion)
	in := flatInput(t, mediaUnion, graph.Policy{MCP: graph.MCPPolicy{FlattenUnionInput: true}})
	flatRaw, _ := json.Marshal(in)
	flat := mustCompile(t, string(flatRaw))
	for _, inst := range []string{
		`{"kind":"a","media":{"url":"u"},"count":0}`,
		`{"kind":"a","media":{},"count":3,"note":"n"}`,
		`{"kind":"b","count":1,"level":"x"}`,
		`{"kind":"b","media":["x"],"count":1,"level":"y"}`,
		`{"kind":"c","count":1}`,
		`{"kind":"a","media":"str","count":1}`,
		`{"kind":"a","count":-1,"media":{}}`,
		`{"kind":"b","count":1,"level":"x","extra":1}`,
	} {
		v := mustValue(t, inst)
		if orig.Validate(v) == nil && flat.Validate(v) != nil {
			t.Errorf("%s: valid for the union, refused by the flat schema: %v", inst, flat.Validate(v))
		}
	}
}

// mustCompile compiles doc with pkg/validate, the validator every mount
// uses (itself held to santhosh-tekuri/jsonschema and to CUE by its own
// differential tests), so this package's tests need no peer module.
func mustCompile(t *testing.T, doc string) *validate.Validator {
	t.Helper()
	s, err := validate.Compile([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Upstream acceptance 48: a union input with flattening off.
func TestSchemaValidationPolicies(t *testing.T) {
	for _, tc := range []struct {
		policy    string
		wantErr   bool
		wantWarns int
	}{
		{graph.ValidationThrow, true, 0},
		{graph.ValidationWarn, false, 1},
		{graph.ValidationSkip, false, 0},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			g := unionGraph(t, mediaUnion, graph.Policy{MCP: graph.MCPPolicy{SchemaValidation: tc.policy}})
			ts, err := ToolSurfaces(g)
			if tc.wantErr {
				wantErr(t, err, `MCP tool "create_thing" (contract things.create): input must be an object schema`)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ts.Surface(graph.MCP, "").Tool("create_thing") != nil {
				t.Error("tool kept on MCP")
			}
			if ts.Surface(graph.AGENT, "").Tool("create_thing") == nil {
				t.Error("MCP policy dropped the tool from AGENT")
			}
			if len(ts.Warnings) != tc.wantWarns {
				t.Errorf("warnings %v", ts.Warnings)
			}
			if tc.wantWarns > 0 && !strings.Contains(ts.Warnings[0].String(), `MCP tool "create_thing": input must be an object schema`) {
				t.Errorf("warning %q", ts.Warnings[0])
			}
		})
	}
	// Under throw every failing tool is reported at once.
	g := unionGraph(t, mediaUnion, graph.Policy{})
	svc := &g.Services[0]
	extra := svc.Operations[0]
	extra.Action = "update"
	svc.Operations = append(svc.Operations, extra)
	_, err := ToolSurfaces(g)
	wantErr(t, err, `"create_thing"`, `"update_thing"`)
}

// Upstream acceptance 49.
func TestTypedPropertiesAndPortableFormats(t *testing.T) {
	input := `{"type":"object","properties":{"note":{"description":"free text"},"file":{"type":"string","format":"binary"},"when":{"type":"string","format":"date-time"},"meta":{"type":"object","properties":{"raw":{}}}}}`
	run := func(pol graph.MCPPolicy) []string {
		pol.SchemaValidation = graph.ValidationThrow
		ts := mustTools(t, unionGraph(t, input, graph.Policy{MCP: pol}))
		if ts.Surface(graph.MCP, "").Tool("create_thing") == nil {
			t.Fatal("findings dropped the tool")
		}
		var out []string
		for _, w := range ts.Warnings {
			out = append(out, w.Message)
		}
		return out
	}
	got := run(graph.MCPPolicy{RequireTypedProperties: true, RequirePortableFormats: true})
	want := []string{
		`non-portable format "binary" at input.file: list it in policy.mcp.allowFormats if every host supports it`,
		"untyped property create_thing.meta.raw: give it a type or list it in policy.mcp.allowUntyped",
		"untyped property create_thing.note: give it a type or list it in policy.mcp.allowUntyped",
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings\n got %q\nwant %q", got, want)
	}
	got = run(graph.MCPPolicy{RequireTypedProperties: true, AllowUntyped: []string{"create_thing.note", "create_thing.meta.raw"},
		RequirePortableFormats: true, AllowFormats: []string{"binary"}})
	if len(got) != 0 {
		t.Errorf("allow-listed findings reported: %q", got)
	}
	if got = run(graph.MCPPolicy{}); len(got) != 0 {
		t.Errorf("checks off, findings reported: %q", got)
	}
}

func TestAgentStrict(t *testing.T) {
	input := `{"type":"object","properties":{"title":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}},"owner":{"$ref":"#/$defs/User"},"level":{"type":"string","enum":["a","b"]},"opts":{"type":"object","properties":{"x":{"type":"integer"}}}},"required":["title"],
	"$defs":{"User":{"type":"object","properties":{"id":{"type":"string"}}}}}`
	g := unionGraph(t, input, graph.Policy{Agent: graph.AgentPolicy{Strict: true}})
	ts := mustTools(t, g)
	got := string(ts.Surface(graph.AGENT, "").Tool("create_thing").Input)
	want := `{"$defs":{"input__User":{"additionalProperties":false,"properties":{"id":{"type":["string","null"]}},"required":["id"],"type":"object"}},"$schema":"https://json-schema.org/draft/2020-12/schema","additionalProperties":false,"properties":{"level":{"enum":["a","b",null],"type":["string","null"]},"opts":{"additionalProperties":false,"properties":{"x":{"type":["integer","null"]}},"required":["x"],"type":["object","null"]},"owner":{"anyOf":[{"$ref":"#/$defs/input__User"},{"type":"null"}]},"tags":{"items":{"type":"string"},"type":["array","null"]},"title":{"type":"string"}},"required":["level","opts","owner","tags","title"],"type":"object"}`
	if got != want {
		t.Errorf("strict agent input\n got %s\nwant %s", got, want)
	}
	if mcp := ts.Surface(graph.MCP, "").Tool("create_thing").Input; bytes.Contains(mcp, []byte("null")) {
		t.Errorf("Agent strictness leaked into MCP: %s", mcp)
	}
}

// A digest differs between surfaces exactly when the presentation does.
func TestDigestsFollowPresentation(t *testing.T) {
	g := unionGraph(t, mediaUnion, graph.Policy{MCP: graph.MCPPolicy{FlattenUnionInput: true}})
	ts := mustTools(t, g)
	mcp, agent, _ := ts.Surface(graph.MCP, ""), ts.Surface(graph.AGENT, ""), ts.Surface(graph.CLI, "")
	if mcp.Tool("create_thing").InputDigest == agent.Tool("create_thing").InputDigest {
		t.Error("MCP flattens and Agent does not, yet the digests are equal")
	}
	if mcp.Tool("list_things").InputDigest != agent.Tool("list_things").InputDigest {
		t.Error("a plain operation has different digests on MCP and Agent")
	}
	g.Policy.Agent.FlattenUnionInput = true
	ts = mustTools(t, g)
	if ts.Surface(graph.MCP, "").Tool("create_thing").InputDigest != ts.Surface(graph.AGENT, "").Tool("create_thing").InputDigest {
		t.Error("same presentation options, different digests")
	}
}

// Reordering properties in a schema never changes the advertised bytes.
func TestAdvertisedBytesIgnorePropertyOrder(t *testing.T) {
	a := mustTools(t, unionGraph(t, `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a","b"]}`, graph.Policy{}))
	b := mustTools(t, unionGraph(t, `{"required":["b","a"],"properties":{"b":{"type":"integer"},"a":{"type":"string"}},"type":"object"}`, graph.Policy{}))
	if a.Surface(graph.MCP, "").Tool("create_thing").InputDigest != b.Surface(graph.MCP, "").Tool("create_thing").InputDigest {
		t.Error("property order changed the digest")
	}
}

func TestRealtimeTopology(t *testing.T) {
	g := tasksGraph(t)
	g.Realtime = append([]graph.RealtimeContract{{Name: "zeta"}}, g.Realtime...)
	g.Realtime = append(g.Realtime, graph.RealtimeContract{Name: "empty"})
	rt, err := RealtimeTopology(g)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rt.Contracts, []string{"board", "empty", "zeta"}) {
		t.Errorf("contracts %v", rt.Contracts)
	}
	var rows []string
	for _, e := range rt.Events {
		rows = append(rows, fmt.Sprintf("%s.%s.%s ack=%v", e.Contract, e.Direction, e.Event, e.Ack != nil))
	}
	if want := []string{"board.serverToClient.taskChanged ack=false", "board.clientToServer.watch ack=true"}; !slices.Equal(rows, want) {
		t.Errorf("rows %q", rows)
	}
}

func TestRealtimeTopologyErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(g *graph.Graph)
		want string
		is   error
	}{
		{"args missing", func(g *graph.Graph) { g.Realtime[0].ServerToClient[0].Args = "" }, "board.serverToClient.taskChanged", ErrRealtimeArgsMissing},
		{"args unknown", func(g *graph.Graph) { g.Realtime[0].ServerToClient[0].Args = "0000000000000000" }, "taskChanged", ErrRealtimeArgsMissing},
		{"ack unknown", func(g *graph.Graph) { g.Realtime[0].ClientToServer[0].Ack = "0000000000000000" }, "board.clientToServer.watch", ErrRealtimeAckMissing},
		{"duplicate contract", func(g *graph.Graph) { g.Realtime = append(g.Realtime, graph.RealtimeContract{Name: "board"}) }, `realtime contract "board" is declared twice`, nil},
		{"duplicate event", func(g *graph.Graph) {
			g.Realtime[0].ClientToServer = append(g.Realtime[0].ClientToServer, g.Realtime[0].ClientToServer[0])
		}, "realtime event board.clientToServer.watch is declared twice", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := tasksGraph(t)
			tc.edit(g)
			_, err := RealtimeTopology(g)
			wantErr(t, err, tc.want)
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("%v is not %v", err, tc.is)
			}
		})
	}
}
