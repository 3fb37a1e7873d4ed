package gen

import (
	"encoding/json"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// FuzzGenerate feeds arbitrary JSON Schema documents (a hand-edited or
// foreign graph.json holds anything) to the generator as the input of an
// operation and the output of a runtime tool. It must never panic, and
// whatever it emits must be valid, gofmt'ed Go (Generate runs go/format on
// every file and fails otherwise).
func FuzzGenerate(f *testing.F) {
	ar, err := txtar.ParseFile("testdata/schemas.txtar")
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range ar.Files {
		if strings.HasSuffix(file.Name, ".json") {
			f.Add(string(file.Data))
		}
	}
	f.Add(`{"anyOf":[{"type":"object","properties":{"k":{"const":"a"}},"required":["k"]},{"type":"object","properties":{"k":{"const":"a"}},"required":["k"]}]}`)
	f.Add(`{"$defs":{"A":{"$ref":"#/$defs/B"},"B":{"$ref":"#/$defs/A"}},"$ref":"#/$defs/A"}`)
	f.Add(`{"type":"object","properties":{"":{"type":"string"},"Extra":{"type":"object","additionalProperties":true}},"additionalProperties":{"$ref":"#"}}`)
	f.Add(`{"enum":["", "-", "1", "a b", null, 1.5e300]}`)
	f.Add(`{"prefixItems":[{"prefixItems":[true]},{"$ref":"#/prefixItems/0"}],"items":false}`)
	f.Fuzz(func(t *testing.T, schema string) {
		var v any
		if err := json.Unmarshal([]byte(schema), &v); err != nil {
			return
		}
		g := &graph.Graph{
			GraphVersion: graph.GraphVersion, DigestVersion: graph.DigestVersion,
			Name: "fuzz", Version: "0.0.0",
			Policy: graph.Policy{MCP: graph.MCPPolicy{SchemaValidation: graph.ValidationThrow}},
		}
		d, err := g.AddSchema(v)
		if err != nil {
			return
		}
		g.Services = []graph.Service{{Name: "s", Prefix: "/s", Scope: "public", Operations: []graph.Operation{{
			Service: "s", Action: "op", Method: "POST", Path: "/", Desc: "op", Scope: "public",
			Expose: []graph.Transport{graph.HTTP}, Input: d, Output: d,
		}}}}
		g.RuntimeTools = []graph.RuntimeTool{{Name: "rt", Desc: "rt", Input: d, Output: d,
			Identity: graph.Identity{Service: "s", Action: "rt", Method: "GET", Scope: "public"}, Transports: []graph.Transport{graph.MCP}}}
		files, err := Generate(g, nil)
		if err != nil {
			if strings.Contains(err.Error(), "internal error") || strings.Contains(err.Error(), ".go:") {
				t.Fatalf("schema %s: %v", schema, err)
			}
			return
		}
		if len(files) != 4 {
			t.Fatalf("%d files", len(files))
		}
	})
}
