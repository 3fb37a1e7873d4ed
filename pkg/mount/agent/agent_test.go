package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"go.uber.org/goleak"
	"google.golang.org/genai"

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
	m, err := conformance.BuildManifest(g, nil)
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

// The exported definitions decode into each provider SDK's own types and
// encode back to the same JSON: nothing we send is unknown to, dropped by
// or reshaped by the official clients.
func TestExportersRoundTripThroughProviderSDKs(t *testing.T) {
	for _, g := range []*graph.Graph{mounttest.Tasks(t), strictTasks(t)} {
		ts := toolset(t, g, nil)
		n := len(ts.Tools())
		if n < 5 {
			t.Fatalf("only %d tools", n)
		}
		chat, err := ts.OpenAIChatTools()
		if err != nil {
			t.Fatal(err)
		}
		var chatTools []openai.ChatCompletionToolUnionParam
		roundTrip(t, "openai chat", chat, &chatTools)
		for i, ct := range chatTools {
			f := ct.OfFunction
			if f == nil || f.Function.Name != ts.Tools()[i].Name || f.Function.Strict.Value != g.Policy.Agent.Strict || f.Function.Parameters["type"] != "object" {
				t.Fatalf("openai chat tool %d: %+v", i, ct)
			}
		}

		resp, err := ts.OpenAIResponsesTools()
		if err != nil {
			t.Fatal(err)
		}
		var respTools []responses.ToolUnionParam
		roundTrip(t, "openai responses", resp, &respTools)
		for i, rt := range respTools {
			f := rt.OfFunction
			if f == nil || f.Name != ts.Tools()[i].Name || f.Strict.Value != g.Policy.Agent.Strict || f.Parameters["properties"] == nil {
				t.Fatalf("openai responses tool %d: %+v", i, rt)
			}
		}

		anth, err := ts.AnthropicTools()
		if err != nil {
			t.Fatal(err)
		}
		var anthTools []anthropic.ToolUnionParam
		roundTrip(t, "anthropic", anth, &anthTools)
		for i, at := range anthTools {
			tp := at.OfTool
			if tp == nil || tp.Name != ts.Tools()[i].Name || tp.Description.Value != ts.Tools()[i].Description || tp.InputSchema.Properties == nil {
				t.Fatalf("anthropic tool %d: %+v", i, at)
			}
		}

		gem, err := ts.GeminiTools()
		if err != nil {
			t.Fatal(err)
		}
		var gemTools []*genai.Tool
		roundTrip(t, "gemini", gem, &gemTools)
		if len(gemTools) != 1 || len(gemTools[0].FunctionDeclarations) != n {
			t.Fatalf("gemini tools %+v", gemTools)
		}
		for i, fd := range gemTools[0].FunctionDeclarations {
			if fd.Name != ts.Tools()[i].Name || fd.ParametersJsonSchema == nil {
				t.Fatalf("gemini declaration %d: %+v", i, fd)
			}
			b, _ := json.Marshal(fd.ParametersJsonSchema)
			if c1, c2 := canon(t, b), canon(t, ts.Tools()[i].InputSchema); c1 != c2 {
				t.Fatalf("gemini parameters of %s differ:\n%s\n%s", fd.Name, c1, c2)
			}
		}
	}
}

// roundTrip decodes ours into v (an SDK type), encodes v again and
// requires the same canonical JSON.
func roundTrip(t *testing.T, what string, ours []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(ours, v); err != nil {
		t.Fatalf("%s: decoding into the SDK type: %v", what, err)
	}
	theirs, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%s: SDK re-encode: %v", what, err)
	}
	if a, b := canon(t, ours), canon(t, theirs); a != b {
		t.Fatalf("%s: the SDK does not round-trip our definitions:\nours:   %s\ntheirs: %s", what, a, b)
	}
}

func canon(t *testing.T, b []byte) string {
	t.Helper()
	c, err := graph.Canonical(json.RawMessage(b))
	if err != nil {
		t.Fatal(err)
	}
	return string(c)
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
