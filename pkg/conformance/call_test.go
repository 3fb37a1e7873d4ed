package conformance_test

import (
	"context"
	"testing"

	"stitchkit.dev/stitchkit/pkg/conformance"
)

func TestErrorObservation(t *testing.T) {
	for _, tc := range []struct {
		code    string
		details map[string]any
		want    string
	}{
		{"VALIDATION_ERROR", map[string]any{"issues": []any{map[string]any{"in": "input", "path": "/title"}}}, `{"code":"VALIDATION_ERROR","data":{"issues":[{"in":"input","path":"/title"}]},"outcome":"validation_error"}`},
		{"BAD_REQUEST", map[string]any{"offset": 3}, `{"code":"BAD_REQUEST","data":{"offset":3},"outcome":"validation_error"}`},
		// The tool envelope's {"message"} stand-in for no details.
		{"TASK_NOT_FOUND", map[string]any{"message": "Task not found"}, `{"code":"TASK_NOT_FOUND","outcome":"domain_error"}`},
		{"TASK_NOT_FOUND", nil, `{"code":"TASK_NOT_FOUND","outcome":"domain_error"}`},
		{"TASK_CONFLICT", map[string]any{"message": "x", "title": "y"}, `{"code":"TASK_CONFLICT","data":{"message":"x","title":"y"},"outcome":"domain_error"}`},
	} {
		if b, _ := conformance.ErrorObservation(tc.code, tc.details).Canonical(); string(b) != tc.want {
			t.Errorf("%s %v: %s, want %s", tc.code, tc.details, b, tc.want)
		}
	}
	if o, err := conformance.OutputObservation(nil); err != nil || o.Data != nil || o.Outcome != conformance.OutcomeSuccess {
		t.Errorf("no output: %+v %v", o, err)
	}
	if _, err := conformance.OutputObservation([]byte("{")); err == nil {
		t.Error("broken output accepted")
	}
}

func TestWithHandlerCalls(t *testing.T) {
	n := 0
	inner := conformance.DriverFunc(func(context.Context, any) (conformance.Observation, error) {
		n += 2
		return conformance.Observation{Outcome: conformance.OutcomeSuccess}, nil
	})
	d := conformance.WithHandlerCalls(inner, func() int { return n })
	n = 5
	o, err := d.Invoke(context.Background(), nil)
	if err != nil || o.HandlerCalls == nil || *o.HandlerCalls != 2 {
		t.Errorf("%+v %v", o, err)
	}
}

func TestAsCall(t *testing.T) {
	c := conformance.Call{Operation: "tasks.get", Args: map[string]any{"id": "t_1"}}
	for _, f := range []any{c, &c} {
		if got, err := conformance.AsCall(f); err != nil || got.Operation != "tasks.get" {
			t.Errorf("AsCall(%T) = %+v, %v", f, got, err)
		}
	}
	if _, err := conformance.AsCall((*conformance.Call)(nil)); err == nil {
		t.Error("nil call accepted")
	}
	raw, err := c.RawArgs()
	if err != nil || string(raw["id"]) != `"t_1"` {
		t.Errorf("RawArgs = %v, %v", raw, err)
	}
	if _, err := (conformance.Call{Args: map[string]any{"f": func() {}}}).RawArgs(); err == nil {
		t.Error("unmarshalable argument accepted")
	}
}
