package agent

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// A model's arguments are untrusted: any bytes, to any strict tool, never
// panic the invoker; the answer is an output or a *CallError with a
// registry code.
func FuzzStrictCall(f *testing.F) {
	g := strictTasks(f)
	ts := toolset(f, g, nil)
	reg := map[string]bool{}
	for _, e := range g.ErrorRegistry() {
		reg[e.Code] = true
	}
	for _, seed := range []struct{ tool, args string }{
		{"list_tasks", `{"limit":null,"cursor":null,"done":null,"tag":null}`},
		{"list_tasks", `{"tag":[null,"a"]}`},
		{"create_task", `{"title":"x","tags":null}`},
		{"notify_task", `{"id":"t_1","kind":"email","address":"a@b.c","phone":null}`},
		{"get_task", `null`},
		{"get_task", `[{"id":null}]`},
		{"search_task", `{"q":"x","fields":null,"limit":null}`},
	} {
		f.Add(seed.tool, seed.args)
	}
	f.Fuzz(func(t *testing.T, tool, args string) {
		if ts.Tool(tool) == nil {
			tool = ts.Tools()[len(tool)%len(ts.Tools())].Name
		}
		out, err := ts.Call(context.Background(), tool, json.RawMessage(args))
		var ce *CallError
		switch {
		case err == nil:
			if !json.Valid(out) {
				t.Fatalf("output %q is not JSON", out)
			}
		case errors.As(err, &ce):
			if !reg[string(ce.Err.Code)] || !json.Valid(ce.Envelope()) {
				t.Fatalf("error %v", err)
			}
		default:
			t.Fatalf("error of type %T: %v", err, err)
		}
	})
}
