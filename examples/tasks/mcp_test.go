package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// stdioChildEnv makes a re-executed test binary be `tasks -stdio`.
const stdioChildEnv = "TASKS_EXAMPLE_STDIO"

func TestMain(m *testing.M) {
	if s := os.Getenv(stdioChildEnv); s != "" {
		if err := runStdio(context.Background(), s); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The app prints its MCP endpoints and serves them through the same
// runner and store as the HTTP API: a task created over MCP is read back
// over HTTP.
func TestRunServesMCP(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithCancel(context.Background())
	out := &lockedBuffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, "127.0.0.1:0", out) }()
	urls := map[string]string{}
	for deadline := time.Now().Add(10 * time.Second); urls["member"] == "" || urls["tasks"] == ""; {
		if time.Now().After(deadline) {
			t.Fatalf("no URLs printed:\n%s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
		for _, line := range strings.Split(out.String(), "\n") {
			f := strings.Fields(line)
			switch {
			case len(f) == 2 && f[0] == "mcp":
				urls[f[1][strings.LastIndex(f[1], "/")+1:]] = f[1]
			case len(f) == 2 && f[0] == "tasks":
				urls["tasks"] = f[1]
			}
		}
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	c := sdk.NewClient(&sdk.Implementation{Name: "tasks-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: urls["member"], HTTPClient: client, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "create_task", Arguments: map[string]any{"title": "Over MCP"}})
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	var created struct{ ID string }
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &created)
	cs.Close()
	resp, err := client.Get(urls["tasks"] + "/" + created.ID)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"title":"Over MCP"`) {
		t.Fatalf("GET the task created over MCP: %d %s", resp.StatusCode, body)
	}
	if urls["admin"] == "" {
		t.Errorf("the admin surface is not printed:\n%s", out.String())
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run did not return within 30s of its context's cancellation")
	}
}

// -stdio serves a surface to a real child process's parent, as Claude
// Desktop or the Inspector start it.
func TestStdio(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), stdioChildEnv+"=member")
	cmd.Stderr = os.Stderr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := sdk.NewClient(&sdk.Implementation{Name: "tasks-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "create_task") || slices.Contains(names, "update_task") {
		t.Fatalf("member surface over stdio: %v", names)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "create_task", Arguments: map[string]any{"title": "Over stdio"}})
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "create_task", Arguments: map[string]any{}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, `"error":"VALIDATION_ERROR"`) {
		t.Fatalf("invalid arguments: %v %+v", err, res)
	}
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
}
