package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"stitchkit.dev/stitchkit/pkg/graph"
)

func TestDiffIsCapped(t *testing.T) {
	want := build(t, itemsGraph(t, "number", false), nil)
	got := build(t, itemsGraph(t, "number", false), nil)
	for i := range 400 {
		got.Extensions = append(got.Extensions, Extension{Name: fmt.Sprintf("route-ü-%03d", i), Transport: TransportHTTP})
	}
	diff, equal := CompareManifest(want, got)
	if equal {
		t.Fatal("equal")
	}
	if len(diff) > MaxDiffBytes || !utf8.ValidString(diff) || !strings.Contains(diff, "diff truncated") {
		t.Errorf("diff of %d bytes, valid UTF-8 %v:\n%s", len(diff), utf8.ValidString(diff), diff[len(diff)-200:])
	}
	if !strings.HasPrefix(diff, "+extensions: HTTP route-ü-000\n") {
		t.Errorf("diff starts %q", diff[:80])
	}
}

func TestAssertDiscovery(t *testing.T) {
	m := build(t, itemsGraph(t, "number", false), testOpts)
	openapi := `{"openapi":"3.1.0","paths":{
	  "/api/v1/items":{"get":{},"parameters":[]},
	  "/api/v1/items/{id}":{"get":{},"head":{},"summary":"x"},
	  "/api/v1/items/choose":{"post":{}}}}`
	full := Observed{
		OpenAPI:    []byte(openapi),
		MCP:        []string{"secret_item", "read_item", "list_items", "jobs_status", "choose_item"},
		AGENT:      []string{"choose_item", "jobs_status", "list_items", "read_item"},
		CLI:        []string{"list_items", "jobs_status"},
		Realtime:   map[string]ObservedRealtime{"primary": {ServerToClient: []string{"tick"}, ClientToServer: []string{"sum", "ping"}}, "empty": {ServerToClient: []string{}, ClientToServer: []string{}}},
		CliOnly:    []string{"export", "doctor"},
		Extensions: map[string][]string{"HTTP": {"metrics", "healthz"}, "CLI": {"admin"}, "MCP": {}},
	}
	if err := AssertDiscovery(m, full); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := jsonUnmarshal(openapi, &doc); err != nil {
		t.Fatal(err)
	}
	if err := AssertDiscovery(m, Observed{OpenAPI: doc}); err != nil {
		t.Errorf("decoded OpenAPI document: %v", err)
	}
	for _, tc := range []struct {
		name string
		obs  Observed
		want string
	}{
		{"mcp", Observed{MCP: []string{"missing"}}, "MCP discovery mismatch\nexpected: choose_item, jobs_status, list_items, read_item, secret_item\nactual: missing"},
		{"cli empty", Observed{CLI: []string{}}, "CLI discovery mismatch\nexpected: jobs_status, list_items\nactual: (empty)"},
		{"duplicates count", Observed{CLI: []string{"list_items", "jobs_status", "jobs_status"}}, "CLI discovery mismatch\nexpected: jobs_status, list_items\nactual: jobs_status, jobs_status, list_items"},
		{"openapi", Observed{OpenAPI: `{"paths":{"/api/v1/items":{"get":{}}}}`}, "HTTP/OpenAPI mismatch\nexpected: GET:/api/v1/items, GET:/api/v1/items/{id}, HEAD:/api/v1/items/{id}, POST:/api/v1/items/choose\nactual: GET:/api/v1/items"},
		{"named surface", Observed{ToolSurfaces: []ObservedSurface{{Transport: "MCP", Surface: "member", Names: []string{}}}}, `MCP surface "member" is not declared in the manifest`},
		{"default surface", Observed{ToolSurfaces: []ObservedSurface{{Transport: "AGENT", Names: []string{"x"}}}}, "AGENT surface \"(default)\" discovery mismatch\nexpected: choose_item, jobs_status, list_items, read_item\nactual: x"},
		{"realtime contract", Observed{Realtime: map[string]ObservedRealtime{"missing": {}}}, `REALTIME contract "missing" is not declared in the manifest`},
		{"realtime direction", Observed{Realtime: map[string]ObservedRealtime{"primary": {ServerToClient: []string{"tick"}, ClientToServer: []string{"sum"}}}}, "REALTIME primary.clientToServer discovery mismatch\nexpected: ping, sum\nactual: sum"},
		{"cli-only", Observed{CliOnly: []string{"doctor"}}, "CLI-only discovery mismatch\nexpected: doctor, export\nactual: doctor"},
		{"extensions", Observed{Extensions: map[string][]string{"REALTIME": {"x"}}}, "REALTIME extension discovery mismatch\nexpected: (empty)\nactual: x"},
		// The first failure in the documented order wins.
		{"order", Observed{CliOnly: []string{}, MCP: []string{}, OpenAPI: openapi}, "MCP discovery mismatch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := AssertDiscovery(m, tc.obs)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("got %v\nwant %s", err, tc.want)
			}
		})
	}
	if err := AssertDiscovery(m, Observed{OpenAPI: "not json"}); err == nil || !errors.Is(err, err) || !strings.HasPrefix(err.Error(), "HTTP/OpenAPI discovery:") {
		t.Errorf("bad document: %v", err)
	}
}

// An empty realtime contract keeps its name and passes discovery with
// empty directions.
func TestEmptyRealtimeContract(t *testing.T) {
	g := &graph.Graph{Name: "rt", Policy: graph.Policy{MCP: graph.MCPPolicy{SchemaValidation: graph.ValidationThrow}},
		Realtime: []graph.RealtimeContract{{Name: "empty"}}}
	m := build(t, g, nil)
	if len(m.RealtimeContracts) != 1 || m.RealtimeContracts[0] != "empty" || len(m.Realtime) != 0 {
		t.Errorf("contracts %v rows %v", m.RealtimeContracts, m.Realtime)
	}
	if err := AssertDiscovery(m, Observed{Realtime: map[string]ObservedRealtime{"empty": {}}}); err != nil {
		t.Error(err)
	}
	b := encode(t, m)
	if !strings.Contains(string(b), `"realtime": [],`) || !strings.Contains(string(b), `"operations": [],`) {
		t.Errorf("empty lists must encode as []:\n%s", b)
	}
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// Sets (HTTP rows, extensions, realtime contract names) read as lists in a
// drift report: "GET /items/{id}", never {"[GET /items/{id}]":true}.
func TestCompareManifestReadableSets(t *testing.T) {
	want := build(t, itemsGraph(t, "number", false), nil)
	got := build(t, itemsGraph(t, "number", false), nil)
	i := slices.IndexFunc(got.Operations, func(o Operation) bool { return o.Action == "read" })
	got.Operations[i].HTTP = []HTTPRow{{Method: "GET", Path: "/items/by-id/{id}"}}
	added := got.Operations[i]
	added.Action = "fetch"
	got.Operations = append(got.Operations, added)
	got.RealtimeContracts = append(got.RealtimeContracts, "board<1>")
	diff, equal := CompareManifest(want, got)
	if equal {
		t.Fatal("equal")
	}
	for _, line := range []string{
		"-operations[contract items.read].http: GET /items/{id}",
		"+operations[contract items.read].http: GET /items/by-id/{id}",
		`"http":["GET /items/by-id/{id}"]`,
		"+realtimeContracts: board<1>",
	} {
		if !strings.Contains(diff, line) {
			t.Errorf("diff lacks %q:\n%s", line, diff)
		}
	}
	for _, internal := range []string{`":true`, `"[`, `\u003c`} {
		if strings.Contains(diff, internal) {
			t.Errorf("diff shows the internal form %q:\n%s", internal, diff)
		}
	}
}
