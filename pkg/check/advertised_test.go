package check

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"stitchkit.dev/stitchkit/pkg/compile"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/project"
	"stitchkit.dev/stitchkit/pkg/validate"
)

// conditionalContract has an operation whose #input holds a conditional
// field (a union of closed variants) beside #params, with Agent union
// flattening off: the advertised Agent (and CLI) input merges a closed
// {id} with the variants.
const conditionalContract = header + `
	services: appts: operations: cancel: {
		method: "POST", path: "/{id}/cancel", desc: "Cancel an appointment"
		#params: {id: string}
		#input: {
			why: "no_show" | "sick" | "other"
			if why == "other" {note: string}
		}
		#output: {ok: bool}
		expose: ["HTTP", "MCP", "AGENT", "CLI"]
		examples: [{params: {id: "a1"}, input: {why: "other", note: "moved away"}, output: {ok: true}}]
	}
	policy: {agent: flattenUnionInput: false, mcp: flattenUnionInput: true}
}
`

// TestAdvertisedInputOfConditionalField: the projection distributes the
// closed {id} into each variant, so every surface's advertised input
// accepts the contract's example (and the check reports nothing).
func TestAdvertisedInputOfConditionalField(t *testing.T) {
	rep := report(t, files(conditionalContract))
	if len(rep.Errors) > 0 {
		t.Fatalf("errors: %v", rep.Errors)
	}
	ts, err := project.ToolSurfaces(rep.Graph)
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"id": "a1", "why": "other", "note": "moved away"}
	refused := map[string]any{"id": "a1", "why": "sick", "note": "not for sick"}
	checked := 0
	for _, s := range ts.Surfaces {
		for _, tool := range s.Tools {
			v, err := validate.Compile(tool.Input)
			if err != nil {
				t.Fatalf("%s %s: %v", s.Transport, tool.Name, err)
			}
			if err := v.Validate(args); err != nil {
				t.Errorf("%s %s refuses the example's arguments: %v\n%s", s.Transport, tool.Name, err, tool.Input)
			}
			if s.Transport != graph.MCP { // MCP flattens the union: it advertises a wider object
				if v.Validate(refused) == nil {
					t.Errorf("%s %s accepts a note for why=sick, which the contract refuses", s.Transport, tool.Name)
				}
			}
			checked++
		}
	}
	if checked != 3 {
		t.Fatalf("checked %d tools; want 3 (AGENT, CLI, MCP)", checked)
	}
}

// TestAdvertisedInputUnsatisfiable holds the check to the schema the
// projection used to advertise for conditionalContract — allOf of a
// closed {id} and the closed variants, which no object satisfies — so a
// regression of the projection cannot go unnoticed: both the refused
// example and the unsatisfiable schema are reported, positioned, once for
// every surface advertising it.
func TestAdvertisedInputUnsatisfiable(t *testing.T) {
	r, err := compile.AnalyzeFiles(context.Background(), files(conditionalContract))
	if err != nil || len(r.Diagnostics) > 0 {
		t.Fatalf("compile: %v %v", err, r.Diagnostics)
	}
	ts, err := project.ToolSurfaces(r.Graph)
	if err != nil {
		t.Fatal(err)
	}
	broken := json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","allOf":[
		{"type":"object","additionalProperties":false,"properties":{"id":{"type":"string"}},"required":["id"]},
		{"anyOf":[
			{"type":"object","additionalProperties":false,"properties":{"why":{"const":"other"},"note":{"type":"string"}},"required":["note","why"]},
			{"type":"object","additionalProperties":false,"properties":{"why":{"const":"no_show"}},"required":["why"]},
			{"type":"object","additionalProperties":false,"properties":{"why":{"const":"sick"}},"required":["why"]}]}]}`)
	for i := range ts.Surfaces {
		if s := &ts.Surfaces[i]; s.Transport != graph.MCP {
			for j := range s.Tools {
				s.Tools[j].Input, s.Tools[j].InputDigest = broken, "broken"
			}
		}
	}
	k := &checker{r: r, g: r.Graph}
	k.advertisedSchemas(ts)
	if len(k.diags) != 2 {
		t.Fatalf("got %d diagnostics; want the refused example and the unsatisfiable schema:\n%v", len(k.diags), k.diags)
	}
	for _, d := range k.diags {
		if !d.Pos.IsValid() {
			t.Errorf("%s has no position", d.Rule)
		}
		if !strings.HasPrefix(d.Message, "AGENT tool cancel_appt, CLI command cancel_appt: ") {
			t.Errorf("%s does not name both surfaces once: %s", d.Rule, d.Message)
		}
	}
	if d := k.diags[0]; d.Rule != "advertised-input-refuses-example" || d.Path != "services.appts.operations.cancel.examples.0" {
		t.Errorf("first diagnostic %s at %s; want advertised-input-refuses-example at the example", d.Rule, d.Path)
	}
	if d := k.diags[1]; d.Rule != "advertised-input-unsatisfiable" || !strings.Contains(d.Message, `without "note" or "why"`) {
		t.Errorf("second diagnostic: %s %s", d.Rule, d.Message)
	}
}

// TestSatisfiability: what unsatisfiable proves, and what the witness
// builder finds, on small schemas.
func TestSatisfiability(t *testing.T) {
	cases := []struct {
		schema string
		unsat  bool // unsatisfiable proves it
		sat    bool // witness finds a value the validator accepts
	}{
		{`false`, true, false},
		{`{"enum":[]}`, true, false},
		{`{"type":"object","properties":{"a":{"type":"string","minLength":2}},"required":["a"]}`, false, true},
		{`{"allOf":[{"type":"string"},{"type":"integer"}]}`, true, false},
		{`{"allOf":[{"type":"object","additionalProperties":false,"properties":{"a":{}}},{"type":"object","required":["b"]}]}`, true, false},
		{`{"allOf":[{"type":"object","additionalProperties":false,"properties":{"a":{},"b":{}}},{"type":"object","required":["b"]}]}`, false, true},
		{`{"anyOf":[false,{"enum":[]}]}`, true, false},
		{`{"anyOf":[false,{"type":"integer","minimum":3}]}`, false, true},
		{`{"type":"object","additionalProperties":false,"required":["x"]}`, true, false},
		{`{"type":"object","properties":{"x":false},"required":["x"]}`, true, false},
	}
	for _, c := range cases {
		var doc any
		if err := json.Unmarshal([]byte(c.schema), &doc); err != nil {
			t.Fatal(err)
		}
		if got := unsatisfiable(doc, doc, 0) != ""; got != c.unsat {
			t.Errorf("%s: unsatisfiable %v; want %v", c.schema, got, c.unsat)
		}
		v, err := validate.Compile([]byte(c.schema))
		if err != nil {
			t.Fatalf("%s: %v", c.schema, err)
		}
		w, ok := witness(doc, doc, 0)
		if got := ok && v.Validate(w) == nil; got != c.sat {
			t.Errorf("%s: witness %v (%v) accepted %v; want %v", c.schema, w, ok, got, c.sat)
		}
	}
}
