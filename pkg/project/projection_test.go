package project

import (
	"errors"
	"strings"
	"testing"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// TestProjection: the options are stated once and kept in one form, the
// routes carry the prefix (and, as Local, the path below it), and each
// endpoint holds what the runner and the exports read.
func TestProjection(t *testing.T) {
	g := tasksGraph(t)
	g.Errors = []graph.ErrorCode{{Code: "TASK_NOT_FOUND", Status: 404, Message: "Task not found"}}
	for _, tc := range []struct{ in, want string }{{"", ""}, {"/", ""}, {"api/", "/api"}, {"/api", "/api"}} {
		p, err := New(g, &Options{HTTPPrefix: tc.in})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Options().HTTPPrefix; got != tc.want {
			t.Errorf("HTTPPrefix %q: kept as %q, want %q", tc.in, got, tc.want)
		}
		for _, r := range p.Routes() {
			if r.Path != JoinPath(tc.want, r.Local) {
				t.Errorf("prefix %q: route %s, local %s", tc.in, r.Path, r.Local)
			}
		}
	}
	p, err := New(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Graph() != g || len(p.Endpoints()) != len(g.Operations())+len(g.RuntimeTools) {
		t.Fatalf("endpoints: %d", len(p.Endpoints()))
	}
	for _, op := range g.Operations() {
		e := p.Endpoint(op.Service, op.Action)
		if e == nil || e.Op != op || e.ID() != op.ID() {
			t.Fatalf("%s: endpoint %+v", op.ID(), e)
		}
		if (op.Params != "") != (e.Params != nil && e.WireParams != nil) || (op.Query != "") != (e.Query != nil && e.WireQuery != nil) ||
			(op.Input != "") != (e.Input != nil) || (op.Output != "") != (e.Output != nil) {
			t.Errorf("%s: validators or wire fields do not follow the declared schemas", op.ID())
		}
		want, err := OperationErrors(g, op)
		if err != nil || len(want) != len(e.Errors) {
			t.Errorf("%s: errors %v, want %v (%v)", op.ID(), e.Errors, want, err)
		}
	}
}

// TestNewRefusesWhatCannotBeServed: routes ServeMux cannot serve together
// and a declared code the registry lacks are errors of New, not of a mount.
func TestNewRefusesWhatCannotBeServed(t *testing.T) {
	g := tasksGraph(t)
	_, err := New(g, nil)
	if err == nil || !strings.Contains(err.Error(), "TASK_NOT_FOUND is not in the error registry") {
		t.Errorf("undeclared code: %v", err)
	}
	g = routeGraph(t, graph.Operation{Action: "a", Method: "GET", Path: "/{id}"}, graph.Operation{Action: "b", Method: "GET", Path: "/{slug}"})
	var problems RouteProblems
	if _, err := New(g, nil); !errors.As(err, &problems) || problems[0].Kind != RouteDuplicate {
		t.Errorf("duplicate route: %v", err)
	}
	if _, err := New(nil, nil); err == nil {
		t.Error("nil graph projected")
	}
}
