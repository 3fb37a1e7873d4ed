// Package httpmount serves a contract's HTTP routes: an [http.Handler] on
// Go ServeMux patterns that runs every request through the shared runner
// (package mount), so HTTP answers exactly as the tool transports do.
//
// Start with [New]:
//
//	g, err := graph.Load(graphJSON)                   // or check.Compile, the one compile
//	p, err := project.New(g, &project.Options{HTTPPrefix: "/api"})
//	impl := mount.NewImplementation(g)
//	impl.Handle("tasks", "get", getTask)              // bind handlers
//	runner, err := mount.New(impl, &mount.Options{Projection: p})
//	h, err := httpmount.New(runner, nil)
//	http.Handle("/api/", h)
//
// The routes are the runner's projection's ([project.Projection.Routes],
// with its HTTP prefix): the ServeMux patterns `stitch vet` checks, and the
// ones the manifest and the OpenAPI export built from the same projection
// list, so a contract that vets clean always mounts. Each request:
//
//   - gets an x-request-id response header ([Options.RequestID]);
//   - with CORS configured, an OPTIONS preflight is answered first (CORS is
//     off unless [Options.CORS] is set);
//   - no route for the path: 404 NOT_FOUND; a route for the path but not
//     the method: 405 METHOD_NOT_ALLOWED with an Allow header listing the
//     methods that path answers (a GET route answers HEAD too); a path that
//     is not in clean form ("/a/../b", "//a") is 404 rather than a
//     redirect, and the bare prefix of a route ending in a rest parameter
//     ("/files" of "/files/{path...}") is that route with an empty rest,
//     as "/files/" is (never ServeMux's redirect);
//   - the runner's authenticator (mount.Options.Authenticate), when set,
//     resolves the caller from the headers first: a refusal is its
//     envelope (401 with WWW-Authenticate, or 403), and the principal
//     reaches every hook and handler as Call.Principal;
//   - path parameters are read as their #params types and validated before
//     the runner's Authorize hook, which sees no query and no body;
//   - after authorization the query string is read as the #query types
//     (a repeated key is a list; a malformed query string is 400
//     BAD_REQUEST) and, for an operation with #input (POST, PUT, PATCH),
//     the body: it must be application/json and not content-encoded (else
//     415 UNSUPPORTED_MEDIA_TYPE), is capped while it is read ([Options.MaxBodyBytes],
//     default 1 MiB, per operation [Options.OperationMaxBodyBytes]; over the
//     cap 413 PAYLOAD_TOO_LARGE), may be empty (= {}) and is nesting-capped
//     by the runner (mount.Options.MaxDepth). An operation without #input
//     never reads the body;
//   - success is 200 with the JSON output, 204 without #output, 200 with no
//     body for a HEAD operation; an output that does not match #output is
//     500 INTERNAL_SERVER_ERROR;
//   - a failure is the runner's normalised error as
//     {"error":{"code","message","details"?}} with its registry status
//     (validation issues: at most 20 in details.issues).
//
// Hooks reach the *http.Request through [Request].
package httpmount

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
	"stitchkit.dev/stitchkit/pkg/project"
)

// DefaultMaxBodyBytes is the body cap when Options.MaxBodyBytes is 0.
const DefaultMaxBodyBytes = 1 << 20

// The upload deadline of Options.MinUploadRate: a body larger than the
// default cap must arrive within DefaultUploadGrace plus its cap at
// DefaultMinUploadRate.
const (
	DefaultMinUploadRate = 64 << 10
	DefaultUploadGrace   = 30 * time.Second
)

// Options configures [New]. A nil *Options means defaults.
type Options struct {
	// MaxBodyBytes caps a request body (0 = DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// OperationMaxBodyBytes overrides the cap per operation, keyed by
	// identity ("tasks.upload").
	OperationMaxBodyBytes map[string]int64
	// CORS enables cross-origin requests; nil leaves CORS off (no
	// Access-Control-* header is ever written).
	CORS *CORS
	// RequestID returns the x-request-id of a request. nil means: the
	// request's own X-Request-Id when it is 1–128 characters of
	// [A-Za-z0-9._:-], else a fresh process-unique id.
	RequestID func(*http.Request) string
	// MinUploadRate is the slowest average rate, in bytes a second, at
	// which the body of an operation whose cap is above
	// DefaultMaxBodyBytes must arrive (DefaultMinUploadRate when 0). For
	// such an operation the mount moves the connection's read deadline
	// (through http.ResponseController) to DefaultUploadGrace plus the
	// cap at this rate, so a large upload is not cut by the server's
	// ReadTimeout, which is sized for ordinary bodies. Negative leaves the
	// server's deadline alone.
	MinUploadRate int64
}

// CORS configures cross-origin resource sharing.
type CORS struct {
	// Origins are the allowed origins ("https://app.example.com"), or
	// "*" for any. Required: an empty list allows none.
	Origins []string
	// AllowHeaders are the request headers a preflight allows; nil means
	// Content-Type, Authorization and X-Request-Id.
	AllowHeaders []string
	// AllowCredentials sends Access-Control-Allow-Credentials: true (and
	// then echoes the origin instead of "*").
	AllowCredentials bool
	// MaxAge is how long (seconds) a browser may cache a preflight; 0
	// sends none.
	MaxAge int
}

// Handler is the HTTP mount. It is safe for concurrent use.
type Handler struct {
	runner *mount.Runner
	mux    *http.ServeMux
	opts   Options
	ids    *slots // X-Request-Id values
	json   *slots // Content-Type: application/json values
	// rest maps the ServeMux pattern of each route ending in a rest
	// wildcard ("GET /files/{path...}") to the number of "/" in the
	// pattern without it ("/files": 1); restSlashes holds those counts.
	// ServeMux redirects a request for the bare prefix ("/files") to
	// "/files/"; the mount serves it as that path instead (the rest is
	// empty), so no request ever meets a redirect.
	rest        map[string]int
	restSlashes map[int]bool
}

// route is one served operation, with everything about it that does not
// depend on the request.
type route struct {
	h     *Handler
	ep    *mount.Endpoint
	names []string // path wildcard names
	// params[i] reads the wildcard names[i] as its #params type.
	params  []*project.WireField
	maxBody int64
	head    bool
}

// New builds the mount of every HTTP route of the runner's projection
// ([project.Projection.Routes], whose HTTP prefix they carry).
func New(runner *mount.Runner, opts *Options) (*Handler, error) {
	h := &Handler{runner: runner, mux: http.NewServeMux()}
	if opts != nil {
		h.opts = *opts
	}
	if h.opts.MaxBodyBytes <= 0 {
		h.opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if h.opts.RequestID == nil {
		var b [6]byte
		_, _ = rand.Read(b[:])
		h.ids = idSlots(hex.EncodeToString(b[:]) + "-")
	} else {
		h.ids = constSlots("")
	}
	h.json = constSlots("application/json")
	for _, r := range runner.Projection().Routes() {
		ep := runner.Endpoint(r.Op.Service, r.Op.Action)
		if ep == nil {
			return nil, fmt.Errorf("httpmount: the runner has no endpoint for %s", r.Op.ID())
		}
		rt := &route{h: h, ep: ep, names: graph.PathNames(r.Path), maxBody: h.opts.MaxBodyBytes, head: r.Method == http.MethodHead}
		for _, n := range rt.names {
			// A name #params does not declare keeps its string (as
			// [project.WireObject.Coerce] does), so validation refuses it.
			f := &project.WireField{Name: n}
			if w := ep.WireParams(); w != nil && w.Field(n) != nil {
				f = w.Field(n)
			}
			rt.params = append(rt.params, f)
		}
		if n, ok := h.opts.OperationMaxBodyBytes[r.Op.ID()]; ok && n > 0 {
			rt.maxBody = n
		}
		if strings.HasSuffix(r.Path, "...}") {
			if h.rest == nil {
				h.rest, h.restSlashes = map[string]int{}, map[int]bool{}
			}
			n := strings.Count(r.Path, "/") - 1
			h.rest[r.MuxPattern()] = n
			h.restSlashes[n] = true
		}
		h.mux.Handle(r.MuxPattern(), rt)
	}
	// Every other request: 404 or 405. A bare "/" pattern is less specific
	// than every route in both method and path, so it never conflicts.
	h.mux.HandleFunc("/", h.noRoute)
	return h, nil
}

// Request returns the *http.Request of a call made through this mount
// (hooks use it to read credentials), or nil.
func Request(c *mount.Call) *http.Request {
	r, _ := c.Native.(*http.Request)
	return r
}

// ServeHTTP implements [http.Handler].
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header()["X-Request-Id"] = h.requestID(r)
	if h.opts.CORS != nil && h.cors(w, r) {
		return
	}
	if !utf8.ValidString(r.URL.Path) {
		// A path is text: bytes that are not UTF-8 would reach handlers as
		// names that cannot be listed back or fetched again.
		h.writeError(w, r, h.runner.Normalize(r.Context(), nil, mount.NewError(mount.CodeBadRequest, "The request path is not valid UTF-8")))
		return
	}
	p := cleanCheckPath(r.URL)
	if !isCleanPath(p) {
		h.writeError(w, r, h.runner.Normalize(r.Context(), nil, mount.NewError(mount.CodeNotFound, "")))
		return
	}
	if h.restSlashes != nil && !strings.HasSuffix(p, "/") && h.restSlashes[strings.Count(p, "/")] {
		r = h.restPrefix(r)
	}
	h.mux.ServeHTTP(w, r)
}

// restPrefix returns r for the path with a "/" added when ServeMux would
// redirect r there: r's path is a rest route's bare prefix ("/files" of
// "/files/{path...}"), which no other route matches. Otherwise r itself.
func (h *Handler) restPrefix(r *http.Request) *http.Request {
	_, pat := h.mux.Handler(r)
	n, ok := h.rest[pat]
	if !ok || n != strings.Count(cleanCheckPath(r.URL), "/") {
		return r // no redirect: a real match (it has more segments), or none
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path += "/"
	if r2.URL.RawPath != "" {
		r2.URL.RawPath += "/"
	}
	return r2
}

// noRoute answers a request no route matched: 405 when some route matches
// the path with another method, else 404. The allowed methods come from
// the ServeMux itself, asked once per method.
func (h *Handler) noRoute(w http.ResponseWriter, r *http.Request) {
	allow := h.allowed(r)
	if len(allow) == 0 {
		h.writeError(w, r, h.runner.Normalize(r.Context(), nil, mount.NewError(mount.CodeNotFound, "")))
		return
	}
	w.Header().Set("Allow", strings.Join(allow, ", "))
	h.writeError(w, r, h.runner.Normalize(r.Context(), nil, mount.NewError(mount.CodeMethodNotAllowed, "")))
}

// allowed lists the methods some route answers for r's path, sorted.
func (h *Handler) allowed(r *http.Request) []string {
	var allow []string
	for _, m := range graph.Methods {
		probe := r.WithContext(r.Context())
		probe.Method = m
		if _, pat := h.mux.Handler(probe); pat != "" && pat != "/" {
			allow = append(allow, m)
		}
	}
	slices.Sort(allow)
	return allow
}

// cors applies the CORS headers and answers a preflight; it reports
// whether the request was answered.
func (h *Handler) cors(w http.ResponseWriter, r *http.Request) bool {
	c := h.opts.CORS
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	w.Header().Add("Vary", "Origin")
	allowed := slices.Contains(c.Origins, origin)
	anyOrigin := slices.Contains(c.Origins, "*")
	if !allowed && !anyOrigin {
		return false
	}
	if anyOrigin && !c.AllowCredentials {
		w.Header().Set("Access-Control-Allow-Origin", "*")
	} else {
		w.Header().Set("Access-Control-Allow-Origin", origin)
	}
	if c.AllowCredentials {
		w.Header().Set("Access-Control-Allow-Credentials", "true")
	}
	w.Header().Set("Access-Control-Expose-Headers", "X-Request-Id")
	if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
		return false
	}
	methods := h.allowed(r)
	if len(methods) == 0 {
		return false // no route: the mux answers 404
	}
	headers := c.AllowHeaders
	if headers == nil {
		headers = []string{"Content-Type", "Authorization", "X-Request-Id"}
	}
	w.Header().Set("Access-Control-Allow-Methods", strings.Join(methods, ", "))
	w.Header().Set("Access-Control-Allow-Headers", strings.Join(headers, ", "))
	if c.MaxAge > 0 {
		w.Header().Set("Access-Control-Max-Age", strconv.Itoa(c.MaxAge))
	}
	w.WriteHeader(http.StatusNoContent)
	return true
}

func (rt *route) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if rt.h.runner.Authenticates() {
		// The edge: headers only, before any body byte is read.
		var e *mount.Error
		if ctx, e = rt.h.runner.Authenticate(ctx, mount.NewEdgeRequest(mount.SourceHTTP, r)); e != nil {
			if e.Code == mount.CodeUnauthorized {
				w.Header().Set("WWW-Authenticate", rt.h.runner.Challenge())
			}
			rt.h.writeError(w, r, e)
			return
		}
		r = r.WithContext(ctx)
	}
	req := mount.Request{Source: mount.SourceHTTP, Native: r}
	if len(rt.names) > 0 {
		// Read straight into the values map: the same reading as
		// Fields.Wire, without a map of strings first.
		params := make(map[string]any, len(rt.names))
		for i, n := range rt.names {
			params[n] = rt.params[i].Coerce([]string{r.PathValue(n)})
		}
		req.Params.Values = params
	}
	if r.URL.RawQuery != "" {
		q, err := url.ParseQuery(r.URL.RawQuery)
		switch {
		case err != nil:
			req.Query.Err = mount.NewError(mount.CodeBadRequest, "Malformed query string")
		case !validQuery(r.URL.RawQuery, q):
			req.Query.Err = mount.NewError(mount.CodeBadRequest, "The query string is not valid UTF-8")
		default:
			req.Query.Wire = q
		}
	}
	if rt.ep.HasInput() {
		req.Body = func() ([]byte, error) { return rt.readBody(w, r) }
	}
	res := rt.ep.Call(ctx, &req)
	if res.Err != nil {
		rt.h.writeError(w, r, res.Err)
		return
	}
	switch {
	case rt.head:
		w.WriteHeader(http.StatusOK)
	case rt.ep.HasOutput():
		// Content-Length is left to net/http, which sets it for a body
		// written in one go (it costs two allocations per request here).
		ct, _ := rt.h.json.take()
		w.Header()["Content-Type"] = ct
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead { // a GET route answering HEAD
			_, _ = w.Write(res.Output)
		}
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// readBody reads the JSON body under the route's cap. It runs only after
// authorization, as the runner's Request.Body.
func (rt *route) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return nil, nil
	}
	if r.ContentLength > rt.maxBody {
		return nil, tooLarge(rt.maxBody)
	}
	jsonType := isJSONMediaType(header(r.Header, "Content-Type"))
	if !jsonType && r.ContentLength > 0 {
		return nil, unsupported(r)
	}
	if ce := header(r.Header, "Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		// RFC 9110 §15.5.16: a content coding the server does not
		// decode is 415 (read as JSON it would be "malformed").
		return nil, mount.Errorf(mount.CodeUnsupportedMediaType, "A request body must not be encoded (Content-Encoding %s)", ce)
	}
	if rt.maxBody > DefaultMaxBodyBytes && rt.h.opts.MinUploadRate >= 0 {
		rate := rt.h.opts.MinUploadRate
		if rate == 0 {
			rate = DefaultMinUploadRate
		}
		limit := rt.maxBody
		if r.ContentLength > 0 {
			limit = r.ContentLength
		}
		d := DefaultUploadGrace + time.Duration(float64(limit)/float64(rate)*float64(time.Second))
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(d))
	}
	b, err := readCapped(r.Body, r.ContentLength, rt.maxBody)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge(rt.maxBody)
		}
		return nil, mount.NewError(mount.CodeBadRequest, "The request body could not be read").WithCause(err)
	}
	if !jsonType && len(bytes.TrimSpace(b)) > 0 {
		return nil, unsupported(r)
	}
	return b, nil
}

// validQuery reports whether every key and value of q is UTF-8. A raw
// query of ASCII with no escape decodes to ASCII, so the common case is
// one scan.
func validQuery(raw string, q url.Values) bool {
	ascii := true
	for i := 0; i < len(raw); i++ {
		if raw[i] == '%' || raw[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return true
	}
	for k, vs := range q {
		if !utf8.ValidString(k) {
			return false
		}
		for _, v := range vs {
			if !utf8.ValidString(v) {
				return false
			}
		}
	}
	return true
}

// bodyChunk is the most readCapped allocates ahead of the bytes that have
// arrived: a declared Content-Length is a claim, not bytes, so a client
// that declares 1 MiB and sends a byte a second holds one chunk, not
// 1 MiB.
const bodyChunk = 16 << 10

// readCapped reads a body of declared length n (-1 when unknown) under
// limit, growing its buffer only as bytes arrive. More than limit bytes
// is a *http.MaxBytesError; fewer than a declared length is
// io.ErrUnexpectedEOF.
func readCapped(body io.Reader, n, limit int64) ([]byte, error) {
	size := int64(bodyChunk)
	if n >= 0 && n < size {
		size = n + 1 // room to see the end without growing
	}
	b := make([]byte, 0, size)
	lr := io.LimitReader(body, limit+1)
	for {
		if len(b) == cap(b) {
			// Double, but never allocate more than one chunk beyond what
			// has arrived.
			b = slices.Grow(b, min(max(len(b), bodyChunk), bodyChunk*4))
		}
		m, err := lr.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if int64(len(b)) > limit {
			return nil, &http.MaxBytesError{Limit: limit}
		}
		if err == io.EOF {
			if n > 0 && int64(len(b)) < n {
				return nil, io.ErrUnexpectedEOF
			}
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func tooLarge(limit int64) *mount.Error {
	return mount.Errorf(mount.CodePayloadTooLarge, "The request body is larger than %d bytes", limit)
}

func unsupported(r *http.Request) *mount.Error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return mount.NewError(mount.CodeUnsupportedMediaType, "A request body must have Content-Type application/json")
	}
	return mount.NewError(mount.CodeUnsupportedMediaType, "A request body must be application/json (UTF-8)")
}

// isJSONMediaType accepts application/json, with no parameter or a UTF-8
// charset.
func isJSONMediaType(ct string) bool {
	if ct == "application/json" {
		return true
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return false
	}
	for k, v := range params {
		if k != "charset" || !strings.EqualFold(v, "utf-8") {
			return false
		}
	}
	return true
}

func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, e *mount.Error) {
	body := e.HTTPEnvelope()
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	hd.Set("X-Content-Type-Options", "nosniff")
	status := e.HTTPStatus()
	if status == http.StatusUnauthorized && hd.Get("WWW-Authenticate") == "" {
		// RFC 9110 §11.6.1: every 401 carries a challenge; the runner's
		// (mount.Options.Challenge) is the one place it is stated.
		hd.Set("WWW-Authenticate", h.runner.Challenge())
	}
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// requestID returns the X-Request-Id header value of r's response: a slot
// of h.ids holding Options.RequestID's answer, or r's own valid id, or the
// fresh id the slot was made with.
func (h *Handler) requestID(r *http.Request) []string {
	v, _ := h.ids.take()
	if h.opts.RequestID != nil {
		v[0] = h.opts.RequestID(r)
	} else if id := header(r.Header, "X-Request-Id"); validRequestID(id) {
		v[0] = id
	}
	return v
}

// header is hd.Get(key) for a key already in canonical form: a map read,
// no canonicalisation.
func header(hd http.Header, key string) string {
	if v := hd[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func validRequestID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

// cleanCheckPath is the path isCleanPath judges: u.EscapedPath(), or
// u.Path when there is no RawPath, since escaping never adds, removes or
// changes a "/" or a "." (so it cannot change the verdict) and is a scan
// of its own.
func cleanCheckPath(u *url.URL) string {
	if u.RawPath == "" {
		return u.Path
	}
	return u.EscapedPath()
}

// isCleanPath reports whether an escaped request path is in the form
// ServeMux matches without redirecting: what path.Clean leaves unchanged
// (a trailing slash kept), i.e. rooted, with no empty, "." or ".."
// segment but a final empty one. A scan, so a clean path costs no
// cleaning.
func isCleanPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	for rest := p[1:]; ; {
		seg, after, more := strings.Cut(rest, "/")
		if seg == "." || seg == ".." || seg == "" && more {
			return false
		}
		if !more {
			return true
		}
		rest = after
	}
}
