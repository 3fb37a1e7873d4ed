package httpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serve starts srv on a loopback listener through Run and returns its
// address, a cancel that starts the shutdown, and the channel Run's
// result arrives on.
func serve(t *testing.T, srv *http.Server, opts *Options, stop ...func(context.Context) error) (string, context.CancelFunc, chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, srv, ln, opts, stop...) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("Run did not return within 30 s of its context ending")
		}
	})
	return ln.Addr().String(), cancel, done
}

// TestHeadersTooLargeIsJSON: headers over MaxHeaderBytes are answered by
// net/http before any handler; through Listener they are the JSON
// envelope with status 431, not plain text.
func TestHeadersTooLargeIsJSON(t *testing.T) {
	srv := New(http.NotFoundHandler(), &Options{MaxHeaderBytes: 1 << 10})
	addr, _, _ := serve(t, srv, nil)
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	req := "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 16<<10) + "\r\n\r\n"
	go func() { _, _ = io.WriteString(c, req) }()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 431 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("got %d %q %s, want 431 application/json", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	var env struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Error.Code != "BAD_REQUEST" {
		t.Fatalf("body %s: want the error envelope with BAD_REQUEST (%v)", body, err)
	}
}

// TestMalformedRequestIsJSON: net/http's own 400 (no Host header) goes out
// as the envelope too, its reason kept.
func TestMalformedRequestIsJSON(t *testing.T) {
	addr, _, _ := serve(t, New(http.NotFoundHandler(), nil), nil)
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	_, _ = io.WriteString(c, "GET / HTTP/1.1\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(string(body), `"code":"BAD_REQUEST"`) || !strings.Contains(string(body), "Host") {
		t.Fatalf("got %d %s, want 400 with the envelope naming the missing Host", resp.StatusCode, body)
	}
}

// TestSlowBodyIsCut: a client that declares a body and trickles it is cut
// off at ReadTimeout, its handler's read failing.
func TestSlowBodyIsCut(t *testing.T) {
	readErr := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		readErr <- err
	})
	addr, _, _ := serve(t, New(h, &Options{ReadTimeout: 300 * time.Millisecond}), nil)
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\nab")
	select {
	case err := <-readErr:
		if err == nil {
			t.Fatal("the handler read a whole body the client never sent")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a trickled body was not cut within 30 s (ReadTimeout 300 ms)")
	}
}

// TestRunShutdownOutlivedByRequest: a request longer than the shutdown
// budget neither keeps Run from returning nil nor keeps the stop
// functions from running with a live context.
func TestRunShutdownOutlivedByRequest(t *testing.T) {
	started := make(chan struct{})
	release := make(chan struct{})
	defer close(release)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		select {
		case <-release:
		case <-time.After(time.Minute):
		}
	})
	stopped := make(chan error, 1)
	stop := func(ctx context.Context) error {
		stopped <- ctx.Err() // nil: the budget starts when shutdown does
		return nil
	}
	addr, cancel, done := serve(t, New(h, nil), &Options{ShutdownTimeout: 200 * time.Millisecond}, stop)
	go func() {
		resp, err := http.Get("http://" + addr + "/")
		if err == nil {
			resp.Body.Close()
		}
	}()
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("the request did not reach the handler within 30 s")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run = %v, want nil after a shutdown that ran out of time", err)
		}
		done <- nil // for the cleanup
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return within 30 s of a 200 ms shutdown budget")
	}
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatalf("the stop function got a context already done: %v", err)
		}
	default:
		t.Fatal("the stop function did not run")
	}
}

// TestSlowReaderIsCut: clients that pipeline requests for a large answer
// and never read are cut off at WriteTimeout: every handler's write fails
// and its goroutine ends, instead of holding the goroutine and the kernel
// buffers for as long as the client stays (500 such clients held 507
// goroutines and 1.2 GB before).
func TestSlowReaderIsCut(t *testing.T) {
	const clients = 20
	chunk := make([]byte, 64<<10)
	ended := make(chan error, clients*4)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var err error
		for i := 0; i < 256 && err == nil; i++ { // 16 MiB: more than any socket buffer holds
			_, err = w.Write(chunk)
		}
		ended <- err
	})
	addr, _, _ := serve(t, New(h, &Options{WriteTimeout: 300 * time.Millisecond}), nil)
	for range clients {
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// Pipelined requests; the answers are never read.
		_, _ = io.WriteString(c, strings.Repeat("GET / HTTP/1.1\r\nHost: x\r\n\r\n", 4))
	}
	for i := range clients {
		select {
		case err := <-ended:
			if err == nil {
				t.Fatalf("handler %d wrote 16 MiB to a client that reads nothing", i)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%d of %d handlers still writing 30 s after a 300 ms write timeout", clients-i, clients)
		}
	}
}
