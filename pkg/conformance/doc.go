// Package conformance holds stitchkit's conformance kit: what a running
// system must advertise, and how it must behave, checked against the same
// contract the mounts serve.
//
// The declarative layer is the surface manifest v2 — every HTTP route,
// tool surface, realtime event, CLI-only command and extension a graph
// serves, with each schema as a digest — and the two checks built on it:
// a byte-exact snapshot comparison ([CompareManifest]) and a comparison
// with what a client actually discovered ([AssertDiscovery]). The
// manifest is built from the one project.Projection the mounts read (with
// its HTTP prefix, which it records), so it can never claim what a mount
// does not serve.
//
//	g, err := check.Compile(ctx, "./contracts") // the one compile; or graph.Load
//	p, err := project.New(g, &project.Options{HTTPPrefix: "/api"}) // or runner.Projection()
//	m, err := conformance.BuildManifest(p, nil)
//	diff, equal := conformance.CompareManifest(committed, m)
//	err = conformance.AssertDiscovery(m, conformance.Observed{OpenAPI: doc, MCP: names})
//
// The behavioural layer runs explicit probes: a fixture, the transports to
// invoke it on, and the exact [Observation] each must produce.
// [RunProbes] gives every probe one deadline covering setup, invocations
// and teardown, normalises what each [Driver] reports, and fails on the
// first difference, naming probe, transport, expected and actual.
//
//	probe := conformance.Probe{
//		Name:       "create needs a title",
//		Fixture:    conformance.Call{Operation: "tasks.create", Args: map[string]any{"title": ""}},
//		Transports: []conformance.Transport{conformance.TransportHTTP, conformance.TransportMCP},
//		Expected:   map[conformance.Transport]conformance.Observation{…},
//	}
//	err = conformance.RunProbes(ctx, []conformance.Probe{probe}, drivers, nil)
//
// Drivers wrap transports the caller owns — the kit opens no port, invents
// no credentials and claims no parity for a transport it was not given a
// driver for. Packages httpdriver, mcpdriver, agentdriver and clidriver
// drive the stitchkit mounts; [NewRealtimeDriver] drives a realtime
// binding through [DefineRealtimeProbe]'s eight scenarios.
//
// This package links neither testing nor go-cmp, so the stitch binary can
// use it. Its testing side — the snapshot assertion with `go test -conformancetest.update`
// and RunProbes as subtests — is package conformancetest, as
// net/http/httptest stands beside net/http.
package conformance
