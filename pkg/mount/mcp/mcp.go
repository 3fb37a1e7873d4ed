package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
	"stitchkit.dev/stitchkit/pkg/project"
)

// DefaultMaxBodyBytes is the request body cap when Options.MaxBodyBytes is
// zero: the HTTP mount's default, well under the SDK's own 4 MiB.
const DefaultMaxBodyBytes = 1 << 20

// DefaultWriteTimeout is Options.WriteTimeout's default.
const DefaultWriteTimeout = 30 * time.Second

// DefaultPrefix is the path the handler serves when Options.Prefix is empty.
const DefaultPrefix = "/mcp"

// Options configures [New]; nil means defaults.
type Options struct {
	// Prefix is the path the handler is mounted at (DefaultPrefix, "/mcp",
	// when empty; "/" for the root). The default surface is served at
	// Prefix itself, each named surface at Prefix + "/" + name. Any other
	// path is refused with 404 NOT_FOUND before any SDK server is touched.
	Prefix string

	// Stateful keeps MCP sessions (Mcp-Session-Id) between requests.
	// The default is stateless streamable HTTP: every request stands alone,
	// so replicas behind any load balancer serve the same surfaces.
	Stateful bool
	// SessionTimeout closes a stateful session after this long without a
	// request; zero keeps sessions until the client deletes them.
	SessionTimeout time.Duration
	// EventStream answers requests with text/event-stream instead of a
	// plain application/json body.
	EventStream bool

	// Authentication is the runner's (mount.Options.Authenticate): the
	// one edge hook of every transport. It runs before the SDK and before
	// any body byte is read; a refusal is answered without reaching the
	// SDK (401 with WWW-Authenticate: the runner's Challenge, or 403), and
	// the principal it resolves rides in the context to every tool call.
	//
	// With Stateful, tools see the context of the request that opened the
	// session; every later request of the session must still pass the
	// authenticator, and SessionOwner must name the same caller.

	// SessionOwner names the caller of an authenticated context. nil
	// means the principal's Subject. A session id presented by a caller
	// other than the one who opened the session is refused (403
	// FORBIDDEN), since the session's tools run as its opener.
	SessionOwner func(ctx context.Context) string
	// SelectSurface, when set, picks the surface of an authenticated
	// request instead of the path (so that, for example, an admin and a
	// member reach different surfaces at one URL, Prefix itself). It must return a
	// surface the graph declares ("" for the default one); anything else is
	// a server fault, answered 500 before any SDK server is touched.
	SelectSurface func(r *http.Request) (string, error)

	// MaxBodyBytes caps a request body (DefaultMaxBodyBytes when zero). A
	// declared Content-Length over the cap is refused before the SDK
	// (413 PAYLOAD_TOO_LARGE); a chunked body is cut off by the SDK while it
	// reads.
	MaxBodyBytes int64
	// CrossOrigin checks the Origin of browser requests (a new
	// http.CrossOriginProtection, which lets non-browser clients through,
	// when nil). Add trusted origins with its AddTrustedOrigin.
	CrossOrigin *http.CrossOriginProtection

	// Native registers native MCP tools (ADR 0048): it is called once per
	// prepared surface, when the handler is built, with that surface's
	// [Registrar].
	Native func(r *Registrar) error

	// Implementation names the server in the MCP handshake (the graph's
	// name and version when nil).
	Implementation *sdk.Implementation
	// Instructions are a short hint for hosts about the server.
	Instructions string
	// ErrorHint, when set, adds a hint for a tool's failure with a code to
	// the envelope's _hint (after the error's own hint), telling a model
	// how to recover.
	ErrorHint func(tool, code string) string
	// WriteTimeout bounds each write of an answer, from the moment it is
	// written (not from the request's start, so a tool call may run
	// longer): a client that stops reading an answer or a stream is cut
	// off after it. It re-arms the connection's write deadline through
	// http.ResponseController at every write, so an event stream lives as
	// long as its client reads (DefaultWriteTimeout when zero; negative
	// leaves the server's own deadline alone).
	WriteTimeout time.Duration

	// Logger receives server faults (panics, refused requests, SDK
	// warnings). Nil discards them.
	Logger *slog.Logger
}

// Handler serves the prepared MCP surfaces of one graph over streamable
// HTTP and stdio. It is an http.Handler. Every surface's *mcp.Server is
// built once, in [New]; requests only select one.
type Handler struct {
	opts     Options
	prefix   string
	maxBody  int64
	origin   *http.CrossOriginProtection
	logger   *slog.Logger
	surfaces map[string]*surface
	names    []string // surface names in order ("" for the default)
	runner   *mount.Runner
	owners   *owners // stateful sessions and who opened them
}

// surface is one prepared MCP surface and its SDK server.
type surface struct {
	name     string
	prepared *project.Surface
	server   *sdk.Server
	http     http.Handler
	catalog  Catalog
	// tools are what tools/list shows (contract and native), by name.
	tools  map[string]*sdk.Tool
	native []*nativeTool
}

// New prepares every MCP surface of the runner's projection (the default one,
// or each named one) and builds one *mcp.Server for each; every tool call
// runs through r. Preparation errors of the projector, a tool the SDK
// would refuse and every native registration error are returned together;
// nothing panics.
func New(r *mount.Runner, opts *Options) (*Handler, error) {
	if opts == nil {
		opts = &Options{}
	}
	g := r.Graph()
	h := &Handler{opts: *opts, runner: r, surfaces: map[string]*surface{}}
	if h.opts.SessionOwner == nil {
		h.opts.SessionOwner = func(ctx context.Context) string {
			if p := mount.PrincipalFrom(ctx); p != nil {
				return p.Subject
			}
			return ""
		}
	}
	if opts.Stateful && (r.Authenticates() || opts.SessionOwner != nil) {
		h.owners = &owners{m: map[string]*ownerEntry{}, timeout: opts.SessionTimeout}
	}
	h.prefix = strings.TrimSuffix(opts.Prefix, "/")
	if opts.Prefix == "" {
		h.prefix = DefaultPrefix
	}
	h.maxBody = opts.MaxBodyBytes
	if h.maxBody <= 0 {
		h.maxBody = DefaultMaxBodyBytes
	}
	h.origin = opts.CrossOrigin
	if h.origin == nil {
		h.origin = http.NewCrossOriginProtection()
	}
	h.logger = opts.Logger
	if h.logger == nil {
		h.logger = slog.New(slog.DiscardHandler)
	}
	ts := r.Projection().Tools()
	impl := opts.Implementation
	if impl == nil {
		impl = &sdk.Implementation{Name: g.Name, Title: g.Info.Title, Version: g.Version}
	}
	var errs []error
	for i := range ts.Surfaces {
		ps := &ts.Surfaces[i]
		if ps.Transport != graph.MCP {
			continue
		}
		s, err := h.build(impl, ps)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		h.surfaces[ps.Name] = s
		h.names = append(h.names, ps.Name)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return h, nil
}

// Surfaces returns the names of the prepared surfaces ("" is the default
// surface), in graph order.
func (h *Handler) Surfaces() []string { return slices.Clone(h.names) }

// Catalog returns the catalog stamp of a surface.
func (h *Handler) Catalog(surface string) (Catalog, bool) {
	s, ok := h.surfaces[surface]
	if !ok {
		return Catalog{}, false
	}
	return s.catalog, true
}

// Path returns the URL path a surface is served at.
func (h *Handler) Path(surface string) string {
	if surface == "" {
		if h.prefix == "" {
			return "/"
		}
		return h.prefix
	}
	return h.prefix + "/" + surface
}

// build prepares one surface: the SDK server with every contract and
// native tool, the catalog stamp, and the streamable HTTP handler.
func (h *Handler) build(impl *sdk.Implementation, ps *project.Surface) (s *surface, err error) {
	label := project.SurfaceLabel(ps.Transport, ps.Name)
	// AddTool panics on what it cannot serve; every input is checked
	// first, so a panic here is a bug, still never allowed to cross.
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("mcp: %s: the MCP SDK refused a tool: %v", label, r)
		}
	}()
	srv := sdk.NewServer(impl, &sdk.ServerOptions{
		Instructions: h.opts.Instructions,
		Logger:       warnOnly(h.logger),
		// The tool set of a prepared surface never changes; no logging
		// capability is offered.
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}},
	})
	s = &surface{name: ps.Name, prepared: ps, server: srv, tools: map[string]*sdk.Tool{}}
	var errs []error
	for i := range ps.Tools {
		t := &ps.Tools[i]
		tool, err := sdkTool(t)
		ep := h.runner.Endpoint(t.Service, t.Action)
		if err == nil && ep == nil {
			err = fmt.Errorf("the runner has no endpoint %s", t.ID())
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("mcp: %s tool %q: %w", label, t.Name, err))
			continue
		}
		srv.AddTool(tool, h.toolHandler(t.Name, ep, tool.OutputSchema != nil))
		s.tools[t.Name] = tool
	}
	if h.opts.Native != nil && len(errs) == 0 {
		r := &Registrar{h: h, s: s}
		if err := h.opts.Native(r); err != nil {
			errs = append(errs, fmt.Errorf("mcp: %s: native tools: %w", label, err))
		}
		errs = append(errs, r.errs...)
		r.done = true
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	all := make([]*sdk.Tool, 0, len(s.tools))
	for _, t := range s.tools {
		all = append(all, t)
	}
	if s.catalog, err = catalogOf(all); err != nil {
		return nil, fmt.Errorf("mcp: %s: catalog: %w", label, err)
	}
	srv.AddReceivingMiddleware(stamp(s.catalog))
	s.http = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{
		Stateless:           !h.opts.Stateful,
		JSONResponse:        !h.opts.EventStream,
		SessionTimeout:      h.opts.SessionTimeout,
		MaxRequestBodyBytes: h.maxBody,
		Logger:              warnOnly(h.logger),
	})
	return s, nil
}

// sdkTool is the MCP tool a prepared tool is advertised as: its schemas go
// out byte for byte. MCP allows an outputSchema only with "type": "object"
// at its root (and structuredContent only as an object): a tool whose
// #output is anything else (a list, a string, a nullable object) is
// advertised without outputSchema and answers with the JSON as text only
// (clients refuse such a tool otherwise: the MCP Inspector leaves it out of
// tools/list).
func sdkTool(t *project.Tool) (*sdk.Tool, error) {
	if err := objectSchema("input", t.Input); err != nil {
		return nil, err
	}
	tool := &sdk.Tool{Name: t.Name, Description: t.Description, InputSchema: t.Input}
	if t.Output != nil && objectSchema("output", t.Output) == nil {
		tool.OutputSchema = t.Output
	}
	if a := t.Annotations; a != nil {
		tool.Annotations = &sdk.ToolAnnotations{Title: a.Title, DestructiveHint: a.DestructiveHint, OpenWorldHint: a.OpenWorldHint}
		if a.ReadOnlyHint != nil {
			tool.Annotations.ReadOnlyHint = *a.ReadOnlyHint
		}
		if a.IdempotentHint != nil {
			tool.Annotations.IdempotentHint = *a.IdempotentHint
		}
	}
	return tool, nil
}

// objectSchema checks that a schema is a JSON object whose "type" is
// exactly "object": what AddTool would otherwise panic on for an input
// schema, and what MCP requires of an output schema (what names the side
// in the error).
func objectSchema(what string, schema json.RawMessage) error {
	var root map[string]json.RawMessage
	if err := json.Unmarshal(schema, &root); err != nil {
		return fmt.Errorf("%s schema is not a JSON object: %v", what, err)
	}
	if string(root["type"]) != `"object"` {
		return fmt.Errorf(`%s schema must have "type": "object" at its root (has %s)`, what, orNone(root["type"]))
	}
	return nil
}

func orNone(b json.RawMessage) string {
	if b == nil {
		return "none"
	}
	return string(b)
}

// stamp puts the catalog stamp on every tools/list and tools/call result.
// JSON-RPC errors (an unknown tool, a malformed envelope) carry no result
// and so no stamp.
func stamp(c Catalog) sdk.Middleware {
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			res, err := next(ctx, method, req)
			switch r := res.(type) {
			case *sdk.ListToolsResult:
				if r != nil {
					r.Meta = withCatalog(r.Meta, c)
				}
			case *sdk.CallToolResult:
				if r != nil {
					r.Meta = withCatalog(r.Meta, c)
				}
			}
			return res, err
		}
	}
}

// withCatalog returns a fresh `_meta` map: m's entries plus the stamp.
func withCatalog(m sdk.Meta, c Catalog) sdk.Meta {
	out := make(sdk.Meta, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	out[CatalogMetaKey] = c.meta()
	return out
}

// ServeHTTP serves one MCP request. In order, before any SDK server is
// touched or any body byte read: the path selects a surface (404
// NOT_FOUND otherwise); a browser's cross-origin request is refused (403
// FORBIDDEN); a non-loopback Host on a loopback listener is refused (403,
// DNS rebinding — the SDK checks it again); a declared body over the cap
// is refused (413 PAYLOAD_TOO_LARGE); Authenticate runs (401 UNAUTHORIZED
// with WWW-Authenticate, or 403); SelectSurface, if set, picks the surface.
// Then the surface's SDK handler serves the request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, ok := h.surfaceAt(r.URL.Path)
	if !ok && h.opts.SelectSurface != nil && r.URL.Path == h.Path("") {
		// One URL for every caller: SelectSurface decides below.
		ok = true
	}
	if !ok {
		h.writeHTTPError(w, r, mount.Errorf(mount.CodeNotFound, "No MCP surface at %s; surfaces: %s", r.URL.Path, h.pathList()))
		return
	}
	if err := h.origin.Check(r); err != nil {
		h.writeHTTPError(w, r, mount.NewError(mount.CodeForbidden, "Cross-origin request refused"))
		return
	}
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && la != nil && isLoopback(la.String()) && !isLoopback(r.Host) {
		h.writeHTTPError(w, r, mount.Errorf(mount.CodeForbidden, "Host %q is not a loopback name on a loopback listener", r.Host))
		return
	}
	if r.ContentLength > h.maxBody {
		h.writeHTTPError(w, r, mount.Errorf(mount.CodePayloadTooLarge, "Request body of %d bytes exceeds the %d byte limit", r.ContentLength, h.maxBody))
		return
	}
	if h.runner.Authenticates() {
		ctx, e := h.runner.Authenticate(r.Context(), mount.NewEdgeRequest(mount.SourceMCP, r))
		if e != nil {
			if e.Code == mount.CodeUnauthorized {
				w.Header().Set("WWW-Authenticate", h.runner.Challenge())
			}
			h.writeHTTPError(w, r, e)
			return
		}
		r = r.WithContext(ctx)
	}
	if h.opts.SelectSurface != nil {
		var err error
		if name, err = h.selectSurface(r); err != nil {
			h.writeHTTPError(w, r, err)
			return
		}
	}
	if e := h.refuseTransport(w, r); e != nil {
		h.writeHTTPError(w, r, e)
		return
	}
	var body []byte
	if r.Method == http.MethodPost {
		var ok bool
		if body, ok = h.readMessage(w, r); !ok {
			return
		}
	}
	pw := &plainErrors{ResponseWriter: w, writeTimeout: h.opts.WriteTimeout}
	if pw.writeTimeout == 0 {
		pw.writeTimeout = DefaultWriteTimeout
	}
	defer pw.finish(h, r, body)
	w = pw
	s := h.surfaces[name]
	if h.owners != nil {
		if !h.owners.serveOwned(s.http, w, r, h.opts.SessionOwner(r.Context())) {
			h.writeHTTPError(w, r, mount.NewError(mount.CodeForbidden, "This MCP session belongs to another caller"))
		}
		return
	}
	s.http.ServeHTTP(w, r)
}

// refuseTransport answers, with the HTTP error envelope and before the SDK
// is reached, the requests the SDK's streamable transport would refuse in
// plain text: a method it does not serve (405 with Allow), a POST whose
// Content-Type is not application/json (415) or whose Accept takes neither
// application/json nor text/event-stream (400). Its rules are the SDK's
// (v1.8.0, streamable.go), so nothing it accepts is refused here. A stateless
// DELETE is refused too: there is no session to delete.
func (h *Handler) refuseTransport(w http.ResponseWriter, r *http.Request) *mount.Error {
	allow := "POST"
	if h.opts.Stateful {
		allow = "GET, POST, DELETE"
	}
	switch r.Method {
	case http.MethodPost:
	case http.MethodGet:
		if !h.opts.Stateful {
			w.Header().Set("Allow", allow)
			return mount.NewError(mount.CodeMethodNotAllowed, "An MCP endpoint without sessions takes POST only")
		}
		return nil
	case http.MethodDelete:
		if !h.opts.Stateful {
			w.Header().Set("Allow", allow)
			return mount.NewError("METHOD_NOT_ALLOWED", "An MCP endpoint without sessions takes POST only")
		}
		return nil
	default:
		w.Header().Set("Allow", allow)
		return mount.Errorf(mount.CodeMethodNotAllowed, "An MCP endpoint takes %s", allow)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" { // (the common case costs no parse)
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return mount.NewError(mount.CodeUnsupportedMediaType, "An MCP request must have Content-Type application/json")
		}
	}
	jsonOK, streamOK := accepts(r.Header.Values("Accept"))
	if !jsonOK || !streamOK {
		return mount.NewError(mount.CodeBadRequest, "An MCP request's Accept header must take both application/json and text/event-stream")
	}
	return nil
}

// accepts is the SDK's reading of Accept (streamableAccepts): whether the
// values take application/json and text/event-stream, wildcards counted.
func accepts(values []string) (jsonOK, streamOK bool) {
	for _, value := range values {
		for rest, more := value, true; more; {
			var raw string
			raw, rest, more = strings.Cut(rest, ",")
			base, _, _ := strings.Cut(strings.TrimSpace(raw), ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

// selectSurface runs SelectSurface; a surface the graph does not declare
// is a server fault (logged, answered 500).
func (h *Handler) selectSurface(r *http.Request) (name string, err error) {
	defer func() {
		if p := recover(); p != nil {
			name, err = "", fmt.Errorf("mcp: SelectSurface panicked: %v", p)
		}
	}()
	name, err = h.opts.SelectSurface(r)
	if err != nil {
		return "", err
	}
	if _, ok := h.surfaces[name]; !ok {
		return "", fmt.Errorf("mcp: SelectSurface returned %q, which is not a surface (surfaces: %s)", name, quoteAll(h.names))
	}
	return name, nil
}

// surfaceAt maps a request path to a surface name.
func (h *Handler) surfaceAt(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, h.prefix)
	if !ok {
		return "", false
	}
	rest = strings.TrimPrefix(rest, "/")
	if strings.Contains(rest, "/") {
		return "", false
	}
	_, ok = h.surfaces[rest]
	return rest, ok
}

func (h *Handler) pathList() string {
	paths := make([]string, len(h.names))
	for i, n := range h.names {
		paths[i] = h.Path(n)
	}
	return strings.Join(paths, ", ")
}

// isLoopback reports whether a host or host:port is a loopback name.
func isLoopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Server returns the SDK server of a surface: the raw escape hatch. Tools
// added to it directly get none of the mount's guarantees (no identity,
// hooks, validation, catalog stamp or manifest row); prefer
// [Registrar.RegisterTool].
func (h *Handler) Server(surface string) (*sdk.Server, bool) {
	s, ok := h.surfaces[surface]
	if !ok {
		return nil, false
	}
	return s.server, true
}

// Run serves one surface over an MCP transport (stdio, an in-memory pipe,
// a child's pipes) until the client disconnects or ctx is done. The
// identity the tools see is the one ctx carries: resolved once, by the
// caller, at startup.
func (h *Handler) Run(ctx context.Context, surface string, t sdk.Transport) error {
	s, ok := h.surfaces[surface]
	if !ok {
		return mount.Errorf(mount.CodeNotFound, "No MCP surface %q; surfaces: %s", surface, quoteAll(h.names))
	}
	return s.server.Run(ctx, t)
}

// ServeStdio serves one surface over standard input and output (what
// Claude Desktop and the MCP Inspector start as a child process), as
// [Handler.ServeLines] does: a garbage line is answered with a JSON-RPC
// error, and requests still running when the input ends are answered.
// Nothing else may write to standard output meanwhile.
func (h *Handler) ServeStdio(ctx context.Context, surface string) error {
	return h.ServeLines(ctx, surface, os.Stdin, os.Stdout)
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// warnOnly passes a logger's warnings and errors through to the SDK, which
// logs a line at info level for every stateless request.
func warnOnly(l *slog.Logger) *slog.Logger {
	return slog.New(levelFloor{l.Handler(), slog.LevelWarn})
}

type levelFloor struct {
	slog.Handler
	min slog.Level
}

func (f levelFloor) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= f.min && f.Handler.Enabled(ctx, l)
}

func (f levelFloor) WithAttrs(a []slog.Attr) slog.Handler {
	return levelFloor{f.Handler.WithAttrs(a), f.min}
}

func (f levelFloor) WithGroup(n string) slog.Handler {
	return levelFloor{f.Handler.WithGroup(n), f.min}
}
