package project

import (
	"encoding/json"
	"reflect"
	"testing"

	"stitchkit.dev/stitchkit/pkg/graph"
)

func TestWireObjectCoerce(t *testing.T) {
	w, err := NewWireObject(json.RawMessage(`{"$defs":{"Tags":{"type":"array","items":{"type":"string"}},"Mode":{"enum":["fast","slow"]}},
		"type":"object","properties":{
		"limit":{"type":"integer"},"ratio":{"type":"number"},"on":{"type":"boolean"},"s":{"type":"string"},
		"tag":{"$ref":"#/$defs/Tags"},"ids":{"type":"array","items":{"type":"integer"}},
		"mode":{"$ref":"#/$defs/Mode"},"either":{"anyOf":[{"type":"integer"},{"const":"auto"}]},
		"maybe":{"type":["integer","null"]},"any":{}},
		"required":["limit"],"additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	if f := w.Field("limit"); f == nil || !f.Required || f.List {
		t.Fatalf("limit: %+v", f)
	}
	if f := w.Field("tag"); f == nil || !f.List {
		t.Fatalf("tag through $ref must be a list: %+v", f)
	}
	got := w.Coerce(map[string][]string{
		"limit": {"5"}, "ratio": {"1.5e3"}, "on": {"true"}, "s": {"5"}, "tag": {"a"}, "ids": {"1", "x"},
		"mode": {"fast"}, "either": {"auto"}, "maybe": {"null"}, "any": {"1"}, "unknown": {"a", "b"},
	})
	want := map[string]any{
		"limit": json.Number("5"), "ratio": json.Number("1.5e3"), "on": true, "s": "5", "tag": []any{"a"},
		"ids": []any{json.Number("1"), "x"}, "mode": "fast", "either": "auto", "maybe": nil, "any": "1",
		"unknown": []any{"a", "b"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %#v\nwant %#v", got, want)
	}
	// A value that is not of the field's type stays a string, so the
	// validator names the field; repeating a scalar key gives a list.
	bad := w.Coerce(map[string][]string{"limit": {"01"}, "on": {"yes"}, "s": {"a", "b"}})
	if bad["limit"] != "01" || bad["on"] != "yes" || !reflect.DeepEqual(bad["s"], []any{"a", "b"}) {
		t.Fatalf("got %#v", bad)
	}
	if _, err := NewWireObject(json.RawMessage(`{"type":"string"}`)); err == nil {
		t.Fatal("a string schema is not a wire object")
	}
}

func TestIsJSONNumber(t *testing.T) {
	for s, want := range map[string]bool{"0": true, "-1": true, "1.5": true, "1e9": true, "1E-2": true, "-0.0": true,
		"": false, "-": false, "01": false, "1.": false, ".5": false, "1e": false, "+1": false, "0x10": false, "NaN": false, " 1": false} {
		if isJSONNumber(s) != want {
			t.Errorf("isJSONNumber(%q) = %v", s, !want)
		}
	}
}

func TestOperationErrors(t *testing.T) {
	g := &graph.Graph{Errors: []graph.ErrorCode{{Code: "TASK_NOT_FOUND", Status: 404, Message: "Task not found"}, {Code: "A_CONFLICT", Status: 409, Message: "x"}}}
	codes := func(op *graph.Operation) []string {
		es, err := OperationErrors(g, op)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range es {
			out = append(out, e.Code)
		}
		return out
	}
	if got, want := codes(&graph.Operation{Scope: "public"}), []string{"BAD_REQUEST", "VALIDATION_ERROR", "INTERNAL_SERVER_ERROR"}; !reflect.DeepEqual(got, want) {
		t.Errorf("public: %v, want %v", got, want)
	}
	if got, want := codes(&graph.Operation{Scope: "user", Errors: []string{"TASK_NOT_FOUND", "A_CONFLICT", "BAD_REQUEST"}}),
		[]string{"BAD_REQUEST", "VALIDATION_ERROR", "UNAUTHORIZED", "FORBIDDEN", "TASK_NOT_FOUND", "A_CONFLICT", "INTERNAL_SERVER_ERROR"}; !reflect.DeepEqual(got, want) {
		t.Errorf("user: %v, want %v", got, want)
	}
	if _, err := OperationErrors(g, &graph.Operation{Scope: "public", Errors: []string{"NOPE"}}); err == nil {
		t.Error("an unregistered code must fail")
	}
}
