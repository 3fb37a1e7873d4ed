package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// post sends one raw MCP POST (no protocol header: the SDK then assumes
// 2025-03-26, the protocol that still had batches) and returns status,
// content type and body.
func post(t *testing.T, url, body string) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), b
}

type rpcAnswer struct {
	ID    json.RawMessage
	Error *struct {
		Code    int
		Message string
	}
	Result json.RawMessage
}

// TestBatchAmplificationRefused: a 1 MiB-class batch of tools/list
// entries, sent without Mcp-Protocol-Version, is refused before the SDK
// with one small JSON-RPC error: bytes out per byte in far below 1 (the
// SDK would answer every entry: 279 MB for 20,000).
func TestBatchAmplificationRefused(t *testing.T) {
	srv := serve(t, newHandler(t, nil))
	const n = 20000
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"tools/list"}`)
	}
	b.WriteByte(']')
	in := b.String()
	if len(in) > DefaultMaxBodyBytes {
		t.Fatalf("the batch is %d bytes, over the cap: it would be refused for its size, proving nothing", len(in))
	}
	status, ct, out := post(t, srv.URL+"/mcp/member", in)
	var a rpcAnswer
	if err := json.Unmarshal(out, &a); err != nil || a.Error == nil || a.Error.Code != codeInvalidRequest {
		t.Fatalf("got %d %s %s, want a JSON-RPC -32600 error", status, ct, out)
	}
	if status != 400 || ct != "application/json" {
		t.Fatalf("got %d %s, want 400 application/json", status, ct)
	}
	ratio := float64(len(out)) / float64(len(in))
	t.Logf("batch of %d entries: %d bytes in, %d bytes out (%.5f out per in)", n, len(in), len(out), ratio)
	if ratio > 0.01 {
		t.Fatalf("%.4f bytes out per byte in, want at most 0.01", ratio)
	}
}

// TestHTTPJSONRPCErrors: over HTTP an unknown method is JSON-RPC -32601,
// a body that is not JSON -32700, both as JSON with the request's id;
// the stateless DELETE is the HTTP envelope's 405.
func TestHTTPJSONRPCErrors(t *testing.T) {
	srv := serve(t, newHandler(t, nil))
	status, ct, out := post(t, srv.URL+"/mcp/member", `{"jsonrpc":"2.0","id":7,"method":"nope/nothing","params":{}}`)
	var a rpcAnswer
	if err := json.Unmarshal(out, &a); err != nil || a.Error == nil || a.Error.Code != codeMethodNotFound || string(a.ID) != "7" {
		t.Fatalf("unknown method: got %d %s %s, want JSON-RPC -32601 for id 7", status, ct, out)
	}
	status, ct, out = post(t, srv.URL+"/mcp/member", `{"jsonrpc":"2.0","id":7,`)
	if err := json.Unmarshal(out, &a); err != nil || a.Error == nil || a.Error.Code != codeParseError {
		t.Fatalf("garbage: got %d %s %s, want JSON-RPC -32700", status, ct, out)
	}
	req, _ := http.NewRequest(http.MethodDelete, srv.URL+"/mcp/member", nil)
	req.Header.Set("Mcp-Session-Id", "x")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST" || !bytes.Contains(body, []byte(`"code":"METHOD_NOT_ALLOWED"`)) {
		t.Fatalf("stateless DELETE: got %d Allow %q %s, want 405 with the envelope", resp.StatusCode, resp.Header.Get("Allow"), body)
	}
}

// TestLinesAnswerAfterInputEnds: three requests piped in and the input
// closed at once (as `printf ... | server` does) get three answers; a
// garbage line between them gets -32700 and does not end the session.
func TestLinesAnswerAfterInputEnds(t *testing.T) {
	h := newHandler(t, nil)
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`this is not json`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_tasks","arguments":{}}}`,
	}, "\n") + "\n"
	var out syncBuffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- h.ServeLines(ctx, "member", strings.NewReader(in), &out) }()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("the session did not end within 60 s of its input ending")
	}
	got := map[string]rpcAnswer{}
	parseErrors := 0
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var a rpcAnswer
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			t.Fatalf("an answer line is not JSON: %q", line)
		}
		if a.Error != nil && a.Error.Code == codeParseError {
			parseErrors++
			continue
		}
		got[string(a.ID)] = a
	}
	for _, id := range []string{"1", "2", "3"} {
		if a, ok := got[id]; !ok || a.Result == nil {
			t.Errorf("request %s: no result (answers: %s)", id, out.String())
		}
	}
	if parseErrors != 1 {
		t.Errorf("%d parse errors, want 1 for the garbage line (answers: %s)", parseErrors, out.String())
	}
}

// syncBuffer is a bytes.Buffer safe for the session's writer and the
// test's reader.
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
