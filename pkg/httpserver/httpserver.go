// Package httpserver builds the *http.Server a stitchkit app listens
// with, and runs it until its context ends. Every limit a client could
// otherwise stretch without bound — how long its headers, its body and
// the reading of the answer may take, how long an idle connection is kept,
// how large its headers may be — has a default here, so an app that
// serves the mounts with this package is bounded without knowing what to
// set (docs/limits.md lists every limit).
//
// Start with [New] and [Run]:
//
//	srv := httpserver.New(handler, nil) // the defaults below
//	ln, err := net.Listen("tcp", "127.0.0.1:8080")
//	err = httpserver.Run(ctx, srv, ln, nil, realtimeServer.Shutdown)
//
// The read and write timeouts are per request: net/http arms them when a
// request's headers have been read, and a handler that must take longer
// (a large upload, a long stream) extends its own with
// http.NewResponseController(w).SetReadDeadline or SetWriteDeadline. A
// WebSocket upgrade clears them for the life of the socket.
package httpserver

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"stitchkit.dev/stitchkit/pkg/mount"
)

// The defaults of [Options].
const (
	// DefaultReadHeaderTimeout bounds the reading of a request's headers
	// (slowloris).
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultReadTimeout bounds the reading of a whole request, body
	// included: a 1 MiB body (the mounts' default cap) at 35 KiB/s.
	DefaultReadTimeout = 30 * time.Second
	// DefaultWriteTimeout bounds the writing of an answer, from the end of
	// its request's headers: a client that never reads is cut off after
	// it, its goroutine and buffers released.
	DefaultWriteTimeout = 30 * time.Second
	// DefaultIdleTimeout is how long a keep-alive connection waits for its
	// next request.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultMaxHeaderBytes caps the request line and headers.
	DefaultMaxHeaderBytes = 64 << 10
	// DefaultShutdownTimeout is how long [Run] lets requests in flight
	// finish once its context ends.
	DefaultShutdownTimeout = 10 * time.Second
)

// Options configures [New] and [Run]; nil or a zero field means the
// default. A negative duration means no limit (net/http's own default;
// only for a server behind a proxy that enforces its own).
type Options struct {
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	MaxHeaderBytes    int
	// ShutdownTimeout bounds [Run]'s graceful shutdown: requests still
	// running after it have their connections closed.
	ShutdownTimeout time.Duration
}

func pick(d, def time.Duration) time.Duration {
	switch {
	case d < 0:
		return 0
	case d == 0:
		return def
	}
	return d
}

func (o *Options) resolved() Options {
	var r Options
	if o != nil {
		r = *o
	}
	r.ReadHeaderTimeout = pick(r.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	r.ReadTimeout = pick(r.ReadTimeout, DefaultReadTimeout)
	r.WriteTimeout = pick(r.WriteTimeout, DefaultWriteTimeout)
	r.IdleTimeout = pick(r.IdleTimeout, DefaultIdleTimeout)
	r.ShutdownTimeout = pick(r.ShutdownTimeout, DefaultShutdownTimeout)
	if r.MaxHeaderBytes <= 0 {
		r.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	return r
}

// New returns an *http.Server for h with every limit set (opts nil means
// the defaults). The caller may change its fields before serving.
func New(h http.Handler, opts *Options) *http.Server {
	o := opts.resolved()
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		ReadTimeout:       o.ReadTimeout,
		WriteTimeout:      o.WriteTimeout,
		IdleTimeout:       o.IdleTimeout,
		MaxHeaderBytes:    o.MaxHeaderBytes,
	}
}

// Run serves srv on ln (through [Listener]) until ctx ends, then shuts
// down: it stops accepting, calls every stop function at once with a
// context bounded by Options.ShutdownTimeout (a realtime server's
// Shutdown, which sends 1001 to its WebSocket clients: http.Server leaves
// hijacked connections alone), waits for requests in flight for as long,
// and closes the connections of those that outlive it. A shutdown that
// runs out of time is not an error: Run returns nil once ctx has ended,
// whatever was in flight, so a process exits 0 on SIGTERM. It returns the
// error that stopped the server otherwise.
func Run(ctx context.Context, srv *http.Server, ln net.Listener, opts *Options, stop ...func(context.Context) error) error {
	o := opts.resolved()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(Listener(ln)) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.ShutdownTimeout)
	defer cancel()
	var wg sync.WaitGroup
	for _, f := range stop {
		wg.Go(func() { _ = f(sctx) })
	}
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	wg.Wait()
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Listener returns ln with one change to what its connections write:
// the few plain-text answers net/http writes itself, before any handler
// runs (431 for headers over MaxHeaderBytes, 400 for a malformed request,
// 501 for an unknown transfer coding), go out as the JSON error envelope
// every other answer uses ({"error":{"code","message"}}), so a client
// parses one shape. [Run] uses it.
func Listener(ln net.Listener) net.Listener { return listener{ln} }

type listener struct{ net.Listener }

func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &conn{Conn: c}, nil
}

type conn struct{ net.Conn }

// errorHeaders is what follows the status line of net/http's own
// plain-text answers (server.go, conn.serve); a handler's answers carry a
// Date header and are never written in this form.
const errorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

func (c *conn) Write(p []byte) (int, error) {
	if len(p) > 9 && p[0] == 'H' && bytes.HasPrefix(p, []byte("HTTP/1.1 ")) {
		if b, ok := envelopeFor(p); ok {
			if _, err := c.Conn.Write(b); err != nil {
				return 0, err
			}
			return len(p), nil
		}
	}
	return c.Conn.Write(p)
}

// ReadFrom keeps the sendfile path of the connection underneath.
func (c *conn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(c.Conn, r)
}

// envelopeFor rewrites one of net/http's plain-text answers as the JSON
// envelope; ok is false for anything else.
func envelopeFor(p []byte) ([]byte, bool) {
	line, rest, ok := bytes.Cut(p, []byte("\r\n"))
	if !ok || !bytes.HasPrefix(rest, []byte(errorHeaders[2:])) {
		return nil, false
	}
	status, err := strconv.Atoi(string(line[len("HTTP/1.1 "):min(len(line), len("HTTP/1.1 ")+3)]))
	if err != nil || status < 400 || status > 599 {
		return nil, false
	}
	msg := string(rest[len(errorHeaders)-2:])
	if len(msg) > 4 && msg[3] == ' ' {
		msg = msg[4:] // "400 Bad Request: …" without its status
	}
	code := mount.CodeBadRequest
	switch {
	case status == http.StatusRequestHeaderFieldsTooLarge:
		msg = "Request headers are too large"
	case status == http.StatusNotImplemented:
		code = mount.CodeNotImplemented
	case status >= 500:
		code = mount.CodeInternal
	}
	body := (&mount.Error{Code: code, Status: status, Message: msg}).HTTPEnvelope()
	var b bytes.Buffer
	b.Write(line)
	b.WriteString("\r\nContent-Type: application/json\r\nContent-Length: ")
	b.WriteString(strconv.Itoa(len(body)))
	b.WriteString("\r\nConnection: close\r\n\r\n")
	b.Write(body)
	return b.Bytes(), true
}
