package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"stitchkit.dev/stitchkit/pkg/project"
)

// Call is the fixture of a parity probe: one operation invoked with one
// set of arguments, the same on every transport. The transport drivers
// (packages httpdriver, mcpdriver, agentdriver, clidriver) take it.
type Call struct {
	// Operation is the operation's identity, "service.action" (for a
	// runtime tool, its identity's service and action).
	Operation string
	// Args are the flat arguments a tool receives: params, query and input
	// fields side by side. The HTTP driver splits them back into path,
	// query string and body with the projector's rule
	// (project.SplitArgs), so all transports see the same call.
	Args map[string]any
}

// AsCall returns fixture as a [Call], for drivers.
func AsCall(fixture any) (Call, error) {
	switch c := fixture.(type) {
	case Call:
		return c, nil
	case *Call:
		if c != nil {
			return *c, nil
		}
	}
	return Call{}, fmt.Errorf("the fixture must be a conformance.Call, got %T", fixture)
}

// RawArgs returns c.Args as raw JSON values.
func (c Call) RawArgs() (map[string]json.RawMessage, error) {
	raw := make(map[string]json.RawMessage, len(c.Args))
	for k, v := range c.Args {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("argument %q: %w", k, err)
		}
		raw[k] = b
	}
	return raw, nil
}

// Codes the drivers read as validation errors: the call's arguments broke
// the contract (VALIDATION_ERROR) or were not acceptable JSON
// (BAD_REQUEST). Every other code is a domain error.
var validationCodes = map[string]bool{"VALIDATION_ERROR": true, "BAD_REQUEST": true}

// ErrorObservation normalises an error answer the same way for every
// transport: outcome validation_error for VALIDATION_ERROR and
// BAD_REQUEST, domain_error for any other code; the code; the details as
// data. The message is not kept: the tool envelope carries no message
// beside details, so keeping it would make HTTP and the tools differ. A
// details object holding only "message" is the tool envelope's stand-in
// for no details and is dropped.
func ErrorObservation(code string, details map[string]any) Observation {
	o := Observation{Outcome: OutcomeDomainError, Code: code}
	if validationCodes[code] {
		o.Outcome = OutcomeValidationError
	}
	if _, only := details["message"]; only && len(details) == 1 {
		details = nil
	}
	if len(details) > 0 {
		o.Data = details
	}
	return o
}

// OutputObservation is a success with the JSON output as data; empty output
// (no declared output, 204) is a success without data.
func OutputObservation(out []byte) (Observation, error) {
	if len(out) == 0 {
		return Observation{Outcome: OutcomeSuccess}, nil
	}
	if !json.Valid(out) {
		return Observation{}, fmt.Errorf("output is not JSON: %.200q", out)
	}
	return Observation{Outcome: OutcomeSuccess, Data: json.RawMessage(out)}, nil
}

// ToolOutputObservation is [OutputObservation] for a tool transport's
// answer. A tool that declares no output answers {"status":"ok"} on the
// agent and CLI mounts and nothing on MCP; both are a success without
// data, so the transports compare equal.
func ToolOutputObservation(out []byte, declaresOutput bool) (Observation, error) {
	if !declaresOutput {
		var v map[string]any
		if len(bytes.TrimSpace(out)) == 0 || (json.Unmarshal(out, &v) == nil && len(v) == 1 && v["status"] == "ok") {
			return Observation{Outcome: OutcomeSuccess}, nil
		}
	}
	return OutputObservation(bytes.TrimSpace(out))
}

// WithHandlerCalls wraps d so that every observation carries handlerCalls:
// how many times calls (the application's handler counter) advanced during
// the invocation. Every expectation of a probe on d must then state
// handlerCalls, which is how a probe proves a refused call never reached
// the handler.
func WithHandlerCalls(d Driver, calls func() int) Driver {
	return DriverFunc(func(ctx context.Context, fixture any) (Observation, error) {
		before := calls()
		o, err := d.Invoke(ctx, fixture)
		if err != nil {
			return o, err
		}
		n := calls() - before
		o.HandlerCalls = &n
		return o, nil
	})
}

// ToolIndex maps the operations of one prepared tool surface to their
// tools, so a tool driver turns a [Call] into the tool it must invoke.
type ToolIndex struct {
	what  string // "a tool of the agent surface", for errors
	tools map[string]*project.Tool
}

// NewToolIndex indexes the tools of s by operation identity. what names
// the surface in errors ("a tool of the agent surface").
func NewToolIndex(s *project.Surface, what string) *ToolIndex {
	x := &ToolIndex{what: what, tools: make(map[string]*project.Tool, len(s.Tools))}
	for i := range s.Tools {
		x.tools[s.Tools[i].ID()] = &s.Tools[i]
	}
	return x
}

// Resolve returns the fixture as a Call and the tool its operation is on
// the surface, or an error naming the surface.
func (x *ToolIndex) Resolve(fixture any) (Call, *project.Tool, error) {
	call, err := AsCall(fixture)
	if err != nil {
		return Call{}, nil, err
	}
	t, ok := x.tools[call.Operation]
	if !ok {
		return Call{}, nil, fmt.Errorf("operation %q is not %s", call.Operation, x.what)
	}
	return call, t, nil
}
