// Package agentdriver is the conformance probe driver for the agent
// transport: it calls a probe's [conformance.Call] as the tool the agent
// surface advertises for the operation, on a toolset the caller owns (the
// agent mount's *agent.Toolset), exactly as an application relays a
// model's function call, and normalises the answer into a
// [conformance.Observation].
//
//	tools, err := agent.New(runner, nil)
//	d, err := agentdriver.New(g, tools)
//	err = conformance.RunProbes(ctx, probes, conformance.Drivers{conformance.TransportAGENT: d}, nil)
package agentdriver

import (
	"context"
	"encoding/json"
	"errors"

	"stitchkit.dev/stitchkit/pkg/conformance"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/project"
)

// Toolset is what the driver needs of an agent toolset: calling a tool by
// name with a model's arguments. *agent.Toolset implements it; a failure's
// error text is the tool error envelope the model would read.
type Toolset interface {
	Call(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error)
}

// New returns the agent driver of the agent surface of the projection p
// over tools. Tool names
// come from the projector, so a Call names an operation, not a tool.
//
// A successful call is a success with the output as data (none for a tool
// without output: its {"status":"ok"} stand-in is dropped); a failure is
// its tool error envelope {"error":CODE,"details"?}
// ([conformance.ErrorObservation]); an error that is no envelope (a
// cancelled context) fails the probe.
func New(p *project.Projection, tools Toolset) (conformance.Driver, error) {
	if tools == nil {
		return nil, errors.New("agentdriver: no toolset")
	}
	if p == nil {
		return nil, errors.New("agentdriver: nil projection")
	}
	ts := p.Tools()
	return &driver{tools: tools, index: conformance.NewToolIndex(ts.Surface(graph.AGENT, ""), "a tool of the agent surface")}, nil
}

type driver struct {
	tools Toolset
	index *conformance.ToolIndex
}

func (d *driver) Invoke(ctx context.Context, fixture any) (conformance.Observation, error) {
	call, tool, err := d.index.Resolve(fixture)
	if err != nil {
		return conformance.Observation{}, err
	}
	args := call.Args
	if args == nil {
		args = map[string]any{}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return conformance.Observation{}, err
	}
	out, err := d.tools.Call(ctx, tool.Name, raw)
	if err != nil {
		var env struct {
			Error   string         `json:"error"`
			Details map[string]any `json:"details"`
		}
		if json.Unmarshal([]byte(err.Error()), &env) != nil || env.Error == "" {
			return conformance.Observation{}, err
		}
		return conformance.ErrorObservation(env.Error, env.Details), nil
	}
	return conformance.ToolOutputObservation(out, tool.Output != nil)
}
