// Package project is THE projector: the one place that turns a compiled
// [graph.Graph] into what each transport advertises — HTTP routes, the MCP,
// Agent and CLI tool surfaces with their prepared input schemas, the
// realtime topology, and per operation its error set, wire fields and
// validators.
//
// Start with [New]: it projects a graph once, with the presentation
// options (the HTTP prefix) stated once, into an immutable [Projection].
// Everything that serves or describes the graph reads that one value —
// the runner and every mount, realtime contracts, the surface manifest,
// the OpenAPI and AsyncAPI exports, the conformance drivers — so a
// manifest can never claim what a mount does not serve (DESIGN §1,
// invariants 1 and 7):
//
//	g, err := check.Compile(ctx, "./contracts") // or graph.Load(graphJSON)
//	p, err := project.New(g, &project.Options{HTTPPrefix: "/api"})
//	runner, err := mount.New(impl, &mount.Options{Projection: p})
//	h, err := httpmount.New(runner, nil)         // routes under /api
//	m, err := conformance.BuildManifest(p)       // records HTTPPrefix
//	doc, err := openapi.Generate(p, nil)         // the same routes
//
// The lower-level derivations ([RouteTable], [ToolSurfaces],
// [RealtimeTopology]) are what New calls, once each; only `stitch vet`
// (package check, which reports their problems on partial graphs) and
// review (which compares two graphs) call them directly. The package is
// peer-free: it imports no transport SDK.
package project

import (
	"cmp"
	"slices"
	"strings"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// HTTPOptions configures the HTTP projection.
type HTTPOptions struct {
	// Prefix is the mount prefix placed before every service prefix
	// (e.g. "/api"). Empty mounts at the root.
	Prefix string
}

// Route is one HTTP route of an operation.
type Route struct {
	// Method is the HTTP method.
	Method string
	// Path is the full route: mount prefix + service prefix + operation
	// path, in net/http pattern syntax ({name}, final {name...}).
	Path string
	// Local is Path without the mount prefix: the route as a client that
	// was given the prefix in a base URL writes it.
	Local string
	// Op is the operation served.
	Op *graph.Operation
}

// Pattern returns the net/http ServeMux pattern "METHOD PATH" of r.
func (r Route) Pattern() string { return r.Method + " " + r.Path }

// HTTPRoutes returns one route per operation exposed on HTTP, sorted by path
// then method (code-unit order).
func HTTPRoutes(g *graph.Graph, opts HTTPOptions) []Route {
	derived("routes")
	var routes []Route
	for si := range g.Services {
		s := &g.Services[si]
		for oi := range s.Operations {
			op := &s.Operations[oi]
			if !op.Exposed(graph.HTTP) {
				continue
			}
			routes = append(routes, Route{
				Method: op.Method,
				Path:   JoinPath(opts.Prefix, s.Prefix, op.Path),
				Local:  JoinPath(s.Prefix, op.Path),
				Op:     op,
			})
		}
	}
	slices.SortStableFunc(routes, func(a, b Route) int {
		return cmp.Or(graph.CompareUTF16(a.Path, b.Path), graph.CompareUTF16(a.Method, b.Method))
	})
	return routes
}

// JoinPath joins path parts with single slashes: each part is trimmed of
// leading and trailing slashes, empty parts are dropped, and the result has
// one leading slash ("/" when every part is empty). Routes therefore never
// end in "/" except the root itself.
func JoinPath(parts ...string) string {
	var segs []string
	for _, p := range parts {
		p = strings.Trim(p, "/")
		if p != "" {
			segs = append(segs, p)
		}
	}
	return "/" + strings.Join(segs, "/")
}
