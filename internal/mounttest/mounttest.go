// Package mounttest holds what the transport mounts' tests share: the
// compiled examples/tasks graph and a runner whose handlers answer from
// each operation's examples. Only tests import it.
package mounttest

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"stitchkit.dev/stitchkit/internal/graphfixture"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
)

var (
	tasksOnce sync.Once
	tasksG    *graph.Graph
	tasksErr  error
)

// TasksDir is the examples/tasks contract folder.
func TasksDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "examples", "tasks")
}

// TasksGraph loads the compiled examples/tasks graph (its graph.json
// fixture, see internal/graphfixture) once per process. Callers must not
// modify the graph; copy it first (a shallow copy is enough to change the
// policy).
func TasksGraph() (*graph.Graph, error) {
	tasksOnce.Do(func() { tasksG, tasksErr = graphfixture.Read(TasksDir()) })
	return tasksG, tasksErr
}

// Tasks is TasksGraph for a test.
func Tasks(tb testing.TB) *graph.Graph {
	tb.Helper()
	g, err := TasksGraph()
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// UnseenDir is the folder of one of the probe contracts under
// testdata/unseen (library, fleet, ledger): contracts written to meet
// shapes examples/tasks does not have, used by every mount's tests.
func UnseenDir(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata", "unseen", name)
}

var unseen sync.Map // name → *graph.Graph

// Unseen loads the compiled probe contract name (its graph.json fixture)
// once per process (see
// [UnseenDir]). Callers must not modify the graph.
func Unseen(tb testing.TB, name string) *graph.Graph {
	tb.Helper()
	if g, ok := unseen.Load(name); ok {
		return g.(*graph.Graph)
	}
	g, err := graphfixture.Read(UnseenDir(name))
	if err != nil {
		tb.Fatal(err)
	}
	unseen.Store(name, g)
	return g
}

// ExampleImplementation binds every operation and runtime tool of g that
// has examples to a handler answering its first example's output (nothing
// when the example has none); handlers in bind, keyed "service.action",
// take precedence. Identities without examples stay unbound (the runner
// answers NOT_IMPLEMENTED).
func ExampleImplementation(g *graph.Graph, bind map[string]mount.Handler) (*mount.Implementation, error) {
	impl := mount.NewImplementation(g)
	var errs []error
	add := func(service, action string, examples []json.RawMessage) {
		h, ok := bind[service+"."+action]
		if !ok {
			if len(examples) == 0 {
				return
			}
			var e struct {
				Output json.RawMessage `json:"output"`
			}
			if err := json.Unmarshal(examples[0], &e); err != nil {
				errs = append(errs, err)
				return
			}
			out := e.Output
			h = func(context.Context, *mount.Call) (json.RawMessage, error) { return out, nil }
		}
		errs = append(errs, impl.Handle(service, action, h))
	}
	for _, op := range g.Operations() {
		add(op.Service, op.Action, op.Examples)
	}
	for _, rt := range g.RuntimeTools {
		add(rt.Identity.Service, rt.Identity.Action, rt.Examples)
	}
	return impl, errors.Join(errs...)
}

// ExampleRunner is a runner of ExampleImplementation (opts nil: defaults
// with a discarding logger).
func ExampleRunner(g *graph.Graph, opts *mount.Options, bind map[string]mount.Handler) (*mount.Runner, error) {
	impl, err := ExampleImplementation(g, bind)
	if err != nil {
		return nil, err
	}
	if opts == nil {
		opts = &mount.Options{Logger: slog.New(slog.DiscardHandler)}
	}
	return mount.New(impl, opts)
}
