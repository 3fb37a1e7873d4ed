package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"stitchkit.dev/stitchkit/pkg/export/openapi"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/httpserver"
	"stitchkit.dev/stitchkit/pkg/mount"
	httpmount "stitchkit.dev/stitchkit/pkg/mount/http"
	"stitchkit.dev/stitchkit/pkg/project"
	"stitchkit.dev/stitchkit/pkg/validate"
)

func init() {
	commandFactories = append(commandFactories, func(env *cliEnv) *cobra.Command {
		var addr string
		cmd := &cobra.Command{
			Use:   "serve [DIR] [--addr 127.0.0.1:8080]",
			Short: "Serve any contract with no Go code: examples or 501",
			Long: `serve compiles the contract in DIR (default: the current directory), or
reads DIR as a graph.json file, and serves it for trying before anything
is implemented:

  /api/...        the HTTP routes, through the real HTTP mount and runner:
                  requests are validated exactly as a real server does, and
                  each operation answers with the output of its first example
                  whose params, query and input equal the request's (else its
                  first example), or 501 NOT_IMPLEMENTED when it has none
  /mcp           the default MCP surface, or /mcp/{surface} each named one:
                  stateless streamable HTTP through the same runner (invalid
                  arguments come back as isError results with the code)
  /graph.json     the compiled graph
  /openapi.json   the OpenAPI 3.1 document of /api

It prints where it listens and one line per request, and stops gracefully on
SIGINT or SIGTERM. The default address is loopback only.`,
			Example: "  stitch serve ./examples/tasks\n  stitch serve graph.json --addr 127.0.0.1:9000",
			Args:    cobra.MaximumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
				defer stop()
				return runServe(ctx, env, dirArg(args), addr)
			},
		}
		cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "listen on `HOST:PORT`")
		return cmd
	})
}

// The mounts of stitch serve. Each one adds routes to the serveState; the
// MCP mount (/mcp, /mcp/{surface}) and the realtime mount
// (/realtime/{contract}) plug in by appending to this list from their own
// files, exactly like commandFactories.
var serveMounts = []func(s *serveState) error{serveHTTP, serveDocuments}

// serveState is what stitch serve assembles: the graph, the runner every
// mount shares (operations bound to their examples), and the routes the
// mounts add.
type serveState struct {
	g         *graph.Graph
	graphJSON []byte
	// runner answers every operation and runtime tool: with an example, or
	// NOT_IMPLEMENTED when it has none. Mounts must use it (not a runner
	// of their own), so every transport answers alike.
	runner *mount.Runner
	// p is the one projection of g (HTTP prefix /api).
	p *project.Projection
	// answers says, per identity ("tasks.get"), whether it answers with an
	// example.
	answers map[string]bool
	// warnings are printed on stderr before serving.
	warnings []string

	routes  []serveRoute
	listing []serveListing
	// shutdown runs beside the HTTP server's shutdown (a mount holding
	// hijacked connections, like realtime, closes them here).
	shutdown []func(context.Context) error
}

// serveRoute sends every request whose path is prefix, or starts with
// prefix + "/", to h.
type serveRoute struct {
	prefix string
	h      http.Handler
}

// serveListing is one line printed under the listen address.
type serveListing struct {
	label, path, note string
}

// handle adds a route for prefix and lists it as label (the path printed is
// path, or prefix when path is empty).
func (s *serveState) handle(prefix string, h http.Handler, label, path, note string) {
	s.routes = append(s.routes, serveRoute{prefix: strings.TrimSuffix(prefix, "/"), h: h})
	if path == "" {
		path = prefix
	}
	s.listing = append(s.listing, serveListing{label: label, path: path, note: note})
}

// newServeState builds the example-answering runner of g and runs every
// mount.
func newServeState(g *graph.Graph, logger io.Writer) (*serveState, error) {
	graphJSON, err := g.Encode()
	if err != nil {
		return nil, err
	}
	// The one projection every mount, the realtime contracts and the
	// OpenAPI document read: the HTTP routes under /api.
	p, err := project.New(g, &project.Options{HTTPPrefix: serveHTTPPrefix})
	if err != nil {
		return nil, err
	}
	s := &serveState{g: g, p: p, graphJSON: graphJSON, answers: map[string]bool{}}
	impl := mount.NewImplementation(g)
	for _, op := range g.Operations() {
		s.bindExamples(impl, op.Service, op.Action, op.Output, op.Examples)
	}
	for _, rt := range g.RuntimeTools {
		s.bindExamples(impl, rt.Identity.Service, rt.Identity.Action, rt.Output, rt.Examples)
	}
	s.runner, err = mount.New(impl, &mount.Options{Projection: p, Logger: slogTo(logger)})
	if err != nil {
		return nil, err
	}
	for _, m := range serveMounts {
		if err := m(s); err != nil {
			return nil, err
		}
	}
	// Longest prefix first, so /mcp/admin wins over /mcp.
	sort.SliceStable(s.routes, func(i, j int) bool { return len(s.routes[i].prefix) > len(s.routes[j].prefix) })
	return s, nil
}

// example is one usable example of an operation: the parts it gives and
// the output it answers with.
type example struct {
	params, query, input []byte // canonical JSON; nil when the example omits the part
	output               json.RawMessage
}

// bindExamples binds service.action to a handler answering with its
// examples. Only examples the schemas accept are used (CUE checked them
// when the contract compiled; a hand-edited graph.json may not hold);
// with none, the identity stays unbound and answers NOT_IMPLEMENTED.
func (s *serveState) bindExamples(impl *mount.Implementation, service, action string, output graph.Digest, raws []json.RawMessage) {
	id := service + "." + action
	var exs []example
	for i, raw := range raws {
		var parts map[string]json.RawMessage
		if err := json.Unmarshal(raw, &parts); err != nil {
			s.warnings = append(s.warnings, fmt.Sprintf("%s: example %d is not an object; ignored", id, i))
			continue
		}
		ex := example{}
		canon := func(part string) []byte {
			if p, ok := parts[part]; ok {
				c, err := graph.Canonical(p)
				if err == nil {
					return c
				}
			}
			return nil
		}
		ex.params, ex.query, ex.input = canon("params"), canon("query"), canon("input")
		if output != "" {
			out, ok := parts["output"]
			if !ok {
				continue // an example of the request only
			}
			v, err := validate.DecodeJSON(out, &validate.DecodeOptions{MaxDepth: 10000})
			if err == nil {
				err = s.p.Validators().Get(output).Validate(v)
			}
			if err != nil {
				s.warnings = append(s.warnings, fmt.Sprintf("%s: example %d's output does not match #output (%v); ignored", id, i, err))
				continue
			}
			ex.output = out
		}
		exs = append(exs, ex)
	}
	if len(exs) == 0 {
		return
	}
	s.answers[id] = true
	_ = impl.Handle(service, action, func(ctx context.Context, c *mount.Call) (json.RawMessage, error) {
		return pickExample(c, exs).output, nil
	})
}

// pickExample returns the first example whose given parts equal the call's
// validated ones (defaults applied), else the first example.
func pickExample(c *mount.Call, exs []example) example {
	var params, query, input []byte
	eq := func(want []byte, have *[]byte, v any) bool {
		if want == nil {
			return true
		}
		if *have == nil {
			if v == nil {
				return false
			}
			b, err := graph.Canonical(v)
			if err != nil {
				return false
			}
			*have = b
		}
		return string(want) == string(*have)
	}
	for _, ex := range exs {
		var p, q, in any
		if c.Params != nil {
			p = c.Params
		}
		if c.Query != nil {
			q = c.Query
		}
		in = c.Input
		if eq(ex.params, &params, p) && eq(ex.query, &query, q) && eq(ex.input, &input, in) {
			return ex
		}
	}
	return exs[0]
}

// serveHTTPPrefix is the HTTP prefix of the projection `stitch serve`
// serves.
const serveHTTPPrefix = "/api"

// serveHTTP mounts the contract's HTTP routes under /api through the real
// HTTP mount.
func serveHTTP(s *serveState) error {
	const prefix = serveHTTPPrefix
	h, err := httpmount.New(s.runner, nil)
	if err != nil {
		return err
	}
	routes := s.p.Routes()
	answering := 0
	for _, r := range routes {
		if s.answers[r.Op.ID()] {
			answering++
		}
	}
	s.handle(prefix, h, "HTTP API", prefix, fmt.Sprintf("%d routes, %d answer with examples, the others 501", len(routes), answering))
	for _, r := range routes {
		note := "501 NOT_IMPLEMENTED (no example)"
		if s.answers[r.Op.ID()] {
			note = "example"
		}
		s.listing = append(s.listing, serveListing{label: "  " + r.Method, path: r.Path, note: note})
	}
	return nil
}

// serveDocuments serves the compiled graph and the OpenAPI document.
func serveDocuments(s *serveState) error {
	doc, err := openapi.Generate(s.p, nil)
	if err != nil {
		return err
	}
	s.handle("/graph.json", staticJSON(s, s.graphJSON), "graph", "", "")
	s.handle("/openapi.json", staticJSON(s, doc), "OpenAPI", "", "")
	return nil
}

// staticJSON answers GET and HEAD with b; other methods get 405.
func staticJSON(s *serveState, b []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			s.writeError(w, r, mount.CodeMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(len(b)))
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			_, _ = w.Write(b)
		}
	})
}

// writeError answers with a framework code in the HTTP error envelope.
func (s *serveState) writeError(w http.ResponseWriter, r *http.Request, code mount.Code) {
	e := s.runner.Normalize(r.Context(), nil, mount.NewError(code, ""))
	body := e.HTTPEnvelope()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(e.Status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// ServeHTTP routes a request to the mount owning its path (a request for
// any other path is 404 NOT_FOUND). It does not clean or redirect paths:
// each mount judges its own (the HTTP mount answers an unclean path 404).
func (s *serveState) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	for _, rt := range s.routes {
		if p == rt.prefix || strings.HasPrefix(p, rt.prefix+"/") {
			rt.h.ServeHTTP(w, r)
			return
		}
	}
	s.writeError(w, r, mount.CodeNotFound)
}

// runServe serves the contract at src on addr until ctx is done, then shuts
// down gracefully.
func runServe(ctx context.Context, env *cliEnv, src, addr string) error {
	g, err := loadContract(ctx, src, env.stderr)
	if err != nil {
		return err
	}
	out := &lockedWriter{w: env.stdout}
	s, err := newServeState(g, env.stderr)
	if err != nil {
		return exitWith(exitFailure, err)
	}
	for _, w := range s.warnings {
		fmt.Fprintf(env.stderr, "stitch serve: %s\n", w)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return exitWith(exitFailure, err)
	}
	base := "http://" + ln.Addr().String()
	var b strings.Builder
	fmt.Fprintf(&b, "stitch serve: %s %s listening on %s\n", g.Name, g.Version, base)
	for _, l := range s.listing {
		line := fmt.Sprintf("  %-8s %s%s", l.label, base, l.path)
		if strings.HasPrefix(l.label, "  ") {
			line = fmt.Sprintf("  %-8s %s", l.label, l.path)
		}
		if l.note != "" {
			line = fmt.Sprintf("%-60s %s", line, l.note)
		}
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	out.Write([]byte(b.String()))

	srv := httpserver.New(logRequests(s, out), &httpserver.Options{
		ReadHeaderTimeout: serveReadHeaderTimeout,
		ReadTimeout:       serveReadTimeout,
	})
	stopped := make(chan struct{})
	go func() {
		<-ctx.Done()
		fmt.Fprintln(out, "stitch serve: shutting down")
		close(stopped)
	}()
	// Run shuts the realtime mounts down (1001 to every WebSocket client)
	// beside the HTTP server, each with the whole shutdown budget, and
	// returns nil once ctx has ended whatever was still in flight.
	if err := httpserver.Run(ctx, srv, ln, nil, s.shutdown...); err != nil {
		return exitWith(exitFailure, err)
	}
	<-stopped
	return nil
}

// The read deadlines of stitch serve (httpserver's defaults): a client
// that stops sending its headers or its body is cut off instead of holding
// a goroutine (and a connection) forever. The whole request, body
// included, must arrive within serveReadTimeout — 1 MiB at the body cap is
// far below it on any link — and every answer stitch serve gives is
// immediate. A WebSocket upgrade clears the deadline for the life of the
// socket. (Variables, so a test can shorten them.)
var (
	serveReadHeaderTimeout = httpserver.DefaultReadHeaderTimeout
	serveReadTimeout       = httpserver.DefaultReadTimeout
)

// slogTo logs the runner's internal errors (the causes it never sends) as
// text on w.
func slogTo(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

// lockedWriter serialises the lines concurrent requests print.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// logRequests prints one line per request: method, path (the query string
// is not printed: it may carry secrets), status, duration.
func logRequests(h http.Handler, out io.Writer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			q := ""
			if r.URL.RawQuery != "" {
				q = "?…"
			}
			status := sw.status
			if status == 0 {
				status = http.StatusOK
			}
			fmt.Fprintf(out, "%s %s%s %d %s\n", r.Method, r.URL.EscapedPath(), q, status, time.Since(start).Round(time.Microsecond))
		}()
		h.ServeHTTP(sw, r)
		if r.Body != nil && r.Body != http.NoBody && !sw.hijacked {
			// A request may still be sending a body nothing read: a
			// refused one (413, 415, ...), or one on a route that takes
			// none (GET with a body). Closing the connection on unread
			// data makes the kernel reset it, and the client can lose
			// the answer: read and discard a bounded remainder first
			// (after sending a refusal, so the client sees it at once; a
			// success stays buffered, keeping its Content-Length). A
			// body already read to its end costs one Read.
			if sw.status >= 400 {
				_ = http.NewResponseController(w).Flush()
			}
			_, _ = io.CopyN(io.Discard, r.Body, maxDrain)
		}
	})
}

// maxDrain bounds what a refused request may still send.
const maxDrain = 4 << 20

// statusWriter records the status a handler writes. It passes Flush and
// Hijack through (MCP streams, WebSocket upgrades) and unwraps for
// http.ResponseController.
type statusWriter struct {
	http.ResponseWriter
	status   int
	hijacked bool
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if w.status == 0 {
		w.status = http.StatusSwitchingProtocols
	}
	w.hijacked = true
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
