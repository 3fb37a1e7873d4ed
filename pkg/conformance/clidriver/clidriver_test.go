package clidriver

import (
	"context"
	"io"
	"path/filepath"
	"slices"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"testing"

	"stitchkit.dev/stitchkit/internal/graphfixture"
	"stitchkit.dev/stitchkit/pkg/conformance"
)

func TestCommandLine(t *testing.T) {
	line, err := CommandLine("list_tasks", map[string]any{"tag": []string{"a", "b"}, "limit": 2, "done": false, "cursor": "-c 1"})
	want := []string{"list_tasks", "--json", "--cursor=-c 1", "--done=false", "--limit=2", `--tag=["a","b"]`}
	if err != nil || !slices.Equal(line, want) {
		t.Errorf("CommandLine = %q, %v\nwant %q", line, err, want)
	}
}

type fakeApp struct {
	args []string
	out  string
	err  string
	code int
}

func (f *fakeApp) RunWith(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	f.args = args
	io.WriteString(stdout, f.out)
	io.WriteString(stderr, f.err)
	return f.code
}

func TestDriver(t *testing.T) {
	g, err := graphfixture.Read(filepath.Join("..", "..", "..", "examples", "tasks"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		run  func() Runner
		call conformance.Call
		want string
		args []string
	}{
		{"success", func() Runner { return InProcess(&fakeApp{out: "{\"id\":\"t_1\"}\n"}) },
			conformance.Call{Operation: "tasks.get", Args: map[string]any{"id": "t_1"}}, `{"data":{"id":"t_1"},"outcome":"success"}`, nil},
		{"envelope", func() Runner {
			return InProcess(&fakeApp{err: "{\"error\":\"TASK_NOT_FOUND\",\"details\":{\"message\":\"Task not found\"}}\n", code: 4})
		}, conformance.Call{Operation: "tasks.get", Args: map[string]any{"id": "t_9"}}, `{"code":"TASK_NOT_FOUND","outcome":"domain_error"}`, nil},
		{"no envelope", func() Runner { return InProcess(&fakeApp{err: "panic\n", code: 2}) },
			conformance.Call{Operation: "tasks.list"}, `{"diagnostic":"exit 2 without an error envelope: panic\n","outcome":"domain_error"}`, nil},
		// A real process: /bin/sh stands in for a built CLI binary.
		{"binary", func() Runner {
			return Binary("/bin/sh", "-c", `echo '{"error":"VALIDATION_ERROR","details":{"issues":[]}}' >&2; exit 1`, "sh")
		},
			conformance.Call{Operation: "tasks.create", Args: map[string]any{"title": ""}}, `{"code":"VALIDATION_ERROR","data":{"issues":[]},"outcome":"validation_error"}`, nil},
		{"binary success", func() Runner { return Binary("/bin/sh", "-c", `echo '{"open":1,"done":2}'`, "sh") },
			conformance.Call{Operation: "tasks.stats"}, `{"data":{"done":2,"open":1},"outcome":"success"}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := New(projecttest.New(t, g, nil), tc.run())
			if err != nil {
				t.Fatal(err)
			}
			o, err := d.Invoke(context.Background(), tc.call)
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := o.Canonical(); string(b) != tc.want {
				t.Errorf("got %s\nwant %s", b, tc.want)
			}
		})
	}
	app := &fakeApp{out: "{\"status\":\"ok\"}\n"}
	d, _ := New(projecttest.New(t, g, nil), InProcess(app))
	if _, err := d.Invoke(context.Background(), conformance.Call{Operation: "tasks.update"}); err == nil {
		t.Error("an operation off the CLI surface was run")
	}
	if _, err := d.Invoke(context.Background(), conformance.Call{Operation: "tasks.get", Args: map[string]any{"id": "t_1"}}); err != nil || !slices.Equal(app.args, []string{"get_task", "--json", "--id=t_1"}) {
		t.Errorf("args %q, %v", app.args, err)
	}
	if _, err := Binary("/nonexistent/stitch-cli")(context.Background(), nil); err == nil {
		t.Error("a missing binary is not an error")
	}
}
