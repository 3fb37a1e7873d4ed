package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"stitchkit.dev/stitchkit/internal/mounttest"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
	httpmount "stitchkit.dev/stitchkit/pkg/mount/http"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// flagsGraph has one CLI operation with a field of every flag kind.
func flagsGraph(t testing.TB) *graph.Graph {
	g := &graph.Graph{Name: "things", Version: "1.0.0", Policy: graph.Policy{MCP: graph.MCPPolicy{SchemaValidation: graph.ValidationThrow}}}
	add := func(s map[string]any) graph.Digest {
		d, err := g.AddSchema(s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	params := add(map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}, "required": []any{"id"}, "additionalProperties": false})
	input := add(map[string]any{"type": "object", "additionalProperties": false, "required": []any{"count"}, "properties": map[string]any{
		"count":  map[string]any{"type": "integer", "description": "How many"},
		"ratio":  map[string]any{"type": "number"},
		"active": map[string]any{"type": "boolean"},
		"tags":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		"sizes":  map[string]any{"type": "array", "items": map[string]any{"type": "integer"}},
		"color":  map[string]any{"enum": []any{"red", "green"}},
		"opts": map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{
			"k": map[string]any{"type": "string"}, "n": map[string]any{"type": "integer"}}},
		"extra":  map[string]any{},
		"labels": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
		"counts": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "integer"}},
		"shades": map[string]any{"type": "array", "items": map[string]any{"enum": []any{"dark", "light"}}},
	}})
	g.Services = []graph.Service{{Name: "things", Prefix: "/things", Scope: "public", Operations: []graph.Operation{{
		Service: "things", Action: "make", Method: "POST", Path: "/{id}", Desc: "Make a thing", Scope: "public",
		Expose: []graph.Transport{graph.HTTP, graph.CLI}, Params: params, Input: input,
	}}}}
	return g
}

type run struct {
	code           int
	stdout, stderr string
}

func runApp(t testing.TB, a *App, stdin string, args ...string) run {
	t.Helper()
	var out, errb bytes.Buffer
	code := a.RunWith(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return run{code, out.String(), errb.String()}
}

func flagsApp(t testing.TB) (*App, *[]*mount.Call) {
	g := flagsGraph(t)
	var calls []*mount.Call
	impl := mount.NewImplementation(g)
	impl.Handle("things", "make", func(ctx context.Context, c *mount.Call) (json.RawMessage, error) {
		calls = append(calls, c)
		return nil, nil
	})
	r, err := mount.New(impl, &mount.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(r.Projection(), &Options{Runner: r})
	if err != nil {
		t.Fatal(err)
	}
	return a, &calls
}

func inputOf(t *testing.T, c *mount.Call) string {
	t.Helper()
	b, err := graph.Canonical(c.Input)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Upstream test 59, adapted: every flag kind becomes the JSON value the
// schema expects.
func TestFlagKinds(t *testing.T) {
	a, calls := flagsApp(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--count", "3"}, `{"count":3}`},
		{[]string{"--count=3", "--active"}, `{"active":true,"count":3}`},
		{[]string{"--count", "3", "--no-active"}, `{"active":false,"count":3}`},
		{[]string{"--count", "3", "--active=off"}, `{"active":false,"count":3}`},
		{[]string{"--count", "3", "--tags", "a", "--tags", "b"}, `{"count":3,"tags":["a","b"]}`},
		{[]string{"--count", "3", "--tags", `["a","b"]`}, `{"count":3,"tags":["a","b"]}`},
		{[]string{"--count", "3", "--sizes", "1", "--sizes", "2"}, `{"count":3,"sizes":[1,2]}`},
		{[]string{"--count", "3", "--ratio", "0.5", "--color", "red"}, `{"color":"red","count":3,"ratio":0.5}`},
		{[]string{"--count", "3", "--opts", `{"k":"v"}`}, `{"count":3,"opts":{"k":"v"}}`},
		{[]string{"--count", "3", "--opts.k", "v", "--opts.n", "2"}, `{"count":3,"opts":{"k":"v","n":2}}`},
		{[]string{"--count", "3", "--opts", `{"k":"v"}`, "--opts.n", "2"}, `{"count":3,"opts":{"k":"v","n":2}}`},
		{[]string{"--count", "3", "--extra", `[1]`}, `{"count":3,"extra":[1]}`},
		{[]string{"--count", "3", "--extra", `plain text`}, `{"count":3,"extra":"plain text"}`},
		// Keys a map does not declare: --NAME.KEY, the key taken whole.
		{[]string{"--count", "3", "--labels.env", "prod", "--labels.team=core"}, `{"count":3,"labels":{"env":"prod","team":"core"}}`},
		{[]string{"--count", "3", "--labels", `{"a":"b"}`, "--labels.c", "d"}, `{"count":3,"labels":{"a":"b","c":"d"}}`},
		{[]string{"--count", "3", "--labels.a.b", "v", "--counts.n", "2"}, `{"count":3,"counts":{"n":2},"labels":{"a.b":"v"}}`},
		{[]string{"--count", "3", "--shades", "dark", "--shades", "light"}, `{"count":3,"shades":["dark","light"]}`},
	}
	for _, c := range cases {
		*calls = nil
		r := runApp(t, a, "", append([]string{"make_thing", "--id", "x"}, c.args...)...)
		if r.code != 0 || len(*calls) != 1 {
			t.Fatalf("%v: exit %d, stderr %s", c.args, r.code, r.stderr)
		}
		if got := inputOf(t, (*calls)[0]); got != c.want {
			t.Errorf("%v: input %s, want %s", c.args, got, c.want)
		}
		if (*calls)[0].Params["id"] != "x" || (*calls)[0].Source != mount.SourceCLI {
			t.Errorf("%v: params %v source %s", c.args, (*calls)[0].Params, (*calls)[0].Source)
		}
		if r.stdout != "{\n  \"status\": \"ok\"\n}\n" {
			t.Errorf("%v: stdout %q", c.args, r.stdout)
		}
	}
}

// Flags the schema cannot take are refused naming the flag and the value,
// with exit 1, before anything runs; schema refusals come from the runner.
func TestFlagErrors(t *testing.T) {
	a, calls := flagsApp(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--count", "abc"}, `--count expects a whole number, got \"abc\"`},
		{[]string{"--count", "1.5"}, `--count expects a whole number, got \"1.5\"`},
		{[]string{"--count", "1", "--ratio", "x"}, `--ratio expects a number`},
		{[]string{"--count", "1", "--active=maybe"}, `--active expects true or false`},
		{[]string{"--count", "1", "--sizes", "1", "--sizes", "x"}, `--sizes expects a whole number, got \"x\"`},
		{[]string{"--count", "1", "--opts", "[1]"}, `--opts expects a JSON object`},
		{[]string{"--count", "1", "--active", "--no-active"}, `--active and --no-active both given`},
		{[]string{"--count", "1", "--count", "2"}, `--count is given 2 times`},
		{[]string{"--count", "1", "--color", "blue"}, `"error":"VALIDATION_ERROR"`},
		{[]string{"--count", "1", "--nope", "1"}, `unknown flag: --nope`},
		{[]string{"--count", "1", "--counts.n", "x"}, `--counts.n expects a whole number, got \"x\"`},
		{[]string{"--count", "1", "--opts.zzz", "1"}, `unknown flag: --opts.zzz`}, // a closed object
		{[]string{"--count", "1", "--labels.", "1"}, `unknown flag: --labels.`},
	}
	for _, c := range cases {
		*calls = nil
		r := runApp(t, a, "", append([]string{"make_thing", "--id", "x", "--json"}, c.args...)...)
		if r.code != 1 || !strings.Contains(r.stderr, c.want) || len(*calls) != 0 || r.stdout != "" {
			t.Errorf("%v: exit %d, stderr %s, %d calls", c.args, r.code, r.stderr, len(*calls))
		}
		if strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%v: --json stderr is not one line: %q", c.args, r.stderr)
		}
	}
}

// A boolean flag takes no separate value: --active false is refused with
// a message saying how to write it, not "takes flags, not arguments".
func TestBooleanWithSeparateValue(t *testing.T) {
	a, calls := flagsApp(t)
	for _, args := range [][]string{{"--active", "false"}, {"--no-active", "yes"}} {
		r := runApp(t, a, "", append([]string{"make_thing", "--id", "x", "--count", "1", "--json"}, args...)...)
		if r.code != 1 || len(*calls) != 0 || !strings.Contains(r.stderr, `"error":"BAD_REQUEST"`) ||
			!strings.Contains(r.stderr, "--active is a boolean flag and takes no separate value: write --active="+args[1]) {
			t.Errorf("%v: exit %d, stderr %s", args, r.code, r.stderr)
		}
	}
	if r := runApp(t, a, "", "make_thing", "--id", "x", "--count", "1", "stray"); r.code != 1 || !strings.Contains(r.stderr, `takes flags, not arguments (got \"stray\")`) {
		t.Errorf("stray argument: exit %d, stderr %s", r.code, r.stderr)
	}
}

// Help lists every flag, the required ones and an enum's values.
func TestHelp(t *testing.T) {
	a, _ := flagsApp(t)
	r := runApp(t, a, "", "make_thing", "--help")
	for _, want := range []string{"--count", "How many (required)", "--no-active", "one of: green, red", "--opts.k", "Required: --count, --id.",
		"one of: dark, light (repeat the flag", "--labels.KEY VALUE", "(a JSON object, or its dotted flags)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("help lacks %q:\n%s", want, r.stdout)
		}
	}
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
}

// The first required field not given comes from standard input.
func TestStdin(t *testing.T) {
	var titles []any
	r, err := mounttest.ExampleRunner(mounttest.Tasks(t), nil, map[string]mount.Handler{"tasks.create": func(ctx context.Context, c *mount.Call) (json.RawMessage, error) {
		titles = append(titles, c.Input.(map[string]any)["title"])
		return json.RawMessage(`{"id":"t_9","title":"x","done":false}`), nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(r.Projection(), &Options{Runner: r})
	if err != nil {
		t.Fatal(err)
	}
	res := runApp(t, a, "Write the docs\n", "create_task", "--json")
	if res.code != 0 || len(titles) != 1 || titles[0] != "Write the docs" {
		t.Fatalf("exit %d %s %v", res.code, res.stderr, titles)
	}
	if res.stdout != `{"id":"t_9","title":"x","done":false}`+"\n" {
		t.Fatalf("stdout %q", res.stdout)
	}
	// A flag wins over standard input.
	res = runApp(t, a, "ignored", "create_task", "--title", "From a flag")
	if res.code != 0 || titles[1] != "From a flag" {
		t.Fatalf("exit %d %v", res.code, titles)
	}
	// The first required field no flag set: --count is given, so
	// standard input is --id.
	fa, calls := flagsApp(t)
	res = runApp(t, fa, "x7\n", "make_thing", "--count", "2")
	if res.code != 0 || len(*calls) != 1 || (*calls)[0].Params["id"] != "x7" {
		t.Fatalf("stdin for the first unset required field: exit %d %s", res.code, res.stderr)
	}
}

// Exit codes follow the error table (upstream test 60): UNAUTHORIZED 2,
// FORBIDDEN 3, NOT_FOUND 4, an application code 1; an unknown command is
// NOT_FOUND.
func TestExitCodes(t *testing.T) {
	g := mounttest.Tasks(t)
	deny := map[string]mount.Code{"get": mount.CodeUnauthorized, "list": mount.CodeForbidden}
	opts := &mount.Options{Logger: slog.New(slog.DiscardHandler), Hooks: mount.Hooks{Authorize: func(ctx context.Context, c *mount.Call) (context.Context, error) {
		if code, ok := deny[c.Identity.Action]; ok {
			return nil, mount.NewError(code, "")
		}
		return nil, nil
	}}}
	r, err := mounttest.ExampleRunner(g, opts, map[string]mount.Handler{"tasks.create": func(context.Context, *mount.Call) (json.RawMessage, error) {
		return nil, mount.NewError("TASK_CONFLICT", "")
	}})
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(r.Projection(), &Options{Runner: r, ExitCodes: map[string]int{"TASK_CONFLICT": 9}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		env  string
	}{
		{[]string{"get_task", "--id", "t_1"}, 2, "UNAUTHORIZED"},
		{[]string{"list_tasks"}, 3, "FORBIDDEN"},
		{[]string{"no_such_command"}, 4, "NOT_FOUND"},
		{[]string{"create_task", "--title", "x"}, 9, "TASK_CONFLICT"},
		{[]string{"doctor"}, 1, "NOT_IMPLEMENTED"},
	} {
		res := runApp(t, a, "", c.args...)
		if res.code != c.code || !strings.Contains(res.stderr, `"error": "`+c.env+`"`) {
			t.Errorf("%v: exit %d, stderr %s", c.args, res.code, res.stderr)
		}
	}
	if a.ExitCode("SOMETHING_ELSE") != 1 {
		t.Error("unknown code does not exit 1")
	}
}

// CLI-only commands run their own handler with validated input, even with
// --server.
func TestCLIOnlyCommand(t *testing.T) {
	g := mounttest.Tasks(t)
	var got []map[string]any
	a, err := New(projecttest.New(t, g, nil), &Options{Server: "http://127.0.0.1:1", Commands: map[string]CommandFunc{"doctor": func(ctx context.Context, in map[string]any) (json.RawMessage, error) {
		got = append(got, in)
		return json.RawMessage(`{"ok":true,"problems":[]}`), nil
	}}})
	if err != nil {
		t.Fatal(err)
	}
	res := runApp(t, a, "", "doctor", "--verbose", "--json")
	if res.code != 0 || res.stdout != `{"ok":true,"problems":[]}`+"\n" || got[0]["verbose"] != true {
		t.Fatalf("exit %d %q %q %v", res.code, res.stdout, res.stderr, got)
	}
}

// A CLI-only command's handler receives its input with the contract's
// defaults applied, as an operation's handler does; the flag that is given
// keeps its value. (Before the fix runNative validated the input but
// handed over the flags alone: level was missing.)
func TestCLIOnlyCommandDefaults(t *testing.T) {
	g := mounttest.Tasks(t)
	in, err := g.AddSchema(map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{
		"verbose": map[string]any{"type": "boolean"},
		"level":   map[string]any{"type": "integer", "default": 3, "minimum": 1, "maximum": 5},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range g.CliCommands {
		if g.CliCommands[i].Name == "doctor" {
			g.CliCommands[i].Input = in
		}
	}
	var got map[string]any
	a, err := New(projecttest.New(t, g, nil), &Options{Commands: map[string]CommandFunc{"doctor": func(ctx context.Context, in map[string]any) (json.RawMessage, error) {
		got = in
		return json.RawMessage(`{"ok":true,"problems":[]}`), nil
	}}})
	if err != nil {
		t.Fatal(err)
	}
	res := runApp(t, a, "", "doctor", "--verbose")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	if got["verbose"] != true || fmt.Sprint(got["level"]) != "3" {
		t.Fatalf("the handler got %v; want verbose true and level 3 (the default)", got)
	}
	res = runApp(t, a, "", "doctor", "--level", "5")
	if res.code != 0 || fmt.Sprint(got["level"]) != "5" {
		t.Fatalf("exit %d %s: the handler got %v; want level 5 as given", res.code, res.stderr, got)
	}
}

// Help says what the schema says beyond a flag's type: its default,
// numeric bounds, length and item bounds, pattern and format.
func TestHelpConstraints(t *testing.T) {
	g := mounttest.Tasks(t)
	in, err := g.AddSchema(map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{
		"level": map[string]any{"type": "integer", "default": 2, "minimum": 1, "exclusiveMaximum": 6},
		"since": map[string]any{"type": "string", "format": "date-time"},
		"code":  map[string]any{"type": "string", "pattern": "^[a-z]+$", "maxLength": 8},
		"tags":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "maxItems": 3},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range g.CliCommands {
		if g.CliCommands[i].Name == "doctor" {
			g.CliCommands[i].Input = in
		}
	}
	a, err := New(projecttest.New(t, g, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := runApp(t, a, "", "doctor", "--help")
	for _, want := range []string{"[default 2; >=1 <6]", "[format date-time]", "[max length 8; pattern ^[a-z]+$]", "[max items 3]"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("help lacks %q:\n%s", want, r.stdout)
		}
	}
}

// A field named like a framework flag is refused when the tree is built.
func TestReservedFlagCollision(t *testing.T) {
	g := flagsGraph(t)
	d, _ := g.AddSchema(map[string]any{"type": "object", "properties": map[string]any{"json": map[string]any{"type": "boolean"}}})
	g.Services[0].Operations[0].Input = d
	if _, err := New(projecttest.New(t, g, nil), nil); err == nil || !strings.Contains(err.Error(), "--json") {
		t.Fatalf("%v", err)
	}
}

// --server calls the real HTTP mount: the same values arrive as in
// process, and an error envelope comes back as its code and exit code.
func TestRemoteAgainstHTTPMount(t *testing.T) {
	g := mounttest.Tasks(t)
	var seen []*mount.Call
	bind := map[string]mount.Handler{
		"tasks.list": func(ctx context.Context, c *mount.Call) (json.RawMessage, error) {
			seen = append(seen, c)
			return json.RawMessage(`{"items":[]}`), nil
		},
		"tasks.get": func(ctx context.Context, c *mount.Call) (json.RawMessage, error) {
			return nil, mount.NewError("TASK_NOT_FOUND", "")
		},
	}
	r, err := mounttest.ExampleRunner(g, &mount.Options{Projection: projecttest.Prefixed(t, g, "/api")}, bind)
	if err != nil {
		t.Fatal(err)
	}
	h, err := httpmount.New(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	a, err := New(projecttest.New(t, g, nil), &Options{Server: srv.URL + "/api"})
	if err != nil {
		t.Fatal(err)
	}
	res := runApp(t, a, "", "list_tasks", "--limit", "2", "--tag", "docs", "--tag", "x-y", "--done")
	if res.code != 0 || len(seen) != 1 {
		t.Fatalf("exit %d %s", res.code, res.stderr)
	}
	if q, _ := graph.Canonical(seen[0].Query); string(q) != `{"done":true,"limit":2,"tag":["docs","x-y"]}` || seen[0].Source != mount.SourceHTTP {
		t.Fatalf("query %s source %s", q, seen[0].Source)
	}
	// TASK_NOT_FOUND has status 404: it exits 4, as NOT_FOUND does.
	res = runApp(t, a, "", "get_task", "--id", "t_1")
	if res.code != 4 || !strings.Contains(res.stderr, `"error": "TASK_NOT_FOUND"`) {
		t.Fatalf("exit %d %s", res.code, res.stderr)
	}
	res = runApp(t, a, "", "list_tasks", "--limit", "0")
	if res.code != 1 || !strings.Contains(res.stderr, `"error": "VALIDATION_ERROR"`) || !strings.Contains(res.stderr, `"in": "query"`) {
		t.Fatalf("exit %d %s", res.code, res.stderr)
	}
	res = runApp(t, a, "", "task_stats")
	if res.code != 1 || !strings.Contains(res.stderr, "no HTTP route") {
		t.Fatalf("runtime tool remote: exit %d %s", res.code, res.stderr)
	}
}
