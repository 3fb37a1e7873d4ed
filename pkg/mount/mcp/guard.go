package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"stitchkit.dev/stitchkit/pkg/mount"
)

// JSON-RPC error codes the mount answers itself.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
)

// readMessage reads a POST body under the cap and checks that it is one
// JSON-RPC message, before the SDK sees it. It answers, and returns
// ok false, for what it refuses:
//
//   - a body over the cap: 413 PAYLOAD_TOO_LARGE (the HTTP envelope);
//   - bytes that are not JSON: JSON-RPC -32700 (HTTP 400);
//   - a batch (a JSON array): JSON-RPC -32600 (HTTP 400). MCP 2025-06-18
//     removed batching; the SDK still serves one when the request names an
//     older protocol or none, and one batch of 20,000 tools/list entries
//     answered 279 MB. A client sends one message per request.
//
// The body is handed on to the SDK from memory.
func (h *Handler) readMessage(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			h.writeHTTPError(w, r, mount.Errorf(mount.CodePayloadTooLarge, "Request body exceeds the %d byte limit", h.maxBody))
		} else {
			h.writeHTTPError(w, r, mount.NewError(mount.CodeBadRequest, "The request body could not be read").WithCause(err))
		}
		return nil, false
	}
	t := bytes.TrimLeft(b, " \t\r\n")
	switch {
	case len(t) > 0 && t[0] == '[':
		writeRPCError(w, http.StatusBadRequest, nil, codeInvalidRequest,
			"JSON-RPC batches are not supported (MCP removed them in 2025-06-18): send one message per request")
		return nil, false
	case len(t) > 0 && !json.Valid(t):
		writeRPCError(w, http.StatusBadRequest, nil, codeParseError, "Parse error: the body is not JSON")
		return nil, false
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
	return b, true
}

// writeRPCError writes a JSON-RPC error response (id null when unknown).
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int, message string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	body, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, message}})
	body = append(body, '\n')
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Del("Mcp-Session-Id")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// plainErrors stands between the SDK and the client: an answer the SDK
// writes as plain text (http.Error) is held back and, when the SDK
// returns, written as JSON instead — a JSON-RPC error for a message it
// refused (an unknown method: -32601, anything else about the message:
// -32600), the HTTP error envelope otherwise. Every other answer passes
// through untouched.
type plainErrors struct {
	http.ResponseWriter
	status int
	held   bytes.Buffer
	// writeTimeout re-arms the write deadline before each write that
	// passes through (Options.WriteTimeout); rc is made on first use.
	writeTimeout time.Duration
	rc           *http.ResponseController
}

// arm sets the connection's write deadline writeTimeout ahead.
func (p *plainErrors) arm() {
	if p.writeTimeout <= 0 {
		return
	}
	if p.rc == nil {
		p.rc = http.NewResponseController(p.ResponseWriter)
	}
	_ = p.rc.SetWriteDeadline(time.Now().Add(p.writeTimeout))
}

// maxHeld bounds what is kept of a plain-text answer: http.Error messages
// are one line.
const maxHeld = 4 << 10

func (p *plainErrors) WriteHeader(status int) {
	if p.status != 0 {
		return
	}
	p.status = status
	if status >= 400 && strings.HasPrefix(p.Header().Get("Content-Type"), "text/plain") {
		return // held: answered by finish
	}
	p.status = -status
	p.arm()
	p.ResponseWriter.WriteHeader(status)
}

func (p *plainErrors) Write(b []byte) (int, error) {
	if p.status == 0 {
		p.WriteHeader(http.StatusOK)
	}
	if p.status > 0 {
		if room := maxHeld - p.held.Len(); room > 0 {
			p.held.Write(b[:min(len(b), room)])
		}
		return len(b), nil
	}
	p.arm()
	return p.ResponseWriter.Write(b)
}

// Flush passes a stream's flush through (never for a held answer).
func (p *plainErrors) Flush() {
	if p.status <= 0 {
		p.arm()
		if f, ok := p.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (p *plainErrors) Unwrap() http.ResponseWriter { return p.ResponseWriter }

// finish writes a held answer as JSON. body is the request's JSON-RPC
// message (nil for a request without one).
func (p *plainErrors) finish(h *Handler, r *http.Request, body []byte) {
	if p.status <= 0 {
		return
	}
	hd := p.Header()
	hd.Del("Content-Type")
	hd.Del("X-Content-Type-Options")
	msg := strings.TrimSpace(p.held.String())
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
	}
	if body != nil && json.Unmarshal(body, &m) == nil && m.Method != nil && p.status == http.StatusBadRequest {
		if strings.Contains(msg, "JSON RPC not handled") {
			writeRPCError(p.ResponseWriter, http.StatusNotFound, m.ID, codeMethodNotFound,
				"Method not found: "+strconv.Quote(*m.Method))
			return
		}
		writeRPCError(p.ResponseWriter, p.status, m.ID, codeInvalidRequest, "Invalid request: "+msg)
		return
	}
	code := mount.CodeBadRequest
	switch p.status {
	case http.StatusNotFound:
		code = mount.CodeNotFound
	case http.StatusForbidden:
		code = mount.CodeForbidden
	case http.StatusMethodNotAllowed:
		code = mount.CodeMethodNotAllowed
	case http.StatusRequestEntityTooLarge:
		code = mount.CodePayloadTooLarge
	case http.StatusUnsupportedMediaType:
		code = mount.CodeUnsupportedMediaType
	default:
		if p.status >= 500 {
			code = mount.CodeInternal
		}
	}
	e := &mount.Error{Code: code, Status: p.status, Message: msg}
	if p.status >= 500 {
		e = mount.NewError(code, "").WithCause(errors.New(msg))
	}
	h.writeHTTPError(p.ResponseWriter, r, e)
}
