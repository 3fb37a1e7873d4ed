package project

import (
	"encoding/json"
	"testing"
)

// TestFlattenBoolConditional: a struct with a bool-driven conditional
// (ship: *false | bool, if ship {address!: string}) is a union told apart
// by the bool, and flattens as one told apart by a string does.
func TestFlattenBoolConditional(t *testing.T) {
	var doc any
	// (The translator's output for the contract above.)
	src := `{"anyOf":[{"additionalProperties":false,"properties":{"address":{"type":"string"},"note":{"type":"string"},"ship":{"const":true}},"required":["address","ship"],"type":"object"},{"additionalProperties":false,"properties":{"note":{"type":"string"},"ship":{"const":false,"default":false}},"type":"object"}]}`
	if err := json.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	f := &flattener{root: doc}
	flat, why := f.flatten(doc.(map[string]any))
	if flat == nil {
		t.Fatalf("not flattened: %s", why)
	}
	props := flat["properties"].(map[string]any)
	if got := props["ship"].(map[string]any)["type"]; got != "boolean" {
		t.Errorf("ship: type %v, want boolean", got)
	}
	if _, ok := props["address"]; !ok {
		t.Errorf("address missing from %v", props)
	}
	// A discriminator that is a bool in one branch and a string in
	// another tells nothing apart.
	mixed := `{"anyOf":[{"type":"object","properties":{"k":{"const":true}},"required":["k"]},{"type":"object","properties":{"k":{"const":"x"}},"required":["k"]}]}`
	if err := json.Unmarshal([]byte(mixed), &doc); err != nil {
		t.Fatal(err)
	}
	f = &flattener{root: doc}
	if flat, _ := f.flatten(doc.(map[string]any)); flat != nil {
		t.Errorf("a mixed discriminator flattened: %v", flat)
	}
}

// TestObjectFalse: an advertised document writes a field that must be
// absent as {"not": {}}, never a bare false, but for additionalProperties.
func TestObjectFalse(t *testing.T) {
	var doc any
	src := `{"type":"object","additionalProperties":false,"properties":{"year":false,"l":{"type":"array","prefixItems":[{"type":"integer"}],"items":false}}}`
	if err := json.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(objectFalse(doc))
	want := `{"additionalProperties":false,"properties":{"l":{"items":{"not":{}},"prefixItems":[{"type":"integer"}],"type":"array"},"year":{"not":{}}},"type":"object"}`
	if string(got) != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	// The input is not modified.
	if b, _ := json.Marshal(doc); string(b) == want {
		t.Errorf("objectFalse modified its input")
	}
}
