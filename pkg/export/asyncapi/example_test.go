package asyncapi_test

import (
	"encoding/json"
	"fmt"
	"stitchkit.dev/stitchkit/pkg/project"

	"stitchkit.dev/stitchkit/pkg/export/asyncapi"
	"stitchkit.dev/stitchkit/pkg/graph"
)

// A graph normally comes from compile.Compile or graph.Load; this one is
// built by hand: one contract, one event each way, the client's with an ack.
func ExampleGenerate() {
	g := &graph.Graph{Name: "tasks", Version: "1.0.0"}
	changed, _ := g.AddSchema(map[string]any{"type": "array", "prefixItems": []any{map[string]any{"type": "string"}}, "items": false})
	watch, _ := g.AddSchema(map[string]any{"type": "array", "prefixItems": []any{map[string]any{"type": "string"}}, "items": false})
	ok, _ := g.AddSchema(map[string]any{"type": "boolean"})
	g.Realtime = []graph.RealtimeContract{{
		Name:           "board",
		ServerToClient: []graph.Event{{Name: "taskChanged", Args: changed}},
		ClientToServer: []graph.Event{{Name: "watch", Args: watch, Ack: ok}},
	}}

	proj, err := project.New(g, nil) // the one projection
	if err != nil {
		fmt.Println(err)
		return
	}
	doc, err := asyncapi.Generate(proj, nil)
	if err != nil {
		panic(err)
	}
	var d struct {
		Channels map[string]struct {
			Address string `json:"address"`
		} `json:"channels"`
		Operations map[string]struct {
			Action string          `json:"action"`
			Reply  json.RawMessage `json:"reply"`
		} `json:"operations"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		panic(err)
	}
	fmt.Println(d.Channels["board"].Address)
	for _, id := range []string{"board.serverToClient.taskChanged", "board.clientToServer.watch"} {
		op := d.Operations[id]
		fmt.Println(id, op.Action, "reply:", op.Reply != nil)
	}
	// Output:
	// /realtime/board
	// board.serverToClient.taskChanged send reply: false
	// board.clientToServer.watch receive reply: true
}
