package schemas

import (
	"encoding/json"
	"testing"

	"stitchkit.dev/stitchkit/pkg/graph"
)

func canon(t *testing.T, v any) string {
	t.Helper()
	b, err := graph.Canonical(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func hoist(t *testing.T, suffix string, docs ...string) (*Hoister, []*Use) {
	t.Helper()
	h := NewHoister("#/components/schemas/", suffix)
	var uses []*Use
	for i := 0; i < len(docs); i += 2 {
		u, err := h.Add(docs[i], json.RawMessage(docs[i+1]))
		if err != nil {
			t.Fatal(err)
		}
		uses = append(uses, u)
	}
	if err := h.Resolve(); err != nil {
		t.Fatal(err)
	}
	return h, uses
}

func TestSharedDefinitionKeepsItsName(t *testing.T) {
	task := `{"type":"object","properties":{"tag":{"$ref":"#/$defs/Tag"}}}`
	tag := `{"type":"string","enum":["a","b"]}`
	h, uses := hoist(t, "",
		"a_output", `{"$schema":"https://json-schema.org/draft/2020-12/schema","$ref":"#/$defs/Task","$defs":{"Task":`+task+`,"Tag":`+tag+`}}`,
		"b_output", `{"type":"array","items":{"$ref":"#/$defs/Task"},"$defs":{"Task":`+task+`,"Tag":`+tag+`}}`,
	)
	if got := canon(t, h.Components()); got != `{"Tag":{"enum":["a","b"],"type":"string"},"Task":{"properties":{"tag":{"$ref":"#/components/schemas/Tag"}},"type":"object"}}` {
		t.Errorf("components = %s", got)
	}
	if got := canon(t, uses[0].Schema()); got != `{"$ref":"#/components/schemas/Task"}` {
		t.Errorf("a = %s", got)
	}
	if got := canon(t, uses[1].Schema()); got != `{"items":{"$ref":"#/components/schemas/Task"},"type":"array"}` {
		t.Errorf("b = %s", got)
	}
}

func TestCollidingDefinitionsArePrefixed(t *testing.T) {
	h, uses := hoist(t, "",
		"z_output", `{"$ref":"#/$defs/Task","$defs":{"Task":{"type":"string"}}}`,
		"a_output", `{"$ref":"#/$defs/Task","$defs":{"Task":{"type":"integer"}}}`,
		"m_output", `{"$ref":"#/$defs/Task","$defs":{"Task":{"type":"string"}}}`,
		"y_output", `{"$ref":"#/$defs/Other","$defs":{"Other":{"type":"null"}}}`,
	)
	if got := canon(t, h.Components()); got != `{"Other":{"type":"null"},"a_output_Task":{"type":"integer"},"z_output_Task":{"type":"string"}}` {
		t.Errorf("components = %s", got)
	}
	for i, want := range []string{"z_output_Task", "a_output_Task", "z_output_Task", "Other"} {
		if got := canon(t, uses[i].Schema()); got != `{"$ref":"#/components/schemas/`+want+`"}` {
			t.Errorf("use %d = %s, want ref to %s", i, got, want)
		}
	}
}

func TestDefinitionWithDifferentDependencyIsDifferent(t *testing.T) {
	// Same Task bytes, but the Tag it reaches differs: two components.
	h, _ := hoist(t, "",
		"a", `{"$ref":"#/$defs/Task","$defs":{"Task":{"items":{"$ref":"#/$defs/Tag"}},"Tag":{"type":"string"}}}`,
		"b", `{"$ref":"#/$defs/Task","$defs":{"Task":{"items":{"$ref":"#/$defs/Tag"}},"Tag":{"type":"integer"}}}`,
	)
	if got := canon(t, h.Components()); got != `{"a_Tag":{"type":"string"},"a_Task":{"items":{"$ref":"#/components/schemas/a_Tag"}},"b_Tag":{"type":"integer"},"b_Task":{"items":{"$ref":"#/components/schemas/b_Tag"}}}` {
		t.Errorf("components = %s", got)
	}
}

func TestRootReferenceHoistsRoot(t *testing.T) {
	h, uses := hoist(t, "/schema",
		"tree", `{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#"}},"first":{"$ref":"#/properties/kids/items"}}}`,
	)
	if got := canon(t, uses[0].Schema()); got != `{"$ref":"#/components/schemas/tree/schema"}` {
		t.Errorf("use = %s", got)
	}
	if got := canon(t, h.Components()); got != `{"tree":{"properties":{"first":{"$ref":"#/components/schemas/tree/schema/properties/kids/items"},"kids":{"items":{"$ref":"#/components/schemas/tree/schema"},"type":"array"}},"type":"object"}}` {
		t.Errorf("components = %s", got)
	}
}

func TestDataIsNotRewritten(t *testing.T) {
	_, uses := hoist(t, "",
		"x", `{"const":{"$ref":"#/$defs/A"},"enum":[{"$ref":"#"}],"default":{"$ref":"#/$defs/A"},"properties":{"$ref":{"$ref":"#/$defs/A"}},"$defs":{"A":{"type":"string"}}}`,
	)
	// The values are data, never rewritten; they do say the type.
	if got := canon(t, uses[0].Schema()); got != `{"const":{"$ref":"#/$defs/A"},"default":{"$ref":"#/$defs/A"},"enum":[{"$ref":"#"}],"properties":{"$ref":{"$ref":"#/components/schemas/A"}},"type":"object"}` {
		t.Errorf("use = %s", got)
	}
}

// TestEnumsAndConstsAreTyped: code generators need "type" next to enum and
// const; the values imply it, so adding it changes nothing accepted.
func TestEnumsAndConstsAreTyped(t *testing.T) {
	for in, want := range map[string]string{
		`{"enum":["a","b"]}`:                 `{"enum":["a","b"],"type":"string"}`,
		`{"enum":[1,2]}`:                     `{"enum":[1,2],"type":"integer"}`,
		`{"enum":[1,2.5]}`:                   `{"enum":[1,2.5],"type":"number"}`,
		`{"enum":["a",null]}`:                `{"enum":["a",null],"type":["null","string"]}`,
		`{"const":true}`:                     `{"const":true,"type":"boolean"}`,
		`{"const":"x","type":"string"}`:      `{"const":"x","type":"string"}`,
		`{"properties":{"k":{"const":"a"}}}`: `{"properties":{"k":{"const":"a","type":"string"}}}`,
	} {
		_, uses := hoist(t, "", "x", in)
		if got := canon(t, uses[0].Schema()); got != want {
			t.Errorf("%s → %s; want %s", in, got, want)
		}
	}
}

func TestNameClashWithLabelAndEscapes(t *testing.T) {
	h, uses := hoist(t, "",
		"x", `{"properties":{"a":{"$ref":"#"},"b":{"$ref":"#/$defs/x"},"c":{"$ref":"#/$defs/a~1b"}},"$defs":{"x":{"type":"string"},"a/b":{"type":"integer"}}}`,
	)
	if got := canon(t, h.Components()); got != `{"a_b":{"type":"integer"},"x":{"properties":{"a":{"$ref":"#/components/schemas/x"},"b":{"$ref":"#/components/schemas/x_2"},"c":{"$ref":"#/components/schemas/a_b"}}},"x_2":{"type":"string"}}` {
		t.Errorf("components = %s", got)
	}
	_ = uses
}

func TestObject(t *testing.T) {
	_, uses := hoist(t, "",
		"q", `{"$ref":"#/$defs/Q","$defs":{"Q":{"type":"object","required":["b"],"properties":{"b":{"$ref":"#/$defs/B"},"a":{"type":"string"}}},"B":{"type":"integer"}}}`,
		"s", `{"type":"string"}`,
	)
	props, isObj, req := uses[0].Object()
	if !isObj || len(props) != 2 || props[0].Name != "a" || props[0].Required || !props[1].Required || len(req) != 1 {
		t.Fatalf("object view = %v %v %v", props, isObj, req)
	}
	if got := canon(t, props[1].Schema); got != `{"$ref":"#/components/schemas/B"}` {
		t.Errorf("b = %s", got)
	}
	if _, isObj, _ := uses[1].Object(); isObj {
		t.Error("string schema reported as object")
	}
}

func TestAddRejectsMissingSchema(t *testing.T) {
	if _, err := NewHoister("#/", "").Add("x", nil); err == nil {
		t.Error("missing schema accepted")
	}
}

// TestRootThatIsADefinitionIsReferenced: a schema that is a definition's
// body (the graph inlines `#output: #Task`) is embedded as a reference to
// the definition's component; its doc comment lives on the component.
func TestRootThatIsADefinitionIsReferenced(t *testing.T) {
	task := `{"type":"object","properties":{"id":{"type":"string"}}}`
	h, uses := hoist(t, "",
		"list_output", `{"type":"array","items":{"$ref":"#/$defs/Task"},"$defs":{"Task":{"description":"A task.","type":"object","properties":{"id":{"type":"string"}}}}}`,
		"get_output", task,
		"other_output", `{"type":"object","properties":{"id":{"type":"integer"}}}`,
	)
	if got := canon(t, uses[1].Schema()); got != `{"$ref":"#/components/schemas/Task"}` {
		t.Errorf("get = %s", got)
	}
	if uses[1].Component() != "Task" || uses[2].Component() != "" {
		t.Errorf("components %q %q", uses[1].Component(), uses[2].Component())
	}
	if got := canon(t, uses[2].Schema()); got != `{"properties":{"id":{"type":"integer"}},"type":"object"}` {
		t.Errorf("other = %s", got)
	}
	if _, ok := h.Components()["Task"]; !ok {
		t.Error("Task not hoisted")
	}
}
