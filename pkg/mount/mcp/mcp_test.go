package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"stitchkit.dev/stitchkit/internal/mounttest"
	"stitchkit.dev/stitchkit/pkg/conformance"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
)

// Each named surface lists exactly what the manifest says it does, through
// the official SDK client over loopback HTTP, at the newest protocol and an
// older one; every result carries the same catalog stamp.
func TestNamedSurfacesMatchManifest(t *testing.T) {
	g := tasks(t)
	h, err := New(exampleRunner(t, g, nil, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, h)
	m, err := conformance.BuildManifest(projecttest.New(t, g, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Surfaces(); !slices.Equal(got, []string{"admin", "member"}) {
		t.Fatalf("surfaces %v", got)
	}
	for _, version := range []string{"", "2025-06-18"} {
		var observed []conformance.ObservedSurface
		for _, name := range h.Surfaces() {
			cs := connect(t, srv.URL+"/mcp/"+name, &sdk.ClientSessionOptions{ProtocolVersion: version})
			names, res := listNames(t, cs)
			observed = append(observed, conformance.ObservedSurface{Transport: "MCP", Surface: name, Names: names})
			want, _ := h.Catalog(name)
			checkStamp(t, res.Meta, want)
			for _, tool := range res.Tools {
				if tool.InputSchema.(map[string]any)["type"] != "object" {
					t.Errorf("%s: input schema type %v", tool.Name, tool.InputSchema)
				}
			}
		}
		if err := conformance.AssertDiscovery(m, conformance.Observed{ToolSurfaces: observed}); err != nil {
			t.Fatalf("protocol %q: %v", version, err)
		}
	}
}

func checkStamp(t *testing.T, meta sdk.Meta, want Catalog) {
	t.Helper()
	c, ok := meta[CatalogMetaKey].(map[string]any)
	if !ok {
		t.Fatalf("no %s in _meta: %v", CatalogMetaKey, meta)
	}
	if c["digest"] != string(want.Digest) || c["tools"] != float64(want.Tools) {
		t.Fatalf("stamp %v, want %+v", c, want)
	}
}

// A tool outside the selected surface can be neither listed nor called.
func TestToolOutsideSurface(t *testing.T) {
	h := newHandler(t, nil)
	srv := serve(t, h)
	member := connect(t, srv.URL+"/mcp/member", nil)
	names, _ := listNames(t, member)
	if slices.Contains(names, "update_task") {
		t.Fatal("update_task is listed on member")
	}
	_, err := member.CallTool(context.Background(), &sdk.CallToolParams{Name: "update_task", Arguments: map[string]any{"id": "t_1", "title": "x", "done": true}})
	if err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Fatalf("calling update_task on member: %v", err)
	}
	// The same tool is on admin.
	admin := connect(t, srv.URL+"/mcp/admin", nil)
	if names, _ := listNames(t, admin); !slices.Contains(names, "update_task") {
		t.Fatalf("admin lacks update_task: %v", names)
	}
}

// An unknown surface, a path below a surface and the bare prefix of a
// graph with only named surfaces are refused with our 404 envelope; no SDK
// handler answers (the SDK would say "no server available" or speak
// JSON-RPC).
func TestUnknownSurface(t *testing.T) {
	h := newHandler(t, nil)
	srv := serve(t, h)
	for _, path := range []string{"/mcp/nope", "/mcp", "/mcp/member/x", "/mcp/"} {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
		req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var env struct {
			Error struct{ Code, Message string }
		}
		if resp.StatusCode != 404 || json.Unmarshal(b, &env) != nil || env.Error.Code != "NOT_FOUND" {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
		}
		if !strings.Contains(env.Error.Message, "/mcp/admin, /mcp/member") {
			t.Errorf("%s: message does not list the surfaces: %s", path, env.Error.Message)
		}
	}
}

// failingBody fails the test when anything reads it.
type failingBody struct{ t *testing.T }

func (b failingBody) Read([]byte) (int, error) {
	b.t.Error("the request body was read")
	return 0, io.EOF
}
func (failingBody) Close() error { return nil }

// The runner's edge authenticator runs before the SDK and before any body
// byte: a refusal is 401 with WWW-Authenticate and the envelope; the
// principal it resolves is the tool call's.
func TestAuthenticateBeforeBody(t *testing.T) {
	var seen []any
	var mu sync.Mutex
	c := func(ctx context.Context, call *mount.Call) (json.RawMessage, error) {
		mu.Lock()
		seen = append(seen, call.Principal.Subject)
		mu.Unlock()
		return json.RawMessage(`{"open":1,"done":2}`), nil
	}
	ropts := &mount.Options{Logger: slog.New(slog.DiscardHandler),
		Challenge: `Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"`,
		Authenticate: func(_ context.Context, r *mount.EdgeRequest) (*mount.Principal, error) {
			if r.Source != mount.SourceMCP {
				return nil, fmt.Errorf("source %s", r.Source)
			}
			switch r.Header.Get("Authorization") {
			case "Bearer alice":
				return &mount.Principal{Subject: "alice"}, nil
			case "Bearer mallory":
				return nil, mount.Forbidden("not on this server")
			}
			return nil, errors.New("no token")
		},
	}
	h, err := New(exampleRunner(t, tasks(t), ropts, map[string]mount.Handler{"tasks.stats": c}), nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{header: http.Header{}}
	req, _ := http.NewRequest("POST", "/mcp/member", failingBody{t})
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, req)
	if rec.status != 401 || rec.header.Get("WWW-Authenticate") == "" || !strings.Contains(rec.body.String(), `"code":"UNAUTHORIZED"`) {
		t.Fatalf("no token: %d %v %s", rec.status, rec.header, rec.body.String())
	}
	rec = &recorder{header: http.Header{}}
	req.Header.Set("Authorization", "Bearer mallory")
	h.ServeHTTP(rec, req)
	if rec.status != 403 || rec.header.Get("WWW-Authenticate") != "" || !strings.Contains(rec.body.String(), `"code":"FORBIDDEN"`) {
		t.Fatalf("mallory: %d %v %s", rec.status, rec.header, rec.body.String())
	}

	srv := serve(t, h)
	client := &http.Client{Transport: bearer("alice")}
	cl := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := cl.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp/member", HTTPClient: client, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "task_stats", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	if len(seen) != 1 || seen[0] != "alice" {
		t.Fatalf("identity seen by the tool: %v", seen)
	}
}

type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

type recorder struct {
	header http.Header
	status int
	body   strings.Builder
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(s int)   { r.status = s }
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = 200
	}
	return r.body.Write(b)
}

// A browser's cross-origin POST, a rebinding Host and a declared oversized
// body are refused before the SDK, each with the envelope.
func TestRefusedBeforeSDK(t *testing.T) {
	h := newHandler(t, &Options{MaxBodyBytes: 64})
	srv := serve(t, h)
	post := func(mod func(*http.Request), body string) (int, string) {
		req, _ := http.NewRequest("POST", srv.URL+"/mcp/member", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		mod(req)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	list := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	if st, b := post(func(r *http.Request) {
		r.Header.Set("Sec-Fetch-Site", "cross-site")
		r.Header.Set("Origin", "https://evil.example")
	}, list); st != 403 || !strings.Contains(b, "FORBIDDEN") {
		t.Errorf("cross-origin: %d %s", st, b)
	}
	if st, b := post(func(r *http.Request) { r.Host = "evil.example" }, list); st != 403 || !strings.Contains(b, "FORBIDDEN") {
		t.Errorf("rebinding host: %d %s", st, b)
	}
	if st, b := post(func(*http.Request) {}, list+strings.Repeat(" ", 100)); st != 413 || !strings.Contains(b, "PAYLOAD_TOO_LARGE") {
		t.Errorf("oversized: %d %s", st, b)
	}
	// The transport refusals the SDK would answer in plain text are the
	// envelope with the registry code: a chunked body over the cap, a
	// method the stateless transport does not take, a Content-Type that
	// is not JSON, an Accept taking neither JSON nor a stream.
	envelope := func(what string, st int, b string, status int, code string) {
		t.Helper()
		var env struct {
			Error struct{ Code, Message string }
		}
		if st != status || json.Unmarshal([]byte(b), &env) != nil || env.Error.Code != code || env.Error.Message == "" {
			t.Errorf("%s: %d %s, want %d with the %s envelope", what, st, b, status, code)
		}
	}
	st, b := post(func(r *http.Request) { r.ContentLength = -1 }, list+strings.Repeat(" ", 100))
	envelope("chunked oversized", st, b, 413, "PAYLOAD_TOO_LARGE")
	for _, m := range []string{"GET", "PUT", "PATCH"} {
		var allow string
		st, b := post(func(r *http.Request) { r.Method = m }, list)
		envelope(m, st, b, 405, "METHOD_NOT_ALLOWED")
		req, _ := http.NewRequest(m, srv.URL+"/mcp/member", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			allow = resp.Header.Get("Allow")
			resp.Body.Close()
		}
		if allow != "POST" {
			t.Errorf("%s: Allow %q", m, allow)
		}
	}
	st, b = post(func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") }, list)
	envelope("text/plain", st, b, 415, "UNSUPPORTED_MEDIA_TYPE")
	st, b = post(func(r *http.Request) { r.Header.Del("Content-Type") }, list)
	envelope("no Content-Type", st, b, 415, "UNSUPPORTED_MEDIA_TYPE")
	st, b = post(func(r *http.Request) { r.Header.Set("Accept", "text/html") }, list)
	envelope("Accept text/html", st, b, 400, "BAD_REQUEST")
	// What the SDK accepts still reaches it: a chunked body within the
	// cap, JSON with a charset, Accept */*.
	st, b = post(func(r *http.Request) {
		r.ContentLength = -1
		r.Header.Set("Content-Type", "application/json; charset=utf-8")
		r.Header.Set("Accept", "*/*")
	}, list)
	if st != 200 || !strings.Contains(b, `"result":{}`) {
		t.Errorf("chunked ping: %d %s", st, b)
	}
}

// Concurrent calls and lists each get their own _meta map (run with -race).
func TestStampIsFreshPerResult(t *testing.T) {
	h := newHandler(t, nil)
	srv := serve(t, h)
	cs := connect(t, srv.URL+"/mcp/member", nil)
	want, _ := h.Catalog("member")
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "get_task", Arguments: map[string]any{"id": "t_1"}})
			if err != nil {
				t.Error(err)
				return
			}
			res.Meta["mutated"] = true
			checkStamp(t, res.Meta, want)
		}()
	}
	wg.Wait()
}

// Success is structuredContent plus the same JSON as text; a tool without
// an output answers an empty content list; a failure is isError with the
// tool envelope, invalid arguments carrying the validator's issues.
func TestResultShapes(t *testing.T) {
	deleted := 0
	r := exampleRunner(t, tasks(t), nil, map[string]mount.Handler{"tasks.delete": func(context.Context, *mount.Call) (json.RawMessage, error) {
		deleted++
		return nil, nil
	}})
	h, err := New(r, &Options{ErrorHint: func(tool, code string) string { return "check " + tool + " (" + code + ")" }})
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, h)
	cs := connect(t, srv.URL+"/mcp/admin", nil)
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "get_task", Arguments: map[string]any{"id": "t_1"}})
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	sc, _ := json.Marshal(res.StructuredContent)
	if text := textOf(t, res); text != string(sc) || !strings.Contains(text, `"id":"t_1"`) {
		t.Fatalf("text %s, structured %s", text, sc)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "delete_task", Arguments: map[string]any{"id": "t_1"}})
	if err != nil || res.IsError || len(res.Content) != 0 || res.StructuredContent != nil || deleted != 1 {
		t.Fatalf("void: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "update_task", Arguments: map[string]any{"id": "t_1", "title": "x", "done": true}})
	if err != nil || !res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	if text := textOf(t, res); text != `{"error":"NOT_IMPLEMENTED","details":{"message":"tasks.update is not implemented"},"_hint":"check update_task (NOT_IMPLEMENTED)"}` {
		t.Fatalf("envelope %s", text)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "update_task", Arguments: map[string]any{"id": "nope", "done": "yes"}})
	if err != nil || !res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	var env struct {
		Error   string
		Details struct{ Issues []mount.Issue }
	}
	if err := json.Unmarshal([]byte(textOf(t, res)), &env); err != nil || env.Error != "VALIDATION_ERROR" || len(env.Details.Issues) == 0 || env.Details.Issues[0].In != "params" {
		t.Fatalf("invalid arguments: %s", textOf(t, res))
	}
	checkStamp(t, res.Meta, must(h.Catalog("admin")))
}

func must[T any](v T, ok bool) T {
	if !ok {
		panic("missing")
	}
	return v
}

// Stateful sessions come from the same builder: the session keeps its id,
// the tools see the identity of the request that opened it, and every
// request still passes the authenticator; the session's owner is the
// principal's subject unless SessionOwner says otherwise.
func TestStateful(t *testing.T) {
	var seen []any
	var mu sync.Mutex
	c := func(ctx context.Context, _ *mount.Call) (json.RawMessage, error) {
		mu.Lock()
		seen = append(seen, mount.PrincipalFrom(ctx).Subject)
		mu.Unlock()
		return json.RawMessage(`{"open":1,"done":2}`), nil
	}
	var authCalls int
	ropts := &mount.Options{Logger: slog.New(slog.DiscardHandler), Authenticate: func(_ context.Context, r *mount.EdgeRequest) (*mount.Principal, error) {
		mu.Lock()
		authCalls++
		mu.Unlock()
		user, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			return nil, errors.New("no")
		}
		return &mount.Principal{Subject: user}, nil
	}}
	h, err := New(exampleRunner(t, tasks(t), ropts, map[string]mount.Handler{"tasks.stats": c}), &Options{Stateful: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, h)
	cl := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := cl.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp/member",
		HTTPClient: &http.Client{Transport: bearer("alice")}, DisableStandaloneSSE: true}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	if cs.ID() == "" {
		t.Fatal("no session id")
	}
	for i := 0; i < 2; i++ {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "task_stats", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("%v %+v", err, res)
		}
	}
	// Bob, authenticated, replaying Alice's session id is refused before
	// the SDK.
	req, _ := http.NewRequest("POST", srv.URL+"/mcp/member", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"task_stats","arguments":{}}}`))
	req.Header.Set("Authorization", "Bearer bob")
	req.Header.Set(sessionHeader, cs.ID())
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || !strings.Contains(string(b), "another caller") {
		t.Fatalf("replayed session: %d %s", resp.StatusCode, b)
	}
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(h.owners.m); n != 0 {
		t.Fatalf("%d session owners left after the session was deleted", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0] != "alice" || seen[1] != "alice" {
		t.Fatalf("identities %v", seen)
	}
	if authCalls < 4 { // initialize, initialized, two calls (and the closing DELETE)
		t.Fatalf("Authenticate ran %d times", authCalls)
	}
}

// rawCall posts one JSON-RPC request (stateless, no initialize) and
// returns the status and body.
func rawCall(t *testing.T, url, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The real boundary of the SDK (ADR 0048): it refuses a malformed
// envelope before any handler as a JSON-RPC error, but never judges the
// arguments — those always reach the runner, whose verdict is an isError
// result with a registry code.
func TestSDKBoundary(t *testing.T) {
	srv := serve(t, newHandler(t, nil))
	url := srv.URL + "/mcp/member"
	_, b := rawCall(t, url, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7,"arguments":{}}}`)
	if !strings.Contains(b, `"code":-32602`) || strings.Contains(b, "isError") {
		t.Errorf("malformed envelope: %s", b)
	}
	for _, args := range []string{`"a string"`, `[1,2]`, `{"id":5}`, `{"id":"t_1","extra":true}`} {
		_, b := rawCall(t, url, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_task","arguments":`+args+`}}`)
		if !strings.Contains(b, `"isError":true`) || !strings.Contains(b, `VALIDATION_ERROR`) {
			t.Errorf("arguments %s: %s", args, b)
		}
	}
	_, b = rawCall(t, url, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_task","arguments":{"id":"t_1"}}}`)
	if !strings.Contains(b, `"structuredContent":{"done":false,"id":"t_1"`) && !strings.Contains(b, `"structuredContent":{"id":"t_1"`) {
		t.Errorf("valid call: %s", b)
	}
}

// SelectSurface picks the surface from the caller; one it returns that
// the graph does not declare is a server fault, answered before any SDK
// server is touched (upstream test 53).
func TestSelectSurface(t *testing.T) {
	h := newHandler(t, &Options{Prefix: "/rpc", SelectSurface: func(r *http.Request) (string, error) {
		switch r.Header.Get("X-Role") {
		case "admin":
			return "admin", nil
		case "member":
			return "member", nil
		case "":
			return "", mount.Forbidden("no role")
		}
		return "owner", nil
	}})
	mux := http.NewServeMux()
	mux.Handle("/rpc", h)
	mux.Handle("/rpc/", h)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	list := func(role string) (int, string) {
		req, _ := http.NewRequest("POST", srv.URL+"/rpc", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		if role != "" {
			req.Header.Set("X-Role", role)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if st, b := list("admin"); st != 200 || !strings.Contains(b, `"update_task"`) {
		t.Errorf("admin: %d %s", st, b)
	}
	if st, b := list("member"); st != 200 || strings.Contains(b, `"update_task"`) {
		t.Errorf("member: %d %s", st, b)
	}
	if st, b := list(""); st != 403 || !strings.Contains(b, `"code":"FORBIDDEN"`) {
		t.Errorf("no role: %d %s", st, b)
	}
	if st, b := list("owner"); st != 500 || !strings.Contains(b, `"code":"INTERNAL_SERVER_ERROR"`) || strings.Contains(b, "owner") {
		t.Errorf("undeclared surface: %d %s", st, b)
	}
}

// The catalog digest changes with what a client is shown (a description)
// and not with the order a schema's properties were written in (upstream
// test 54).
func TestCatalogDigest(t *testing.T) {
	base := tasks(t)
	digest := func(g *graph.Graph, native NativeTool) graph.Digest {
		h, err := New(exampleRunner(t, g, nil, nil), &Options{Native: func(r *Registrar) error { return r.RegisterTool(native) }})
		if err != nil {
			t.Fatal(err)
		}
		c, _ := h.Catalog("member")
		return c.Digest
	}
	n := thumbnail(new([]*NativeCall))
	d0 := digest(base, n)
	if d := digest(base, n); d != d0 {
		t.Fatalf("unstable: %s %s", d0, d)
	}
	reordered := n
	reordered.InputSchema = json.RawMessage(`{"additionalProperties":false,"required":["size"],"properties":{"size":{"minimum":16,"type":"integer"}},"type":"object"}`)
	if d := digest(base, reordered); d != d0 {
		t.Errorf("reordering the schema changed the digest: %s → %s", d0, d)
	}
	described := n
	described.Description = "Render a thumbnail of the board"
	if d := digest(base, described); d == d0 {
		t.Error("a new description kept the digest")
	}
	g := *base
	g.Services = slices.Clone(base.Services)
	for i := range g.Services {
		g.Services[i].Operations = slices.Clone(g.Services[i].Operations)
		for j := range g.Services[i].Operations {
			if op := &g.Services[i].Operations[j]; op.ID() == "tasks.get" {
				op.Desc = "Read one task"
			}
		}
	}
	if d := digest(&g, n); d == d0 {
		t.Error("a contract description change kept the digest")
	}
}

// MCP allows an outputSchema only with "type": "object" and
// structuredContent only as an object: a tool whose #output is a list, a
// string or a nullable value is advertised without outputSchema and
// answers with the JSON as text only (the MCP Inspector otherwise leaves
// the tool out of tools/list, and a client SDK refuses the result).
func TestNonObjectOutput(t *testing.T) {
	g := mounttest.Unseen(t, "ledger")
	r := exampleRunner(t, g, nil, map[string]mount.Handler{
		"entries.list": func(context.Context, *mount.Call) (json.RawMessage, error) { return json.RawMessage(`[]`), nil },
		"entries.void-entry": func(context.Context, *mount.Call) (json.RawMessage, error) {
			return json.RawMessage(`"voided"`), nil
		},
	})
	h, err := New(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, h)
	cs := connect(t, srv.URL+"/mcp", nil)
	ctx := context.Background()
	_, list := listNames(t, cs)
	if len(list.Tools) != 7 {
		t.Fatalf("%d tools, want 7", len(list.Tools))
	}
	for _, tool := range list.Tools {
		object := map[string]bool{"export_entry": true, "get_entry": true, "post_entry": true}[tool.Name]
		if (tool.OutputSchema != nil) != object {
			t.Errorf("%s: outputSchema %v, want one: %v", tool.Name, tool.OutputSchema, object)
		}
	}
	for name, want := range map[string]string{"list_entries": `[]`, "void-entry_entry": `"voided"`, "balance_entry": `null`} {
		args := map[string]any{"id": "e_1"}
		switch name {
		case "list_entries":
			args = map[string]any{}
		case "balance_entry":
			args = map[string]any{"currency": "EUR"}
		}
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError || res.StructuredContent != nil {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
		if text := textOf(t, res); text != want {
			t.Errorf("%s: text %s, want %s", name, text, want)
		}
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "export_entry", Arguments: map[string]any{"path": "a/b.csv"}})
	if err != nil || res.IsError || res.StructuredContent == nil {
		t.Fatalf("export_entry: %v %+v", err, res)
	}
	// A native tool's output schema is held to the same rule.
	_, err = New(r, &Options{Native: func(reg *Registrar) error {
		return reg.RegisterTool(NativeTool{Name: "n", Identity: graph.Identity{Service: "x", Action: "y", Method: "GET"},
			InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"array"}`),
			Handler: func(context.Context, *NativeCall) (*sdk.CallToolResult, error) { return nil, nil }})
	}})
	if err == nil || !strings.Contains(err.Error(), `output schema must have "type": "object"`) {
		t.Errorf("native tool with an array output schema: %v", err)
	}
}
