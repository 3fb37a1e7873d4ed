package mount

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"stitchkit.dev/stitchkit/pkg/graph"
)

func addSchema(t testing.TB, g *graph.Graph, text string) graph.Digest {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("bad schema %s: %v", text, err)
	}
	d, err := g.AddSchema(v)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

const taskSchema = `{"type":"object","properties":{"id":{"type":"string","pattern":"^t_[a-z0-9]+$"},"title":{"type":"string","minLength":1},"done":{"type":"boolean"}},"required":["id","title","done"],"additionalProperties":false}`

// testGraph is a small contract: tasks.get (params, declared error),
// tasks.create (input with a default, output), tasks.list (query),
// tasks.purge (no input, no output), runtime tool server.status.
func testGraph(t testing.TB) *graph.Graph {
	t.Helper()
	g := &graph.Graph{GraphVersion: graph.GraphVersion, DigestVersion: graph.DigestVersion, Name: "tasks", Version: "1.0.0",
		Errors: []graph.ErrorCode{{Code: "TASK_NOT_FOUND", Status: 404, Message: "Task not found"}},
		Policy: graph.Policy{MCP: graph.MCPPolicy{SchemaValidation: graph.ValidationThrow}}}
	task := addSchema(t, g, taskSchema)
	idParams := addSchema(t, g, `{"type":"object","properties":{"id":{"type":"string","pattern":"^t_[a-z0-9]+$"}},"required":["id"],"additionalProperties":false}`)
	all := []graph.Transport{graph.HTTP, graph.MCP, graph.AGENT}
	g.Services = []graph.Service{{Name: "tasks", Prefix: "/tasks", Scope: "user", Operations: []graph.Operation{
		{Service: "tasks", Action: "bulk", Method: "POST", Path: "/bulk", Desc: "Bulk", Scope: "user", Expose: all,
			Input: addSchema(t, g, `{"type":"object","properties":{"ids":{"type":"array","items":{"type":"integer"}}},"additionalProperties":false}`)},
		{Service: "tasks", Action: "create", Method: "POST", Path: "/", Desc: "Create", Scope: "user", Expose: all,
			Input:  addSchema(t, g, `{"type":"object","properties":{"title":{"type":"string","minLength":1},"done":{"type":"boolean","default":false}},"required":["title"],"additionalProperties":false}`),
			Output: task},
		{Service: "tasks", Action: "get", Method: "GET", Path: "/{id}", Desc: "Get", Scope: "user", Expose: all,
			Params: idParams, Output: task, Errors: []string{"TASK_NOT_FOUND"}, Meta: json.RawMessage(`{"audited":true}`)},
		{Service: "tasks", Action: "list", Method: "GET", Path: "/", Desc: "List", Scope: "public", Expose: all,
			Query:  addSchema(t, g, `{"type":"object","properties":{"limit":{"type":"integer","minimum":1,"maximum":100,"default":10},"tag":{"type":"array","items":{"type":"string"}}},"additionalProperties":false}`),
			Output: addSchema(t, g, `{"type":"object","properties":{"limit":{"type":"integer"},"tag":{"type":"array"}},"required":["limit"]}`)},
		{Service: "tasks", Action: "purge", Method: "DELETE", Path: "/", Desc: "Purge", Scope: "admin", Expose: []graph.Transport{graph.HTTP}},
		{Service: "tasks", Action: "rename", Method: "PATCH", Path: "/{id}/title", Desc: "Rename", Scope: "user", Expose: all,
			Params: idParams, Input: addSchema(t, g, `{"type":"object","properties":{"title":{"type":"string","minLength":1}},"required":["title"],"additionalProperties":false}`), Output: task},
	}}}
	g.RuntimeTools = []graph.RuntimeTool{{Name: "server_status", Desc: "Status",
		Identity:   graph.Identity{Service: "server", Action: "status", Method: "GET"},
		Input:      addSchema(t, g, `{"type":"object","properties":{"verbose":{"type":"boolean"}},"additionalProperties":false}`),
		Output:     addSchema(t, g, `{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`),
		Transports: []graph.Transport{graph.MCP, graph.AGENT}}}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	return g
}

func bind(t testing.TB, im *Implementation, id string, h Handler) {
	t.Helper()
	s, a, _ := strings.Cut(id, ".")
	if err := im.Handle(s, a, h); err != nil {
		t.Fatal(err)
	}
}

func ok(body string) Handler {
	return func(context.Context, *Call) (json.RawMessage, error) { return json.RawMessage(body), nil }
}

func newRunner(t testing.TB, im *Implementation, opts *Options) *Runner {
	t.Helper()
	r, err := New(im, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestImplementationBinding(t *testing.T) {
	g := testGraph(t)
	im := NewImplementation(g)
	if err := im.Handle("tasks", "nope", ok(`{}`)); err == nil {
		t.Error("binding an unknown identity must fail")
	}
	if err := im.Handle("tasks", "get", nil); err == nil {
		t.Error("binding a nil handler must fail")
	}
	bind(t, im, "tasks.get", ok(`{}`))
	if err := im.Handle("tasks", "get", ok(`{}`)); err == nil {
		t.Error("binding twice must fail")
	}
	bind(t, im, "server.status", ok(`{"ok":true}`)) // a runtime tool by identity
	var un []string
	for _, id := range im.Unbound() {
		un = append(un, string(id.Kind)+":"+id.ID())
	}
	if got, want := strings.Join(un, " "), "contract:tasks.bulk contract:tasks.create contract:tasks.list contract:tasks.purge contract:tasks.rename"; got != want {
		t.Errorf("unbound %q, want %q", got, want)
	}
	if _, err := New(im, &Options{RequireAll: true}); err == nil || !strings.Contains(err.Error(), "tasks.create") {
		t.Errorf("RequireAll: %v", err)
	}
	r := newRunner(t, im, nil)
	res := r.Endpoint("tasks", "purge").Call(context.Background(), &Request{Source: SourceInternal})
	if res.Err == nil || res.Err.Code != "NOT_IMPLEMENTED" || res.Err.Status != 501 {
		t.Errorf("unbound call: %+v", res.Err)
	}
}

// TestPipelineOrder: identity and source reach every hook; authorize sees
// params but no input, and the body is read only after it.
func TestPipelineOrder(t *testing.T) {
	g := testGraph(t)
	im := NewImplementation(g)
	var trace []string
	type principal struct{}
	bind(t, im, "tasks.rename", func(ctx context.Context, c *Call) (json.RawMessage, error) {
		trace = append(trace, fmt.Sprintf("handler principal=%v", ctx.Value(principal{})))
		var in struct{ Title string }
		if err := c.DecodeInput(&in); err != nil {
			return nil, err
		}
		return json.Marshal(map[string]any{"id": c.Params["id"], "title": in.Title, "done": false})
	})
	r := newRunner(t, im, &Options{Hooks: Hooks{
		Authorize: func(ctx context.Context, c *Call) (context.Context, error) {
			trace = append(trace, fmt.Sprintf("authorize %s %s %s %s scope=%s params=%v input=%v meta=%s",
				c.Source, c.Identity.Kind, c.Identity.ID(), c.Identity.Method, c.Identity.Scope, c.Params, c.Input, c.Identity.Meta))
			return context.WithValue(ctx, principal{}, "ada"), nil
		},
		BeforeHandle: func(ctx context.Context, c *Call) (context.Context, error) {
			trace = append(trace, fmt.Sprintf("before input=%v principal=%v", c.Input, ctx.Value(principal{})))
			return nil, nil
		},
		AfterHandle: func(ctx context.Context, c *Call, out []byte) ([]byte, error) {
			trace = append(trace, "after")
			return out, nil
		},
		AfterCall: func(ctx context.Context, c *Call, res Result, cause error) {
			trace = append(trace, fmt.Sprintf("done %s err=%v", res.Output, res.Err))
		},
	}})
	res := r.Endpoint("tasks", "rename").Call(context.Background(), &Request{
		Source: SourceHTTP,
		Params: Fields{Wire: map[string][]string{"id": {"t_1"}}},
		Body: func() ([]byte, error) {
			trace = append(trace, "body read")
			return []byte(`{"title":"New"}`), nil
		},
	})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	want := []string{
		"authorize http contract tasks.rename PATCH scope=user params=map[id:t_1] input=<nil> meta=",
		"body read",
		"before input=map[title:New] principal=ada",
		"handler principal=ada",
		"after",
		`done {"done":false,"id":"t_1","title":"New"} err=<nil>`,
	}
	if strings.Join(trace, "\n") != strings.Join(want, "\n") {
		t.Errorf("trace:\n%s\nwant:\n%s", strings.Join(trace, "\n"), strings.Join(want, "\n"))
	}
}

func TestAuthorizeRefusalReadsNothing(t *testing.T) {
	g := testGraph(t)
	im := NewImplementation(g)
	bind(t, im, "tasks.rename", func(context.Context, *Call) (json.RawMessage, error) {
		t.Fatal("handler ran after a refused authorize")
		return nil, nil
	})
	calls := 0
	r := newRunner(t, im, &Options{Hooks: Hooks{Authorize: func(ctx context.Context, c *Call) (context.Context, error) {
		calls++
		return nil, Unauthorized("no token")
	}}})
	ep := r.Endpoint("tasks", "rename")
	res := ep.Call(context.Background(), &Request{Params: Fields{Wire: map[string][]string{"id": {"t_1"}}},
		Body: func() ([]byte, error) { t.Fatal("body read after a refused authorize"); return nil, nil }})
	if res.Err == nil || res.Err.Code != "UNAUTHORIZED" || res.Err.Status != 401 || res.Err.Message != "no token" {
		t.Fatalf("got %+v", res.Err)
	}
	// Invalid params never reach authorize.
	res = ep.Call(context.Background(), &Request{Params: Fields{Wire: map[string][]string{"id": {"BAD"}}},
		Body: func() ([]byte, error) { t.Fatal("body read for invalid params"); return nil, nil }})
	if res.Err == nil || res.Err.Code != "VALIDATION_ERROR" || calls != 1 {
		t.Fatalf("got %+v after %d authorize calls", res.Err, calls)
	}
	is := res.Err.Details["issues"].([]Issue)
	if len(is) != 1 || is[0].In != "params" || is[0].Path != "/id" || is[0].Keyword != "pattern" {
		t.Errorf("issues %+v", is)
	}
}

func TestErrorNormalisation(t *testing.T) {
	g := testGraph(t)
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	for _, tc := range []struct {
		name     string
		id       string
		h        Handler
		code     string
		status   int
		message  string
		logged   string
		hookErr  error
		noDetail bool
	}{
		{name: "declared code", id: "tasks.get", h: func(context.Context, *Call) (json.RawMessage, error) {
			return nil, NewError("TASK_NOT_FOUND", "")
		}, code: "TASK_NOT_FOUND", status: 404, message: "Task not found"},
		{name: "wrapped declared code keeps its message", id: "tasks.get", h: func(context.Context, *Call) (json.RawMessage, error) {
			return nil, fmt.Errorf("lookup: %w", NewError("TASK_NOT_FOUND", "no task t_1"))
		}, code: "TASK_NOT_FOUND", status: 404, message: "no task t_1"},
		{name: "scoped op may answer FORBIDDEN", id: "tasks.get", h: func(context.Context, *Call) (json.RawMessage, error) {
			return nil, Forbidden("not yours")
		}, code: "FORBIDDEN", status: 403, message: "not yours"},
		{name: "undeclared app code", id: "tasks.create", h: func(context.Context, *Call) (json.RawMessage, error) {
			return nil, NewError("TASK_NOT_FOUND", "secret detail")
		}, code: "INTERNAL_SERVER_ERROR", status: 500, message: "Internal server error", logged: "secret detail"},
		{name: "public op may not answer FORBIDDEN", id: "tasks.list", h: func(context.Context, *Call) (json.RawMessage, error) {
			return nil, Forbidden("x")
		}, code: "INTERNAL_SERVER_ERROR", status: 500, message: "Internal server error", logged: "does not declare"},
		{name: "unregistered code", id: "tasks.get", h: func(context.Context, *Call) (json.RawMessage, error) {
			return nil, NewError("WHATEVER", "x")
		}, code: "INTERNAL_SERVER_ERROR", status: 500, message: "Internal server error", logged: "not in the registry"},
		{name: "plain error", id: "tasks.get", h: func(context.Context, *Call) (json.RawMessage, error) {
			return nil, errors.New("db password is hunter2")
		}, code: "INTERNAL_SERVER_ERROR", status: 500, message: "Internal server error", logged: "hunter2"},
		{name: "panic", id: "tasks.get", h: func(context.Context, *Call) (json.RawMessage, error) {
			panic("boom hunter2")
		}, code: "INTERNAL_SERVER_ERROR", status: 500, message: "Internal server error", logged: "boom hunter2"},
		{name: "output mismatch", id: "tasks.get", h: ok(`{"id":"t_1"}`), code: "INTERNAL_SERVER_ERROR", status: 500, message: "Internal server error", logged: "does not match #output"},
		{name: "output not JSON", id: "tasks.get", h: ok(`{`), code: "INTERNAL_SERVER_ERROR", status: 500, message: "Internal server error", logged: "not JSON"},
		{name: "missing output", id: "tasks.get", h: ok(``), code: "INTERNAL_SERVER_ERROR", status: 500, message: "Internal server error", logged: "returned none"},
		{name: "output without #output", id: "tasks.purge", h: ok(`{"a":1}`), code: "INTERNAL_SERVER_ERROR", status: 500, message: "Internal server error", logged: "declares no #output"},
		{name: "hook may answer any registry code", id: "tasks.list", h: ok(`{"limit":1}`), hookErr: NewError("RATE_LIMITED", ""),
			code: "RATE_LIMITED", status: 429, message: "Rate limited"},
		{name: "realtime violation is scrubbed", id: "tasks.list", h: ok(`{"limit":1}`),
			hookErr: &Error{Code: "REALTIME_CONTRACT_VIOLATION", Message: "peer sent bad args", Details: map[string]any{"x": 1}},
			code:    "REALTIME_CONTRACT_VIOLATION", status: 500, message: "Realtime contract violation", logged: "peer sent bad args", noDetail: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs.Reset()
			im := NewImplementation(g)
			bind(t, im, tc.id, tc.h)
			opts := &Options{Logger: logger}
			if tc.hookErr != nil {
				opts.Hooks.BeforeHandle = func(context.Context, *Call) (context.Context, error) { return nil, tc.hookErr }
			}
			r := newRunner(t, im, opts)
			s, a, _ := strings.Cut(tc.id, ".")
			req := &Request{}
			if tc.id == "tasks.get" {
				req.Params = Fields{Wire: map[string][]string{"id": {"t_1"}}}
			}
			if tc.id == "tasks.create" {
				req.Body = func() ([]byte, error) { return []byte(`{"title":"x"}`), nil }
			}
			res := r.Endpoint(s, a).Call(context.Background(), req)
			e := res.Err
			if e == nil || string(e.Code) != tc.code || e.Status != tc.status || e.Message != tc.message {
				t.Fatalf("got %+v, want %s %d %q", e, tc.code, tc.status, tc.message)
			}
			if tc.noDetail && e.Details != nil {
				t.Errorf("details leaked: %v", e.Details)
			}
			if wire := string(e.HTTPEnvelope()) + string(e.ToolEnvelope("")); tc.logged != "" && strings.Contains(wire, tc.logged) {
				t.Errorf("raw cause %q on the wire: %s", tc.logged, wire)
			}
			if tc.logged != "" && !strings.Contains(logs.String(), tc.logged) {
				t.Errorf("log lacks %q:\n%s", tc.logged, logs.String())
			}
		})
	}
}

func TestValidationAndDefaults(t *testing.T) {
	g := testGraph(t)
	im := NewImplementation(g)
	var seen []string
	bind(t, im, "tasks.create", func(ctx context.Context, c *Call) (json.RawMessage, error) {
		b, _ := c.InputJSON()
		seen = append(seen, string(b))
		return json.RawMessage(`{"id":"t_1","title":"x","done":false}`), nil
	})
	bind(t, im, "tasks.list", func(ctx context.Context, c *Call) (json.RawMessage, error) {
		return json.Marshal(c.Query)
	})
	r := newRunner(t, im, nil)
	create := r.Endpoint("tasks", "create")
	body := func(s string) func() ([]byte, error) { return func() ([]byte, error) { return []byte(s), nil } }

	// Defaults: done filled in, so the handler gets re-encoded bytes;
	// without a change it gets the caller's bytes verbatim.
	if res := create.Call(context.Background(), &Request{Body: body(`{"title":"x"}`)}); res.Err != nil {
		t.Fatal(res.Err)
	}
	if res := create.Call(context.Background(), &Request{Body: body(`{ "title": "x", "done": true }`)}); res.Err != nil {
		t.Fatal(res.Err)
	}
	if want := []string{`{"done":false,"title":"x"}`, `{ "title": "x", "done": true }`}; strings.Join(seen, "|") != strings.Join(want, "|") {
		t.Errorf("handler saw %q, want %q", seen, want)
	}
	// Empty body = {}, which misses the required title.
	res := create.Call(context.Background(), &Request{Body: body("  ")})
	if res.Err == nil || res.Err.Code != "VALIDATION_ERROR" || !strings.Contains(res.Err.Message, "Invalid input") {
		t.Fatalf("empty body: %+v", res.Err)
	}
	// Malformed and too deep JSON are BAD_REQUEST.
	for _, b := range []string{`{"title":`, strings.Repeat("[", 100) + strings.Repeat("]", 100), `{"title":"a","title":"b"}`} {
		if res := create.Call(context.Background(), &Request{Body: body(b)}); res.Err == nil || res.Err.Code != "BAD_REQUEST" {
			t.Errorf("%.20s: %+v", b, res.Err)
		}
	}
	// At most MaxIssues issues.
	bind(t, im, "tasks.bulk", ok(``))
	r = newRunner(t, im, nil)
	ids := make([]string, 30)
	for i := range ids {
		ids[i] = `"x"`
	}
	res = r.Endpoint("tasks", "bulk").Call(context.Background(), &Request{Body: body(`{"ids":[` + strings.Join(ids, ",") + `]}`)})
	if res.Err == nil || len(res.Err.Details["issues"].([]Issue)) != 20 || !strings.Contains(res.Err.Message, "(and 29 more)") {
		t.Fatalf("many issues: %+v", res.Err)
	}
	// Query: coerced, defaulted, list; unknown keys refused.
	list := r.Endpoint("tasks", "list")
	res = list.Call(context.Background(), &Request{Query: Fields{Wire: map[string][]string{"tag": {"a"}}}})
	if res.Err != nil || string(res.Output) != `{"limit":10,"tag":["a"]}` {
		t.Fatalf("list: %s %+v", res.Output, res.Err)
	}
	res = list.Call(context.Background(), &Request{Query: Fields{Wire: map[string][]string{"limit": {"abc"}, "zzz": {"1"}}}})
	if res.Err == nil || res.Err.Code != "VALIDATION_ERROR" || len(res.Err.Details["issues"].([]Issue)) != 2 {
		t.Fatalf("bad query: %+v", res.Err)
	}
	// A query on an operation without #query is refused by name.
	res = r.Endpoint("tasks", "create").Call(context.Background(), &Request{Query: Fields{Wire: map[string][]string{"x": {"1"}}}, Body: body(`{"title":"x"}`)})
	if res.Err == nil || res.Err.Code != "VALIDATION_ERROR" || !strings.Contains(res.Err.Message, `query "x"`) {
		t.Fatalf("undeclared query: %+v", res.Err)
	}
}

func TestCallTool(t *testing.T) {
	g := testGraph(t)
	im := NewImplementation(g)
	bind(t, im, "tasks.rename", func(ctx context.Context, c *Call) (json.RawMessage, error) {
		return json.Marshal(map[string]any{"id": c.Params["id"], "title": c.Input.(map[string]any)["title"], "done": false})
	})
	var rawSeen string
	bind(t, im, "server.status", func(ctx context.Context, c *Call) (json.RawMessage, error) {
		b, _ := c.InputJSON()
		rawSeen = string(b)
		if c.Source != SourceMCP || c.Identity.Kind != KindRuntime || c.Identity.Scope != "public" {
			return nil, fmt.Errorf("identity %+v source %s", c.Identity, c.Source)
		}
		return json.RawMessage(`{"ok":true}`), nil
	})
	r := newRunner(t, im, nil)
	ctx := context.Background()
	res := r.Endpoint("tasks", "rename").CallTool(ctx, SourceAgent, json.RawMessage(`{"id":"t_9","title":"T"}`), nil)
	if res.Err != nil || string(res.Output) != `{"done":false,"id":"t_9","title":"T"}` {
		t.Fatalf("rename: %s %+v", res.Output, res.Err)
	}
	// The same values are accepted and refused as over HTTP: a bad id is
	// a params issue, an unknown key an input issue.
	res = r.Endpoint("tasks", "rename").CallTool(ctx, SourceAgent, json.RawMessage(`{"id":"X","title":"T"}`), nil)
	if res.Err == nil || res.Err.Details["issues"].([]Issue)[0].In != "params" {
		t.Fatalf("bad id: %+v", res.Err)
	}
	res = r.Endpoint("tasks", "rename").CallTool(ctx, SourceAgent, json.RawMessage(`{"id":"t_1","title":"T","extra":1}`), nil)
	if res.Err == nil || res.Err.Details["issues"].([]Issue)[0].In != "input" {
		t.Fatalf("extra: %+v", res.Err)
	}
	for _, args := range []string{`[1]`, `{"a":`, `"x"`} {
		if res := r.Endpoint("server", "status").CallTool(ctx, SourceMCP, json.RawMessage(args), nil); res.Err == nil {
			t.Errorf("%s accepted", args)
		}
	}
	res = r.Endpoint("server", "status").CallTool(ctx, SourceMCP, json.RawMessage(`{"verbose":true}`), nil)
	if res.Err != nil || rawSeen != `{"verbose":true}` {
		t.Fatalf("status: %+v, handler saw %q", res.Err, rawSeen)
	}
	res = r.Endpoint("server", "status").CallTool(ctx, SourceMCP, nil, nil)
	if res.Err != nil {
		t.Fatalf("no args: %+v", res.Err)
	}
	// Arguments for an operation without input are refused.
	res = r.Endpoint("tasks", "purge").CallTool(ctx, SourceCLI, json.RawMessage(`{"x":1}`), nil)
	if res.Err == nil || res.Err.Code != "VALIDATION_ERROR" {
		t.Fatalf("purge: %+v", res.Err)
	}
}

// TestParallelCalls: calls share no mutable state (run with -race).
func TestParallelCalls(t *testing.T) {
	g := testGraph(t)
	im := NewImplementation(g)
	bind(t, im, "tasks.rename", func(ctx context.Context, c *Call) (json.RawMessage, error) {
		if CallFrom(ctx) != c {
			return nil, errors.New("context carries another call")
		}
		c.Input.(map[string]any)["title"] = "mutated" // a handler may modify its own values
		return json.Marshal(map[string]any{"id": c.Params["id"], "title": "x", "done": false})
	})
	seen := sync.Map{}
	r := newRunner(t, im, &Options{Hooks: Hooks{AfterCall: func(ctx context.Context, c *Call, res Result, cause error) {
		if _, dup := seen.LoadOrStore(c, true); dup {
			t.Error("AfterCall twice for one call")
		}
	}}})
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("t_%d", i)
			res := r.Endpoint("tasks", "rename").CallTool(context.Background(), SourceMCP, json.RawMessage(`{"id":"`+id+`","title":"T"}`), nil)
			if res.Err != nil || !strings.Contains(string(res.Output), id) {
				t.Errorf("%s: %s %+v", id, res.Output, res.Err)
			}
		}()
	}
	wg.Wait()
}

func TestEnvelopes(t *testing.T) {
	e := &Error{Code: "RATE_LIMITED", Status: 429, Message: "Slow down", Hint: "wait a minute"}
	if got := string(e.HTTPEnvelope()); got != `{"error":{"code":"RATE_LIMITED","message":"Slow down"}}` {
		t.Errorf("http %s", got)
	}
	if got := string(e.ToolEnvelope("see docs")); got != `{"error":"RATE_LIMITED","details":{"message":"Slow down"},"_hint":"wait a minute see docs","retryable":true}` {
		t.Errorf("tool %s", got)
	}
	back, err := ParseToolEnvelope(e.ToolEnvelope(""), nil)
	if err != nil || back.Code != "RATE_LIMITED" || back.Status != 429 || !back.IsRetryable() || back.Message != "Slow down" {
		t.Errorf("parsed %+v %v", back, err)
	}
	ise, _ := ParseToolEnvelope([]byte(`{"error":"INTERNAL_SERVER_ERROR"}`), nil)
	if ise.Status != 500 || ise.IsRetryable() {
		t.Errorf("ise %+v", ise)
	}
	unknown, _ := ParseToolEnvelope([]byte(`{"error":"APP_CODE"}`), nil)
	if unknown.Status != 500 {
		t.Errorf("unknown code status %d", unknown.Status)
	}
	if _, err := ParseToolEnvelope([]byte(`{}`), nil); err == nil {
		t.Error("empty envelope accepted")
	}
}
