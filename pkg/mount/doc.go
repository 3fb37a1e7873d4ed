// Package mount is the runner every transport shares: HTTP
// (pkg/mount/http), MCP, Agent, CLI and in-process calls all execute
// operations through one pipeline, so a call is authorized, validated,
// handled and answered the same way whichever door it came in by.
//
// Start with a graph (check.Compile, the one compile, or graph.Load), its
// one [project.Projection] (the HTTP prefix is stated there, once), an
// [Implementation] with handlers bound, and build a [Runner]:
//
//	g, _ := graph.Load(graphJSON)
//	p, err := project.New(g, &project.Options{HTTPPrefix: "/api"})
//	impl := mount.NewImplementation(g)
//	impl.Handle("tasks", "get", func(ctx context.Context, c *mount.Call) (json.RawMessage, error) {
//		id := c.Params["id"].(string)
//		...
//		return json.Marshal(task)
//	})
//	runner, err := mount.New(impl, &mount.Options{Projection: p, Hooks: mount.Hooks{Authorize: auth}})
//	h, err := httpmount.New(runner, nil) // the projection's routes, under /api
//	http.Handle("/api/", h)
//
// Every mount built on the runner (HTTP, MCP, Agent, CLI) and the
// realtime contracts read [Runner.Projection]; the surface manifest and the
// exports take the same value, so they describe exactly what is served.
//
// # The edge
//
// Options.Authenticate is the one authentication hook of every transport
// that arrives over HTTP (the HTTP mount, MCP, a realtime server given
// realtime.Options.Edge): it turns a request's headers ([EdgeRequest]),
// before any body byte is read, into a [Principal] with scopes, which
// hooks and handlers read as [Call.Principal]. Transports call
// [Runner.Authenticate]; docs/projection.md shows the shape.
//
// # For transport authors
//
// A transport looks its endpoints up once ([Runner.Endpoint],
// [Runner.Endpoints]) and, per call, either hands the runner the parts of
// the call ([Endpoint.Call] with a [Request]: wire strings for params and
// query, a lazy Body read only after authorization) or the flat tool
// arguments ([Endpoint.CallTool]). It gets back a [Result] — validated
// output bytes or a normalised *[Error] — and writes it in its own
// envelope ([Error.HTTPEnvelope], [Error.ToolEnvelope]). Errors a
// transport raises itself (no route, body too large) go through
// [Runner.Normalize], so every answer carries a registry code.
//
// # For typed bindings
//
// A [Handler] takes a *[Call] and returns JSON. A generated binding wraps a
// typed method in a closure — decode what it needs ([Call.DecodeInput]
// reuses the request bytes when defaults changed nothing; params and
// query are small maps of scalars to read directly), call the method,
// json.Marshal the result — so the only reflection is encoding/json's own.
//
// # Costs
//
// [New] takes every endpoint's validators, wire fields, argument split and
// answerable codes from the projection, which computed them once;
// requests only look them up. A call allocates its [Call] and the decoded
// values; parallel calls share nothing mutable.
package mount
