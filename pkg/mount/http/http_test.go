package httpmount_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
	httpmount "stitchkit.dev/stitchkit/pkg/mount/http"
	"stitchkit.dev/stitchkit/pkg/project"
	"stitchkit.dev/stitchkit/pkg/validate"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

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

func testGraph(t testing.TB) *graph.Graph {
	t.Helper()
	g := &graph.Graph{GraphVersion: graph.GraphVersion, DigestVersion: graph.DigestVersion, Name: "tasks", Version: "1.0.0",
		Errors: []graph.ErrorCode{{Code: "TASK_NOT_FOUND", Status: 404, Message: "Task not found"}},
		Policy: graph.Policy{MCP: graph.MCPPolicy{SchemaValidation: graph.ValidationThrow}}}
	task := addSchema(t, g, taskSchema)
	idParams := addSchema(t, g, `{"type":"object","properties":{"id":{"type":"string","pattern":"^t_[a-z0-9]+$"}},"required":["id"],"additionalProperties":false}`)
	http := []graph.Transport{graph.HTTP}
	g.Services = []graph.Service{
		{Name: "tasks", Prefix: "/tasks", Scope: "user", Operations: []graph.Operation{
			{Service: "tasks", Action: "create", Method: "POST", Path: "/", Desc: "Create", Scope: "user", Expose: http,
				Input:  addSchema(t, g, `{"type":"object","properties":{"title":{"type":"string","minLength":1},"done":{"type":"boolean","default":false},"tags":{"type":"array","items":{"type":"string","minLength":1}}},"required":["title"],"additionalProperties":false}`),
				Output: task},
			{Service: "tasks", Action: "exists", Method: "HEAD", Path: "/{id}/exists", Desc: "Exists", Scope: "user", Expose: http, Params: idParams, Errors: []string{"TASK_NOT_FOUND"}},
			{Service: "tasks", Action: "get", Method: "GET", Path: "/{id}", Desc: "Get", Scope: "user", Expose: http, Params: idParams, Output: task, Errors: []string{"TASK_NOT_FOUND"}},
			{Service: "tasks", Action: "list", Method: "GET", Path: "/", Desc: "List", Scope: "user", Expose: http,
				Query:  addSchema(t, g, `{"type":"object","properties":{"limit":{"type":"integer","minimum":1,"maximum":100,"default":10},"done":{"type":"boolean"},"tag":{"type":"array","items":{"type":"string"}}},"additionalProperties":false}`),
				Output: addSchema(t, g, `{"type":"object","properties":{"query":{"type":"object"}},"required":["query"],"additionalProperties":false}`)},
			{Service: "tasks", Action: "purge", Method: "DELETE", Path: "/", Desc: "Purge", Scope: "admin", Expose: http},
			{Service: "tasks", Action: "rename", Method: "PATCH", Path: "/{id}/title", Desc: "Rename", Scope: "user", Expose: http, Params: idParams,
				Input: addSchema(t, g, `{"type":"object","properties":{"title":{"type":"string","minLength":1}},"required":["title"],"additionalProperties":false}`), Output: task},
		}},
		{Name: "files", Prefix: "/files", Scope: "public", Operations: []graph.Operation{
			{Service: "files", Action: "upload", Method: "PUT", Path: "/{path...}", Desc: "Upload", Scope: "public", Expose: http,
				Params: addSchema(t, g, `{"type":"object","properties":{"path":{"type":"string","minLength":1}},"required":["path"],"additionalProperties":false}`),
				Input:  addSchema(t, g, `{"type":"object","properties":{"content":{"type":"string"}},"required":["content"],"additionalProperties":false}`),
				Output: addSchema(t, g, `{"type":"object","properties":{"path":{"type":"string"},"size":{"type":"integer"}},"required":["path","size"],"additionalProperties":false}`)},
		}},
	}
	slices.Reverse(g.Services) // files, tasks: graph order
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	return g
}

// fixture is a mount over testGraph with recording hooks.
type fixture struct {
	h          http.Handler
	mu         sync.Mutex
	authorized []string
	logs       *strings.Builder
}

func newFixture(t testing.TB, opts *httpmount.Options, authorize func(*mount.Call) error) *fixture {
	t.Helper()
	return newFixtureAt(t, "", opts, authorize)
}

// newFixtureAt is newFixture with the projection's HTTP prefix.
func newFixtureAt(t testing.TB, prefix string, opts *httpmount.Options, authorize func(*mount.Call) error) *fixture {
	t.Helper()
	g := testGraph(t)
	f := &fixture{logs: &strings.Builder{}}
	im := mount.NewImplementation(g)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(im.Handle("tasks", "create", func(ctx context.Context, c *mount.Call) (json.RawMessage, error) {
		var in struct {
			Title string `json:"title"`
			Done  bool   `json:"done"`
		}
		if err := c.DecodeInput(&in); err != nil {
			return nil, err
		}
		switch in.Title {
		case "panic":
			panic("secret panic text")
		case "bad output":
			return json.RawMessage(`{"id":"nope","title":"x","done":false}`), nil
		case "plain error":
			return nil, errors.New("secret database text")
		}
		return json.Marshal(map[string]any{"id": "t_1", "title": in.Title, "done": in.Done})
	}))
	must(im.Handle("tasks", "get", func(ctx context.Context, c *mount.Call) (json.RawMessage, error) {
		if c.Params["id"] != "t_1" {
			return nil, mount.NewError("TASK_NOT_FOUND", "")
		}
		return json.RawMessage(`{"id":"t_1","title":"Write docs","done":false}`), nil
	}))
	must(im.Handle("tasks", "exists", func(ctx context.Context, c *mount.Call) (json.RawMessage, error) {
		if c.Params["id"] != "t_1" {
			return nil, mount.NewError("TASK_NOT_FOUND", "")
		}
		return nil, nil
	}))
	must(im.Handle("tasks", "list", func(ctx context.Context, c *mount.Call) (json.RawMessage, error) {
		return json.Marshal(map[string]any{"query": c.Query})
	}))
	must(im.Handle("tasks", "purge", func(ctx context.Context, c *mount.Call) (json.RawMessage, error) { return nil, nil }))
	must(im.Handle("files", "upload", func(ctx context.Context, c *mount.Call) (json.RawMessage, error) {
		in := c.Input.(map[string]any)
		return json.Marshal(map[string]any{"path": c.Params["path"], "size": len(in["content"].(string))})
	}))
	// tasks.rename stays unbound: NOT_IMPLEMENTED.
	runner, err := mount.New(im, &mount.Options{
		Projection: projecttest.Prefixed(t, g, prefix),
		Logger:     slog.New(slog.NewTextHandler(f.logs, nil)),
		Hooks: mount.Hooks{Authorize: func(ctx context.Context, c *mount.Call) (context.Context, error) {
			if httpmount.Request(c) == nil {
				return nil, errors.New("no *http.Request in the call")
			}
			f.mu.Lock()
			f.authorized = append(f.authorized, c.Identity.ID())
			f.mu.Unlock()
			if authorize != nil {
				return nil, authorize(c)
			}
			return nil, nil
		}},
	})
	must(err)
	h, err := httpmount.New(runner, opts)
	must(err)
	f.h = h
	return f
}

type response struct {
	status int
	header http.Header
	body   string
	code   string
	env    map[string]any
}

func (f *fixture) do(t testing.TB, method, target, ctype string, body io.Reader) response {
	t.Helper()
	req := httptest.NewRequest(method, target, body)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	res := response{status: rec.Code, header: rec.Header(), body: rec.Body.String()}
	if rec.Code >= 400 && method != http.MethodHead {
		var env struct {
			Error struct {
				Code    string         `json:"code"`
				Message string         `json:"message"`
				Details map[string]any `json:"details"`
			} `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil || env.Error.Code == "" || env.Error.Message == "" {
			t.Fatalf("%s %s: %d with a body that is not the error envelope: %q", method, target, rec.Code, rec.Body.String())
		}
		res.code = env.Error.Code
		var m map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &m)
		res.env = m
	}
	return res
}

func TestHTTPPipeline(t *testing.T) {
	f := newFixture(t, &httpmount.Options{OperationMaxBodyBytes: map[string]int64{"files.upload": 64}}, nil)
	json := "application/json"
	for _, tc := range []struct {
		name, method, target, ctype, body string
		status                            int
		code                              string
		want                              string // substring of the body
	}{
		{"200 with output", "GET", "/tasks/t_1", "", "", 200, "", `"title":"Write docs"`},
		{"declared app error", "GET", "/tasks/t_2", "", "", 404, "TASK_NOT_FOUND", `"Task not found"`},
		{"invalid path param", "GET", "/tasks/BAD", "", "", 400, "VALIDATION_ERROR", `"in":"params"`},
		{"204 without output", "DELETE", "/tasks", "", "", 204, "", ""},
		{"HEAD operation", "HEAD", "/tasks/t_1/exists", "", "", 200, "", ""},
		{"HEAD operation error", "HEAD", "/tasks/t_9/exists", "", "", 404, "", ""},
		{"GET answers HEAD", "HEAD", "/tasks/t_1", "", "", 200, "", ""},
		{"unknown path", "GET", "/nope", "", "", 404, "NOT_FOUND", ""},
		{"unknown nested path", "GET", "/tasks/t_1/zzz", "", "", 404, "NOT_FOUND", ""},
		{"unclean path", "GET", "/tasks/x/../t_1", "", "", 404, "NOT_FOUND", ""},
		{"wrong verb", "PUT", "/tasks", json, "{}", 405, "METHOD_NOT_ALLOWED", ""},
		{"empty POST body is {}", "POST", "/tasks", "", "", 400, "VALIDATION_ERROR", `"keyword":"required"`},
		{"defaults applied", "POST", "/tasks", json, `{"title":"a"}`, 200, "", `"done":false`},
		{"charset utf-8 is JSON", "POST", "/tasks", "application/json; charset=utf-8", `{"title":"a","done":true}`, 200, "", `"done":true`},
		{"text/plain body", "POST", "/tasks", "text/plain", `{"title":"a"}`, 415, "UNSUPPORTED_MEDIA_TYPE", ""},
		{"no content type", "POST", "/tasks", "", `{"title":"a"}`, 415, "UNSUPPORTED_MEDIA_TYPE", ""},
		{"latin1 JSON", "POST", "/tasks", "application/json; charset=latin1", `{"title":"a"}`, 415, "UNSUPPORTED_MEDIA_TYPE", ""},
		{"not JSON, whatever the case", "POST", "/tasks", "application/merge-patch+json", `{"title":"a"}`, 415, "UNSUPPORTED_MEDIA_TYPE", ""},
		{"JSON in capitals", "POST", "/tasks", "Application/JSON", `{"title":"a"}`, 200, "", `"title":"a"`},
		{"malformed JSON", "POST", "/tasks", json, `{"title":`, 400, "BAD_REQUEST", "Malformed JSON"},
		{"duplicate key", "POST", "/tasks", json, `{"title":"a","title":"b"}`, 400, "BAD_REQUEST", "twice"},
		{"too deep", "POST", "/tasks", json, `{"title":"a","tags":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`, 400, "BAD_REQUEST", "nested deeper"},
		{"schema failure", "POST", "/tasks", json, `{"title":"","x":1}`, 400, "VALIDATION_ERROR", `"in":"input"`},
		{"output mismatch", "POST", "/tasks", json, `{"title":"bad output"}`, 500, "INTERNAL_SERVER_ERROR", `"Internal server error"`},
		{"panic", "POST", "/tasks", json, `{"title":"panic"}`, 500, "INTERNAL_SERVER_ERROR", `"Internal server error"`},
		{"plain error", "POST", "/tasks", json, `{"title":"plain error"}`, 500, "INTERNAL_SERVER_ERROR", `"Internal server error"`},
		{"unbound operation", "PATCH", "/tasks/t_1/title", json, `{"title":"a"}`, 501, "NOT_IMPLEMENTED", ""},
		{"query coerced, defaulted, list", "GET", "/tasks?done=true&tag=a&tag=b", "", "", 200, "", `{"query":{"done":true,"limit":10,"tag":["a","b"]}}`},
		{"query one list value", "GET", "/tasks?tag=a&limit=5", "", "", 200, "", `{"query":{"limit":5,"tag":["a"]}}`},
		{"query wrong type", "GET", "/tasks?limit=abc", "", "", 400, "VALIDATION_ERROR", `"in":"query"`},
		{"query unknown key", "GET", "/tasks?zzz=1", "", "", 400, "VALIDATION_ERROR", `zzz`},
		{"query malformed", "GET", "/tasks?a=%zz", "", "", 400, "BAD_REQUEST", "Malformed query"},
		{"query on op without #query", "GET", "/tasks/t_1?x=1", "", "", 400, "VALIDATION_ERROR", `"in":"query"`},
		{"rest wildcard", "PUT", "/files/docs/a/b.md", json, `{"content":"hi"}`, 200, "", `{"path":"docs/a/b.md","size":2}`},
		// ServeMux would redirect /files to /files/ (text/html): the
		// mount serves it as the rest route with an empty rest instead.
		{"rest prefix is the route, rest empty", "PUT", "/files", json, `{"content":"hi"}`, 400, "VALIDATION_ERROR", `"path":"/path","keyword":"minLength"`},
		{"rest prefix with a slash", "PUT", "/files/", json, `{"content":"hi"}`, 400, "VALIDATION_ERROR", `"path":"/path","keyword":"minLength"`},
		{"rest prefix, wrong verb", "GET", "/files", "", "", 405, "METHOD_NOT_ALLOWED", ""},
		{"rest prefix, escaped", "PUT", "/fil%65s", json, `{"content":"hi"}`, 400, "VALIDATION_ERROR", `"keyword":"minLength"`},
		{"route body limit", "PUT", "/files/x", json, `{"content":"` + strings.Repeat("a", 100) + `"}`, 413, "PAYLOAD_TOO_LARGE", "64 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			res := f.do(t, tc.method, tc.target, tc.ctype, body)
			if res.status != tc.status || res.code != tc.code || !strings.Contains(res.body, tc.want) {
				t.Fatalf("%d %s %s, want %d %s containing %q", res.status, res.code, res.body, tc.status, tc.code, tc.want)
			}
			if res.header.Get("X-Request-Id") == "" {
				t.Error("no x-request-id")
			}
			if strings.Contains(res.body, "secret") {
				t.Errorf("raw cause on the wire: %s", res.body)
			}
			if tc.status == 204 || tc.method == "HEAD" {
				if res.body != "" {
					t.Errorf("body on %d/%s: %q", tc.status, tc.method, res.body)
				}
			}
		})
	}
	if !strings.Contains(f.logs.String(), "secret panic text") || !strings.Contains(f.logs.String(), "secret database text") {
		t.Errorf("raw causes not logged:\n%s", f.logs.String())
	}
}

func TestMethodNotAllowedAllow(t *testing.T) {
	f := newFixture(t, nil, nil)
	for target, want := range map[string]string{
		"/tasks":              "DELETE, GET, HEAD, POST",
		"/tasks/t_1":          "GET, HEAD",
		"/tasks/t_1/title":    "PATCH",
		"/tasks/t_1/exists":   "HEAD",
		"/files/a/b/c":        "PUT",
		"/tasks/t_1/title?x=": "PATCH",
	} {
		res := f.do(t, "POST", target, "application/json", strings.NewReader("{}"))
		if target == "/tasks" {
			res = f.do(t, "PUT", target, "application/json", strings.NewReader("{}"))
		}
		if res.status != 405 || res.header.Get("Allow") != want {
			t.Errorf("%s: %d Allow %q, want 405 %q", target, res.status, res.header.Get("Allow"), want)
		}
	}
}

// failingBody fails the test when any byte of it is read.
type failingBody struct{ t *testing.T }

func (b failingBody) Read([]byte) (int, error) {
	b.t.Error("the body was read")
	return 0, io.ErrUnexpectedEOF
}

// TestNoBodyBeforeAuthorize: invalid path params never reach authorize,
// and a refused authorize never reads the body.
func TestNoBodyBeforeAuthorize(t *testing.T) {
	f := newFixture(t, nil, func(c *mount.Call) error { return mount.Unauthorized("sign in") })
	for _, tc := range []struct {
		method, target string
		status         int
		code           string
		authorized     int
	}{
		{"PATCH", "/tasks/NOT-AN-ID/title", 400, "VALIDATION_ERROR", 0},
		{"PATCH", "/tasks/t_1/title", 401, "UNAUTHORIZED", 1},
		{"POST", "/tasks", 401, "UNAUTHORIZED", 2},
		{"GET", "/tasks?limit=abc", 401, "UNAUTHORIZED", 3}, // the query is read after authorize too
	} {
		req := httptest.NewRequest(tc.method, tc.target, nil)
		req.Body = io.NopCloser(failingBody{t})
		req.ContentLength = -1
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		f.h.ServeHTTP(rec, req)
		if !strings.Contains(rec.Body.String(), `"`+tc.code+`"`) || rec.Code != tc.status {
			t.Errorf("%s %s: %d %s", tc.method, tc.target, rec.Code, rec.Body.String())
		}
		if len(f.authorized) != tc.authorized {
			t.Errorf("%s %s: authorize called %d times in all, want %d", tc.method, tc.target, len(f.authorized), tc.authorized)
		}
	}
}

// A content-encoded body (gzip) is not decoded: 415, not "malformed
// JSON"; identity is no encoding.
func TestContentEncoding(t *testing.T) {
	f := newFixture(t, nil, nil)
	for ce, want := range map[string]int{"gzip": 415, "br": 415, "identity": 200, "": 200} {
		req := httptest.NewRequest("POST", "/tasks", strings.NewReader(`{"title":"a"}`))
		req.Header.Set("Content-Type", "application/json")
		if ce != "" {
			req.Header.Set("Content-Encoding", ce)
		}
		rec := httptest.NewRecorder()
		f.h.ServeHTTP(rec, req)
		if rec.Code != want || want == 415 && !strings.Contains(rec.Body.String(), `"UNSUPPORTED_MEDIA_TYPE"`) {
			t.Errorf("Content-Encoding %q: %d %s", ce, rec.Code, rec.Body.String())
		}
	}
}

// TestBodyCapWhileReading: an over-long body of unknown length is cut off
// at the cap, not read to the end.
func TestBodyCapWhileReading(t *testing.T) {
	f := newFixture(t, &httpmount.Options{MaxBodyBytes: 1024}, nil)
	src := &countingReader{limit: 10 << 20}
	req := httptest.NewRequest("POST", "/tasks", nil)
	req.Body = io.NopCloser(src)
	req.ContentLength = -1
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	if rec.Code != 413 || !strings.Contains(rec.Body.String(), "PAYLOAD_TOO_LARGE") {
		t.Fatalf("%d %s", rec.Code, rec.Body.String())
	}
	if src.n > 64<<10 {
		t.Errorf("read %d bytes of an over-long body with a 1 KiB cap", src.n)
	}
	// A declared Content-Length over the cap is refused without reading.
	req = httptest.NewRequest("POST", "/tasks", nil)
	req.Body = io.NopCloser(failingBody{t})
	req.ContentLength = 2048
	req.Header.Set("Content-Type", "application/json")
	rec = httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	if rec.Code != 413 {
		t.Fatalf("declared length: %d %s", rec.Code, rec.Body.String())
	}
	// The default cap is 1 MiB.
	def := newFixture(t, nil, nil)
	big := `{"title":"` + strings.Repeat("a", 1<<20) + `"}`
	if res := def.do(t, "POST", "/tasks", "application/json", strings.NewReader(big)); res.status != 413 {
		t.Fatalf("default cap: %d", res.status)
	}
}

type countingReader struct{ n, limit int }

func (r *countingReader) Read(p []byte) (int, error) {
	if r.n >= r.limit {
		return 0, io.EOF
	}
	for i := range p {
		p[i] = ' '
	}
	r.n += len(p)
	return len(p), nil
}

// TestErrorBodiesMatchEnvelopeSchema validates error bodies with the
// project's envelope schema (the one the OpenAPI export documents).
func TestErrorBodiesMatchEnvelopeSchema(t *testing.T) {
	var codes []string
	for _, e := range graph.FrameworkErrors {
		codes = append(codes, e.Code)
	}
	codes = append(codes, "TASK_NOT_FOUND")
	schema, _ := json.Marshal(project.ErrorEnvelopeSchema(codes))
	v, err := validate.Compile(schema)
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, nil, nil)
	for _, target := range []string{"/nope", "/tasks/BAD", "/tasks/t_2"} {
		res := f.do(t, "GET", target, "", nil)
		val, err := validate.DecodeJSON([]byte(res.body), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Validate(val); err != nil {
			t.Errorf("%s: %s does not match the envelope schema: %v", target, res.body, err)
		}
	}
}

func TestCORS(t *testing.T) {
	off := newFixture(t, nil, nil)
	req := httptest.NewRequest("OPTIONS", "/tasks", nil)
	req.Header.Set("Origin", "https://app.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	rec := httptest.NewRecorder()
	off.h.ServeHTTP(rec, req)
	for k := range rec.Header() {
		if strings.HasPrefix(k, "Access-Control") {
			t.Errorf("CORS header %s without CORS configured", k)
		}
	}
	if rec.Code != 405 {
		t.Errorf("preflight without CORS: %d", rec.Code)
	}
	on := newFixture(t, &httpmount.Options{CORS: &httpmount.CORS{Origins: []string{"https://app.example"}, MaxAge: 60}}, nil)
	rec = httptest.NewRecorder()
	on.h.ServeHTTP(rec, req)
	if rec.Code != 204 || rec.Header().Get("Access-Control-Allow-Origin") != "https://app.example" ||
		rec.Header().Get("Access-Control-Allow-Methods") != "DELETE, GET, HEAD, POST" {
		t.Errorf("preflight: %d %v", rec.Code, rec.Header())
	}
	req = httptest.NewRequest("GET", "/tasks/t_1", nil)
	req.Header.Set("Origin", "https://evil.example")
	rec = httptest.NewRecorder()
	on.h.ServeHTTP(rec, req)
	if rec.Header().Get("Access-Control-Allow-Origin") != "" || rec.Code != 200 {
		t.Errorf("foreign origin: %d %v", rec.Code, rec.Header())
	}
}

func TestRequestID(t *testing.T) {
	f := newFixture(t, nil, nil)
	req := httptest.NewRequest("GET", "/tasks/t_1", nil)
	req.Header.Set("X-Request-Id", "abc-123")
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	if rec.Header().Get("X-Request-Id") != "abc-123" {
		t.Errorf("kept id: %q", rec.Header().Get("X-Request-Id"))
	}
	req.Header.Set("X-Request-Id", "bad id\n")
	rec = httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	a := rec.Header().Get("X-Request-Id")
	rec = httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	if b := rec.Header().Get("X-Request-Id"); a == "" || a == b || strings.Contains(a, " ") {
		t.Errorf("generated ids %q %q", a, b)
	}
}

// TestRequestIDParallel: parallel requests each get an id of their own,
// a client's valid id stays its own (never another response's), and
// Options.RequestID replaces the default.
func TestRequestIDParallel(t *testing.T) {
	f := newFixture(t, nil, nil)
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 100 {
				req := httptest.NewRequest("GET", "/tasks/t_1", nil)
				own := fmt.Sprintf("client-%d-%d", w, i)
				if i%3 == 0 {
					req.Header.Set("X-Request-Id", own)
				}
				rec := httptest.NewRecorder()
				f.h.ServeHTTP(rec, req)
				id := rec.Header().Values("X-Request-Id")
				if len(id) != 1 || i%3 == 0 && id[0] != own || i%3 != 0 && strings.HasPrefix(id[0], "client-") {
					t.Errorf("request %d/%d: x-request-id %q", w, i, id)
					return
				}
				mu.Lock()
				if seen[id[0]] {
					t.Errorf("x-request-id %q answered twice", id[0])
				}
				seen[id[0]] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()

	custom := newFixture(t, &httpmount.Options{RequestID: func(r *http.Request) string { return "mine-" + r.URL.Path }}, nil)
	rec := httptest.NewRecorder()
	custom.h.ServeHTTP(rec, httptest.NewRequest("GET", "/tasks/t_1", nil))
	if got := rec.Header().Values("X-Request-Id"); len(got) != 1 || got[0] != "mine-/tasks/t_1" {
		t.Errorf("Options.RequestID: %q", got)
	}
}

// TestPathParamTypes: path wildcards reach the handler read as their
// #params types exactly as the runner reads Fields.Wire
// (project.WireObject.Coerce), for every scalar type and for strings that
// do not match their type (which validation then refuses by name).
func TestPathParamTypes(t *testing.T) {
	g := &graph.Graph{GraphVersion: graph.GraphVersion, DigestVersion: graph.DigestVersion, Name: "typed", Version: "1.0.0",
		Policy: graph.Policy{MCP: graph.MCPPolicy{SchemaValidation: graph.ValidationThrow}}}
	params := `{"type":"object","properties":{"n":{"type":"integer"},"f":{"type":"boolean"},"x":{"type":["null","number","string"]},"s":{"type":"string"}},"required":["n","f","x","s"],"additionalProperties":false}`
	out := `{"type":"object"}`
	g.Services = []graph.Service{{Name: "typed", Prefix: "/t", Scope: "public", Operations: []graph.Operation{
		{Service: "typed", Action: "get", Method: "GET", Path: "/{n}/{f}/{x}/{s}", Desc: "Get", Scope: "public",
			Expose: []graph.Transport{graph.HTTP}, Params: addSchema(t, g, params), Output: addSchema(t, g, out)},
	}}}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	im := mount.NewImplementation(g)
	if err := im.Handle("typed", "get", func(ctx context.Context, c *mount.Call) (json.RawMessage, error) {
		return json.Marshal(c.Params)
	}); err != nil {
		t.Fatal(err)
	}
	runner, err := mount.New(im, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := httpmount.New(runner, nil)
	if err != nil {
		t.Fatal(err)
	}
	wire, err := project.NewWireObject(g.Schema(g.Services[0].Operations[0].Params))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		n, f, x, s string
		status     int
	}{
		{"42", "true", "null", "abc", 200},
		{"-7", "false", "1.5e3", "42", 200},
		{"0", "true", "word", "true", 200},
		{"4.5", "true", "null", "s", 400}, // not an integer
		{"abc", "true", "null", "s", 400},
		{"1", "yes", "null", "s", 400},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/t/"+tc.n+"/"+tc.f+"/"+tc.x+"/"+tc.s, nil))
		if rec.Code != tc.status {
			t.Errorf("%v: status %d: %s", tc, rec.Code, rec.Body)
			continue
		}
		if tc.status != 200 {
			if !strings.Contains(rec.Body.String(), `"in":"params"`) {
				t.Errorf("%v: %s", tc, rec.Body)
			}
			continue
		}
		want, _ := json.Marshal(wire.Coerce(map[string][]string{"n": {tc.n}, "f": {tc.f}, "x": {tc.x}, "s": {tc.s}}))
		if rec.Body.String() != string(want) {
			t.Errorf("%v: params %s, want %s", tc, rec.Body, want)
		}
	}
}

// TestLoopback drives the mount over real HTTP on 127.0.0.1 with parallel
// clients (run with -race; goleak checks the server is gone afterwards).
func TestLoopback(t *testing.T) {
	f := newFixtureAt(t, "/api", nil, nil)
	srv := httptest.NewServer(http.StripPrefix("", f.h))
	defer srv.Close()
	client := srv.Client()
	defer client.CloseIdleConnections()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"title":"task %d"}`, i)
			resp, err := client.Post(srv.URL+"/api/tasks", "application/json", strings.NewReader(body))
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || !strings.Contains(string(b), fmt.Sprintf("task %d", i)) {
				t.Errorf("%d %s", resp.StatusCode, b)
			}
		}()
	}
	wg.Wait()
	resp, err := client.Get(srv.URL + "/tasks/t_1") // outside the prefix
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("outside the prefix: %d", resp.StatusCode)
	}
}

// TestRefusesConflictingRoutes: routes the mount could not serve together
// are refused with the projector's problems when the graph is projected,
// before any mount is built.
func TestRefusesConflictingRoutes(t *testing.T) {
	g := testGraph(t)
	s := g.Service("tasks")
	op := *g.Operation("tasks", "get") // GET /tasks/{id}
	op.Action, op.Path = "zz", "/{other}"
	op.Params = addSchema(t, g, `{"type":"object","properties":{"other":{"type":"string"}},"required":["other"]}`)
	s.Operations = append(s.Operations, op)
	_, err := mount.New(mount.NewImplementation(g), nil)
	var ps project.RouteProblems
	if !errors.As(err, &ps) || ps[0].Kind != project.RouteDuplicate {
		t.Fatalf("got %v", err)
	}
}

// TestNoCUEAtRunTime: the HTTP mount and the runner link neither CUE nor
// the testing package (DESIGN invariant 5).
func TestNoCUEAtRunTime(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "stitchkit.dev/stitchkit/pkg/mount/http").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "cuelang.org/") || dep == "testing" {
			t.Errorf("pkg/mount/http links %s", dep)
		}
	}
}

// erroringBody fails the test if anything reads it.
type erroringBody struct{ t *testing.T }

func (b erroringBody) Read([]byte) (int, error) {
	b.t.Error("the body was read before authentication refused the request")
	return 0, io.EOF
}
func (erroringBody) Close() error { return nil }

// TestEdgeAuthentication: the runner's one authenticator runs on the
// headers before any body byte; a refusal is 401 with the challenge (or
// 403), and the principal reaches hooks and handlers.
func TestEdgeAuthentication(t *testing.T) {
	g := testGraph(t)
	im := mount.NewImplementation(g)
	var subject, authorized string
	if err := im.Handle("tasks", "create", func(ctx context.Context, c *mount.Call) (json.RawMessage, error) {
		subject = c.Principal.Subject
		return json.RawMessage(`{"id":"t_1","title":"x","done":false}`), nil
	}); err != nil {
		t.Fatal(err)
	}
	runner, err := mount.New(im, &mount.Options{Logger: slog.New(slog.DiscardHandler), Challenge: "Bearer realm=\"tasks\"",
		Authenticate: func(_ context.Context, r *mount.EdgeRequest) (*mount.Principal, error) {
			switch r.Header.Get("Authorization") {
			case "Bearer alice":
				return &mount.Principal{Subject: "alice", Scopes: []string{"user"}}, nil
			case "Bearer mallory":
				return nil, mount.Forbidden("")
			}
			return nil, errors.New("no token")
		},
		Hooks: mount.Hooks{Authorize: func(ctx context.Context, c *mount.Call) (context.Context, error) {
			if !c.Principal.HasScope(c.Identity.Scope) {
				return nil, mount.Forbidden("missing scope " + c.Identity.Scope)
			}
			authorized = c.Principal.Subject
			return nil, nil
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	h, err := httpmount.New(runner, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		token     string
		status    int
		challenge string
	}{{"", 401, "Bearer realm=\"tasks\""}, {"Bearer mallory", 403, ""}} {
		r := httptest.NewRequest("POST", "/tasks", erroringBody{t})
		r.Header.Set("Content-Type", "application/json")
		if tc.token != "" {
			r.Header.Set("Authorization", tc.token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code != tc.status || rec.Header().Get("WWW-Authenticate") != tc.challenge {
			t.Errorf("%q: %d %q %s", tc.token, rec.Code, rec.Header().Get("WWW-Authenticate"), rec.Body)
		}
	}
	r := httptest.NewRequest("POST", "/tasks", strings.NewReader(`{"title":"x"}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer alice")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	if rec.Code != 200 || subject != "alice" || authorized != "alice" {
		t.Errorf("alice: %d %s; handler saw %q, Authorize %q", rec.Code, rec.Body, subject, authorized)
	}
}
