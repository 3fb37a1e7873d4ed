package httpmount_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// FuzzHTTP: arbitrary method, path, query, content type and body never
// panic the mount, and every answer is a success status or an error
// envelope whose code is in the registry with that code's status.
func FuzzHTTP(f *testing.F) {
	for _, s := range []struct {
		method uint8
		target string
		ctype  string
		body   string
	}{
		{0, "/tasks/t_1", "", ""},
		{1, "/tasks", "application/json", `{"title":"a","tags":["x"]}`},
		{1, "/tasks", "application/json", `{"title":`},
		{1, "/tasks", "text/plain", `x`},
		{2, "/files/a/b%2Fc", "application/json", `{"content":"x"}`},
		{3, "/tasks/t_1/title", "application/json; charset=utf-8", `{"title":"b"}`},
		{0, "/tasks?limit=5&tag=a&tag=b&done=false", "", ""},
		{0, "/tasks?limit=%zz", "", ""},
		{4, "/tasks", "", ""},
		{5, "/tasks/t_1/exists", "", ""},
		{0, "/tasks/../x", "", ""},
		{1, "/tasks", "application/json", strings.Repeat("[", 200)},
		{2, "/files", "application/json", `{"content":"x"}`},              // a rest route's bare prefix
		{0x81, "/tasks", "application/json", `{"title":"chunked"}`},       // no Content-Length
		{0x81, "/tasks", "text/plain", `{"title":"chunked"}`},             // no Content-Length, not JSON
		{1, "/tasks", "application/json", `{"title":"a","tags":[1e400]}`}, // a number no float holds
		{1, "/tasks", "application/json", "{\"title\":\"\xff\"}"},         // not UTF-8
	} {
		f.Add(s.method, s.target, s.ctype, []byte(s.body))
	}
	fx := newFixture(f, nil, nil)
	registry := map[string]int{"TASK_NOT_FOUND": 404}
	for _, e := range graph.FrameworkErrors {
		registry[e.Code] = e.Status
	}
	methods := []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "BREW"}
	f.Fuzz(func(t *testing.T, m uint8, target, ctype string, body []byte) {
		u, err := url.ParseRequestURI(target)
		if err != nil || !strings.HasPrefix(u.Path, "/") {
			return // net/http's server refuses such a request line before any handler
		}
		// The high bit of m sends the body without a Content-Length, as a
		// chunked request arrives.
		method := methods[int(m&0x7f)%len(methods)]
		req := &http.Request{Method: method, URL: u, RequestURI: target, Host: "example.com",
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: http.Header{},
			Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body))}
		if m&0x80 != 0 {
			req.ContentLength, req.TransferEncoding = -1, []string{"chunked"}
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		rec := httptest.NewRecorder()
		fx.h.ServeHTTP(rec, req)
		switch {
		case rec.Code == 200 || rec.Code == 204:
			return
		case method == "HEAD":
			for _, st := range registry {
				if st == rec.Code {
					return
				}
			}
			t.Fatalf("HEAD %s: status %d is no registry status", target, rec.Code)
		}
		var env struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil {
			t.Fatalf("%s %s: %d body %q is not an envelope", method, target, rec.Code, rec.Body.String())
		}
		st, ok := registry[env.Error.Code]
		if !ok || st != rec.Code || env.Error.Message == "" {
			t.Fatalf("%s %s: %d %s: code not in the registry with this status", method, target, rec.Code, rec.Body.String())
		}
	})
}
