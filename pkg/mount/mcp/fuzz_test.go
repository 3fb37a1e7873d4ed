package mcp

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Arbitrary bodies and paths never panic the handler, always get an
// answer, and every JSON answer is well-formed: an error envelope of ours
// with a registry code, or a JSON-RPC message of the SDK's.
func FuzzServeHTTP(f *testing.F) {
	h := newHandler(f, &Options{MaxBodyBytes: 4096})
	for _, seed := range []struct{ path, body string }{
		{"/mcp/member", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
		{"/mcp/admin", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_task","arguments":{"id":"t_1"}}}`},
		{"/mcp/admin", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"notify_task","arguments":{"id":"t_1","kind":"sms","phone":"+1555010000"}}}`},
		{"/mcp/member", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}`},
		{"/mcp/member", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`},
		{"/mcp/nope", `{}`},
		{"/mcp", ``},
		{"/mcp/admin", `{"jsonrpc":"2.0","id":1,"method":"ping"}` + strings.Repeat(" ", 5000)}, // over the cap
		{"/mcp/admin/", `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{"/mcp/member", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_task","arguments":{"title":"` + strings.Repeat("x", 300) + `"}}}`},
	} {
		f.Add(seed.path, seed.body)
	}
	f.Fuzz(func(t *testing.T, path, body string) {
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		req := httptest.NewRequest("POST", "http://127.0.0.1/", strings.NewReader(body))
		req.URL.Path = path
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		if len(path)%2 == 1 {
			// Half the inputs arrive without a Content-Length (chunked),
			// which the handler reads under the cap itself.
			req.ContentLength = -1
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code == 0 {
			t.Fatal("no answer")
		}
		if !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") || rec.Body.Len() == 0 {
			return
		}
		var msg struct {
			Error   json.RawMessage `json:"error"`
			Result  json.RawMessage `json:"result"`
			JSONRPC string          `json:"jsonrpc"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &msg); err != nil {
			t.Fatalf("%d: not JSON: %v\n%s", rec.Code, err, rec.Body.String())
		}
		if msg.JSONRPC == "" {
			var env struct{ Error struct{ Code string } }
			if json.Unmarshal(rec.Body.Bytes(), &env) != nil || env.Error.Code == "" || rec.Code < 400 {
				t.Fatalf("%d: neither JSON-RPC nor an error envelope: %s", rec.Code, rec.Body.String())
			}
		}
	})
}

// Arbitrary input on a line session never panics it, always ends it once
// the input ends, and every line it writes is one JSON-RPC message (an
// answer, or the error for a line that is no message).
func FuzzServeLines(f *testing.F) {
	h := newHandler(f, &Options{MaxBodyBytes: 4096})
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n",
		"garbage\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n",
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]` + "\n",
		strings.Repeat("x", 5000) + "\n" + `{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		"\n\n\r\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
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
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			if line == "" {
				continue
			}
			var m struct {
				JSONRPC string `json:"jsonrpc"`
			}
			if err := json.Unmarshal([]byte(line), &m); err != nil || m.JSONRPC != "2.0" {
				t.Fatalf("a line written is not a JSON-RPC message: %q", line)
			}
		}
	})
}
