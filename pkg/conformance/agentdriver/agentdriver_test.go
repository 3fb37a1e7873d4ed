package agentdriver

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"testing"

	"stitchkit.dev/stitchkit/internal/graphfixture"
	"stitchkit.dev/stitchkit/pkg/conformance"
)

// envelopeError is an error whose text is a tool error envelope, as the
// agent mount's *CallError is.
type envelopeError string

func (e envelopeError) Error() string { return string(e) }

// fakeTools answers by tool name; the real toolset is exercised by the
// examples/tasks conformance test.
type fakeTools struct{ called []string }

func (f *fakeTools) Call(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	f.called = append(f.called, name+" "+string(args))
	switch name {
	case "get_task":
		return json.RawMessage(`{"id":"t_1","title":"x","done":false}`), nil
	case "delete_task":
		return json.RawMessage(`{"status":"ok"}`), nil
	case "create_task":
		return nil, envelopeError(`{"error":"VALIDATION_ERROR","details":{"issues":[{"in":"input","path":"/title"}]}}`)
	}
	return nil, ctx.Err()
}

func TestDriver(t *testing.T) {
	g, err := graphfixture.Read(filepath.Join("..", "..", "..", "examples", "tasks"))
	if err != nil {
		t.Fatal(err)
	}
	tools := &fakeTools{}
	d, err := New(projecttest.New(t, g, nil), tools)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		call conformance.Call
		want string
	}{
		{conformance.Call{Operation: "tasks.get", Args: map[string]any{"id": "t_1"}}, `{"data":{"done":false,"id":"t_1","title":"x"},"outcome":"success"}`},
		{conformance.Call{Operation: "tasks.delete", Args: map[string]any{"id": "t_1"}}, `{"outcome":"success"}`},
		{conformance.Call{Operation: "tasks.create", Args: map[string]any{"title": ""}}, `{"code":"VALIDATION_ERROR","data":{"issues":[{"in":"input","path":"/title"}]},"outcome":"validation_error"}`},
	} {
		o, err := d.Invoke(context.Background(), tc.call)
		if err != nil {
			t.Errorf("%s: %v", tc.call.Operation, err)
			continue
		}
		if b, _ := o.Canonical(); string(b) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.call.Operation, b, tc.want)
		}
	}
	if tools.called[0] != `get_task {"id":"t_1"}` {
		t.Errorf("called %q", tools.called)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Invoke(ctx, conformance.Call{Operation: "tasks.list"}); !errors.Is(err, context.Canceled) {
		t.Errorf("a plain error must fail the probe: %v", err)
	}
	if _, err := d.Invoke(context.Background(), conformance.Call{Operation: "files.upload"}); err == nil || err.Error() != `operation "files.upload" is not a tool of the agent surface` {
		t.Errorf("off the surface: %v", err)
	}
}
