// Package mcp is the MCP mount: a contract's prepared MCP surfaces served
// with the official MCP Go SDK (github.com/modelcontextprotocol/go-sdk)
// over streamable HTTP and stdio, every tool call running through the
// shared runner (pkg/mount).
//
// Start with [New] on a runner and mount the [Handler]:
//
//	p, _ := project.New(g, &project.Options{HTTPPrefix: "/api"}) // g from check.Compile or graph.Load
//	runner, _ := mount.New(impl, &mount.Options{Projection: p})
//	h, _ := mcp.New(runner, nil) // the projection's MCP surfaces
//	http.Handle("/mcp", h)  // the default surface
//	http.Handle("/mcp/", h) // /mcp/{surface}: each named surface
//	// or, for a host that starts the server as a child process:
//	h.ServeStdio(ctx, "member")
//
// What it guarantees:
//
//   - One *mcp.Server per prepared surface (the default one, or each named
//     one), built once in New from the projector's surfaces: tools/list and
//     tools/call of a request see the same finite tool set, and a request
//     never re-derives a schema. A tool outside the selected surface can be
//     neither listed nor called.
//   - Tools are advertised with the projector's schemas, byte for byte.
//     Their input is an object schema by construction (the SDK's AddTool
//     panics otherwise: New checks every schema first and never lets a
//     panic cross).
//   - Arguments are validated by the runner against the contract's own
//     schemas, so invalid arguments come back as an isError result whose
//     text is the tool error envelope — {"error":"VALIDATION_ERROR",
//     "details":{"issues":[…]}} — and a model can correct its call. Success
//     is structuredContent plus the same JSON as text; a tool without an
//     output answers an empty content list. MCP allows outputSchema and
//     structuredContent only as objects: a tool whose output is not an
//     object schema (a list, a string, a nullable value) is advertised
//     without outputSchema and answers with the text alone.
//   - Every tools/list and tools/call result carries
//     _meta["stitchkit/catalog"] = {"digest", "tools"} ([CatalogMetaKey]),
//     a fresh map per result, so a stateless client can tell a stale list.
//   - Before the SDK is touched or any body byte is read: an unknown
//     surface is 404 NOT_FOUND; a browser's cross-origin request 403
//     (http.CrossOriginProtection); a non-loopback Host on a loopback
//     listener 403 (the SDK's DNS-rebinding protection stays on as well); a
//     declared body over the cap 413; the runner's authenticator
//     (mount.Options.Authenticate) refuses with 401
//     (WWW-Authenticate) or 403 — each with the HTTP error envelope. Then,
//     by the SDK's own rules, what its transport would refuse in plain
//     text: a method it does not serve 405 (with Allow), a Content-Type
//     that is not JSON 415, an Accept taking neither JSON nor a stream
//     400, a chunked body over the cap 413.
//   - Stateless streamable HTTP by default, stateful sessions
//     (Options.Stateful, each bound to the caller that opened it) and stdio
//     ([Handler.ServeStdio], [Handler.Run]) all come from the one builder,
//     so they cannot drift.
//
// # Native tools
//
// A tool that must answer with MCP content blocks (images, audio,
// resources) is registered in Go through Options.Native:
// [Registrar.RegisterTool] is the protected path — the tool owns its MCP
// schema and one operation identity and runs through the runner's pipeline
// and hooks like a contract tool; its result stays an MCP result; a
// declared output schema judges only structuredContent. [Registrar.RawServer]
// is the escape hatch: the SDK server itself, with none of those
// guarantees. Native tools appear in the catalog stamp and, through
// [Handler.NativeTools], in the surface manifest.
//
// The boundary is the SDK's: it refuses a malformed JSON-RPC envelope (a
// tool name that is not a string, params that are not an object, JSON
// nested deeper than it accepts) before any handler runs, as a JSON-RPC
// error that no hook observes. It never judges the arguments — that is
// the runner's job, and every verdict on them is an isError result.
package mcp
