package bypass

import (
	"stitchkit.dev/stitchkit/pkg/graph"
	proj "stitchkit.dev/stitchkit/pkg/project"
)

// serve is a mount that derives what the projection already holds instead
// of reading its one Projection. Every marked line must be reported.
func serve(g *graph.Graph, op *graph.Operation) {
	_ = proj.HTTPRoutes(g, proj.HTTPOptions{Prefix: "/api"}) // want: HTTPRoutes
	_, _ = proj.RouteTable(g, proj.HTTPOptions{})            // want: RouteTable
	_, _ = proj.ToolSurfaces(g)                              // want: ToolSurfaces
	_, _ = proj.RealtimeTopology(g)                          // want: RealtimeTopology
	_, _ = proj.OperationErrors(g, op)                       // want: OperationErrors
	_, _ = proj.OperationSplitter(g, op)                     // want: OperationSplitter
	_, _ = proj.NewWireObject(g.Schema(op.Query))            // want: NewWireObject
	p, _ := proj.New(g, nil)
	_ = p.Routes()
}
