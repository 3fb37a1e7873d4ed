package project

import (
	"encoding/json"
	"strings"
	"testing"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/validate"
)

// The compiler writes `#input: #T` as a root "$ref" into "$defs" (with
// sibling keywords when the definition is refined, e.g. `#P & {id: =~"^x"}`,
// and a percent-encoded pointer for a non-ASCII definition name). Such an
// input is its target: an object target reaches MCP as one flat object.
func TestRootRefInputsReachMCP(t *testing.T) {
	const dialect = `"$schema":"https://json-schema.org/draft/2020-12/schema"`
	for _, tc := range []struct {
		name         string
		params       string
		input        string
		want         string
		wantDefs     string
		wantValid    []string
		wantRejected []string
	}{{
		name:         "recursive definition",
		input:        `{"$defs":{"T":{"additionalProperties":false,"properties":{"children":{"items":{"$ref":"#/$defs/T"},"type":"array"},"name":{"type":"string"}},"required":["name"],"type":"object"}},"$ref":"#/$defs/T",` + dialect + `,"type":"object"}`,
		want:         `{"additionalProperties":false,"properties":{"children":{"items":{"$ref":"#/$defs/input__T"},"type":"array"},"name":{"type":"string"}},"required":["name"],"type":"object"}`,
		wantDefs:     `{"input__T":{"additionalProperties":false,"properties":{"children":{"items":{"$ref":"#/$defs/input__T"},"type":"array"},"name":{"type":"string"}},"required":["name"],"type":"object"}}`,
		wantValid:    []string{`{"name":"a","children":[{"name":"b","children":[]}]}`},
		wantRejected: []string{`{"name":"a","children":[{"children":[]}]}`, `{"name":"a","x":1}`},
	}, {
		name:     "non-ASCII definition name",
		input:    `{"$defs":{"Ü":{"additionalProperties":false,"properties":{"a":{"type":"string"}},"required":["a"],"type":"object"}},"$ref":"#/$defs/%C3%9C",` + dialect + `,"type":"object"}`,
		want:     `{"additionalProperties":false,"properties":{"a":{"type":"string"}},"required":["a"],"type":"object"}`,
		wantDefs: `null`,
	}, {
		name:         "refined definition in params",
		params:       `{"$defs":{"P":{"additionalProperties":false,"properties":{"id":{"type":"string"}},"required":["id"],"type":"object"}},"$ref":"#/$defs/P",` + dialect + `,"additionalProperties":false,"properties":{"id":{"pattern":"^x","type":"string"}},"required":["id"],"type":"object"}`,
		want:         `{"additionalProperties":false,"properties":{"id":{"pattern":"^x","type":"string"}},"required":["id"],"type":"object"}`,
		wantDefs:     `null`,
		wantValid:    []string{`{"id":"x1"}`},
		wantRejected: []string{`{"id":"y1"}`},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := &graph.Graph{Name: "r", Policy: graph.Policy{MCP: graph.MCPPolicy{SchemaValidation: graph.ValidationThrow}}}
			op := graph.Operation{Service: "things", Action: "create", Method: "POST", Path: "/", Desc: "Create", Scope: "public", Expose: defaultExpose}
			if tc.params != "" {
				op.Method, op.Path, op.Action = "GET", "/{id}", "get"
				op.Params = schema(t, g, tc.params)
			}
			if tc.input != "" {
				op.Input = schema(t, g, tc.input)
			}
			g.Services = []graph.Service{{Name: "things", Prefix: "/things", Scope: "public", Operations: []graph.Operation{op}}}
			ts, err := ToolSurfaces(g)
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			mcp := ts.Surface(graph.MCP, "")
			if len(mcp.Tools) != 1 {
				t.Fatalf("MCP tools %v", mcp.Names())
			}
			raw := mcp.Tools[0].Input
			doc := decode(t, raw)
			defs, _ := json.Marshal(doc["$defs"])
			delete(doc, "$defs")
			delete(doc, "$schema")
			if got, _ := json.Marshal(doc); string(got) != tc.want {
				t.Errorf("advertised input\n got %s\nwant %s", got, tc.want)
			}
			if string(defs) != tc.wantDefs {
				t.Errorf("$defs\n got %s\nwant %s", defs, tc.wantDefs)
			}
			s := mustCompile(t, string(raw))
			for _, v := range tc.wantValid {
				if err := s.Validate(mustValue(t, v)); err != nil {
					t.Errorf("%s refused: %v", v, err)
				}
			}
			for _, v := range tc.wantRejected {
				if s.Validate(mustValue(t, v)) == nil {
					t.Errorf("%s accepted", v)
				}
			}
		})
	}
}

// A #query given as a definition still splits its keys to query.
func TestSplitArgsRootRefQuery(t *testing.T) {
	g := &graph.Graph{Name: "r"}
	op := &graph.Operation{Service: "things", Action: "list", Method: "GET", Path: "/", Scope: "public", Expose: defaultExpose,
		Query: schema(t, g, `{"$defs":{"Q":{"type":"object","properties":{"limit":{"type":"integer"}}}},"$ref":"#/$defs/Q","type":"object"}`)}
	_, q, in, err := SplitArgs(g, op, map[string]json.RawMessage{"limit": json.RawMessage("3")})
	if err != nil {
		t.Fatal(err)
	}
	if q["limit"] == nil || in != nil {
		t.Errorf("limit went to query=%v input=%v", q, in)
	}
}

// With flattenUnionInput already on, a union that still cannot be
// flattened is explained — never "flatten the union with
// policy.mcp.flattenUnionInput".
func TestUnflattenableUnionAdvice(t *testing.T) {
	for _, tc := range []struct {
		name, input, why string
	}{
		{"no discriminator", `{"oneOf":[{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]},{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}]}`,
			"no string const/enum property is present in every branch with distinct values"},
		{"non-object branch", `{"anyOf":[{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]},{"type":"string"}]}`,
			"branch 2 is of type string, not an object with properties"},
		{"overlapping discriminators", `{"oneOf":[{"type":"object","properties":{"kind":{"enum":["a","b"]}},"required":["kind"]},{"type":"object","properties":{"kind":{"enum":["b","c"]}},"required":["kind"]}]}`,
			`"kind" is a string const/enum in every branch, but more than one branch allows "b"`},
		{"refs to definitions", `{"$defs":{"A":{"type":"object","properties":{"a":{"type":"integer"}}},"B":{"type":"object","properties":{"a":{"type":"string"}}}},"anyOf":[{"$ref":"#/$defs/A"},{"$ref":"#/$defs/B"}]}`,
			"no string const/enum property"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pol := graph.Policy{MCP: graph.MCPPolicy{FlattenUnionInput: true}, Agent: graph.AgentPolicy{FlattenUnionInput: true}}
			_, err := ToolSurfaces(unionGraph(t, tc.input, pol))
			wantErr(t, err, "could not flatten", tc.why, `kind!: "email"`, "remove MCP from expose")
			if err != nil && strings.Contains(err.Error(), "flatten the union with policy.mcp.flattenUnionInput") {
				t.Errorf("advises turning on a policy that is already on: %v", err)
			}
			if err != nil && strings.Contains(err.Error(), "AGENT") {
				t.Errorf("AGENT failed too: %v", err)
			}
		})
	}
	// With the policy off, the advice is to turn it on.
	_, err := ToolSurfaces(unionGraph(t, mediaUnion, graph.Policy{}))
	wantErr(t, err, "flatten the union with policy.mcp.flattenUnionInput")
}

func mustValue(t *testing.T, inst string) any {
	t.Helper()
	v, err := validate.DecodeJSON([]byte(inst), nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// An explicit empty include (`include: []`) selects nothing; an absent one
// selects everything exposed.
func TestEmptyIncludeSelectsNothing(t *testing.T) {
	g := tasksGraph(t)
	g.Surfaces.Agent = &graph.Selection{Include: []string{}}
	ts := mustTools(t, g)
	if n := ts.Surface(graph.AGENT, "").Names(); len(n) != 0 {
		t.Errorf("include: [] selected %v", n)
	}
	if n := ts.Surface(graph.MCP, "").Names(); len(n) == 0 {
		t.Error("absent MCP selection selected nothing")
	}
}

// A preparation warning names the graph node of its tool, so a compiler can
// position it without re-deriving tool names.
func TestWarningNode(t *testing.T) {
	g := unionGraph(t, mediaUnion, graph.Policy{MCP: graph.MCPPolicy{SchemaValidation: graph.ValidationWarn}})
	ts := mustTools(t, g)
	if len(ts.Warnings) != 1 || ts.Warnings[0].Node != OperationNode("things", "create") {
		t.Errorf("warnings %+v", ts.Warnings)
	}
}
