package agent_test

import (
	"context"
	"encoding/json"
	"fmt"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
	"stitchkit.dev/stitchkit/pkg/mount/agent"
)

// greetGraph is a contract with one operation, greet.hello; real graphs
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
		Expose: []graph.Transport{graph.AGENT},
		Params: obj(map[string]any{"name": map[string]any{"type": "string", "minLength": 1}}, "name"),
		Output: obj(map[string]any{"text": map[string]any{"type": "string"}}, "text"),
	}}}}
	return g
}

// The Agent surface as tool definitions for a model, and the model's
// function calls run in process through the runner.
func ExampleNew() {
	impl := mount.NewImplementation(greetGraph())
	impl.Handle("greet", "hello", func(ctx context.Context, c *mount.Call) (json.RawMessage, error) {
		return json.Marshal(map[string]string{"text": "Hello, " + c.Params["name"].(string)})
	})
	runner, err := mount.New(impl, nil)
	if err != nil {
		panic(err)
	}
	tools, err := agent.New(runner, nil)
	if err != nil {
		panic(err)
	}
	defs, _ := tools.AnthropicTools() // the "tools" of a Messages request
	fmt.Println(string(defs))

	// The model asked for hello_greet with these arguments:
	out, err := tools.Call(context.Background(), "hello_greet", json.RawMessage(`{"name":"Ada"}`))
	fmt.Println(string(out), err)
	// An invalid call: the error's text is the envelope to hand back.
	_, err = tools.Call(context.Background(), "hello_greet", json.RawMessage(`{}`))
	fmt.Println(err)
	// Output:
	// [{"name":"hello_greet","description":"Say hello","input_schema":{"$schema":"https://json-schema.org/draft/2020-12/schema","additionalProperties":false,"properties":{"name":{"minLength":1,"type":"string"}},"required":["name"],"type":"object"}}]
	// {"text":"Hello, Ada"} <nil>
	// {"error":"VALIDATION_ERROR","details":{"issues":[{"in":"params","path":"","keyword":"required","message":"missing property 'name'"}]}}
}
