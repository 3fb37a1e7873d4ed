package mcp

import (
	"stitchkit.dev/stitchkit/internal/projecttest"
	"strings"
	"testing"

	"stitchkit.dev/stitchkit/internal/mounttest"
	"stitchkit.dev/stitchkit/pkg/conformance"
)

// The official MCP Inspector CLI lists every named surface exactly as the
// manifest says (compared through AssertDiscovery), calls a tool and sees
// the catalog stamp, and reads invalid arguments as an isError result
// carrying the registry code.
func TestInspector(t *testing.T) {
	g := tasks(t)
	h := newHandler(t, nil)
	srv := serve(t, h)
	m, err := conformance.BuildManifest(projecttest.New(t, g, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	var observed []conformance.ObservedSurface
	for _, name := range h.Surfaces() {
		out := mounttest.RunInspector(t, srv.URL+h.Path(name), 0, "--method", "tools/list")
		tools, _ := out["tools"].([]any)
		var names []string
		for _, tool := range tools {
			names = append(names, tool.(map[string]any)["name"].(string))
		}
		observed = append(observed, conformance.ObservedSurface{Transport: "MCP", Surface: name, Names: names})
	}
	if err := conformance.AssertDiscovery(m, conformance.Observed{ToolSurfaces: observed}); err != nil {
		t.Fatal(err)
	}

	url := srv.URL + h.Path("member")
	out := mounttest.RunInspector(t, url, 0, "--method", "tools/call", "--tool-name", "get_task", "--tool-arg", "id=t_1")
	if out["isError"] == true {
		t.Fatalf("get_task: %v", out)
	}
	if sc, _ := out["structuredContent"].(map[string]any); sc["id"] != "t_1" {
		t.Fatalf("get_task structuredContent: %v", out)
	}
	// (The Inspector prints a tools/list result without its _meta; it
	// prints a call's, where the stamp must be.)
	meta, _ := out["_meta"].(map[string]any)
	if c, _ := meta[CatalogMetaKey].(map[string]any); c == nil || c["digest"] != string(must(h.Catalog("member")).Digest) {
		t.Errorf("stamp %v", meta)
	}
	out = mounttest.RunInspector(t, url, 5, "--method", "tools/call", "--tool-name", "get_task", "--tool-arg", "id=nope")
	content, _ := out["content"].([]any)
	if out["isError"] != true || len(content) != 1 {
		t.Fatalf("invalid arguments: %v", out)
	}
	text, _ := content[0].(map[string]any)["text"].(string)
	if !strings.HasPrefix(text, `{"error":"VALIDATION_ERROR","details":{"issues":[{"in":"params","path":"/id"`) {
		t.Fatalf("invalid arguments envelope: %s", text)
	}
}
