package agentdriver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"stitchkit.dev/stitchkit/pkg/project"

	"stitchkit.dev/stitchkit/pkg/conformance"
	"stitchkit.dev/stitchkit/pkg/conformance/agentdriver"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
	"stitchkit.dev/stitchkit/pkg/mount/agent"
)

// Probe the agent toolset of the tasks example as a model would call it.
func ExampleNew() {
	data, err := os.ReadFile("../../compile/testdata/tasks.graph.json") // `stitch compile examples/tasks`
	if err != nil {
		fmt.Println(err)
		return
	}
	g, _ := graph.Load(data)
	impl := mount.NewImplementation(g)
	_ = impl.Handle("tasks", "create", func(context.Context, *mount.Call) (json.RawMessage, error) {
		return json.RawMessage(`{"id":"t_1","title":"x","done":false}`), nil
	})
	runner, _ := mount.New(impl, nil)
	tools, err := agent.New(runner, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	proj, err := project.New(g, nil) // the one projection
	if err != nil {
		fmt.Println(err)
		return
	}
	d, _ := agentdriver.New(proj, tools)
	o, err := d.Invoke(context.Background(), conformance.Call{Operation: "tasks.create", Args: map[string]any{"title": ""}})
	b, _ := o.Canonical()
	fmt.Println(string(b), err)
	// Output:
	// {"code":"VALIDATION_ERROR","data":{"issues":[{"in":"input","keyword":"minLength","message":"minLength: got 0, want 1","path":"/title"}]},"outcome":"validation_error"} <nil>
}
