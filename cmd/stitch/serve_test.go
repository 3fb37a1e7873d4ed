package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"stitchkit.dev/stitchkit/internal/mounttest"
	"stitchkit.dev/stitchkit/pkg/check"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
	"stitchkit.dev/stitchkit/pkg/project"
	"stitchkit.dev/stitchkit/pkg/realtime"
)

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// served is a running stitch serve.
type served struct {
	base   string
	out    *syncBuffer
	client *http.Client
	stop   func() error
}

// startServe runs stitch serve on src at a free loopback port and waits
// until it prints where it listens.
func startServe(t *testing.T, src string) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, errOut := &syncBuffer{}, &syncBuffer{}
	env := &cliEnv{stdout: out, stderr: errOut}
	done := make(chan error, 1)
	go func() { done <- runServe(ctx, env, src, "127.0.0.1:0") }()
	deadline := time.Now().Add(30 * time.Second)
	var base string
	for base == "" {
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("stitch serve did not start:\n%s\n%s", out.String(), errOut.String())
		}
		select {
		case err := <-done:
			cancel()
			t.Fatalf("stitch serve exited: %v\n%s", err, errOut.String())
		case <-time.After(10 * time.Millisecond):
		}
		first, _, _ := strings.Cut(out.String(), "\n")
		if _, addr, ok := strings.Cut(first, "listening on "); ok {
			base = addr
		}
	}
	tr := &http.Transport{DisableKeepAlives: true}
	s := &served{base: base, out: out, client: &http.Client{Transport: tr, Timeout: 10 * time.Second}}
	s.stop = func() error {
		tr.CloseIdleConnections()
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			return errors.New("stitch serve did not return within 30s of its context's cancellation")
		}
	}
	return s
}

// do sends one request and returns the status, headers and body.
func (s *served) do(t *testing.T, method, path, contentType string, body io.Reader) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.base+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// errorCode returns the code of an HTTP error envelope, failing the test
// when the body is not one.
func errorCode(t *testing.T, what string, body []byte) string {
	t.Helper()
	var env struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Error.Code == "" || env.Error.Message == "" {
		t.Fatalf("%s: not an error envelope: %s", what, body)
	}
	return env.Error.Code
}

func TestServeTasks(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := startServe(t, "../../examples/tasks")
	const jsonCT = "application/json"

	// An example answer: the example whose params match (t_1).
	st, _, body := s.do(t, "GET", "/api/tasks/t_1", "", nil)
	if st != 200 || string(body) != `{"done":false,"id":"t_1","title":"Write docs"}` {
		t.Errorf("GET /api/tasks/t_1: %d %s", st, body)
	}
	// The notify examples: the one matching the input is chosen.
	st, _, body = s.do(t, "POST", "/api/tasks/t_1/notify", jsonCT, strings.NewReader(`{"kind":"sms","phone":"+15550100"}`))
	if st != 200 || string(body) != `{"sent":true}` {
		t.Errorf("notify: %d %s", st, body)
	}
	// Query strings are coerced and validated before an example answers.
	st, _, body = s.do(t, "GET", "/api/tasks?limit=2&tag=docs", "", nil)
	if st != 200 || !strings.Contains(string(body), `"next":"c_2"`) {
		t.Errorf("list: %d %s", st, body)
	}
	for _, c := range []struct {
		method, path, ct, body string
		status                 int
		code                   string
	}{
		{"GET", "/api/tasks?limit=0", "", "", 400, "VALIDATION_ERROR"},
		{"GET", "/api/tasks?limit=abc", "", "", 400, "VALIDATION_ERROR"},
		{"GET", "/api/tasks/bad-id", "", "", 400, "VALIDATION_ERROR"},
		{"POST", "/api/tasks", jsonCT, `{"title":""}`, 400, "VALIDATION_ERROR"},
		{"POST", "/api/tasks", jsonCT, `{"title":"x","extra":1}`, 400, "VALIDATION_ERROR"},
		{"POST", "/api/tasks", jsonCT, `{"title":`, 400, "BAD_REQUEST"},
		{"POST", "/api/tasks", jsonCT, `{"title":"a","title":"b"}`, 400, "BAD_REQUEST"},
		{"POST", "/api/tasks", "text/plain", `{"title":"x"}`, 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"POST", "/api/tasks", jsonCT, `{"title":"` + strings.Repeat("x", 2<<20) + `"}`, 413, "PAYLOAD_TOO_LARGE"},
		{"POST", "/api/tasks", jsonCT, `{"title":` + strings.Repeat("[", 500) + strings.Repeat("]", 500) + `}`, 400, "BAD_REQUEST"},
		{"PUT", "/api/tasks", jsonCT, `{}`, 405, "METHOD_NOT_ALLOWED"},
		{"GET", "/api/nowhere", "", "", 404, "NOT_FOUND"},
		{"GET", "/nowhere", "", "", 404, "NOT_FOUND"},
		{"GET", "/api/tasks/../tasks", "", "", 404, "NOT_FOUND"},
		{"POST", "/graph.json", jsonCT, `{}`, 405, "METHOD_NOT_ALLOWED"},
		// No example: validated, then 501.
		{"POST", "/api/tasks/t_1/complete", "", "", 501, "NOT_IMPLEMENTED"},
		{"PUT", "/api/tasks/t_1", jsonCT, `{"title":"x","done":true}`, 501, "NOT_IMPLEMENTED"},
		{"PUT", "/api/tasks/t_1", jsonCT, `{"title":"x"}`, 400, "VALIDATION_ERROR"},
	} {
		var body io.Reader
		if c.body != "" {
			body = strings.NewReader(c.body)
		}
		st, hdr, b := s.do(t, c.method, c.path, c.ct, body)
		what := c.method + " " + c.path
		if st != c.status {
			t.Errorf("%s: status %d, want %d (%s)", what, st, c.status, b)
			continue
		}
		if code := errorCode(t, what, b); code != c.code {
			t.Errorf("%s: code %s, want %s", what, code, c.code)
		}
		if st == 405 && hdr.Get("Allow") == "" {
			t.Errorf("%s: 405 without Allow", what)
		}
	}
	// The graph and the OpenAPI document.
	st, _, body = s.do(t, "GET", "/graph.json", "", nil)
	g, err := graph.Load(body)
	if st != 200 || err != nil || g.Name != "tasks" {
		t.Errorf("GET /graph.json: %d %v", st, err)
	}
	st, _, body = s.do(t, "GET", "/openapi.json", "", nil)
	if st != 200 || !bytes.Contains(body, []byte(`"openapi":"3.1`)) && !bytes.Contains(body, []byte(`"openapi": "3.1`)) {
		t.Errorf("GET /openapi.json: %d %.80s", st, body)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	out := s.out.String()
	for _, want := range []string{"/api/tasks/{id}/complete", "501 NOT_IMPLEMENTED", "GET /api/tasks/t_1 200", "POST /api/tasks 413", "shutting down"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// unseenContract is a contract no other test uses, written here so the
// probes below meet shapes the examples do not have.
const unseenContract = `package unseen

import "stitchkit.dev/stitchkit/schema"

#Item: {sku: string & =~"^[A-Z]{3}-[0-9]+$", qty: int & >=1, note?: string}

schema.#Contract & {
	name:    "unseen"
	version: "3.0.0"
	errors: OUT_OF_STOCK: {status: 409, message: "Out of stock"}
	services: orders: {
		prefix: "/shop/orders"
		operations: {
			place: {
				method: "POST", path: "/{region}", desc: "Place an order"
				#params: {region: "eu" | "us"}
				#input: {items: [...#Item], rush?: bool}
				#output: {id: string, total: number}
				errors: ["OUT_OF_STOCK"]
				examples: [{params: {region: "eu"}, input: {items: [{sku: "ABC-1", qty: 2}]}, output: {id: "o1", total: 9.5}}]
			}
			amend: {
				method: "PATCH", path: "/{region}/{id}", desc: "Amend an order"
				#params: {region: "eu" | "us", id: string}
				#input: {note: string}
				#output: {ok: bool}
				examples: [{params: {region: "us", id: "o1"}, input: {note: "leave at door"}, output: {ok: true}}]
			}
			cancel: {
				method: "DELETE", path: "/{region}/{id}", desc: "Cancel an order"
				#params: {region: "eu" | "us", id: string}
				examples: [{params: {region: "eu", id: "o1"}}]
			}
			find: {
				method: "GET", path: "/", desc: "Find orders"
				#query: {sku?: [...string], min?: number, open?: bool}
				#output: {ids: [...string]}
				examples: [{query: {sku: ["ABC-1"], open: true}, output: {ids: ["o1"]}}]
			}
		}
	}
}
`

// TestServeProbes drives stitch serve on several contracts with probes
// derived from the graph alone, as a contract the server has never seen
// would be probed: each example request answers its example; then, per
// route, a wrong verb, and for routes with a body a wrong content type, an
// oversized body, a deeply nested body, malformed JSON and a body of the
// wrong shape. Every refusal must carry a registry code and the server
// must keep answering.
func TestServeProbes(t *testing.T) {
	defer goleak.VerifyNone(t)
	unseen := filepath.Join(t.TempDir(), "unseen")
	if err := os.MkdirAll(unseen, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(unseen, "unseen.cue"), []byte(unseenContract), 0o644); err != nil {
		t.Fatal(err)
	}
	dirs := []string{unseen, "../../examples/minimal", "../../pkg/gen/testdata/mappings", "../../examples/tasks"}
	for _, name := range unseenContracts {
		dirs = append(dirs, mounttest.UnseenDir(name))
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			g, err := check.Compile(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			registry := map[string]bool{}
			for _, e := range g.ErrorRegistry() {
				registry[e.Code] = true
			}
			s := startServe(t, dir)
			defer func() {
				if err := s.stop(); err != nil {
					t.Error(err)
				}
			}()
			refused := func(what string, st int, b []byte, want ...int) {
				t.Helper()
				if !slices.Contains(want, st) {
					t.Errorf("%s: status %d, want %v (%s)", what, st, want, b)
					return
				}
				if code := errorCode(t, what, b); !registry[code] {
					t.Errorf("%s: code %s is not in the registry", what, code)
				}
			}
			probes := 0
			for _, r := range project.HTTPRoutes(g, project.HTTPOptions{Prefix: "/api"}) {
				op := r.Op
				// A wrong verb on the route's path.
				path := fillPath(r.Path, nil)
				if m := otherMethod(g, path); m != "" {
					st, hdr, b := s.do(t, m, path, "", nil)
					refused(m+" "+path, st, b, 405)
					if !strings.Contains(hdr.Get("Allow"), r.Method) {
						t.Errorf("%s %s: Allow %q lacks %s", m, path, hdr.Get("Allow"), r.Method)
					}
					probes++
				}
				if len(op.Examples) == 0 {
					continue
				}
				var ex map[string]json.RawMessage
				if err := json.Unmarshal(op.Examples[0], &ex); err != nil {
					t.Fatal(err)
				}
				path = fillPath(r.Path, ex["params"]) + queryString(t, ex["query"])
				body, ct := "", ""
				if op.Input != "" {
					body, ct = string(ex["input"]), "application/json"
				}
				st, _, b := s.do(t, r.Method, path, ct, strings.NewReader(body))
				probes++
				switch {
				case op.Output != "" && r.Method != "HEAD":
					want, _ := graph.Canonical(ex["output"])
					got, err := graph.Canonical(json.RawMessage(b))
					if st != 200 || err != nil || !bytes.Equal(want, got) {
						t.Errorf("%s %s: %d %s, want 200 %s", r.Method, path, st, b, want)
					}
				case st != 200 && st != 204:
					t.Errorf("%s %s: %d %s", r.Method, path, st, b)
				}
				if op.Input == "" {
					continue
				}
				what := r.Method + " " + path
				st, _, b = s.do(t, r.Method, path, "text/plain", strings.NewReader(body))
				refused(what+" text/plain", st, b, 415)
				st, _, b = s.do(t, r.Method, path, "application/json", strings.NewReader(`{"x":"`+strings.Repeat("a", 1<<20)+`"}`))
				refused(what+" oversized", st, b, 413)
				st, _, b = s.do(t, r.Method, path, "application/json", strings.NewReader(`{"x":`+strings.Repeat("[", 1000)+strings.Repeat("]", 1000)+`}`))
				refused(what+" nested", st, b, 400)
				st, _, b = s.do(t, r.Method, path, "application/json", strings.NewReader(`{"x":`))
				refused(what+" malformed", st, b, 400)
				st, _, b = s.do(t, r.Method, path, "application/json", strings.NewReader(`[1,2]`))
				refused(what+" wrong shape", st, b, 400)
				st, _, b = s.do(t, r.Method, path, "application/json", strings.NewReader("\xff\xfe"))
				refused(what+" not UTF-8", st, b, 400)
				probes += 6
			}
			// Still healthy.
			st, _, b := s.do(t, "GET", "/graph.json", "", nil)
			if st != 200 || len(b) == 0 {
				t.Errorf("after %d probes GET /graph.json answered %d", probes, st)
			}
			t.Logf("%d probes", probes)
		})
	}
}

// fillPath substitutes a route's wildcards with an example's params (or
// "x" when there is none).
func fillPath(route string, params json.RawMessage) string {
	var p map[string]any
	_ = json.Unmarshal(params, &p)
	segs := strings.Split(route, "/")
	for i, seg := range segs {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			name := strings.TrimSuffix(seg[1:len(seg)-1], "...")
			v, ok := p[name]
			if !ok {
				segs[i] = "x"
				continue
			}
			s := fmt.Sprint(v)
			if strings.HasSuffix(seg, "...}") {
				parts := strings.Split(s, "/")
				for j := range parts {
					parts[j] = url.PathEscape(parts[j])
				}
				segs[i] = strings.Join(parts, "/")
			} else {
				segs[i] = url.PathEscape(s)
			}
		}
	}
	return strings.Join(segs, "/")
}

// queryString encodes an example's query: lists as repeated keys, scalars
// as their JSON text (strings without quotes).
func queryString(t *testing.T, query json.RawMessage) string {
	if query == nil {
		return ""
	}
	var q map[string]any
	if err := json.Unmarshal(query, &q); err != nil {
		t.Fatal(err)
	}
	vals := url.Values{}
	for k, v := range q {
		if l, ok := v.([]any); ok {
			for _, e := range l {
				vals.Add(k, scalarText(e))
			}
			continue
		}
		vals.Add(k, scalarText(v))
	}
	return "?" + vals.Encode()
}

func scalarText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// otherMethod returns a method no route of g answers on the concrete
// path, or "". A ServeMux holding every route is the oracle (a literal
// route such as /tasks/search is also matched by /tasks/{id}).
func otherMethod(g *graph.Graph, path string) string {
	mux := http.NewServeMux()
	for _, r := range project.HTTPRoutes(g, project.HTTPOptions{Prefix: "/api"}) {
		mux.Handle(r.Pattern(), http.NotFoundHandler())
	}
	for _, m := range []string{"PATCH", "PUT", "DELETE", "POST", "GET"} {
		req, err := http.NewRequest(m, "http://x"+path, nil)
		if err != nil {
			return ""
		}
		if _, pattern := mux.Handler(req); pattern == "" {
			return m
		}
	}
	return ""
}

// TestServeGraphJSON serves a compiled graph.json (no CUE at hand) and
// serves it back byte for byte.
func TestServeGraphJSON(t *testing.T) {
	defer goleak.VerifyNone(t)
	g, err := check.Compile(context.Background(), "../../examples/minimal")
	if err != nil {
		t.Fatal(err)
	}
	b, err := g.Encode()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "graph.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, path)
	st, _, body := s.do(t, "GET", "/graph.json", "", nil)
	if st != 200 || !bytes.Equal(body, b) {
		t.Errorf("GET /graph.json: %d, %d bytes (want the %d served)", st, len(body), len(b))
	}
	st, _, body = s.do(t, "POST", "/api/notes", "application/json", strings.NewReader(`{"text":"hello"}`))
	if st != 200 || string(body) != `{"id":"n1","text":"hello"}` {
		t.Errorf("POST /api/notes: %d %s", st, body)
	}
	st, _, body = s.do(t, "GET", "/api/notes", "", nil)
	if st != 501 || errorCode(t, "GET /api/notes", body) != "NOT_IMPLEMENTED" {
		t.Errorf("GET /api/notes: %d %s", st, body)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
}

// TestServeStaysHealthy fires a burst of bad requests at stitch serve —
// through a client and as raw bytes on TCP (bodies cut off mid-way,
// request lines net/http refuses, oversized chunked bodies, huge headers,
// clients that vanish) — and checks that every answered HTTP request got a
// registry envelope, that the server still answers, and that its
// goroutines come back to where they were (no handler left blocked).
func TestServeStaysHealthy(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, name := range unseenContracts {
		t.Run(name, func(t *testing.T) {
			g := mounttest.Unseen(t, name)
			registry := map[string]bool{}
			for _, e := range g.ErrorRegistry() {
				registry[e.Code] = true
			}
			s := startServe(t, mounttest.UnseenDir(name))
			defer func() {
				if err := s.stop(); err != nil {
					t.Error(err)
				}
			}()
			addr := strings.TrimPrefix(s.base, "http://")
			routes := project.HTTPRoutes(g, project.HTTPOptions{Prefix: "/api"})
			s.do(t, "GET", "/graph.json", "", nil)
			// Not synchronisation: a pause before the baseline so that the
			// request's own goroutines have ended; one still running only
			// raises the baseline (a weaker check, never a false failure).
			time.Sleep(50 * time.Millisecond)
			before := runtime.NumGoroutine()

			big := `{"x":"` + strings.Repeat("a", 2<<20) + `"}`
			var wg sync.WaitGroup
			var mu sync.Mutex
			var problems []string
			report := func(format string, args ...any) {
				mu.Lock()
				defer mu.Unlock()
				problems = append(problems, fmt.Sprintf(format, args...))
			}
			for i, r := range routes {
				path := fillPath(r.Path, nil)
				for _, req := range []struct{ method, ct, body string }{
					{r.Method, "application/json", big},
					{r.Method, "application/json", `{"a":` + strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5001)},
					{r.Method, "text/plain", "hello"},
					{r.Method, "application/json", "{\"a\":\"\xff\"}"},
					{r.Method, "application/json", `{"a":1,"a":2}`},
					{r.Method, "application/json", `{"n":1e400}`},
					{"BREW", "", ""},
				} {
					wg.Add(1)
					go func() {
						defer wg.Done()
						hr, err := http.NewRequest(req.method, s.base+path, strings.NewReader(req.body))
						if err != nil {
							report("%v", err)
							return
						}
						if i%2 == 0 {
							hr.ContentLength = -1 // chunked
						}
						if req.ct != "" {
							hr.Header.Set("Content-Type", req.ct)
						}
						resp, err := s.client.Do(hr)
						if err != nil {
							report("%s %s: %v", req.method, path, err)
							return
						}
						defer resp.Body.Close()
						b, _ := io.ReadAll(resp.Body)
						if resp.StatusCode < 400 || req.method == "HEAD" || r.Method == "HEAD" {
							return
						}
						var env struct {
							Error struct{ Code, Message string }
						}
						if json.Unmarshal(b, &env) != nil || !registry[env.Error.Code] || env.Error.Message == "" {
							report("%s %s: %d %q is not a registry envelope", req.method, path, resp.StatusCode, b)
						}
					}()
				}
				// Raw TCP: a body cut off, a client that leaves, lines net/http refuses.
				for _, raw := range []string{
					r.Method + " " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"a\":",
					r.Method + " " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":",
					"GET " + path + "/%zz HTTP/1.1\r\nHost: x\r\n\r\n",
					"GET " + path + " HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 100<<10) + "\r\n\r\n",
					"\x00\x01\x02 garbage\r\n\r\n",
				} {
					wg.Add(1)
					go func() {
						defer wg.Done()
						c, err := net.DialTimeout("tcp", addr, 5*time.Second)
						if err != nil {
							report("dial: %v", err)
							return
						}
						defer c.Close()
						_ = c.SetDeadline(time.Now().Add(5 * time.Second))
						_, _ = io.WriteString(c, raw)
						if strings.HasSuffix(raw, "\r\n\r\n") {
							_, _ = io.Copy(io.Discard, c) // a complete request: read the answer
						}
					}()
				}
			}
			// MCP: every surface, and one that does not exist, with
			// requests the SDK or the runner must refuse.
			paths := []string{"/mcp/no-such-surface"}
			for _, surface := range mcpSurfaces(t, g) {
				paths = append(paths, mcpPath(surface.Name))
			}
			for _, path := range paths {
				for _, body := range []string{
					`garbage`,
					`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"zz_nope","arguments":{}}}`,
					`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}`,
					`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":` + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + `}`,
					big,
				} {
					wg.Add(1)
					go func() {
						defer wg.Done()
						hr, _ := http.NewRequest("POST", s.base+path, strings.NewReader(body))
						hr.Header.Set("Content-Type", "application/json")
						hr.Header.Set("Accept", "application/json, text/event-stream")
						resp, err := s.client.Do(hr)
						if err != nil {
							report("POST %s: %v", path, err)
							return
						}
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}()
				}
			}
			wg.Wait()
			for _, p := range problems {
				t.Error(p)
			}
			st, _, b := s.do(t, "GET", "/graph.json", "", nil)
			if st != 200 || len(b) == 0 {
				t.Fatalf("after the burst GET /graph.json answered %d", st)
			}
			s.client.CloseIdleConnections()
			deadline := time.Now().Add(10 * time.Second)
			for runtime.NumGoroutine() > before+2 {
				if time.Now().After(deadline) {
					buf := make([]byte, 1<<20)
					t.Fatalf("goroutines: %d before the burst, %d after:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// A client that sends part of a request and then nothing is cut off at the
// read deadline: it does not hold a handler (a goroutine) for ever.
func TestServeCutsOffStalledClients(t *testing.T) {
	defer goleak.VerifyNone(t)
	defer func(h, r time.Duration) { serveReadHeaderTimeout, serveReadTimeout = h, r }(serveReadHeaderTimeout, serveReadTimeout)
	// A second, not less: a loaded machine may not run a healthy request's
	// handler before a shorter read deadline has passed (and Go fails a read
	// past its deadline even when the bytes are there).
	serveReadHeaderTimeout, serveReadTimeout = time.Second, time.Second
	s := startServe(t, mounttest.UnseenDir("library"))
	defer func() {
		if err := s.stop(); err != nil {
			t.Error(err)
		}
	}()
	// A WebSocket outlives the read deadline (the upgrade clears it).
	desk, err := realtime.NewContract(projecttest.New(t, mounttest.Unseen(t, "library"), nil), "desk")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := realtime.Dial(ctx, "ws"+strings.TrimPrefix(s.base, "http")+"/realtime/desk", desk, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// An absence check: a server that applied its read deadline to the
	// upgraded connection would have cut it by now; on a slow machine the
	// wait can only come short of that, never fail a correct server.
	time.Sleep(3 * serveReadTimeout)
	_, err = cl.Request(ctx, 0, "ping", map[string]any{"n": 1})
	if me, ok := mount.AsError(err); !ok || me.Details["code"] != "NOT_IMPLEMENTED" {
		t.Fatalf("a WebSocket past the read deadline: %v", err)
	}
	s.do(t, "GET", "/graph.json", "", nil)
	time.Sleep(50 * time.Millisecond) // as in TestServeStaysHealthy: only settles the baseline
	before := runtime.NumGoroutine()
	addr := strings.TrimPrefix(s.base, "http://")
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for _, raw := range []string{
		"POST /api/v2/books HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"isbn\":",
		"POST /api/v2/books HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n{\"i",
		"POST /mcp/reader HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":",
		"GET /api/v2/books HTTP/1.1\r\nHost: x\r\n",
	} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if _, err := io.WriteString(c, raw); err != nil {
			t.Fatal(err)
		}
	}
	// Each stalled connection is closed by the server: a read sees EOF
	// (or the answer, then EOF) well before the test's own deadline.
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.Copy(io.Discard, c); err != nil {
			t.Errorf("stalled client %d: %v (the server did not close it)", i, err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+2 {
		if time.Now().After(deadline) {
			t.Fatalf("goroutines: %d before, %d after the stalled clients", before, runtime.NumGoroutine())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st, _, _ := s.do(t, "GET", "/api/v2/books", "", nil); st != 200 {
		t.Errorf("after the stalled clients: %d", st)
	}
}

// A body nothing reads (GET with a 1 MiB body) is read to its end after
// the answer, so the client is not reset mid-send and the connection stays
// usable for the next request.
func TestServeReadsUnusedBodies(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := startServe(t, mounttest.UnseenDir("library"))
	defer func() {
		if err := s.stop(); err != nil {
			t.Error(err)
		}
	}()
	c, err := net.Dial("tcp", strings.TrimPrefix(s.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	body := strings.Repeat("x", 1<<20)
	go func() {
		_, _ = fmt.Fprintf(c, "GET /api/v2/books HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		_, _ = io.WriteString(c, "GET /graph.json HTTP/1.1\r\nHost: x\r\n\r\n")
	}()
	br := bufio.NewReader(c)
	for _, want := range []int{200, 200} {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("reading answer (want %d): %v", want, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want || resp.Close {
			t.Fatalf("answer %d (close %v), want %d on a kept connection", resp.StatusCode, resp.Close, want)
		}
	}
}
