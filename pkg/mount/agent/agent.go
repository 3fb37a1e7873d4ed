// Package agent is the Agent mount: the contract's Agent surface as a
// provider-neutral toolset for an application that calls a model itself —
// each tool a Name, a Description, an InputSchema and a Call — plus
// exporters to the OpenAI (Chat Completions and Responses), Anthropic
// Messages and Gemini tool-definition formats.
//
// The tools are the projector's Agent surface, prepared once under the
// Agent presentation policy (policy.agent: union flattening, OpenAI strict
// mode), and every call runs in process through the shared runner
// (source "agent"), so arguments are validated by the contract's schemas
// and hooks see the operation's identity.
//
//	p, _ := project.New(g, nil) // the one projection; g from check.Compile or graph.Load
//	runner, _ := mount.New(impl, &mount.Options{Projection: p})
//	tools, _ := agent.New(runner, nil) // the projection's Agent surface
//	defs, _ := tools.OpenAIResponsesTools()   // into the request's "tools"
//	// … the model answers with a function call name + arguments …
//	out, err := tools.Call(ctx, name, arguments)
//	// err's text is the tool error envelope: hand it back to the model.
package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
	"stitchkit.dev/stitchkit/pkg/project"
	"stitchkit.dev/stitchkit/pkg/validate"
)

// Options configures [New]; nil means defaults.
type Options struct {
	// ErrorHint, when set, adds a hint for a tool's failure with a code to
	// the envelope's _hint (after the error's own hint), telling a model
	// how to recover.
	ErrorHint func(tool, code string) string
}

// Toolset is the prepared Agent surface of one graph. It is safe for
// concurrent use.
type Toolset struct {
	tools  []*Tool
	byName map[string]*Tool
	opts   Options
}

// Tool is one prepared agent tool.
type Tool struct {
	// Name is the tool name (the projector's, valid for every provider).
	Name        string
	Description string
	// InputSchema is the advertised JSON Schema 2020-12 document of the
	// flat arguments; the manifest's AGENT input digest is InputDigest.
	InputSchema json.RawMessage
	InputDigest graph.Digest
	// Strict reports that InputSchema is prepared for strict function
	// calling (policy.agent.strict): every object closed, every property
	// required, the optional ones nullable.
	Strict bool

	ts *Toolset
	ep *mount.Endpoint
	// parts are the contract schemas by argument part, for strict-mode
	// null removal; split says which part a key belongs to.
	split             func(key string) project.Part
	params, query, in any
}

// New prepares the Agent surface of the runner's projection
// ([mount.Runner.Projection]). It fails when the runner lacks an endpoint
// for a tool.
func New(r *mount.Runner, opts *Options) (*Toolset, error) {
	if opts == nil {
		opts = &Options{}
	}
	p := r.Projection()
	g := p.Graph()
	s := p.Tools().Surface(graph.AGENT, "")
	set := &Toolset{byName: map[string]*Tool{}, opts: *opts}
	for i := range s.Tools {
		pt := &s.Tools[i]
		ep := r.Endpoint(pt.Service, pt.Action)
		if ep == nil {
			return nil, fmt.Errorf("agent: the runner has no endpoint %s for tool %q", pt.ID(), pt.Name)
		}
		t := &Tool{Name: pt.Name, Description: pt.Description, InputSchema: pt.Input, InputDigest: pt.InputDigest,
			Strict: g.Policy.Agent.Strict, ts: set, ep: ep}
		if t.Strict {
			if err := t.prepareNulls(p, pt); err != nil {
				return nil, fmt.Errorf("agent: tool %q: %w", pt.Name, err)
			}
		}
		set.tools = append(set.tools, t)
		set.byName[t.Name] = t
	}
	return set, nil
}

// prepareNulls decodes the contract schemas strict-mode null removal walks.
func (t *Tool) prepareNulls(p *project.Projection, pt *project.Tool) error {
	g := p.Graph()
	if pt.Op == nil {
		t.split = func(string) project.Part { return project.PartInput }
		t.in = decodeSchema(g.Schema(pt.Runtime.Input))
		return nil
	}
	e := p.Endpoint(pt.Service, pt.Action)
	if e == nil {
		return fmt.Errorf("the projection has no endpoint %s", pt.ID())
	}
	t.split = e.Split.Part
	t.params, t.query, t.in = decodeSchema(g.Schema(pt.Op.Params)), decodeSchema(g.Schema(pt.Op.Query)), decodeSchema(g.Schema(pt.Op.Input))
	return nil
}

// Tools returns the tools in surface order (by name). The slice is
// shared; do not modify it.
func (ts *Toolset) Tools() []*Tool { return ts.tools }

// Tool returns the tool called name, or nil.
func (ts *Toolset) Tool(name string) *Tool { return ts.byName[name] }

// Call runs the tool called name with a model's arguments (a JSON object;
// empty means {}). An unknown name is a *CallError with NOT_FOUND, before
// anything runs.
func (ts *Toolset) Call(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	t := ts.byName[name]
	if t == nil {
		return nil, ts.callError(name, mount.Errorf(mount.CodeNotFound, "No agent tool %q", name))
	}
	return t.Call(ctx, args)
}

// Call runs the tool through the runner (source "agent"). Success is the
// validated output JSON, or {"status":"ok"} for a tool without output. A
// failure is a *CallError whose text is the tool error envelope —
// {"error": CODE, "details", "_hint"?, "retryable"?} — to hand back to the
// model as the tool's result, so it can correct its call. Hooks see the
// *agent.Tool as Call.Native.
func (t *Tool) Call(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	if t.Strict {
		args = t.withoutOptionalNulls(args)
	}
	res := t.ep.CallTool(ctx, mount.SourceAgent, args, t)
	if res.Err != nil {
		return nil, t.ts.callError(t.Name, res.Err)
	}
	if res.Output == nil {
		return json.RawMessage(`{"status":"ok"}`), nil
	}
	return res.Output, nil
}

// withoutOptionalNulls removes the nulls strict mode made a model send for
// absent optional members. Arguments that do not decode are passed on
// untouched, for the runner to refuse.
func (t *Tool) withoutOptionalNulls(args json.RawMessage) json.RawMessage {
	v, err := validate.DecodeJSON(args, nil)
	m, ok := v.(map[string]any)
	if err != nil || !ok {
		return args
	}
	parts := map[project.Part]map[string]any{}
	for k, e := range m {
		p := t.split(k)
		if parts[p] == nil {
			parts[p] = map[string]any{}
		}
		parts[p][k] = e
	}
	changed := false
	for p, sub := range parts {
		schema := map[project.Part]any{project.PartParams: t.params, project.PartQuery: t.query, project.PartInput: t.in}[p]
		if schema == nil {
			continue
		}
		if dropNulls(sub, schema, schema) {
			changed = true
		}
	}
	if !changed {
		return args
	}
	out := map[string]any{}
	for _, sub := range parts {
		for k, e := range sub {
			out[k] = e
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return args
	}
	return b
}

// CallError is a failed agent tool call.
type CallError struct {
	// Err is the normalised error: a registry code, a message safe to
	// show.
	Err      *mount.Error
	envelope []byte
}

// Error returns the tool error envelope JSON.
func (e *CallError) Error() string { return string(e.envelope) }

// Unwrap returns Err.
func (e *CallError) Unwrap() error { return e.Err }

// Envelope returns the tool error envelope JSON.
func (e *CallError) Envelope() json.RawMessage { return e.envelope }

func (ts *Toolset) callError(tool string, e *mount.Error) *CallError {
	hint := ""
	if ts.opts.ErrorHint != nil {
		hint = ts.opts.ErrorHint(tool, string(e.Code))
	}
	return &CallError{Err: e, envelope: e.ToolEnvelope(hint)}
}
