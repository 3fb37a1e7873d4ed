package mounttest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"stitchkit.dev/stitchkit/internal/mounttest"
	"stitchkit.dev/stitchkit/pkg/mount"
	"stitchkit.dev/stitchkit/pkg/mount/agent"
	"stitchkit.dev/stitchkit/pkg/mount/cli"
	httpmount "stitchkit.dev/stitchkit/pkg/mount/http"
	mcpmount "stitchkit.dev/stitchkit/pkg/mount/mcp"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// parityCase is one call, written once as flat tool arguments and once as
// the HTTP request a client would send for it.
type parityCase struct {
	name   string
	tool   string
	args   string
	method string
	path   string // below /api, with the query string
	body   string
	want   string // "" accepted, else the error code
}

// The corpus of upstream test 37: strict params + strict input (rename:
// #params id with a pattern, #input title closed), query scalars and lists
// (list), and a closed input with a list bound (create).
var parityCorpus = []parityCase{
	{"rename ok", "rename_task", `{"id":"t_1","title":"New"}`, "PATCH", "/tasks/t_1/title", `{"title":"New"}`, ""},
	// rename declares no #params: its id is the synthesised plain string.
	{"rename any id", "rename_task", `{"id":"x","title":"New"}`, "PATCH", "/tasks/x/title", `{"title":"New"}`, ""},
	{"update ok", "update_task", `{"id":"t_1","title":"a","done":true}`, "PUT", "/tasks/t_1", `{"title":"a","done":true}`, ""},
	{"update bad id", "update_task", `{"id":"x","title":"a","done":true}`, "PUT", "/tasks/x", `{"title":"a","done":true}`, "VALIDATION_ERROR"},
	{"update done not bool", "update_task", `{"id":"t_1","title":"a","done":"yes"}`, "PUT", "/tasks/t_1", `{"title":"a","done":"yes"}`, "VALIDATION_ERROR"},
	{"rename no title", "rename_task", `{"id":"t_1"}`, "PATCH", "/tasks/t_1/title", `{}`, "VALIDATION_ERROR"},
	{"rename empty title", "rename_task", `{"id":"t_1","title":""}`, "PATCH", "/tasks/t_1/title", `{"title":""}`, "VALIDATION_ERROR"},
	{"rename unknown key", "rename_task", `{"id":"t_1","title":"a","color":"red"}`, "PATCH", "/tasks/t_1/title", `{"title":"a","color":"red"}`, "VALIDATION_ERROR"},
	{"rename title not a string", "rename_task", `{"id":"t_1","title":7}`, "PATCH", "/tasks/t_1/title", `{"title":7}`, "VALIDATION_ERROR"},
	{"list ok", "list_tasks", `{"limit":2,"tag":["docs"],"done":true}`, "GET", "/tasks?limit=2&tag=docs&done=true", "", ""},
	{"list empty", "list_tasks", `{}`, "GET", "/tasks", "", ""},
	{"list limit 0", "list_tasks", `{"limit":0}`, "GET", "/tasks?limit=0", "", "VALIDATION_ERROR"},
	{"list limit fraction", "list_tasks", `{"limit":2.5}`, "GET", "/tasks?limit=2.5", "", "VALIDATION_ERROR"},
	{"list bad tag", "list_tasks", `{"tag":["Bad"]}`, "GET", "/tasks?tag=Bad", "", "VALIDATION_ERROR"},
	{"list unknown key", "list_tasks", `{"color":"red"}`, "GET", "/tasks?color=red", "", "VALIDATION_ERROR"},
	{"create ok", "create_task", `{"title":"Write docs","tags":["docs"]}`, "POST", "/tasks", `{"title":"Write docs","tags":["docs"]}`, ""},
	{"create too many tags", "create_task", `{"title":"x","tags":["a","b","c","d","e","f","g","h","i","j","k"]}`, "POST", "/tasks", `{"title":"x","tags":["a","b","c","d","e","f","g","h","i","j","k"]}`, "VALIDATION_ERROR"},
	{"create no title", "create_task", `{"tags":[]}`, "POST", "/tasks", `{"tags":[]}`, "VALIDATION_ERROR"},
	{"get ok", "get_task", `{"id":"t_1"}`, "GET", "/tasks/t_1", "", ""},
	{"get bad id", "get_task", `{"id":"T1"}`, "GET", "/tasks/T1", "", "VALIDATION_ERROR"},
}

// One corpus of valid and invalid argument sets gets the same accept or
// reject, with the same code, over HTTP, MCP, Agent and the CLI — in
// process and against the HTTP mount with --server (upstream test 37). Every transport runs the one runner, so a disagreement can only
// come from a mount adapting a call differently.
func TestParity(t *testing.T) {
	g := mounttest.Tasks(t)
	task := func(context.Context, *mount.Call) (json.RawMessage, error) {
		return json.RawMessage(`{"id":"t_1","title":"a","done":true}`), nil
	}
	r, err := mounttest.ExampleRunner(g, nil, map[string]mount.Handler{"tasks.update": task})
	if err != nil {
		t.Fatal(err)
	}
	hh, err := httpmount.New(r, &httpmount.Options{Prefix: "/api"})
	if err != nil {
		t.Fatal(err)
	}
	mh, err := mcpmount.New(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/api/", hh)
	mux.Handle("/mcp/", mh)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	client := sdk.NewClient(&sdk.Implementation{Name: "parity", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp/admin", DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := agent.New(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	app, err := cli.New(g, &cli.Options{Runner: r})
	if err != nil {
		t.Fatal(err)
	}
	remote, err := cli.New(g, &cli.Options{Server: srv.URL + "/api"})
	if err != nil {
		t.Fatal(err)
	}
	cliTools := map[string]bool{}
	for _, c := range app.Command().Commands() {
		cliTools[c.Name()] = true
	}

	for _, c := range parityCorpus {
		got := map[string]string{}
		got["HTTP"] = httpOutcome(t, srv.URL+"/api", c)
		got["MCP"] = mcpOutcome(t, cs, c)
		if tools.Tool(c.tool) != nil {
			got["AGENT"] = agentOutcome(tools, c)
		}
		if cliTools[c.tool] {
			got["CLI"] = cliOutcome(t, app, c)
			got["CLI --server"] = cliOutcome(t, remote, c)
		}
		for transport, outcome := range got {
			if outcome != c.want {
				t.Errorf("%s over %s: %q, want %q (all: %v)", c.name, transport, outcome, c.want, got)
			}
		}
		if len(got) < 3 {
			t.Errorf("%s: only %d transports ran", c.name, len(got))
		}
	}
}

func httpOutcome(t *testing.T, base string, c parityCase) string {
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	req, _ := http.NewRequest(c.method, base+c.path, body)
	if c.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode < 300 {
		return ""
	}
	var env struct{ Error struct{ Code string } }
	if json.Unmarshal(b, &env) != nil {
		return fmt.Sprintf("HTTP %d %s", resp.StatusCode, b)
	}
	return env.Error.Code
}

func mcpOutcome(t *testing.T, cs *sdk.ClientSession, c parityCase) string {
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: c.tool, Arguments: json.RawMessage(c.args)})
	if err != nil {
		return "JSON-RPC " + err.Error()
	}
	if !res.IsError {
		return ""
	}
	var env struct{ Error string }
	text := res.Content[0].(*sdk.TextContent).Text
	if json.Unmarshal([]byte(text), &env) != nil {
		return text
	}
	return env.Error
}

func agentOutcome(tools *agent.Toolset, c parityCase) string {
	_, err := tools.Call(context.Background(), c.tool, json.RawMessage(c.args))
	var ce *agent.CallError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &ce):
		return ce.Err.Code
	}
	return err.Error()
}

// cliOutcome writes the arguments as flags: strings and numbers as
// values, booleans as --k=true, lists repeated.
func cliOutcome(t *testing.T, app *cli.App, c parityCase) string {
	var args map[string]any
	dec := json.NewDecoder(strings.NewReader(c.args))
	dec.UseNumber()
	if err := dec.Decode(&args); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	argv := []string{c.tool, "--json"}
	for _, k := range keys {
		switch v := args[k].(type) {
		case []any:
			for _, e := range v {
				argv = append(argv, "--"+k, fmt.Sprint(e))
			}
		case bool:
			argv = append(argv, fmt.Sprintf("--%s=%t", k, v))
		default:
			argv = append(argv, "--"+k, fmt.Sprint(v))
		}
	}
	var out, errb bytes.Buffer
	code := app.RunWith(context.Background(), argv, strings.NewReader(""), &out, &errb)
	if code == 0 {
		return ""
	}
	var env struct{ Error string }
	if json.Unmarshal(errb.Bytes(), &env) != nil {
		return fmt.Sprintf("exit %d %s", code, errb.String())
	}
	if want := app.ExitCode(env.Error); want != code {
		return fmt.Sprintf("%s with exit %d, want %d", env.Error, code, want)
	}
	return env.Error
}
