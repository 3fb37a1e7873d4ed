package main

// The conformance kit applied to the example app: the worked example of
// docs/conformance.md. The test starts the app as a user would (the real
// runner and mounts behind one loopback httptest server), then
//
//   - pins the surface manifest (testdata/surface-manifest.json; refresh
//     with `go test -conformancetest.update` and review the diff);
//   - compares the manifest with what clients discover on the live mounts;
//   - runs parity probes: the same call, the same observation, on every
//     transport;
//   - runs the eight realtime probe scenarios against the app's WebSocket
//     server, with clients of the current contract, of the next and the
//     previous generation (testdata/generations), and a network the test
//     controls (faultyLink) for the transport's own timeout and an
//     in-flight disconnect.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"stitchkit.dev/stitchkit/examples/tasks/server"
	"stitchkit.dev/stitchkit/examples/tasks/tasksapi"
	"stitchkit.dev/stitchkit/pkg/conformance"
	"stitchkit.dev/stitchkit/pkg/conformance/agentdriver"
	"stitchkit.dev/stitchkit/pkg/conformance/clidriver"
	"stitchkit.dev/stitchkit/pkg/conformance/conformancetest"
	"stitchkit.dev/stitchkit/pkg/conformance/httpdriver"
	"stitchkit.dev/stitchkit/pkg/conformance/mcpdriver"
	"stitchkit.dev/stitchkit/pkg/export/openapi"
	"stitchkit.dev/stitchkit/pkg/mount"
	"stitchkit.dev/stitchkit/pkg/mount/agent"
	"stitchkit.dev/stitchkit/pkg/mount/cli"
	mcpmount "stitchkit.dev/stitchkit/pkg/mount/mcp"
)

// live is the running example and the clients the probes use.
type live struct {
	store *server.MemoryStore
	app   *server.App
	srv   *httptest.Server
	// tools is the agent toolset and cli the command tree, both over the
	// app's one runner, as an application would build them.
	tools *agent.Toolset
	cli   *cli.App
	// handled counts calls that reached a handler (BeforeHandle runs
	// after every validation, just before the handler).
	handled atomic.Int64
}

func (l *live) handlerCalls() int { return int(l.handled.Load()) }

// start runs the app behind a loopback server, with every mount the app
// has, and the OpenAPI document served as an application would serve it.
func start(t *testing.T) *live {
	t.Helper()
	l := &live{store: server.NewMemoryStore(nil)}
	app, err := server.New(l.store, &server.Options{Hooks: mount.Hooks{
		BeforeHandle: func(ctx context.Context, _ *mount.Call) (context.Context, error) {
			l.handled.Add(1)
			return ctx, nil
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi.Generate(projecttest.Prefixed(t, tasksapi.Graph(), server.APIPrefix), nil)
	if err != nil {
		t.Fatal(err)
	}
	app.Handle("GET /openapi.json", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(doc)
	}))
	// The MCP mount as the example's main.go mounts it: every named
	// surface under /mcp.
	mcp, err := mcpmount.New(app.Runner(), &mcpmount.Options{Prefix: "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	app.Handle("/mcp", mcp)
	app.Handle("/mcp/", mcp)
	if l.tools, err = agent.New(app.Runner(), nil); err != nil {
		t.Fatal(err)
	}
	if l.cli, err = cli.New(app.Runner().Projection(), &cli.Options{Runner: app.Runner()}); err != nil {
		t.Fatal(err)
	}
	l.app = app
	l.srv = httptest.NewServer(app.Handler())
	t.Cleanup(func() {
		l.srv.Close()
		// The HTTP server's Close leaves hijacked WebSockets to the app.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := app.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	return l
}

// session is an MCP client session of the official SDK on one named
// surface; the test owns it and closes it.
func (l *live) session(t *testing.T, surface string) *sdkmcp.ClientSession {
	t.Helper()
	client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "conformance", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdkmcp.StreamableClientTransport{
		Endpoint: l.srv.URL + "/mcp/" + surface, HTTPClient: l.srv.Client(), DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func (l *live) get(t *testing.T, path string) []byte {
	t.Helper()
	res, err := l.srv.Client().Get(l.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", path, res.StatusCode, err)
	}
	return b
}

func TestConformance(t *testing.T) {
	g := tasksapi.Graph()
	m, err := conformance.BuildManifest(projecttest.Prefixed(t, g, server.APIPrefix), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("manifest", func(t *testing.T) {
		conformancetest.AssertManifestSnapshot(t, m, filepath.Join("testdata", "surface-manifest.json"))
	})

	l := start(t)
	t.Run("discovery", func(t *testing.T) {
		doc := l.get(t, "/openapi.json")
		if err := conformance.AssertDiscovery(m, conformance.Observed{OpenAPI: doc}); err != nil {
			t.Fatal(err)
		}
		// The document is not taken on trust: every route it lists is
		// served by the live mount (a route the mount lacks answers the
		// framework's NOT_FOUND or METHOD_NOT_ALLOWED), and a path it does
		// not list is not.
		var parsed struct {
			Paths map[string]map[string]json.RawMessage `json:"paths"`
		}
		if err := json.Unmarshal(doc, &parsed); err != nil {
			t.Fatal(err)
		}
		routes := 0
		for path, item := range parsed.Paths {
			for _, method := range []string{"get", "post", "put", "patch", "delete", "head"} {
				if _, ok := item[method]; !ok {
					continue
				}
				routes++
				if code := l.routeAnswer(t, strings.ToUpper(method), path); code == "NOT_FOUND" || code == "METHOD_NOT_ALLOWED" {
					t.Errorf("%s %s is in the OpenAPI document but the mount answers %s", strings.ToUpper(method), path, code)
				}
			}
		}
		if routes < 10 {
			t.Errorf("only %d routes in the OpenAPI document", routes)
		}
		// Tools: what each MCP surface lists through the SDK client, the
		// agent toolset's names and the CLI's command tree.
		obs := conformance.Observed{AGENT: []string{}, CLI: []string{}, CliOnly: []string{}}
		for _, surface := range []string{"admin", "member"} {
			names, err := mcpdriver.ToolNames(context.Background(), l.session(t, surface))
			if err != nil {
				t.Fatal(err)
			}
			obs.ToolSurfaces = append(obs.ToolSurfaces, conformance.ObservedSurface{Transport: conformance.TransportMCP, Surface: surface, Names: names})
		}
		for _, tool := range l.tools.Tools() {
			obs.AGENT = append(obs.AGENT, tool.Name)
		}
		// The command tree holds the CLI surface's commands and the
		// CLI-only ones side by side; the graph says which are which.
		native := map[string]bool{}
		for _, c := range tasksapi.Graph().CliCommands {
			native[c.Name] = true
		}
		for _, c := range l.cli.Command().Commands() {
			if native[c.Name()] {
				obs.CliOnly = append(obs.CliOnly, c.Name())
			} else {
				obs.CLI = append(obs.CLI, c.Name())
			}
		}
		if err := conformance.AssertDiscovery(m, obs); err != nil {
			t.Error(err)
		}

		// Realtime: the topology the live board server shows.
		board := observeRealtime(t, l, boardContract(t, ""), boardContract(t, "previous"))
		if err := conformance.AssertDiscovery(m, conformance.Observed{Realtime: map[string]conformance.ObservedRealtime{"board": board}}); err != nil {
			t.Error(err)
		}
		for _, r := range [][2]string{{"GET", server.APIPrefix + "/tasks/{id}/missing"}, {"HEAD", server.APIPrefix + "/tasks/{id}/gone"}, {"PATCH", server.APIPrefix + "/tasks"}} {
			if code := l.routeAnswer(t, r[0], r[1]); code != "NOT_FOUND" && code != "METHOD_NOT_ALLOWED" {
				t.Errorf("%s %s is not in the OpenAPI document, yet the mount answers %q", r[0], r[1], code)
			}
		}
	})

	t.Run("realtime", func(t *testing.T) {
		// A fresh app: the scenarios create tasks and expect the first id.
		realtimeScenarios(t, start(t))
	})

	t.Run("parity", func(t *testing.T) {
		// A fresh app: the probes expect the first task id.
		l := start(t)
		drivers := l.drivers(t)
		conformancetest.RunProbes(t, l.parityProbes(t), drivers, nil)
	})
}

// routeAnswer sends method to path (wildcards filled with a placeholder)
// and returns the error code of the answer, "" for a success.
func (l *live) routeAnswer(t *testing.T, method, path string) string {
	t.Helper()
	for _, w := range []string{"{id}", "{path...}"} {
		path = strings.ReplaceAll(path, w, "t_probe")
	}
	req, err := http.NewRequest(method, l.srv.URL+path, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := l.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var env struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode < 300 {
		return ""
	}
	if method == "HEAD" {
		// A HEAD answer has no body to tell a missing route from a missing
		// task; a GET to the same path does: 405 with HEAD in Allow (or a
		// GET route, which answers HEAD too) means the route is served.
		get := l.routeAnswer(t, "GET", path)
		if get == "" || (get == "METHOD_NOT_ALLOWED" && strings.Contains(l.allow(t, path), "HEAD")) {
			return "HEAD " + res.Status
		}
		return get
	}
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
	}
	return env.Error.Code
}

// allow returns the Allow header of a GET to path.
func (l *live) allow(t *testing.T, path string) string {
	t.Helper()
	res, err := l.srv.Client().Get(l.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.Header.Get("Allow")
}

// drivers are the probe drivers over the live app's transports.
func (l *live) drivers(t *testing.T) conformance.Drivers {
	t.Helper()
	g := tasksapi.Graph()
	h, err := httpdriver.New(projecttest.Prefixed(t, g, server.APIPrefix), &httpdriver.Options{BaseURL: l.srv.URL, Client: l.srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	// MCP through the member surface, the one a signed-in user gets.
	m, err := mcpdriver.New(projecttest.New(t, g, nil), l.session(t, "member"), "member")
	if err != nil {
		t.Fatal(err)
	}
	a, err := agentdriver.New(projecttest.New(t, g, nil), l.tools)
	if err != nil {
		t.Fatal(err)
	}
	c, err := clidriver.New(projecttest.New(t, g, nil), clidriver.InProcess(l.cli))
	if err != nil {
		t.Fatal(err)
	}
	counted := func(d conformance.Driver) conformance.Driver { return conformance.WithHandlerCalls(d, l.handlerCalls) }
	return conformance.Drivers{
		conformance.TransportHTTP:  counted(h),
		conformance.TransportMCP:   counted(m),
		conformance.TransportAGENT: counted(a),
		conformance.TransportCLI:   counted(c),
	}
}

// parityProbes are one valid and one invalid call, and a domain error,
// each with one expectation for HTTP, MCP, AGENT and CLI; and the runtime
// tool, which has no HTTP route, on the three tool transports.
func (l *live) parityProbes(t *testing.T) []conformance.Probe {
	t.Helper()
	all := []conformance.Transport{conformance.TransportHTTP, conformance.TransportMCP, conformance.TransportAGENT, conformance.TransportCLI}
	tools := all[1:]
	every := func(o conformance.Observation, transports []conformance.Transport) map[conformance.Transport]conformance.Observation {
		out := map[conformance.Transport]conformance.Observation{}
		for _, tr := range transports {
			out[tr] = o
		}
		return out
	}
	obs := func(s string) conformance.Observation {
		t.Helper()
		var o conformance.Observation
		if err := json.Unmarshal([]byte(s), &o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	var seeded tasksapi.Task
	seed := func(ctx context.Context) error {
		var err error
		seeded, err = l.store.CreateTask(ctx, "Write docs", tasksapi.Tags{"docs"})
		return err
	}
	cleanup := func(ctx context.Context) error { return l.store.DeleteTask(ctx, seeded.ID) }
	found := obs(`{"outcome":"success","data":{"id":"t_1","title":"Write docs","done":false,"tags":["docs"]},"handlerCalls":1}`)
	return []conformance.Probe{{
		Name:       "get an existing task",
		Fixture:    conformance.Call{Operation: "tasks.get", Args: map[string]any{"id": "t_1"}},
		Transports: all,
		Expected:   every(found, all),
		Setup:      seed,
		Teardown:   cleanup,
	}, {
		Name:       "create without a title is refused before the handler",
		Fixture:    conformance.Call{Operation: "tasks.create", Args: map[string]any{"title": ""}},
		Transports: all,
		Expected: every(obs(`{"outcome":"validation_error","code":"VALIDATION_ERROR","handlerCalls":0,
			"data":{"issues":[{"in":"input","path":"/title","keyword":"minLength","message":"minLength: got 0, want 1"}]}}`), all),
	}, {
		Name:       "get a missing task",
		Fixture:    conformance.Call{Operation: "tasks.get", Args: map[string]any{"id": "t_404"}},
		Transports: all,
		Expected:   every(obs(`{"outcome":"domain_error","code":"TASK_NOT_FOUND","handlerCalls":1}`), all),
	}, {
		Name:       "the runtime tool counts tasks",
		Fixture:    conformance.Call{Operation: "tasks.stats", Args: map[string]any{}},
		Transports: tools,
		Expected:   every(obs(`{"outcome":"success","data":{"open":0,"done":0},"handlerCalls":1}`), tools),
	}}
}
