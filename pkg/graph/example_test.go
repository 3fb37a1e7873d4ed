package graph_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"stitchkit.dev/stitchkit/pkg/graph"
)

func ExampleCanonical() {
	b, _ := graph.Canonical(json.RawMessage(`{"b": [1.50, "<a&b>"], "a": 1e21, "😀": 1, "ｱ": 2}`))
	fmt.Println(string(b))
	d, _ := graph.DigestOf(map[string]any{})
	fmt.Println(d)
	// Output:
	// {"a":1e+21,"b":[1.5,"<a&b>"],"😀":1,"ｱ":2}
	// 44136fa355b3678a
}

func ExampleLoad() {
	g := &graph.Graph{GraphVersion: graph.GraphVersion, DigestVersion: graph.DigestVersion, Name: "notes",
		Policy: graph.Policy{MCP: graph.MCPPolicy{SchemaValidation: graph.ValidationThrow}}}
	out, _ := g.AddSchema(map[string]any{"type": "string", "maxLength": 10})
	g.CliCommands = []graph.CliCommand{{Name: "version", Desc: "Print the version", Output: out}}
	data, _ := g.Encode()

	loaded, err := graph.Load(data)
	fmt.Println(loaded.CliCommands[0].Name, err)

	// Editing a schema without recompiling is refused.
	edited := strings.Replace(string(data), `"maxLength": 10`, `"maxLength": 99`, 1)
	_, err = graph.Load([]byte(edited))
	fmt.Println(err != nil)
	// Output:
	// version <nil>
	// true
}
