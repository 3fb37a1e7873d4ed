package mount

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// Kind says where an operation identity comes from.
type Kind string

// Identity kinds, as the surface manifest keys operations.
const (
	// KindContract is an operation of a service (it may have a route).
	KindContract Kind = "contract"
	// KindRuntime is a runtime tool: identity, no route.
	KindRuntime Kind = "runtime"
)

// Source names the transport a call arrived on. It is an open set: a
// bring-your-own transport may use its own name.
type Source string

// The sources of the built-in transports.
const (
	SourceHTTP     Source = "http"
	SourceMCP      Source = "mcp"
	SourceAgent    Source = "agent"
	SourceCLI      Source = "cli"
	SourceInternal Source = "internal"
)

// Identity is the path-free identity of an operation or runtime tool: what
// hooks, logs and audit key on. It never contains a route: code must not
// assume every operation has one.
type Identity struct {
	Kind    Kind
	Service string
	Action  string
	// Method is the semantic method (a runtime tool names one too).
	Method string
	// Scope is the effective scope, never empty ("public" by default).
	Scope string
	// Meta is the merged meta object; nil when none was declared.
	Meta json.RawMessage
}

// ID returns "service.action".
func (id Identity) ID() string { return id.Service + "." + id.Action }

// Handler runs one operation. It receives the validated call (defaults
// applied) and returns the output as JSON — nil (or null) when the
// operation declares no #output. An error that is (or wraps) an *Error with
// a code the operation can answer reaches the caller; anything else
// becomes INTERNAL_SERVER_ERROR (see [Runner]).
//
// Hand-written handlers work on JSON directly:
//
//	func(ctx context.Context, c *mount.Call) (json.RawMessage, error) {
//		return json.RawMessage(`{"ok":true}`), nil
//	}
//
// Generated typed bindings wrap a typed method without reflection of their
// own: decode the parts they need (c.DecodeInput(&in), or read c.Params
// directly), call the method, and marshal its result once.
type Handler func(ctx context.Context, c *Call) (json.RawMessage, error)

// Implementation binds the operations and runtime tools of one graph to
// handlers. Build one with [NewImplementation], [Implementation.Handle]
// each identity, then pass it to [New]. An Implementation is not safe for
// concurrent Handle calls; bind everything before New.
type Implementation struct {
	g        *graph.Graph
	ids      map[string]Identity // "service.action" → identity
	handlers map[string]Handler
}

// NewImplementation returns an Implementation of g with nothing bound.
func NewImplementation(g *graph.Graph) *Implementation {
	im := &Implementation{g: g, ids: map[string]Identity{}, handlers: map[string]Handler{}}
	for _, op := range g.Operations() {
		im.ids[op.ID()] = Identity{Kind: KindContract, Service: op.Service, Action: op.Action,
			Method: op.Method, Scope: cmp.Or(op.Scope, "public"), Meta: op.Meta}
	}
	for i := range g.RuntimeTools {
		rt := &g.RuntimeTools[i]
		im.ids[rt.Identity.Service+"."+rt.Identity.Action] = Identity{Kind: KindRuntime,
			Service: rt.Identity.Service, Action: rt.Identity.Action, Method: rt.Identity.Method,
			Scope: cmp.Or(rt.Identity.Scope, "public"), Meta: rt.Meta}
	}
	return im
}

// Graph returns the graph being implemented.
func (im *Implementation) Graph() *graph.Graph { return im.g }

// Handle binds h to the operation or runtime tool whose identity is
// service.action. It refuses an identity the graph does not declare, a nil
// handler, and binding one identity twice.
func (im *Implementation) Handle(service, action string, h Handler) error {
	id := service + "." + action
	if _, ok := im.ids[id]; !ok {
		return fmt.Errorf("mount: %s is not an operation or runtime tool identity of contract %q", id, im.g.Name)
	}
	if h == nil {
		return fmt.Errorf("mount: nil handler for %s", id)
	}
	if _, dup := im.handlers[id]; dup {
		return fmt.Errorf("mount: %s is bound twice", id)
	}
	im.handlers[id] = h
	return nil
}

// Unbound returns the identities without a handler, in graph order
// (operations, then runtime tools). [New] answers their calls with
// NOT_IMPLEMENTED unless Options.RequireAll is set.
func (im *Implementation) Unbound() []Identity {
	var out []Identity
	for _, op := range im.g.Operations() {
		if _, ok := im.handlers[op.ID()]; !ok {
			out = append(out, im.ids[op.ID()])
		}
	}
	for _, rt := range im.g.RuntimeTools {
		id := rt.Identity.Service + "." + rt.Identity.Action
		if _, ok := im.handlers[id]; !ok {
			out = append(out, im.ids[id])
		}
	}
	return out
}
