// Package mount is the runner every transport shares: HTTP
// (pkg/mount/http), MCP, Agent, CLI and in-process calls all execute
// operations through one pipeline, so a call is authorized, validated,
// handled and answered the same way whichever door it came in by.
//
// Start with an [Implementation] of a compiled graph, bind handlers, and
// build a [Runner]:
//
//	g, _ := graph.Load(graphJSON)
//	impl := mount.NewImplementation(g)
//	impl.Handle("tasks", "get", func(ctx context.Context, c *mount.Call) (json.RawMessage, error) {
//		id := c.Params["id"].(string)
//		...
//		return json.Marshal(task)
//	})
//	runner, err := mount.New(impl, &mount.Options{Hooks: mount.Hooks{Authorize: auth}})
//	http.Handle("/api/", httpmount.New(runner, &httpmount.Options{Prefix: "/api"}))
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
// [New] compiles every schema once (or reuses Options.Validators) and
// derives each endpoint's wire fields, argument split and answerable codes;
// requests only look them up. A call allocates its [Call] and the decoded
// values; parallel calls share nothing mutable.
package mount
