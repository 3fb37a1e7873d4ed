package mount_test

import (
	"context"
	"encoding/json"
	"fmt"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
)

// A graph with one operation, greet.hello: POST /greet/{name} with an
// #input carrying a default and an #output.
const graphJSON = `{"graphVersion":1,"digestVersion":1,"generator":{"stitchkit":"example","cue":"v0.17.1"},
"name":"greet","version":"1.0.0","info":{},"errors":[],"runtimeTools":[],"cliCommands":[],"surfaces":{},
"policy":{"mcp":{"flattenUnionInput":false,"schemaValidation":"throw","requireTypedProperties":false,"requirePortableFormats":false},"agent":{"flattenUnionInput":false,"strict":false}},
"realtime":[],
"services":[{"name":"greet","prefix":"/greet","scope":"public","operations":[{"service":"greet","action":"hello","method":"POST","path":"/{name}","desc":"Say hello","scope":"public","expose":["HTTP","MCP","AGENT"],
"params":"P","input":"I","output":"O"}]}],
"schemas":{"P":{"type":"object","properties":{"name":{"type":"string","minLength":1}},"required":["name"],"additionalProperties":false},
"I":{"type":"object","properties":{"greeting":{"type":"string","default":"Hello"}},"additionalProperties":false},
"O":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}}}`

// Example binds a typed handler and calls it as a tool would: the flat
// arguments are split into params and input, the input default is applied,
// and the output is validated.
func Example() {
	g, err := loadExampleGraph()
	if err != nil {
		fmt.Println(err)
		return
	}
	impl := mount.NewImplementation(g)
	// A typed binding: decode the input into a struct, marshal the result.
	err = impl.Handle("greet", "hello", func(ctx context.Context, c *mount.Call) (json.RawMessage, error) {
		var in struct {
			Greeting string `json:"greeting"`
		}
		if err := c.DecodeInput(&in); err != nil {
			return nil, err
		}
		return json.Marshal(map[string]string{"text": in.Greeting + ", " + c.Params["name"].(string)})
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	runner, err := mount.New(impl, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	ep := runner.Endpoint("greet", "hello")
	res := ep.CallTool(context.Background(), mount.SourceInternal, json.RawMessage(`{"name":"Ada"}`), nil)
	fmt.Println(string(res.Output))
	res = ep.CallTool(context.Background(), mount.SourceInternal, json.RawMessage(`{"name":""}`), nil)
	fmt.Println(string(res.Err.ToolEnvelope("")))
	// Output:
	// {"text":"Hello, Ada"}
	// {"error":"VALIDATION_ERROR","details":{"issues":[{"in":"params","path":"/name","keyword":"minLength","message":"minLength: got 0, want 1"}]}}
}

// loadExampleGraph stores the example's schemas under their real digests
// (graph.Load refuses a graph whose digests do not match its schemas).
func loadExampleGraph() (*graph.Graph, error) {
	var g graph.Graph
	if err := json.Unmarshal([]byte(graphJSON), &g); err != nil {
		return nil, err
	}
	raw := g.Schemas
	g.Schemas = nil
	digests := map[graph.Digest]graph.Digest{}
	for name, s := range raw {
		var v any
		if err := json.Unmarshal(s, &v); err != nil {
			return nil, err
		}
		d, err := g.AddSchema(v)
		if err != nil {
			return nil, err
		}
		digests[name] = d
	}
	op := &g.Services[0].Operations[0]
	op.Params, op.Input, op.Output = digests[op.Params], digests[op.Input], digests[op.Output]
	b, err := json.Marshal(&g)
	if err != nil {
		return nil, err
	}
	return graph.Load(b)
}
