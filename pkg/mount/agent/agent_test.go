package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"stitchkit.dev/stitchkit/internal/mounttest"
	"stitchkit.dev/stitchkit/pkg/conformance"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func toolset(tb testing.TB, g *graph.Graph, bind map[string]mount.Handler) *Toolset {
	tb.Helper()
	r, err := mounttest.ExampleRunner(g, nil, bind)
	if err != nil {
		tb.Fatal(err)
	}
	ts, err := New(r, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return ts
}

// strictTasks is the tasks graph under policy agent.strict.
func strictTasks(tb testing.TB) *graph.Graph {
	g := *mounttest.Tasks(tb)
	g.Policy.Agent.Strict = true
	return &g
}

// The toolset is the manifest's AGENT surface: same names, same input
// digests; with equal presentation options the AGENT and MCP documents of
// a tool have equal digests.
func TestToolsetIsTheManifestSurface(t *testing.T) {
	g := mounttest.Tasks(t)
	ts := toolset(t, g, nil)
	m, err := conformance.BuildManifest(projecttest.New(t, g, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range ts.Tools() {
		names = append(names, tool.Name)
		if _, d, _ := graph.SchemaDigest(decode(t, tool.InputSchema)); tool.InputDigest != d {
			t.Errorf("%s: digest %s of its schema, InputDigest %s", tool.Name, d, tool.InputDigest)
		}
	}
	if err := conformance.AssertDiscovery(m, conformance.Observed{AGENT: names}); err != nil {
		t.Fatal(err)
	}
	digests := map[string]map[string]graph.Digest{}
	for _, s := range m.ToolSurfaces {
		if digests[s.Transport] == nil {
			digests[s.Transport] = map[string]graph.Digest{}
		}
		for _, tool := range s.Tools {
			digests[s.Transport][tool.Name] = tool.Input
		}
	}
	for _, tool := range ts.Tools() {
		if digests["AGENT"][tool.Name] != tool.InputDigest {
			t.Errorf("%s: manifest AGENT digest %s, toolset %s", tool.Name, digests["AGENT"][tool.Name], tool.InputDigest)
		}
		if d, ok := digests["MCP"][tool.Name]; ok && d != tool.InputDigest {
			t.Errorf("%s: MCP digest %s differs from AGENT %s under equal options", tool.Name, d, tool.InputDigest)
		}
	}
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// Success is the validated output, {"status":"ok"} without output; a
// failure is a *CallError whose text is the tool envelope; an unknown
// tool is NOT_FOUND before anything runs.
func TestCall(t *testing.T) {
	var deleted int
	ts := toolset(t, mounttest.Tasks(t), map[string]mount.Handler{"tasks.delete": func(ctx context.Context, c *mount.Call) (json.RawMessage, error) {
		if c.Source != mount.SourceAgent {
			t.Errorf("source %s", c.Source)
		}
		deleted++
		return nil, nil
	}})
	ctx := context.Background()
	out, err := ts.Call(ctx, "get_task", json.RawMessage(`{"id":"t_1"}`))
	if err != nil || !bytes.Contains(out, []byte(`"id":"t_1"`)) {
		t.Fatalf("%s %v", out, err)
	}
	out, err = ts.Call(ctx, "delete_task", json.RawMessage(`{"id":"t_1"}`))
	if err != nil || string(out) != `{"status":"ok"}` || deleted != 1 {
		t.Fatalf("void: %s %v", out, err)
	}
	_, err = ts.Call(ctx, "get_task", json.RawMessage(`{"id":"nope"}`))
	var ce *CallError
	if !errors.As(err, &ce) || ce.Err.Code != "VALIDATION_ERROR" || !strings.HasPrefix(err.Error(), `{"error":"VALIDATION_ERROR","details":{"issues":[`) {
		t.Fatalf("invalid: %v", err)
	}
	var me *mount.Error
	if !errors.As(err, &me) || me.Code != "VALIDATION_ERROR" {
		t.Fatalf("errors.As *mount.Error: %v", err)
	}
	_, err = ts.Call(ctx, "no_such_tool", nil)
	if !errors.As(err, &ce) || ce.Err.Code != "NOT_FOUND" {
		t.Fatalf("unknown: %v", err)
	}
	// files.upload is MCP-only: not an agent tool.
	if ts.Tool("upload_file") != nil {
		t.Fatal("upload_file is on the agent surface")
	}
}

// Under strict mode a model sends null for an absent optional member; the
// invoker drops those nulls (at any depth) before the contract schema
// judges, and keeps a null where the contract does not make the member
// optional.
func TestStrictNulls(t *testing.T) {
	var got []any
	g := strictTasks(t)
	ts := toolset(t, g, map[string]mount.Handler{
		"tasks.list": func(ctx context.Context, c *mount.Call) (json.RawMessage, error) {
			got = append(got, c.Query)
			return json.RawMessage(`{"items":[]}`), nil
		},
		"tasks.create": func(ctx context.Context, c *mount.Call) (json.RawMessage, error) {
			got = append(got, c.Input)
			return json.RawMessage(`{"id":"t_2","title":"x","done":false}`), nil
		},
	})
	list := ts.Tool("list_tasks")
	if !list.Strict {
		t.Fatal("not strict")
	}
	schema := decode(t, list.InputSchema).(map[string]any)
	if req := schema["required"].([]any); len(req) != 4 || schema["additionalProperties"] != false {
		t.Fatalf("strict schema %v", schema)
	}
	ctx := context.Background()
	if _, err := ts.Call(ctx, "list_tasks", json.RawMessage(`{"limit":null,"cursor":null,"done":true,"tag":null}`)); err != nil {
		t.Fatal(err)
	}
	if q := got[0].(map[string]any); len(q) != 1 || q["done"] != true {
		t.Fatalf("query %v", q)
	}
	if _, err := ts.Call(ctx, "create_task", json.RawMessage(`{"title":"x","tags":null}`)); err != nil {
		t.Fatal(err)
	}
	if in := got[1].(map[string]any); len(in) != 1 {
		t.Fatalf("input %v", in)
	}
	// A required member's null is kept, and refused by the contract.
	_, err := ts.Call(ctx, "create_task", json.RawMessage(`{"title":null}`))
	var ce *CallError
	if !errors.As(err, &ce) || ce.Err.Code != "VALIDATION_ERROR" {
		t.Fatalf("required null: %v", err)
	}
}

// Exports keep schema bytes as the projector made them (no HTML escaping).
func TestExportKeepsBytes(t *testing.T) {
	ts := toolset(t, mounttest.Tasks(t), nil)
	b, err := ts.AnthropicTools()
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range ts.Tools() {
		if !bytes.Contains(b, tool.InputSchema) {
			t.Fatalf("%s: schema bytes not carried verbatim", tool.Name)
		}
	}
	if !slices.IsSortedFunc(ts.Tools(), func(a, b *Tool) int { return strings.Compare(a.Name, b.Name) }) {
		t.Fatal("tools not sorted by name")
	}
}

// Every provider requires a function's parameters to be an object schema
// ("type": "object" at the root): so is every advertised input, a union
// input (allOf of #params and an anyOf #input, unflattened) included. The
// probe contracts hold such a union (fleet's devices.command).
func TestInputsAreObjectSchemas(t *testing.T) {
	for _, name := range []string{"library", "fleet", "ledger"} {
		ts := toolset(t, mounttest.Unseen(t, name), nil)
		for _, tool := range ts.Tools() {
			var root map[string]any
			if err := json.Unmarshal(tool.InputSchema, &root); err != nil || root["type"] != "object" {
				t.Errorf("%s %s: the input's root type is %v: %s", name, tool.Name, root["type"], tool.InputSchema)
			}
		}
	}
}
