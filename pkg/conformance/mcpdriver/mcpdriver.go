// Package mcpdriver is the conformance probe driver for MCP: it calls a
// probe's [conformance.Call] as the tool one MCP surface advertises for the
// operation, through an official SDK client session the caller owns, and
// normalises the tool result into a [conformance.Observation].
//
//	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp/member"}, nil)
//	d, err := mcpdriver.New(g, session, "member")
//	err = conformance.RunProbes(ctx, probes, conformance.Drivers{conformance.TransportMCP: d}, nil)
//
// The driver neither connects nor closes the session.
package mcpdriver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"stitchkit.dev/stitchkit/pkg/conformance"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/project"
)

// New returns the MCP driver of surface ("" for the default MCP surface)
// of the projection p over session (the projection the server's mount
// was built from). Tool names come from the projector (the names the
// mount advertises), so a Call names an operation, not a tool.
//
// A tool result with isError is read as the tool error envelope
// {"error":CODE,"details"?} ([conformance.ErrorObservation]); any other
// result is a success whose data is its structuredContent (none when
// absent). A JSON-RPC error — the call never reached a tool — is a
// domain_error with no code and the error as diagnostic.
func New(p *project.Projection, session *mcp.ClientSession, surface string) (conformance.Driver, error) {
	if session == nil {
		return nil, errors.New("mcpdriver: no client session")
	}
	if p == nil {
		return nil, errors.New("mcpdriver: nil projection")
	}
	tools := p.Tools()
	s := tools.Surface(graph.MCP, surface)
	if s == nil {
		return nil, fmt.Errorf("mcpdriver: the graph has no MCP surface %q", surface)
	}
	what := fmt.Sprintf("a tool of MCP surface %q", surfaceLabel(surface))
	return &driver{session: session, surface: surface, index: conformance.NewToolIndex(s, what)}, nil
}

type driver struct {
	session *mcp.ClientSession
	surface string
	index   *conformance.ToolIndex
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
	res, err := d.session.CallTool(ctx, &mcp.CallToolParams{Name: tool.Name, Arguments: args})
	if err != nil {
		var wire *jsonrpc.Error
		if errors.As(err, &wire) {
			return conformance.Observation{Outcome: conformance.OutcomeDomainError, Diagnostic: fmt.Sprintf("MCP error %d: %s", wire.Code, wire.Message)}, nil
		}
		return conformance.Observation{}, err
	}
	return Observe(res)
}

// Observe normalises one tool result: isError as the tool error envelope,
// else a success with structuredContent as data.
func Observe(res *mcp.CallToolResult) (conformance.Observation, error) {
	if res == nil {
		return conformance.Observation{}, errors.New("no tool result")
	}
	if res.IsError {
		text := textOf(res)
		var env struct {
			Error   string         `json:"error"`
			Details map[string]any `json:"details"`
		}
		if json.Unmarshal([]byte(text), &env) != nil || env.Error == "" {
			return conformance.Observation{Outcome: conformance.OutcomeDomainError, Diagnostic: "tool error without an error envelope: " + text}, nil
		}
		return conformance.ErrorObservation(env.Error, env.Details), nil
	}
	if res.StructuredContent == nil {
		return conformance.Observation{Outcome: conformance.OutcomeSuccess}, nil
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return conformance.Observation{}, fmt.Errorf("structuredContent: %w", err)
	}
	return conformance.OutputObservation(b)
}

func textOf(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "")
}

// ToolNames lists the tools the session's server advertises (every page
// of tools/list), for [conformance.Observed].
func ToolNames(ctx context.Context, session *mcp.ClientSession) ([]string, error) {
	names := []string{}
	for t, err := range session.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		names = append(names, t.Name)
	}
	return names, nil
}

func surfaceLabel(s string) string {
	if s == "" {
		return "(default)"
	}
	return s
}
