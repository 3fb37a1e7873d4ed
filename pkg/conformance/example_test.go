package conformance_test

import (
	"context"
	"fmt"
	"stitchkit.dev/stitchkit/pkg/project"
	"time"

	"stitchkit.dev/stitchkit/pkg/conformance"
	"stitchkit.dev/stitchkit/pkg/graph"
)

func ExampleBuildManifest() {
	// A one-operation graph, built by hand; real graphs come from
	// compile.Compile or graph.Load.
	g := &graph.Graph{Name: "notes", Policy: graph.Policy{MCP: graph.MCPPolicy{SchemaValidation: graph.ValidationThrow}}}
	input, _ := g.AddSchema(map[string]any{
		"type":       "object",
		"properties": map[string]any{"text": map[string]any{"type": "string"}},
		"required":   []string{"text"},
	})
	g.Services = []graph.Service{{Name: "notes", Prefix: "/notes", Scope: "public", Operations: []graph.Operation{{
		Service: "notes", Action: "create", Method: "POST", Path: "/", Desc: "Create a note", Scope: "public",
		Expose: []graph.Transport{graph.HTTP, graph.MCP, graph.AGENT}, Input: input,
	}}}}

	proj, err := project.New(g, &project.Options{HTTPPrefix: "/api"}) // the one projection
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := conformance.BuildManifest(proj, nil)
	if err != nil {
		panic(err)
	}
	for _, op := range m.Operations {
		fmt.Println(op.Service+"."+op.Action, op.HTTP)
	}
	for _, s := range m.ToolSurfaces {
		for _, t := range s.Tools {
			fmt.Println(s.Transport, t.Name)
		}
	}
	fmt.Println(conformance.AssertDiscovery(m, conformance.Observed{MCP: []string{"create_note"}}))
	fmt.Println(conformance.AssertDiscovery(m, conformance.Observed{MCP: []string{}}))
	// Output:
	// notes.create [{POST /api/notes}]
	// AGENT create_note
	// MCP create_note
	// <nil>
	// MCP discovery mismatch
	// expected: create_note
	// actual: (empty)
}

func ExampleRunProbes() {
	// A driver stands for a transport the caller owns; here, a function.
	echo := conformance.DriverFunc(func(ctx context.Context, fixture any) (conformance.Observation, error) {
		call, err := conformance.AsCall(fixture)
		if err != nil {
			return conformance.Observation{}, err
		}
		if call.Args["title"] == "" {
			return conformance.ErrorObservation("VALIDATION_ERROR", nil), nil
		}
		return conformance.Observation{Outcome: conformance.OutcomeSuccess, Data: call.Args}, nil
	})
	probes := []conformance.Probe{{
		Name:       "create without a title",
		Fixture:    conformance.Call{Operation: "notes.create", Args: map[string]any{"title": ""}},
		Transports: []conformance.Transport{conformance.TransportHTTP, conformance.TransportMCP},
		Expected: map[conformance.Transport]conformance.Observation{
			conformance.TransportHTTP: {Outcome: conformance.OutcomeValidationError, Code: "VALIDATION_ERROR"},
			conformance.TransportMCP:  {Outcome: conformance.OutcomeValidationError, Code: "VALIDATION_ERROR"},
		},
	}}
	drivers := conformance.Drivers{conformance.TransportHTTP: echo}
	fmt.Println(conformance.RunProbes(context.Background(), probes, drivers, nil))
	drivers[conformance.TransportMCP] = echo
	fmt.Println(conformance.RunProbes(context.Background(), probes, drivers, &conformance.RunOptions{Timeout: 2 * time.Second}))
	// Output:
	// Surface probe "create without a title" has no MCP driver
	// <nil>
}

func ExampleDefineRealtimeProbe() {
	_, err := conformance.DefineRealtimeProbe(conformance.RealtimeProbe{
		Name:     "watch times out",
		Scenario: conformance.ScenarioTimeout,
		Expected: conformance.Observation{Outcome: conformance.OutcomeSuccess},
	})
	fmt.Println(err)
	p, err := conformance.DefineRealtimeProbe(conformance.RealtimeProbe{
		Name:     "bad push is never handled",
		Scenario: conformance.ScenarioInvalidArguments,
		Expected: conformance.Observation{
			Outcome: conformance.OutcomeRealtimeRejected,
			Code:    "REALTIME_CONTRACT_VIOLATION",
			Rejection: &conformance.Rejection{Direction: conformance.ClientInbound, Phase: conformance.PhaseArguments,
				Reason: conformance.ReasonInvalidArguments, Fault: conformance.FaultPeer},
			HandlerCalls: new(0),
		},
	})
	fmt.Println(p.Transports, err)
	// Output:
	// Realtime probe scenario "timeout" requires outcome "timeout"
	// [REALTIME] <nil>
}
