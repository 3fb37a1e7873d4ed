package httpmount_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"stitchkit.dev/stitchkit/pkg/mount"
	httpmount "stitchkit.dev/stitchkit/pkg/mount/http"
)

// TestErrorAmplificationBounded: a path parameter of 0.9 MB that fails
// its pattern is validated before authorization, so anyone can send it;
// the answer quotes it only as an excerpt. Before the cap the answer was
// 3.0 MB (the value quoted in the issue and again in the message).
func TestErrorAmplificationBounded(t *testing.T) {
	f := newFixture(t, nil, nil)
	in := "/tasks/" + strings.Repeat("Z", 900_000)
	r := f.do(t, http.MethodGet, in, "", nil)
	if r.status != 400 || r.code != "VALIDATION_ERROR" {
		t.Fatalf("got %d %s, want 400 VALIDATION_ERROR", r.status, r.code)
	}
	ratio := float64(len(r.body)) / float64(len(in))
	t.Logf("%d bytes of URL, %d bytes of answer (%.5f out per in)", len(in), len(r.body), ratio)
	if len(r.body) > 2*mount.MaxIssuesBytes {
		t.Fatalf("the answer is %d bytes, want at most %d", len(r.body), 2*mount.MaxIssuesBytes)
	}
	// Many failing items: every issue capped, and all of them together.
	tags := `"` + strings.Repeat("x", 10_000) + `"`
	body := `{"title":"","tags":[` + strings.Repeat(`"",`, 500) + tags + `]}`
	r = f.do(t, http.MethodPost, "/tasks", "application/json", strings.NewReader(body))
	if r.status != 400 || len(r.body) > 2*mount.MaxIssuesBytes {
		t.Fatalf("got %d with %d bytes for %d issues, want 400 within %d bytes", r.status, len(r.body), 501, 2*mount.MaxIssuesBytes)
	}
}

// TestInvalidUTF8Refused: bytes that are not UTF-8 in the path or the
// query are 400 BAD_REQUEST with the envelope; a file stored under such a
// name could never be listed back.
func TestInvalidUTF8Refused(t *testing.T) {
	f := newFixture(t, nil, nil)
	for _, target := range []string{"/files/%ff%fe.txt", "/tasks?tag=%ff", "/tasks?%c3=1"} {
		method := http.MethodGet
		var body io.Reader
		ct := ""
		if strings.HasPrefix(target, "/files/") {
			method, body, ct = http.MethodPut, strings.NewReader(`{"content":"x"}`), "application/json"
		}
		r := f.do(t, method, target, ct, body)
		if r.status != 400 || r.code != "BAD_REQUEST" {
			t.Errorf("%s %s: got %d %s, want 400 BAD_REQUEST", method, target, r.status, r.code)
		}
	}
	if r := f.do(t, http.MethodGet, "/tasks?tag=%C3%A9t%C3%A9", "", nil); r.status != 200 {
		t.Errorf("a UTF-8 query was refused: %d %s", r.status, r.body)
	}
}

// TestUnauthorizedChallenges: every 401 carries WWW-Authenticate
// (RFC 9110 §11.6.1), "Bearer" unless mount.Options.Challenge says
// otherwise (that case: TestEdgeAuthentication's realm).
func TestUnauthorizedChallenges(t *testing.T) {
	deny := func(*mount.Call) error { return mount.Unauthorized("") }
	for _, tc := range []struct{ want string }{{"Bearer"}} {
		f := newFixture(t, nil, deny)
		r := f.do(t, http.MethodGet, "/tasks/t_1", "", nil)
		if r.status != 401 || r.header.Get("WWW-Authenticate") != tc.want {
			t.Errorf("got %d with WWW-Authenticate %q, want 401 with %q", r.status, r.header.Get("WWW-Authenticate"), tc.want)
		}
	}
}

// trickle is a body that declares much and delivers one byte, then
// blocks until released: a slow client.
type trickle struct {
	sent    bool
	release chan struct{}
	inside  chan struct{} // told when the first byte has been read
}

func (b *trickle) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		p[0] = '{'
		b.inside <- struct{}{}
		return 1, nil
	}
	<-b.release
	return 0, io.ErrUnexpectedEOF
}

// TestDeclaredLengthNotAllocated: 200 requests declaring a 1 MiB body and
// sending one byte hold what arrived (a chunk each), not what they
// declared: before, each allocated its declared length (2,000 slow
// clients grew the heap to 2 GB in 5 s).
func TestDeclaredLengthNotAllocated(t *testing.T) {
	f := newFixture(t, nil, nil)
	const n = 200
	release := make(chan struct{})
	inside := make(chan struct{}, n)
	done := make(chan struct{}, n)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		go func() {
			defer func() { done <- struct{}{} }()
			req, _ := http.NewRequest(http.MethodPost, "/tasks", &trickle{release: release, inside: inside})
			req.ContentLength = 1 << 20
			req.Header.Set("Content-Type", "application/json")
			f.h.ServeHTTP(discard{}, req)
		}()
	}
	// Wait until every request is inside its body read.
	for i := range n {
		select {
		case <-inside:
		case <-done:
			t.Fatalf("request %d ended before reading its body", i)
		case <-time.After(60 * time.Second):
			t.Fatalf("%d of %d requests reached their body in 60 s", i, n)
		}
	}
	runtime.GC()
	var during runtime.MemStats
	runtime.ReadMemStats(&during)
	close(release)
	for range n {
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Fatal("a request did not end within 60 s of its body failing")
		}
	}
	grew := int64(during.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d requests declaring 1 MiB and sending 1 byte: heap grew %d KiB (%d B each)", n, grew>>10, grew/n)
	if grew > n*(64<<10) {
		t.Fatalf("heap grew %d bytes for %d requests: more than 64 KiB each, as if declared lengths were allocated", grew, n)
	}
}

// discard is a ResponseWriter that keeps nothing.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(p []byte) (int, error) { return len(p), nil }
func (discard) WriteHeader(int)             {}

// TestLargeUploadOutlivesReadTimeout: the server's ReadTimeout is sized
// for ordinary bodies; an operation given a larger cap has its read
// deadline moved by the mount (http.ResponseController), so an upload
// slower than ReadTimeout still arrives, while the same pause in an
// ordinary body is cut.
func TestLargeUploadOutlivesReadTimeout(t *testing.T) {
	f := newFixture(t, &httpmount.Options{OperationMaxBodyBytes: map[string]int64{"files.upload": 4 << 20}}, nil)
	srv := httptest.NewUnstartedServer(f.h)
	srv.Config.ReadTimeout = 300 * time.Millisecond
	srv.Start()
	defer srv.Close()
	send := func(method, path, first, rest string) (int, string) {
		t.Helper()
		c, err := net.DialTimeout("tcp", srv.Listener.Addr().String(), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(30 * time.Second))
		fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", method, path, len(first)+len(rest), first)
		time.Sleep(900 * time.Millisecond) // the slow part of the upload: three ReadTimeouts
		_, _ = io.WriteString(c, rest)
		b, _ := io.ReadAll(c)
		status := 0
		_, _ = fmt.Sscanf(string(b), "HTTP/1.1 %d", &status)
		return status, string(b)
	}
	if status, b := send(http.MethodPut, "/files/a.txt", `{"content":"`, strings.Repeat("x", 1000)+`"}`); status != 200 {
		t.Fatalf("a large-cap upload slower than ReadTimeout: %d %s, want 200", status, b)
	}
	if status, _ := send(http.MethodPost, "/tasks", `{"title":`, `"x"}`); status == 200 {
		t.Fatal("an ordinary body slower than ReadTimeout was read: the deadline was moved for it too")
	}
}
