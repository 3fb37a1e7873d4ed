package sdkcheck

import (
	"encoding/json"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"go.uber.org/goleak"
	"google.golang.org/genai"

	"stitchkit.dev/stitchkit/internal/mounttest"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount/agent"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func toolset(tb testing.TB, g *graph.Graph) *agent.Toolset {
	tb.Helper()
	r, err := mounttest.ExampleRunner(g, nil, nil)
	if err != nil {
		tb.Fatal(err)
	}
	ts, err := agent.New(r, nil)
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

// strict is g under policy agent.strict.
func strict(g *graph.Graph) *graph.Graph {
	s := *g
	s.Policy.Agent.Strict = true
	return &s
}

// The exported definitions decode into each provider SDK's own types and
// encode back to the same JSON: nothing we send is unknown to, dropped by
// or reshaped by the official clients. (Tasks, and the mounts' probe
// contracts, each with and without strict.)
func TestExportersRoundTripThroughProviderSDKs(t *testing.T) {
	graphs := []*graph.Graph{mounttest.Tasks(t), strictTasks(t)}
	for _, name := range []string{"library", "fleet", "ledger"} {
		graphs = append(graphs, mounttest.Unseen(t, name), strict(mounttest.Unseen(t, name)))
	}
	for _, g := range graphs {
		ts := toolset(t, g)
		n := len(ts.Tools())
		if n < 3 {
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
			if f == nil || f.Name != ts.Tools()[i].Name || f.Strict.Value != g.Policy.Agent.Strict || f.Parameters["type"] != "object" {
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
			// (A union input has no root properties: anyOf or allOf
			// beside "type": "object", in the SDK's ExtraFields.)
			if tp == nil || tp.Name != ts.Tools()[i].Name || tp.Description.Value != ts.Tools()[i].Description || tp.InputSchema.Type != "object" {
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
