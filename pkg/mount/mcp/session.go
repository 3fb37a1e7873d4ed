package mcp

import (
	"net/http"
	"sync"
	"time"
)

// sessionHeader is the MCP session id header of stateful streamable HTTP.
const sessionHeader = "Mcp-Session-Id"

// owners binds stateful sessions to the caller that opened them. Tools of
// a stateful session run in the context of the request that opened it, so
// a session id presented by anyone else must be refused, or a second
// caller could act as the first by replaying their session id.
//
// Cost: one entry per open session, removed when the session is deleted
// or the SDK reports it gone; with a SessionTimeout, entries idle for
// longer are swept on later requests.
type owners struct {
	mu      sync.Mutex
	m       map[string]*ownerEntry
	timeout time.Duration
	swept   time.Time
}

type ownerEntry struct {
	owner string
	seen  time.Time
}

// check reports whether the caller may use the session.
func (o *owners) check(sid, owner string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	e, ok := o.m[sid]
	if !ok {
		// Unknown here: the SDK answers for a session it does not know
		// (404), and one it does know was always recorded.
		return true
	}
	if e.owner != owner {
		return false
	}
	e.seen = time.Now()
	return true
}

func (o *owners) record(sid, owner string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := time.Now()
	o.m[sid] = &ownerEntry{owner: owner, seen: now}
	if o.timeout > 0 && now.Sub(o.swept) > o.timeout {
		for k, e := range o.m {
			if now.Sub(e.seen) > 2*o.timeout {
				delete(o.m, k)
			}
		}
		o.swept = now
	}
}

func (o *owners) forget(sid string) {
	o.mu.Lock()
	delete(o.m, sid)
	o.mu.Unlock()
}

// serveOwned serves a stateful request, refusing a session id of another
// owner and recording the owner of a session the SDK opens.
func (o *owners) serveOwned(next http.Handler, w http.ResponseWriter, r *http.Request, owner string) bool {
	sid := r.Header.Get(sessionHeader)
	if sid != "" && !o.check(sid, owner) {
		return false
	}
	cw := &captureWriter{ResponseWriter: w}
	next.ServeHTTP(cw, r)
	switch {
	case sid == "":
		if opened := cw.Header().Get(sessionHeader); opened != "" && cw.status < 300 {
			o.record(opened, owner)
		}
	case r.Method == http.MethodDelete && cw.status < 300, cw.status == http.StatusNotFound:
		o.forget(sid)
	}
	return true
}

// captureWriter records the status a handler answers with. It passes
// Flush through, which the SDK's event streams need.
type captureWriter struct {
	http.ResponseWriter
	status int
}

func (c *captureWriter) WriteHeader(s int) {
	if c.status == 0 {
		c.status = s
	}
	c.ResponseWriter.WriteHeader(s)
}

func (c *captureWriter) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	return c.ResponseWriter.Write(b)
}

func (c *captureWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (c *captureWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }
