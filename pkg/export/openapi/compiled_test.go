package openapi_test

import (
	"context"
	"slices"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"testing"

	"stitchkit.dev/stitchkit/pkg/check"
	"stitchkit.dev/stitchkit/pkg/conformance"
	"stitchkit.dev/stitchkit/pkg/export/internal/exporttest"
	"stitchkit.dev/stitchkit/pkg/project"
)

// TestCompiledContract runs the exporter over a contract compiled from CUE
// (the DESIGN §3 tasks contract) rather than a hand-built graph.
func TestCompiledContract(t *testing.T) {
	g, err := check.CompileFiles(context.Background(), exporttest.Files)
	if err != nil {
		t.Fatal(err)
	}
	doc := generate(t, g, "/api", nil)
	d := validate(t, doc)

	var got, want []string
	for _, p := range d.Paths.Keys() {
		for m := range d.Paths.Value(p).Operations() {
			got = append(got, m+" "+p)
		}
	}
	for _, r := range project.HTTPRoutes(g, project.HTTPOptions{Prefix: "/api"}) {
		want = append(want, r.Pattern())
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("paths:\n got %v\nwant %v", got, want)
	}
	if slices.Contains(got, "POST /api/tasks/mcp-only") {
		t.Error("MCP-only operation documented")
	}
	if !slices.Contains(got, "GET /api/tasks/{id}/files/{rest...}") {
		t.Errorf("wildcard route missing: %v", got)
	}

	m := decodeDoc(t, doc)
	if got := mustJSON(t, get(t, m, "paths", "/api/tasks/{id}", "get", "responses", "404", "content", "application/json", "schema", "properties", "error", "properties", "code", "enum")); got != `["TASK_NOT_FOUND"]` {
		t.Errorf("404 codes = %s", got)
	}
	if _, ok := get(t, m, "components", "schemas").(map[string]any)["Task"]; !ok {
		t.Errorf("Task not hoisted: %s", mustJSON(t, get(t, m, "components", "schemas")))
	}
	if b := generate(t, g, "/api", nil); string(b) != string(doc) {
		t.Error("not byte-stable")
	}
}

// TestDiscoveryAgreesWithManifest: the manifest's HTTP rows and the
// document's path keys agree by plain string equality, trailing wildcard
// included (conformance discovery, research §7).
func TestDiscoveryAgreesWithManifest(t *testing.T) {
	g, err := check.CompileFiles(context.Background(), exporttest.Files)
	if err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"", "/api"} {
		m, err := conformance.BuildManifest(projecttest.Prefixed(t, g, prefix), nil)
		if err != nil {
			t.Fatal(err)
		}
		doc := generate(t, g, prefix, nil)
		if err := conformance.AssertDiscovery(m, conformance.Observed{OpenAPI: doc}); err != nil {
			t.Errorf("prefix %q: %v", prefix, err)
		}
		other := generate(t, g, prefix+"/v2", nil)
		if err := conformance.AssertDiscovery(m, conformance.Observed{OpenAPI: other}); err == nil {
			t.Errorf("prefix %q: discovery accepted a document mounted elsewhere", prefix)
		}
	}
}
