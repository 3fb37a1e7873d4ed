package project

import (
	"errors"
	"fmt"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/validate"
)

// Options are the presentation options of a [Projection]: the choices a
// deployment makes about how a graph is served that change what clients
// see. Each is stated here once; every mount, the manifest, the exports
// and the conformance drivers read it from the projection. A nil *Options
// means defaults.
type Options struct {
	// HTTPPrefix is the mount prefix placed before every service prefix
	// ("/api"). Empty serves the routes at the root. New writes it in
	// one form ([JoinPath]: "api/" and "/api" are "/api"; "/" is empty),
	// which [Projection.Options] returns and a manifest records.
	HTTPPrefix string
}

// Projection is a graph projected once: its HTTP routes, its tool
// surfaces (per transport and named surface, prepared, with their
// advertised schemas), its realtime topology, and per operation and
// runtime tool the codes it can answer, its wire fields, its argument
// split and its compiled validators — together with the [Options] it was
// built with.
//
// Build one with [New] and hand it to everything that serves or describes
// the graph: the runner (mount.Options.Projection) and through it every
// mount, realtime contracts, the surface manifest, the OpenAPI and
// AsyncAPI exports and the conformance drivers. None of them derives a
// route, a tool or a realtime row of its own (a test in this package
// scans the module for one), so what a manifest records is what the
// mounts serve, with the same prefix.
//
// A Projection is immutable and safe for concurrent use. The slices and
// pointers its methods return are shared: do not modify them.
type Projection struct {
	g          *graph.Graph
	opts       Options
	routes     []Route
	tools      *Tools
	realtime   *Realtime
	validators *validate.Set
	endpoints  []*Endpoint
	byID       map[string]*Endpoint
}

// Endpoint is what a projection fixes about one operation or runtime tool,
// whichever transport calls it.
type Endpoint struct {
	// Op is the operation; nil for a runtime tool.
	Op *graph.Operation
	// Runtime is the runtime tool; nil for an operation.
	Runtime *graph.RuntimeTool
	// Errors are the codes a call can answer ([OperationErrors],
	// [RuntimeToolErrors]).
	Errors []graph.ErrorCode
	// WireParams and WireQuery read wire strings as the #params and
	// #query types; nil when the operation declares none.
	WireParams, WireQuery *WireObject
	// Split sorts flat tool arguments into params, query and input (an
	// operation's; a runtime tool's arguments are all input).
	Split ArgSplitter
	// Params, Query, Input and Output are the compiled validators of the
	// declared schemas; nil for a schema not declared.
	Params, Query, Input, Output *validate.Validator
}

// ID returns "service.action".
func (e *Endpoint) ID() string {
	if e.Op != nil {
		return e.Op.ID()
	}
	return e.Runtime.Identity.Service + "." + e.Runtime.Identity.Action
}

// deriveHook, when set (by tests), is told each time a projection fact is
// derived: "routes", "tools" or "realtime".
var deriveHook func(what string)

func derived(what string) {
	if deriveHook != nil {
		deriveHook(what)
	}
}

// New projects g once with opts (nil means defaults). It fails when the
// graph cannot be served as a whole: routes net/http cannot serve together
// ([RouteProblems]), a surface the projector cannot prepare ([Errors]), a
// broken realtime topology, a schema that does not compile, or a declared
// error code the registry lacks. A graph check.Compile returns always
// projects.
//
// Cost: New compiles every schema of the graph once and prepares every
// surface; it is meant to run once per process (or per graph), not per
// request.
func New(g *graph.Graph, opts *Options) (*Projection, error) {
	if g == nil {
		return nil, errors.New("project: nil graph")
	}
	p := &Projection{g: g, byID: map[string]*Endpoint{}}
	if opts != nil {
		p.opts = *opts
	}
	if p.opts.HTTPPrefix = JoinPath(p.opts.HTTPPrefix); p.opts.HTTPPrefix == "/" {
		p.opts.HTTPPrefix = ""
	}
	var errs []error
	var err error
	if p.routes, err = RouteTable(g, HTTPOptions{Prefix: p.opts.HTTPPrefix}); err != nil {
		errs = append(errs, err)
	}
	if p.tools, err = ToolSurfaces(g); err != nil {
		errs = append(errs, err)
	}
	if p.realtime, err = RealtimeTopology(g); err != nil {
		errs = append(errs, err)
	}
	if p.validators, err = validate.ForGraph(g); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("project: %w", errors.Join(errs...))
	}
	for _, op := range g.Operations() {
		e := &Endpoint{Op: op}
		if err := p.prepare(e, op.Params, op.Query, op.Input, op.Output); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", op.ID(), err))
			continue
		}
		if e.Errors, err = OperationErrors(g, op); err == nil {
			e.Split, err = OperationSplitter(g, op)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", op.ID(), err))
			continue
		}
		p.add(e)
	}
	for i := range g.RuntimeTools {
		rt := &g.RuntimeTools[i]
		e := &Endpoint{Runtime: rt}
		err := p.prepare(e, "", "", rt.Input, rt.Output)
		if err == nil {
			e.Errors, err = RuntimeToolErrors(g, rt)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("runtime tool %s: %w", rt.Name, err))
			continue
		}
		p.add(e)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("project: %w", errors.Join(errs...))
	}
	return p, nil
}

// prepare looks up the validators and reads the wire fields of e's
// schemas.
func (p *Projection) prepare(e *Endpoint, params, query, input, output graph.Digest) error {
	get := func(what string, d graph.Digest) (*validate.Validator, error) {
		if d == "" {
			return nil, nil
		}
		if v := p.validators.Get(d); v != nil {
			return v, nil
		}
		return nil, fmt.Errorf("%s schema %s is not in the graph", what, d)
	}
	var err error
	if e.Params, err = get("#params", params); err != nil {
		return err
	}
	if e.Query, err = get("#query", query); err != nil {
		return err
	}
	if e.Input, err = get("#input", input); err != nil {
		return err
	}
	if e.Output, err = get("#output", output); err != nil {
		return err
	}
	if params != "" {
		if e.WireParams, err = NewWireObject(p.g.Schema(params)); err != nil {
			return fmt.Errorf("#params: %w", err)
		}
	}
	if query != "" {
		if e.WireQuery, err = NewWireObject(p.g.Schema(query)); err != nil {
			return fmt.Errorf("#query: %w", err)
		}
	}
	return nil
}

func (p *Projection) add(e *Endpoint) {
	p.endpoints = append(p.endpoints, e)
	p.byID[e.ID()] = e
}

// Graph returns the graph projected.
func (p *Projection) Graph() *graph.Graph { return p.g }

// Options returns the options the projection was built with.
func (p *Projection) Options() Options { return p.opts }

// Routes returns the HTTP routes (every operation exposed on HTTP, with
// the HTTP prefix), sorted by path then method; net/http's ServeMux serves
// them together ([RouteTable]).
func (p *Projection) Routes() []Route { return p.routes }

// Tools returns the prepared tool surfaces of every transport.
func (p *Projection) Tools() *Tools { return p.tools }

// Realtime returns the realtime topology.
func (p *Projection) Realtime() *Realtime { return p.realtime }

// Validators returns the compiled validator of every schema of the graph.
func (p *Projection) Validators() *validate.Set { return p.validators }

// Endpoints returns every operation (in graph order), then every runtime
// tool.
func (p *Projection) Endpoints() []*Endpoint { return p.endpoints }

// Endpoint returns the operation or runtime tool whose identity is
// service.action, or nil.
func (p *Projection) Endpoint(service, action string) *Endpoint {
	return p.byID[service+"."+action]
}
