package mcp

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"stitchkit.dev/stitchkit/internal/mounttest"
	"stitchkit.dev/stitchkit/pkg/conformance"
)

// stdioChildEnv names the surface a re-executed test binary serves over
// stdio.
const stdioChildEnv = "STITCHKIT_MCP_STDIO_CHILD"

// stdioChild is the child process: the tasks graph's surface over stdio.
func stdioChild() int {
	g, err := mounttest.TasksGraph()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	r, err := mounttest.ExampleRunner(g, nil, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	h, err := New(r, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := h.ServeStdio(context.Background(), os.Getenv(stdioChildEnv)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// The same builder serves stdio: a real child process, driven by the SDK's
// CommandTransport, lists what the manifest says and answers calls with the
// same stamp as HTTP.
func TestStdioChildProcess(t *testing.T) {
	g := tasks(t)
	m, err := conformance.BuildManifest(projecttest.New(t, g, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(exampleRunner(t, g, nil, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), stdioChildEnv+"=member")
	cmd.Stderr = os.Stderr
	c := sdk.NewClient(&sdk.Implementation{Name: "stitchkit-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	names, res := listNames(t, cs)
	if err := conformance.AssertDiscovery(m, conformance.Observed{ToolSurfaces: []conformance.ObservedSurface{{Transport: "MCP", Surface: "member", Names: names}}}); err != nil {
		t.Fatal(err)
	}
	want, _ := h.Catalog("member")
	checkStamp(t, res.Meta, want)
	call, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "get_task", Arguments: map[string]any{"id": "t_1"}})
	if err != nil || call.IsError {
		t.Fatalf("%v %+v", err, call)
	}
	checkStamp(t, call.Meta, want)
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(names, "get_task") {
		t.Fatal("get_task missing")
	}
}

// Run refuses an unknown surface without starting anything.
func TestRunUnknownSurface(t *testing.T) {
	h := newHandler(t, nil)
	st, _ := sdk.NewInMemoryTransports()
	if err := h.Run(context.Background(), "nope", st); err == nil {
		t.Fatal("no error")
	}
}
