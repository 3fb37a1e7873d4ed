package mount

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/project"
	"stitchkit.dev/stitchkit/pkg/validate"
)

// Endpoint is one prepared operation or runtime tool of a [Runner]: its
// identity, compiled validators, wire fields and handler. Transports look
// endpoints up once ([Runner.Endpoint], [Runner.Endpoints]) and call them
// per request. Safe for concurrent use.
type Endpoint struct {
	r  *Runner
	id Identity
	op *graph.Operation
	rt *graph.RuntimeTool

	params, query, input, output *validate.Validator
	wireParams, wireQuery        *project.WireObject
	split                        project.ArgSplitter
	allowed                      map[string]bool
	handler                      Handler
}

func (ep *Endpoint) setAllowed(codes []graph.ErrorCode) {
	ep.allowed = make(map[string]bool, len(codes))
	for _, c := range codes {
		ep.allowed[c.Code] = true
	}
}

// Identity returns the endpoint's identity.
func (ep *Endpoint) Identity() Identity { return ep.id }

// Operation returns the contract operation, or nil for a runtime tool.
func (ep *Endpoint) Operation() *graph.Operation { return ep.op }

// RuntimeTool returns the runtime tool, or nil for a contract operation.
func (ep *Endpoint) RuntimeTool() *graph.RuntimeTool { return ep.rt }

// Bound reports whether a handler is bound (an unbound endpoint answers
// NOT_IMPLEMENTED).
func (ep *Endpoint) Bound() bool { return ep.handler != nil }

// HasInput reports whether the endpoint declares #input.
func (ep *Endpoint) HasInput() bool { return ep.input != nil }

// HasOutput reports whether the endpoint declares #output.
func (ep *Endpoint) HasOutput() bool { return ep.output != nil }

// WireParams returns the wire fields of the endpoint's #params (nil when it
// declares none). A transport that knows its parameter names up front (the
// HTTP mount's path wildcards) reads each string with its field once per
// request into [Fields.Values], the same reading [Fields.Wire] gets,
// without building a map of strings first.
func (ep *Endpoint) WireParams() *project.WireObject { return ep.wireParams }

// Request is one call as a transport hands it to [Endpoint.Call]. The
// runner reads each part at the pipeline step that needs it.
type Request struct {
	// Source is the transport the call arrived on.
	Source Source
	// Native is the transport's own request value, passed through to
	// [Call.Native] for hooks (*http.Request for the HTTP mount; each
	// transport documents its own).
	Native any
	// Params and Query are the #params and #query members.
	Params, Query Fields
	// Body, when set, returns the raw JSON input. It is called at most
	// once, after Hooks.Authorize succeeded, and only when the endpoint
	// declares #input; an empty or all-whitespace body means {}. An error
	// it returns (an *Error such as PAYLOAD_TOO_LARGE) is the call's
	// answer.
	Body func() ([]byte, error)
	// Input, when Body is nil, is the decoded input object (tool
	// arguments); nil means {}. InputJSON, when set, is the JSON text
	// Input was decoded from: handlers then receive it verbatim, without
	// a re-encode, unless defaults changed the value.
	Input     map[string]any
	InputJSON json.RawMessage

	// argsErr is a failure decoding flat tool arguments, reported at the
	// first pipeline step so the call is still observed once.
	argsErr error
}

// Fields are the members of one object part of a call, in one of two
// forms: Wire (when non-nil) holds wire strings — a path's wildcards, a
// parsed query string — that the runner reads as the schema's types
// ([project.WireObject.Coerce]); Values holds decoded JSON values (tool
// arguments, or wire strings the transport already read with the same
// fields, [Endpoint.WireParams]), used as they are.
//
// Err, when set, is the transport's failure to read the part (a malformed
// query string): it is the call's answer at that part's pipeline step, so a
// query problem is still reported only after authorization.
type Fields struct {
	Wire   map[string][]string
	Values map[string]any
	Err    error
}

func (f Fields) empty() bool { return len(f.Wire) == 0 && len(f.Values) == 0 }

// Call is one call in progress, as hooks and handlers see it. Params, Query
// and Input are the validated values with defaults applied, in the form
// [validate.DecodeJSON] produces (map[string]any, []any, string, bool, nil,
// json.Number); each is nil when the endpoint declares no such schema (and
// Query and Input are nil until read, i.e. in Hooks.Authorize). A Call
// belongs to one call: hooks and the handler may read it from the call's
// goroutine; nothing is shared with other calls.
type Call struct {
	// Identity is the endpoint's identity.
	Identity Identity
	// Source is the transport the call arrived on.
	Source Source
	// Native is the transport's request value ([Request.Native]).
	Native any
	// Principal is the caller the edge authenticator resolved
	// ([Runner.Authenticate]); nil for an anonymous caller or a
	// transport without an edge (in process).
	Principal *Principal
	Params    map[string]any
	Query     map[string]any
	Input     any

	ep        *Endpoint
	inputJSON json.RawMessage
	ctx       callContext
}

type callKey struct{}

// callContext is the context a call runs in: its parent plus the call. It
// lives inside the Call, so a call costs one allocation where
// context.WithValue would add a second; everything but the call's key is
// the parent's (deadline, cancellation, values, context.Cause).
type callContext struct {
	context.Context
	c *Call
}

func (x *callContext) Value(key any) any {
	if _, ok := key.(callKey); ok {
		return x.c
	}
	return x.Context.Value(key)
}

func (x *callContext) String() string { return fmt.Sprint(x.Context) + ".WithValue(mount.Call)" }

// CallFrom returns the call a context belongs to (every context the
// runner passes to hooks and handlers carries it), or nil.
func CallFrom(ctx context.Context) *Call {
	c, _ := ctx.Value(callKey{}).(*Call)
	return c
}

// Endpoint returns the endpoint being called.
func (c *Call) Endpoint() *Endpoint { return c.ep }

// InputJSON returns the validated input as JSON: the bytes the transport
// supplied when defaults changed nothing (no re-encode), else the encoded
// value. nil when the endpoint declares no #input.
func (c *Call) InputJSON() (json.RawMessage, error) {
	if c.inputJSON == nil && c.Input != nil {
		b, err := json.Marshal(c.Input)
		if err != nil {
			return nil, err
		}
		c.inputJSON = b
	}
	return c.inputJSON, nil
}

// DecodeInput unmarshals the validated input into v (a typed binding's
// input struct).
func (c *Call) DecodeInput(v any) error {
	b, err := c.InputJSON()
	if err != nil || b == nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// DecodeParams unmarshals the validated params into v. Generated code may
// read c.Params directly instead (values are strings, bools, nil and
// json.Number), which costs no encoding.
func (c *Call) DecodeParams(v any) error { return remarshal(c.Params, v) }

// DecodeQuery unmarshals the validated query into v.
func (c *Call) DecodeQuery(v any) error { return remarshal(c.Query, v) }

func remarshal(m map[string]any, v any) error {
	if m == nil {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// Result is the outcome of a call.
type Result struct {
	// Output is the validated output JSON; nil when the endpoint declares
	// no #output or the call failed.
	Output json.RawMessage
	// Err is the normalised error (a registry code, a message safe to
	// send); nil on success.
	Err *Error
}

// Issue is one validation issue of a VALIDATION_ERROR, in details.issues.
type Issue struct {
	// In is the part of the call the value belongs to: params, query or
	// input.
	In project.Part `json:"in"`
	// Path is the JSON Pointer of the value within that part.
	Path    string `json:"path"`
	Keyword string `json:"keyword"`
	Message string `json:"message"`
}

// Call runs the pipeline (see [Runner]) for one call. It never panics:
// a panic in a hook or the handler becomes INTERNAL_SERVER_ERROR.
func (ep *Endpoint) Call(ctx context.Context, req *Request) (res Result) {
	if ctx == nil {
		panic("cannot create context from nil parent") // as context.WithValue
	}
	c := &Call{Identity: ep.id, Source: req.Source, Native: req.Native, Principal: PrincipalFrom(ctx), ep: ep}
	c.ctx = callContext{Context: ctx, c: c}
	ctx = &c.ctx
	var cause error
	defer func() {
		if p := recover(); p != nil {
			cause = &errPanic{v: p, stack: string(debug.Stack())}
			ep.r.logInternal(ctx, ep, "panic", cause)
			res = Result{Err: internalError()}
		}
		if ep.r.hooks.AfterCall != nil {
			ep.r.afterCall(ctx, c, res, cause)
		}
	}()
	res, cause = ep.run(ctx, c, req)
	return res
}

func (r *Runner) afterCall(ctx context.Context, c *Call, res Result, cause error) {
	defer func() {
		if p := recover(); p != nil {
			r.log.LogAttrs(ctx, slog.LevelError, "stitchkit: AfterCall hook panicked",
				slog.String("operation", c.Identity.ID()), slog.Any("panic", p))
		}
	}()
	r.hooks.AfterCall(ctx, c, res, cause)
}

func (ep *Endpoint) run(ctx context.Context, c *Call, req *Request) (Result, error) {
	r := ep.r
	fail := func(from origin, err error) (Result, error) {
		return Result{Err: r.normalize(ctx, ep, from, err)}, err
	}
	if req.argsErr != nil {
		return fail(fromFramework, req.argsErr)
	}

	// 1. Params: before anything else, so a malformed path never reaches
	// authorization.
	if req.Params.Err != nil {
		return fail(fromFramework, req.Params.Err)
	}
	if ep.params != nil {
		m, err := ep.object(project.PartParams, ep.wireParams, req.Params, ep.params)
		if err != nil {
			return fail(fromFramework, err)
		}
		c.Params = m
	} else if !req.Params.empty() {
		return fail(fromFramework, undeclared(project.PartParams, req.Params))
	}

	// 2. Authorize: params known, nothing else read.
	if h := r.hooks.Authorize; h != nil {
		nctx, err := h(ctx, c)
		if err != nil {
			return fail(fromFramework, err)
		}
		if nctx != nil {
			ctx = nctx
		}
	}

	// 3. Query and input.
	if req.Query.Err != nil {
		return fail(fromFramework, req.Query.Err)
	}
	if ep.query != nil {
		m, err := ep.object(project.PartQuery, ep.wireQuery, req.Query, ep.query)
		if err != nil {
			return fail(fromFramework, err)
		}
		c.Query = m
	} else if !req.Query.empty() {
		return fail(fromFramework, undeclared(project.PartQuery, req.Query))
	}
	if ep.input != nil {
		if err := ep.readInput(c, req); err != nil {
			return fail(fromFramework, err)
		}
	} else if req.Body == nil && len(req.Input) > 0 {
		return fail(fromFramework, undeclared(project.PartInput, Fields{Values: req.Input}))
	}

	// 4. BeforeHandle, handler, AfterHandle.
	if h := r.hooks.BeforeHandle; h != nil {
		nctx, err := h(ctx, c)
		if err != nil {
			return fail(fromFramework, err)
		}
		if nctx != nil {
			ctx = nctx
		}
	}
	if ep.handler == nil {
		return fail(fromFramework, Errorf(CodeNotImplemented, "%s is not implemented", ep.id.ID()))
	}
	out, err := ep.handler(ctx, c)
	if err != nil {
		if isContextError(ctx, err) {
			return fail(fromFramework, NewError(CodeTimeout, "The call was cancelled or timed out").WithCause(err))
		}
		return fail(fromHandler, err)
	}
	if h := r.hooks.AfterHandle; h != nil {
		if out, err = h(ctx, c, out); err != nil {
			return fail(fromFramework, err)
		}
	}

	// 5. Output.
	if ep.output == nil {
		if t := bytes.TrimSpace(out); len(t) != 0 && !bytes.Equal(t, []byte("null")) {
			return fail(fromFramework, fmt.Errorf("%s declares no #output but its handler returned %d bytes", ep.id.ID(), len(out)))
		}
		return Result{}, nil
	}
	if len(bytes.TrimSpace(out)) == 0 {
		return fail(fromFramework, fmt.Errorf("%s declares #output but its handler returned none", ep.id.ID()))
	}
	// The output is the application's own; its nesting is bounded only
	// against runaway values.
	// Judged on the bytes: the runner needs the verdict, not the value.
	if err := ep.output.ValidateJSON(out, &validate.DecodeOptions{MaxDepth: 10000}); err != nil {
		var de *validate.DecodeError
		if errors.As(err, &de) {
			return fail(fromFramework, fmt.Errorf("%s: handler output is not JSON: %w", ep.id.ID(), err))
		}
		return fail(fromFramework, fmt.Errorf("%s: handler output does not match #output: %w", ep.id.ID(), err))
	}
	return Result{Output: out}, nil
}

// object reads, defaults and validates a params or query part.
func (ep *Endpoint) object(part project.Part, wire *project.WireObject, f Fields, v *validate.Validator) (map[string]any, error) {
	var m map[string]any
	switch {
	case f.Wire != nil:
		m = wire.Coerce(f.Wire)
	case f.Values != nil:
		m = f.Values
	default:
		m = map[string]any{}
	}
	val, _ := v.ApplyDefaults(m)
	if err := v.Validate(val); err != nil {
		return nil, validationError(part, err)
	}
	if mm, ok := val.(map[string]any); ok {
		return mm, nil
	}
	return m, nil
}

// readInput reads (from the transport, now that authorization passed),
// decodes, defaults and validates the input.
func (ep *Endpoint) readInput(c *Call, req *Request) error {
	var val any
	if req.Body != nil {
		body, err := req.Body()
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(body)) == 0 {
			body = []byte("{}")
		}
		if val, err = validate.DecodeJSON(body, &validate.DecodeOptions{MaxDepth: ep.r.maxDepth}); err != nil {
			return badJSON("request body", err)
		}
		c.inputJSON = body
	} else {
		in := req.Input
		if in == nil {
			in = map[string]any{}
		}
		val, c.inputJSON = in, req.InputJSON
	}
	val, changed := ep.input.ApplyDefaults(val)
	if changed {
		c.inputJSON = nil // re-encoded on demand
	}
	if err := ep.input.Validate(val); err != nil {
		return validationError(project.PartInput, err)
	}
	c.Input = val
	return nil
}

// validationError is the one VALIDATION_ERROR shape: details.issues (at
// most project.MaxIssues) and a message naming the first issue.
func validationError(part project.Part, err error) *Error {
	var ve *validate.Error
	if !errors.As(err, &ve) || len(ve.Issues) == 0 {
		return &Error{Code: CodeValidation, Status: 400, Message: "Invalid " + string(part),
			Details: map[string]any{"issues": []Issue{{In: part, Message: excerpt(err.Error(), MaxIssueBytes)}}}}
	}
	return issuesError(part, ve.Issues)
}

func issuesError(part project.Part, all []validate.Issue) *Error {
	shown := all
	if len(shown) > project.MaxIssues {
		shown = shown[:project.MaxIssues]
	}
	issues := make([]Issue, 0, len(shown))
	total := 0
	for _, is := range shown {
		path, text := excerpt(is.Path, MaxIssueBytes), excerpt(is.Message, MaxIssueBytes)
		if total += len(path) + len(text); total > MaxIssuesBytes && len(issues) > 0 {
			break
		}
		issues = append(issues, Issue{In: part, Path: path, Keyword: is.Keyword, Message: text})
	}
	msg := "Invalid " + string(part) + ": " + excerpt(all[0].String(), MaxIssueBytes)
	if len(all) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(all)-1)
	}
	return &Error{Code: CodeValidation, Status: 400, Message: msg, Details: map[string]any{"issues": issues}}
}

// undeclared refuses members of a part the endpoint does not declare.
func undeclared(part project.Part, f Fields) *Error {
	var names []string
	for k := range f.Wire {
		names = append(names, k)
	}
	for k := range f.Values {
		names = append(names, k)
	}
	graph.SortUTF16(names)
	is := make([]validate.Issue, len(names))
	for i, n := range names {
		is[i] = validate.Issue{Keyword: "additionalProperties",
			Message: fmt.Sprintf("%s %q is not declared: the operation takes no %s", part, n, part)}
	}
	return issuesError(part, is)
}

// badJSON is the BAD_REQUEST for bytes that are not one acceptable JSON
// value.
func badJSON(what string, err error) *Error {
	e := &Error{Code: CodeBadRequest, Status: 400, Message: "Malformed JSON in " + what}
	var de *validate.DecodeError
	if errors.As(err, &de) {
		e.Message += ": " + excerpt(de.Error(), MaxIssueBytes)
		e.Details = map[string]any{"offset": de.Offset}
	}
	return e
}

// CallTool runs a tool call: args is the flat JSON argument object (nil,
// empty or null mean {}), split into params, query and input by the
// projector's rule ([project.ArgSplitter]) and then run through the same
// pipeline as [Endpoint.Call]. Tool transports (MCP, Agent, CLI, in
// process) only adapt envelopes around it. native is passed to
// [Call.Native].
func (ep *Endpoint) CallTool(ctx context.Context, src Source, args json.RawMessage, native any) Result {
	req := &Request{Source: src, Native: native}
	m := map[string]any{}
	if t := bytes.TrimSpace(args); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		v, err := validate.DecodeJSON(t, &validate.DecodeOptions{MaxDepth: ep.r.maxDepth})
		switch obj, ok := v.(map[string]any); {
		case err != nil:
			req.argsErr = badJSON("tool arguments", err)
		case !ok:
			req.argsErr = issuesError(project.PartInput, []validate.Issue{{Keyword: "type", Message: "tool arguments must be a JSON object"}})
		default:
			m = obj
		}
	}
	if req.argsErr != nil {
		return ep.Call(ctx, req)
	}
	if ep.rt != nil || ep.params == nil && ep.query == nil {
		// Every argument is input: hand the handler the caller's bytes.
		req.Input = m
		if len(m) > 0 {
			req.InputJSON = args
		}
		return ep.Call(ctx, req)
	}
	var params, query, input map[string]any
	put := func(dst *map[string]any, k string, v any) {
		if *dst == nil {
			*dst = map[string]any{}
		}
		(*dst)[k] = v
	}
	for k, v := range m {
		switch ep.split.Part(k) {
		case project.PartParams:
			put(&params, k, v)
		case project.PartQuery:
			put(&query, k, v)
		default:
			put(&input, k, v)
		}
	}
	req.Params, req.Query, req.Input = Fields{Values: params}, Fields{Values: query}, input
	return ep.Call(ctx, req)
}
