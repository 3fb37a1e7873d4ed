package realtimedriver_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"stitchkit.dev/stitchkit/pkg/project"
	"strings"

	"stitchkit.dev/stitchkit/pkg/conformance"
	"stitchkit.dev/stitchkit/pkg/conformance/realtimedriver"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/realtime"
)

// Probe the tasks example's board contract on a real server through a
// client the caller dialled: one acknowledgement, and a request on a
// connection the caller has closed.
func Example() {
	data, err := os.ReadFile("../../compile/testdata/tasks.graph.json") // `stitch compile examples/tasks`
	if err != nil {
		fmt.Println(err)
		return
	}
	g, _ := graph.Load(data)
	proj, err := project.New(g, nil) // the one projection
	if err != nil {
		fmt.Println(err)
		return
	}
	board, _ := realtime.NewContract(proj, "board")
	srv, _ := realtime.NewServer[struct{}](board, nil)
	_ = srv.Handle("watch", func(context.Context, *realtime.Conn[struct{}], realtime.Args) (any, error) {
		return map[string]any{"ok": true}, nil
	})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	defer srv.Shutdown(context.Background())

	ctx := context.Background()
	url := "ws" + strings.TrimPrefix(hs.URL, "http")
	client, _ := realtime.Dial(ctx, url, board, nil)
	defer client.Close()
	closed, _ := realtime.Dial(ctx, url, board, nil)
	closed.Close()
	<-closed.Done() // never blocks: Close returns once the connection has ended

	watch := func(ctx context.Context, b realtime.Binding) (any, error) {
		return b.Request(ctx, 0, "watch", map[string]any{"board": "main"})
	}
	acked, _ := conformance.DefineRealtimeProbe(conformance.RealtimeProbe{
		Name: "watch is acknowledged", Scenario: conformance.ScenarioAcknowledgement,
		Fixture:  realtimedriver.Action{Binding: client, Do: watch},
		Expected: conformance.Observation{Outcome: conformance.OutcomeSuccess, Data: map[string]any{"ok": true}},
	})
	down, _ := conformance.DefineRealtimeProbe(conformance.RealtimeProbe{
		Name: "watch while disconnected", Scenario: conformance.ScenarioDisconnected,
		Fixture: realtimedriver.Action{Binding: closed, Do: watch},
		Expected: conformance.Observation{Outcome: conformance.OutcomeDisconnected, Code: "REALTIME_REQUEST_DISCONNECTED",
			Disconnect: &conformance.Disconnect{Phase: conformance.BeforeInvoke}},
	})
	err = conformance.RunProbes(ctx, []conformance.Probe{acked, down},
		conformance.Drivers{conformance.TransportREALTIME: realtimedriver.New(nil)}, nil)
	fmt.Println(err, client.Connected())
	// Output:
	// <nil> true
}
