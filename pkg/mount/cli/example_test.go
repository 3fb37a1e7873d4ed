package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
	"stitchkit.dev/stitchkit/pkg/mount/cli"
)

// greetGraph is a contract with one CLI operation, greet.hello; real graphs
// come from compile.Compile or graph.Load.
func greetGraph() *graph.Graph {
	g := &graph.Graph{Name: "greet", Version: "1.0.0"}
	obj := func(props map[string]any, required ...any) graph.Digest {
		s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
		if len(required) > 0 {
			s["required"] = required
		}
		d, err := g.AddSchema(s)
		if err != nil {
			panic(err)
		}
		return d
	}
	g.Services = []graph.Service{{Name: "greet", Prefix: "/greet", Scope: "public", Operations: []graph.Operation{{
		Service: "greet", Action: "hello", Method: "POST", Path: "/{name}", Desc: "Say hello", Scope: "public",
		Expose: []graph.Transport{graph.CLI},
		Params: obj(map[string]any{"name": map[string]any{"type": "string", "minLength": 1}}, "name"),
		Input:  obj(map[string]any{"times": map[string]any{"type": "integer", "minimum": 1}}),
		Output: obj(map[string]any{"text": map[string]any{"type": "string"}}, "text"),
	}}}}
	return g
}

// The CLI surface as a command tree running in process: flags from the
// input schema, JSON on stdout, the error envelope on stderr with the exit
// code of its error code.
func ExampleNew() {
	g := greetGraph()
	impl := mount.NewImplementation(g)
	impl.Handle("greet", "hello", func(ctx context.Context, c *mount.Call) (json.RawMessage, error) {
		n := 1
		if in, ok := c.Input.(map[string]any); ok && in["times"] != nil {
			t, _ := in["times"].(json.Number).Int64()
			n = int(t)
		}
		return json.Marshal(map[string]string{"text": strings.Repeat("Hello, "+c.Params["name"].(string)+"! ", n)})
	})
	runner, err := mount.New(impl, nil)
	if err != nil {
		panic(err)
	}
	app, err := cli.New(runner.Projection(), &cli.Options{Runner: runner})
	if err != nil {
		panic(err)
	}
	var out, errs bytes.Buffer
	code := app.RunWith(context.Background(), []string{"hello_greet", "--name", "Ada", "--times", "2", "--json"}, strings.NewReader(""), &out, &errs)
	fmt.Print(code, " ", out.String())
	code = app.RunWith(context.Background(), []string{"hello_greet", "--name", "Ada", "--times", "1.5", "--json"}, strings.NewReader(""), &out, &errs)
	fmt.Print(code, " ", errs.String())
	// Output:
	// 0 {"text":"Hello, Ada! Hello, Ada! "}
	// 1 {"error":"VALIDATION_ERROR","details":{"flag":"--times","message":"--times expects a whole number, got \"1.5\"","value":"1.5"}}
}
