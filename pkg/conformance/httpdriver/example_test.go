package httpdriver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"stitchkit.dev/stitchkit/pkg/project"

	"stitchkit.dev/stitchkit/pkg/conformance"
	"stitchkit.dev/stitchkit/pkg/conformance/httpdriver"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
	httpmount "stitchkit.dev/stitchkit/pkg/mount/http"
)

// Probe the HTTP mount of the tasks example: the driver sends each Call as
// the request the contract routes it to, through a server and client the
// caller owns.
func ExampleNew() {
	data, err := os.ReadFile("../../compile/testdata/tasks.graph.json") // `stitch compile examples/tasks`
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := graph.Load(data)
	if err != nil {
		fmt.Println(err)
		return
	}
	proj, err := project.New(g, &project.Options{HTTPPrefix: "/api"}) // the one projection
	if err != nil {
		fmt.Println(err)
		return
	}
	impl := mount.NewImplementation(g)
	_ = impl.Handle("tasks", "get", func(ctx context.Context, c *mount.Call) (json.RawMessage, error) {
		return json.Marshal(map[string]any{"id": c.Params["id"], "title": "Write docs", "done": false})
	})
	runner, _ := mount.New(impl, &mount.Options{Projection: proj})
	h, _ := httpmount.New(runner, nil)
	srv := httptest.NewServer(h)
	defer srv.Close()

	d, err := httpdriver.New(proj, &httpdriver.Options{BaseURL: srv.URL, Client: srv.Client()})
	if err != nil {
		fmt.Println(err)
		return
	}
	ok := conformance.Observation{Outcome: conformance.OutcomeSuccess, Data: map[string]any{"id": "t_1", "title": "Write docs", "done": false}}
	probes := []conformance.Probe{{
		Name:       "get a task",
		Fixture:    conformance.Call{Operation: "tasks.get", Args: map[string]any{"id": "t_1"}},
		Transports: []conformance.Transport{conformance.TransportHTTP},
		Expected:   map[conformance.Transport]conformance.Observation{conformance.TransportHTTP: ok},
	}, {
		Name:       "get with an id the contract refuses",
		Fixture:    conformance.Call{Operation: "tasks.get", Args: map[string]any{"id": "42"}},
		Transports: []conformance.Transport{conformance.TransportHTTP},
		Expected:   map[conformance.Transport]conformance.Observation{conformance.TransportHTTP: ok},
	}}
	err = conformance.RunProbes(context.Background(), probes, conformance.Drivers{conformance.TransportHTTP: d}, nil)
	fmt.Println(err)
	// Output:
	// Surface probe "get with an id the contract refuses" HTTP mismatch
	// expected: {"data":{"done":false,"id":"t_1","title":"Write docs"},"outcome":"success"}
	// actual: {"code":"VALIDATION_ERROR","data":{"issues":[{"in":"params","keyword":"pattern","message":"'42' does not match pattern '^t_[a-z0-9]+$'","path":"/id"}]},"outcome":"validation_error"}
}
