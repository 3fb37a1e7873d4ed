package realtime_test

import (
	"net/http"
	"net/http/httptest"
	"os/exec"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"strings"
	"testing"

	"stitchkit.dev/stitchkit/pkg/realtime"
)

// TestServeExamples is what `stitch serve` promises under /realtime: a
// known contract upgrades, valid events are acked with their example ack
// or refused with NOT_IMPLEMENTED, invalid ones are rejected, an unknown
// contract is 404 and a foreign Origin 403.
func TestServeExamples(t *testing.T) {
	g := compileCUE(t, "testdata/chat/chat.cue")
	mux, err := realtime.ServeExamples(projecttest.New(t, g, nil), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(mux.Contracts(), ","); got != "chat,empty" || mux.Pattern() != "/realtime/" {
		t.Fatalf("contracts %s, pattern %s", got, mux.Pattern())
	}
	root := http.NewServeMux()
	root.Handle(mux.Pattern(), mux)
	hs := httptest.NewServer(root)
	defer hs.Close()
	defer mux.Shutdown(ctx5(t))
	base := "ws" + strings.TrimPrefix(hs.URL, "http")
	proto := http.Header{"Sec-WebSocket-Protocol": {realtime.Subprotocol}}

	cl, err := realtime.Dial(ctx5(t), base+"/realtime/chat", chatContract(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if ack, err := cl.Request(ctx5(t), 0, "say", map[string]any{"text": "anything"}); err != nil || string(ack) != `{"n":1}` {
		t.Fatalf("say: %s %v", ack, err)
	}
	_, err = cl.Request(ctx5(t), 0, "join", "room")
	if me := mustCode(t, err, realtime.CodeRequestRejected); me.Details["code"] != "NOT_IMPLEMENTED" {
		t.Fatalf("join: %v", me.Details)
	}
	if err := cl.Emit(ctx5(t), "typing", true); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Request(ctx5(t), 0, "say", map[string]any{"text": "ok"}); err != nil { // still connected after the emit
		t.Fatal(err)
	}

	for _, tc := range []struct {
		path   string
		header http.Header
		status int
		code   string
	}{
		{"/realtime/empty", proto, 101, ""},
		{"/realtime/nope", proto, 404, "NOT_FOUND"},
		{"/realtime/chat/extra", proto, 404, "NOT_FOUND"},
		{"/realtime/", proto, 404, "NOT_FOUND"},
		{"/realtime/chat", http.Header{"Sec-WebSocket-Protocol": {realtime.Subprotocol}, "Origin": {"https://evil.example"}}, 403, "FORBIDDEN"},
		{"/realtime/chat", http.Header{"Sec-WebSocket-Protocol": {realtime.Subprotocol}, "Origin": {hs.URL}}, 101, ""},
	} {
		status, body, _ := handshake(t, base+tc.path, tc.header)
		if status != tc.status || errCode(body) != tc.code {
			t.Errorf("%s %v: %d %v, want %d %s", tc.path, tc.header, status, body, tc.status, tc.code)
		}
	}
}

// TestNoCUEAtRunTime: a server built from graph.json links neither CUE
// nor the testing package (DESIGN invariant 5), and nats-server stays out
// of both runtime packages.
func TestNoCUEAtRunTime(t *testing.T) {
	for _, pkg := range []string{"stitchkit.dev/stitchkit/pkg/realtime", "stitchkit.dev/stitchkit/pkg/realtime/natsbroker"} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.HasPrefix(dep, "cuelang.org/") || dep == "testing" || strings.HasPrefix(dep, "github.com/nats-io/nats-server") {
				t.Errorf("%s links %s", pkg, dep)
			}
		}
	}
}
