package mounttest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"stitchkit.dev/stitchkit/internal/mounttest"
	"stitchkit.dev/stitchkit/pkg/graph"
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
	task := func(context.Context, *mount.Call) (json.RawMessage, error) {
		return json.RawMessage(`{"id":"t_1","title":"a","done":true}`), nil
	}
	parity(t, mounttest.Tasks(t), "admin", map[string]mount.Handler{"tasks.update": task}, parityCorpus)
}

// The library probe contract's corpus: a #params pattern under a custom
// prefix, #query defaults, integer bounds, enum lists and booleans, a body
// with a nested list, a map and a nullable number, defaults in #input, a
// rest parameter, and operations without examples (NOT_IMPLEMENTED once
// the arguments are valid, everywhere alike).
var libraryCorpus = []parityCase{
	{"list ok", "list_books", `{"page":2,"format":["ebook","paperback"],"available":true}`, "GET", "/v2/books?page=2&format=ebook&format=paperback&available=true", "", ""},
	{"list defaults", "list_books", `{}`, "GET", "/v2/books", "", ""},
	{"list page 0", "list_books", `{"page":0}`, "GET", "/v2/books?page=0", "", "VALIDATION_ERROR"},
	{"list size 101", "list_books", `{"size":101}`, "GET", "/v2/books?size=101", "", "VALIDATION_ERROR"},
	{"list page fraction", "list_books", `{"page":1.5}`, "GET", "/v2/books?page=1.5", "", "VALIDATION_ERROR"},
	{"list bad format", "list_books", `{"format":["audio"]}`, "GET", "/v2/books?format=audio", "", "VALIDATION_ERROR"},
	{"list available not bool", "list_books", `{"available":"maybe"}`, "GET", "/v2/books?available=maybe", "", "VALIDATION_ERROR"},
	{"list min rating", "list_books", `{"minRating":4.5}`, "GET", "/v2/books?minRating=4.5", "", ""},
	{"get ok", "get_book", `{"isbn":"9780262033848"}`, "GET", "/v2/books/9780262033848", "", ""},
	{"get bad isbn", "get_book", `{"isbn":"123"}`, "GET", "/v2/books/123", "", "VALIDATION_ERROR"},
	{"add ok", "add_book", `{"isbn":"9780262033848","title":"T","authors":[{"name":"A","alias":null}],"pages":3,"format":"ebook","tags":{"lang":"en"}}`,
		"POST", "/v2/books", `{"isbn":"9780262033848","title":"T","authors":[{"name":"A","alias":null}],"pages":3,"format":"ebook","tags":{"lang":"en"}}`, ""},
	{"add no title", "add_book", `{"isbn":"9780262033848","pages":3,"format":"ebook"}`, "POST", "/v2/books", `{"isbn":"9780262033848","pages":3,"format":"ebook"}`, "VALIDATION_ERROR"},
	{"add rating 6", "add_book", `{"isbn":"9780262033848","title":"T","pages":3,"format":"ebook","rating":6}`, "POST", "/v2/books", `{"isbn":"9780262033848","title":"T","pages":3,"format":"ebook","rating":6}`, "VALIDATION_ERROR"},
	{"add tag not a string", "add_book", `{"isbn":"9780262033848","title":"T","pages":3,"format":"ebook","tags":{"a":1}}`, "POST", "/v2/books", `{"isbn":"9780262033848","title":"T","pages":3,"format":"ebook","tags":{"a":1}}`, "VALIDATION_ERROR"},
	{"add unknown key", "add_book", `{"isbn":"9780262033848","title":"T","pages":3,"format":"ebook","color":"red"}`, "POST", "/v2/books", `{"isbn":"9780262033848","title":"T","pages":3,"format":"ebook","color":"red"}`, "VALIDATION_ERROR"},
	{"borrow ok, defaults", "borrow_loan", `{"isbn":"9780262033848","member":"m_1"}`, "POST", "/loans", `{"isbn":"9780262033848","member":"m_1"}`, ""},
	{"borrow days 0", "borrow_loan", `{"isbn":"9780262033848","member":"m_1","days":0}`, "POST", "/loans", `{"isbn":"9780262033848","member":"m_1","days":0}`, "VALIDATION_ERROR"},
	{"borrow bad member", "borrow_loan", `{"isbn":"9780262033848","member":"bob"}`, "POST", "/loans", `{"isbn":"9780262033848","member":"bob"}`, "VALIDATION_ERROR"},
	{"remove valid, no example", "remove_book", `{"isbn":"9780262033848","force":true}`, "DELETE", "/v2/books/9780262033848?force=true", "", "NOT_IMPLEMENTED"},
	{"remove bad isbn", "remove_book", `{"isbn":"x"}`, "DELETE", "/v2/books/x", "", "VALIDATION_ERROR"},
	{"patch null rating", "patch_book", `{"isbn":"9780262033848","rating":null}`, "PATCH", "/v2/books/9780262033848", `{"rating":null}`, "NOT_IMPLEMENTED"},
	{"patch rating 7", "patch_book", `{"isbn":"9780262033848","rating":7}`, "PATCH", "/v2/books/9780262033848", `{"rating":7}`, "VALIDATION_ERROR"},
	{"scan rest", "scan_book", `{"shelf":"main","rest":"a/b"}`, "GET", "/v2/books/shelves/main/a/b", "", "NOT_IMPLEMENTED"},
}

func TestParityLibrary(t *testing.T) {
	parity(t, mounttest.Unseen(t, "library"), "librarian", nil, libraryCorpus)
}

// parity runs a corpus over every transport of g: HTTP under /api, MCP on
// the named surface, the Agent, and the CLI in process and with --server.
func parity(t *testing.T, g *graph.Graph, surface string, bind map[string]mount.Handler, corpus []parityCase) {
	r, err := mounttest.ExampleRunner(g, &mount.Options{Logger: slog.New(slog.DiscardHandler), Projection: projecttest.Prefixed(t, g, "/api")}, bind)
	if err != nil {
		t.Fatal(err)
	}
	hh, err := httpmount.New(r, nil)
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
	cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp/" + surface, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := agent.New(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	app, err := cli.New(r.Projection(), &cli.Options{Runner: r})
	if err != nil {
		t.Fatal(err)
	}
	remote, err := cli.New(r.Projection(), &cli.Options{Server: srv.URL + "/api"})
	if err != nil {
		t.Fatal(err)
	}
	cliTools := map[string]bool{}
	for _, c := range app.Command().Commands() {
		cliTools[c.Name()] = true
	}

	for _, c := range corpus {
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

func flagText(v any) string {
	switch v.(type) {
	case map[string]any, nil:
		b, _ := json.Marshal(v)
		return string(b)
	}
	return fmt.Sprint(v)
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
		return string(ce.Err.Code)
	}
	return err.Error()
}

// cliOutcome writes the arguments as flags, each as --k=v: strings and
// numbers as they are, lists repeated, objects (and objects in a list)
// and null as JSON. (--k=v, not --k v: a boolean flag takes no separate
// value, so a wrong one such as "maybe" must be attached to be judged.)
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
				argv = append(argv, "--"+k+"="+flagText(e))
			}
		default:
			argv = append(argv, "--"+k+"="+flagText(v))
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
