package mount

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/project"
	"stitchkit.dev/stitchkit/pkg/validate"
)

// Options configures [New]. A nil *Options means defaults.
type Options struct {
	// Hooks run around every call of every transport.
	Hooks Hooks
	// Authenticate resolves the caller of every request that arrives over
	// HTTP — the HTTP mount, MCP, the realtime handshake — from its
	// headers, before any body byte is read (see [Runner.Authenticate]).
	// nil lets every request through as anonymous (no principal).
	Authenticate Authenticator
	// Challenge is the WWW-Authenticate value of a 401 ("Bearer" when
	// empty), e.g. `Bearer resource_metadata="https://…"`.
	Challenge string
	// Logger receives the raw cause of every INTERNAL_SERVER_ERROR (and of
	// every code a handler was not allowed to answer). nil means
	// slog.Default().
	Logger *slog.Logger
	// RequireAll makes New fail when an operation or runtime tool has no
	// handler. Without it an unbound identity answers NOT_IMPLEMENTED
	// (after authorization and validation, like a bound one).
	RequireAll bool
	// MaxDepth is the deepest JSON nesting accepted in a request body or
	// tool arguments (0 = validate.DefaultMaxDepth).
	MaxDepth int
	// Projection is the graph projected once (routes, surfaces, error
	// sets, wire fields, validators, and the presentation options such as
	// the HTTP prefix); every mount built on the runner reads it, and the
	// manifest and exports take the same value. It must be a projection of
	// the implementation's graph. nil means project.New(graph, nil): no
	// HTTP prefix.
	Projection *project.Projection
}

// Hooks are the application's points in the pipeline. Each may be nil. A
// hook receives the call (identity, source, the parts validated so far) and
// may return a derived context (to carry a principal to the handler, for
// example) or nil to keep ctx. An error a hook returns may carry any
// registry code; hooks are cross-cutting (auth, rate limits, maintenance),
// so they are not held to an operation's declared codes.
type Hooks struct {
	// Authorize runs after the params are validated and before the query
	// or the input is read: over HTTP, no body byte has been read yet.
	Authorize func(ctx context.Context, c *Call) (context.Context, error)
	// BeforeHandle runs after the whole input is validated, just before
	// the handler.
	BeforeHandle func(ctx context.Context, c *Call) (context.Context, error)
	// AfterHandle runs after a successful handler and may replace the
	// output (return it unchanged to keep it). The result is validated
	// against #output after this hook.
	AfterHandle func(ctx context.Context, c *Call, output []byte) ([]byte, error)
	// AfterCall observes every finished call exactly once — success,
	// refusal, validation failure or panic — with the result the caller
	// gets and the raw error behind it (nil on success). It cannot change
	// the result; a panic in it is logged and swallowed.
	AfterCall func(ctx context.Context, c *Call, res Result, cause error)
}

// Runner executes calls: one pipeline for every transport. It is built
// once from an [Implementation] and is safe for concurrent use: everything
// it holds is read-only after [New], and each call has its own [Call].
//
// The pipeline of [Endpoint.Call]:
//
//  1. params: decoded (wire strings coerced to the schema's types),
//     defaults applied, validated;
//  2. Hooks.Authorize (no query or input read yet);
//  3. query: as params; input: read through [Request.Body] only now,
//     decoded (nesting-capped, duplicate keys refused), defaults applied,
//     validated;
//  4. Hooks.BeforeHandle; the handler (NOT_IMPLEMENTED when unbound);
//     Hooks.AfterHandle;
//  5. output: present exactly when #output is declared, validated;
//  6. Hooks.AfterCall.
//
// Errors are normalised in one place ([Runner.Normalize]): a validation
// failure is VALIDATION_ERROR 400 with details.issues (at most
// [project.MaxIssues]); malformed JSON is BAD_REQUEST; an *Error whose code
// the operation can answer ([project.OperationErrors]: its declared codes,
// BAD_REQUEST, VALIDATION_ERROR, INTERNAL_SERVER_ERROR, and UNAUTHORIZED and
// FORBIDDEN unless public) keeps its code with the registry's status; any
// other error, a code the handler may not answer, an output mismatch and
// any panic become INTERNAL_SERVER_ERROR "Internal server error" with the
// raw cause logged through Options.Logger and never sent.
type Runner struct {
	g     *graph.Graph
	p     *project.Projection
	log   *slog.Logger
	hooks Hooks
	// authenticate and challenge are Options.Authenticate and
	// Options.Challenge.
	authenticate Authenticator
	challenge    string
	maxDepth     int
	registry     map[string]graph.ErrorCode
	endpoints    []*Endpoint
	byID         map[string]*Endpoint
}

// New prepares every operation and runtime tool of impl's graph from its
// projection (Options.Projection, or one New builds): the validators of
// their schemas, their wire fields and argument splits, and the error
// codes each may answer. Requests never compile or derive anything.
func New(impl *Implementation, opts *Options) (*Runner, error) {
	if opts == nil {
		opts = &Options{}
	}
	g := impl.g
	r := &Runner{g: g, log: opts.Logger, hooks: opts.Hooks, authenticate: opts.Authenticate, challenge: opts.Challenge, maxDepth: opts.MaxDepth,
		registry: map[string]graph.ErrorCode{}, byID: map[string]*Endpoint{}}
	if r.log == nil {
		r.log = slog.Default()
	}
	if r.maxDepth <= 0 {
		r.maxDepth = validate.DefaultMaxDepth
	}
	for _, e := range g.ErrorRegistry() {
		r.registry[e.Code] = e
	}
	p := opts.Projection
	if p == nil {
		var err error
		if p, err = project.New(g, nil); err != nil {
			return nil, fmt.Errorf("mount: %w", err)
		}
	} else if p.Graph() != g {
		return nil, errors.New("mount: Options.Projection is a projection of another graph than the implementation's")
	}
	r.p = p
	if opts.RequireAll {
		if un := impl.Unbound(); len(un) > 0 {
			ids := make([]string, len(un))
			for i, id := range un {
				ids[i] = string(id.Kind) + " " + id.ID()
			}
			return nil, fmt.Errorf("mount: no handler for %s", strings.Join(ids, ", "))
		}
	}
	for _, pe := range p.Endpoints() {
		id := pe.ID()
		ep := &Endpoint{r: r, id: impl.ids[id], op: pe.Op, rt: pe.Runtime, handler: impl.handlers[id],
			params: pe.Params, query: pe.Query, input: pe.Input, output: pe.Output,
			wireParams: pe.WireParams, wireQuery: pe.WireQuery, split: pe.Split}
		ep.setAllowed(pe.Errors)
		r.add(ep)
	}
	return r, nil
}

func (r *Runner) add(ep *Endpoint) {
	r.endpoints = append(r.endpoints, ep)
	r.byID[ep.id.ID()] = ep
}

// Graph returns the graph the runner serves.
func (r *Runner) Graph() *graph.Graph { return r.g }

// Projection returns the projection the runner serves: every mount built
// on the runner takes its routes, surfaces and options from it.
func (r *Runner) Projection() *project.Projection { return r.p }

// Endpoint returns the prepared operation or runtime tool whose identity
// is service.action, or nil.
func (r *Runner) Endpoint(service, action string) *Endpoint { return r.byID[service+"."+action] }

// Endpoints returns every endpoint: operations in graph order, then
// runtime tools. The slice is shared; do not modify it.
func (r *Runner) Endpoints() []*Endpoint { return r.endpoints }

// ErrorCode returns the registry entry (framework or contract) for code.
func (r *Runner) ErrorCode(code string) (graph.ErrorCode, bool) {
	e, ok := r.registry[code]
	return e, ok
}

// Normalize turns an error raised outside a handler — by a transport
// before or around a call (an unknown route, a body too large), or by a
// hook — into the *Error a caller may see: an *Error with a registry code
// keeps it (with the registry's status and, when its message is empty, the
// registry's message); anything else is INTERNAL_SERVER_ERROR with the
// cause logged. ep may be nil when no operation is involved. nil gives nil.
func (r *Runner) Normalize(ctx context.Context, ep *Endpoint, err error) *Error {
	return r.normalize(ctx, ep, fromFramework, err)
}

// origin is who raised an error: a handler is held to its operation's
// codes, the framework (transport, runner, hooks) to the registry.
type origin int

const (
	fromFramework origin = iota
	fromHandler
)

// internalError is the one INTERNAL_SERVER_ERROR a caller ever sees.
func internalError() *Error {
	return &Error{Code: CodeInternal, Status: 500, Message: "Internal server error"}
}

func (r *Runner) normalize(ctx context.Context, ep *Endpoint, from origin, err error) *Error {
	if err == nil {
		return nil
	}
	e, ok := AsError(err)
	if !ok {
		r.logInternal(ctx, ep, "unexpected error", err)
		return internalError()
	}
	reg, known := r.registry[string(e.Code)]
	if !known {
		r.logInternal(ctx, ep, "error code not in the registry", err)
		return internalError()
	}
	// NOT_IMPLEMENTED is a handler's own answer for a method it has not
	// written yet (a generated Unimplemented… default): it says nothing
	// about the operation's domain, so it needs no declaration.
	if from == fromHandler && ep != nil && !ep.allowed[string(e.Code)] && e.Code != CodeNotImplemented {
		r.logInternal(ctx, ep, "handler answered a code its operation does not declare (add it to the operation's errors)", err)
		return internalError()
	}
	if e.Code == CodeInternal {
		if e.cause != nil || e.Message != "" && e.Message != reg.Message {
			r.logInternal(ctx, ep, "internal error", err)
		}
		return internalError()
	}
	out := &Error{Code: e.Code, Status: reg.Status, Message: e.Message, Details: e.Details,
		Hint: e.Hint, Retryable: e.Retryable}
	if out.Message == "" {
		out.Message = reg.Message
	}
	if opaque(e.Code) {
		// The registry marks the code's message and details as the
		// server's own business (which side broke a realtime contract,
		// and how): for logs only.
		r.logInternal(ctx, ep, strings.ToLower(reg.Message), err)
		out.Message, out.Details = reg.Message, nil
	}
	return out
}

func (r *Runner) logInternal(ctx context.Context, ep *Endpoint, what string, err error) {
	attrs := []slog.Attr{slog.String("error", err.Error())}
	if ep != nil {
		attrs = append(attrs, slog.String("kind", string(ep.id.Kind)), slog.String("operation", ep.id.ID()))
	}
	if c := CallFrom(ctx); c != nil {
		attrs = append(attrs, slog.String("source", string(c.Source)))
	}
	r.log.LogAttrs(ctx, slog.LevelError, "stitchkit: "+what, attrs...)
}

// errPanic carries a recovered panic value to the log.
type errPanic struct {
	v     any
	stack string
}

func (e *errPanic) Error() string { return fmt.Sprintf("panic: %v\n%s", e.v, e.stack) }

// isContextError reports a cancelled or timed-out call.
func isContextError(ctx context.Context, err error) bool {
	return ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}
