package graph

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// sampleGraph builds a small but complete graph by hand.
func sampleGraph(t testing.TB) *Graph {
	t.Helper()
	g := &Graph{
		GraphVersion:  GraphVersion,
		DigestVersion: DigestVersion,
		Generator:     Generator{Stitchkit: "stitchkit.dev/stitchkit", CUE: "v0.17.1"},
		Name:          "tasks",
		Version:       "1.0.0",
		Errors:        []ErrorCode{{Code: "TASK_NOT_FOUND", Status: 404, Message: "Task not found"}},
		Policy:        Policy{MCP: MCPPolicy{SchemaValidation: ValidationThrow}},
	}
	must := func(v any) Digest {
		d, err := g.AddSchema(v)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	task := must(json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"},"title":{"type":"string","maxLength":200}},"required":["title","id"],"additionalProperties":false}`))
	params := must(json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"additionalProperties":false}`))
	args := must(json.RawMessage(`{"type":"array","prefixItems":[{"type":"string"}],"items":false}`))
	g.Services = []Service{{
		Name: "tasks", Prefix: "/tasks", Scope: "user",
		Operations: []Operation{
			{Service: "tasks", Action: "get", Method: "GET", Path: "/{id}", Desc: "Get one task", Scope: "user",
				Expose: []Transport{HTTP, MCP, AGENT}, Params: params, ParamsSynthesized: true, Output: task, Errors: []string{"TASK_NOT_FOUND"}},
			{Service: "tasks", Action: "list", Method: "GET", Path: "/", Desc: "List tasks", Scope: "user",
				Expose: []Transport{HTTP, MCP, AGENT, CLI}, Output: task, Meta: json.RawMessage(`{"tier":1}`)},
		},
	}}
	g.RuntimeTools = []RuntimeTool{{Name: "task_stats", Desc: "Stats", Identity: Identity{Service: "tasks", Action: "stats", Method: "GET", Scope: "public"},
		Input: must(json.RawMessage(`{"type":"object","properties":{}}`)), Transports: []Transport{MCP, AGENT}}}
	g.Realtime = []RealtimeContract{
		{Name: "board", ServerToClient: []Event{{Name: "taskChanged", Args: args}}, ClientToServer: []Event{}},
		{Name: "presence", ServerToClient: []Event{}, ClientToServer: []Event{}},
	}
	return g
}

func TestEncodeLoadRoundTrip(t *testing.T) {
	g := sampleGraph(t)
	b1, err := g.Encode()
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(b1)
	if err != nil {
		t.Fatalf("Load: %v\n%s", err, b1)
	}
	if diff := cmp.Diff(g, loaded, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("round trip changed the graph (-want +got):\n%s", diff)
	}
	b2, err := loaded.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b1, b2) {
		t.Errorf("Encode is not stable across a Load round trip")
	}
	if !bytes.HasSuffix(b1, []byte("}\n")) {
		t.Errorf("graph.json must end with a newline")
	}
}

func TestLoadRefusesTamperedSchema(t *testing.T) {
	g := sampleGraph(t)
	b, err := g.Encode()
	if err != nil {
		t.Fatal(err)
	}
	// Loosen the title bound inside the stored schema without updating its
	// digest key.
	tampered := bytes.Replace(b, []byte(`"maxLength": 200`), []byte(`"maxLength": 201`), 1)
	if bytes.Equal(b, tampered) {
		t.Fatal("test did not modify the file")
	}
	_, err = Load(tampered)
	if err == nil || !strings.Contains(err.Error(), "edited after compilation") {
		t.Fatalf("Load(tampered) = %v, want an 'edited after compilation' error", err)
	}
	// Whitespace-only edits are not tampering.
	reindented := bytes.ReplaceAll(b, []byte("\n"), []byte("\n  "))
	if _, err := Load(reindented); err != nil {
		t.Errorf("Load(reindented) = %v, want success", err)
	}
}

func TestLoadRefusals(t *testing.T) {
	g := sampleGraph(t)
	good, _ := g.Encode()
	tests := []struct {
		name string
		edit func(string) string
		want string
	}{
		{"unknown field", func(s string) string { return strings.Replace(s, `"name": "tasks"`, `"name": "tasks", "bogus": 1`, 1) }, "unknown field"},
		{"graph version", func(s string) string { return strings.Replace(s, `"graphVersion": 1`, `"graphVersion": 9`, 1) }, "graphVersion 9"},
		{"digest version", func(s string) string { return strings.Replace(s, `"digestVersion": 1`, `"digestVersion": 2`, 1) }, "digestVersion 2"},
		{"dangling reference", func(s string) string {
			return strings.Replace(s, `"input": "`+string(g.RuntimeTools[0].Input)+`"`, `"input": "0000000000000000"`, 1)
		}, "is not in the graph"},
		{"bad method", func(s string) string { return strings.Replace(s, `"method": "GET"`, `"method": "FETCH"`, 1) }, "unknown method"},
		{"trailing data", func(s string) string { return s + "{}" }, "trailing data"},
		{"not json", func(string) string { return "nope" }, "graph.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.edit(string(good))
			if in == string(good) {
				t.Fatal("edit did not apply")
			}
			_, err := Load([]byte(in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Load = %v, want error containing %q", err, tt.want)
			}
		})
	}
}

func TestErrorRegistry(t *testing.T) {
	g := sampleGraph(t)
	reg := g.ErrorRegistry()
	var codes []string
	for _, e := range reg {
		codes = append(codes, e.Code)
	}
	for i := 1; i < len(codes); i++ {
		if codes[i-1] >= codes[i] {
			t.Fatalf("registry not sorted/unique at %q", codes[i])
		}
	}
	if e, ok := FrameworkError("METHOD_NOT_ALLOWED"); !ok || e.Status != 405 {
		t.Errorf("METHOD_NOT_ALLOWED = %+v", e)
	}
	found := false
	for _, e := range reg {
		found = found || e.Code == "TASK_NOT_FOUND"
	}
	if !found {
		t.Error("application code missing from the registry")
	}
}

func TestPathNames(t *testing.T) {
	got := PathNames("/a/{id}/b/{rest...}")
	if diff := cmp.Diff([]string{"id", "rest"}, got); diff != "" {
		t.Error(diff)
	}
	if got := PathNames("/"); len(got) != 0 {
		t.Errorf("PathNames(/) = %v", got)
	}
}

// FuzzLoad checks that Load never panics and that whatever it accepts
// re-encodes to a graph it accepts again with identical bytes.
func FuzzLoad(f *testing.F) {
	g := sampleGraph(f)
	b, _ := g.Encode()
	f.Add(b)
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"graphVersion":1,"digestVersion":1,"name":"x","policy":{"mcp":{"schemaValidation":"throw"}},"schemas":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Load(data)
		if err != nil {
			return
		}
		b1, err := g.Encode()
		if err != nil {
			t.Fatalf("Encode of a loaded graph: %v", err)
		}
		g2, err := Load(b1)
		if err != nil {
			t.Fatalf("re-Load: %v\n%s", err, b1)
		}
		b2, _ := g2.Encode()
		if !bytes.Equal(b1, b2) {
			t.Fatalf("unstable encoding")
		}
	})
}
