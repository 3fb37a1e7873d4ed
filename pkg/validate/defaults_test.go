package validate

import (
	"encoding/json"
	"testing"
)

func TestApplyDefaults(t *testing.T) {
	const opts = `"$defs":{"Opts":{"type":"object","properties":{"depth":{"type":"integer","default":3},"mode":{"enum":["fast","slow"],"default":"fast"}},"additionalProperties":false},
		"Limit":{"type":"integer","minimum":1,"default":10}}`
	for _, tc := range []struct {
		name, schema, in, want string
		changed                bool
	}{
		{"absent property", `{"type":"object","properties":{"n":{"type":"integer","default":1},"s":{"type":"string"}}}`, `{"s":"x"}`, `{"n":1,"s":"x"}`, true},
		{"present property kept", `{"type":"object","properties":{"n":{"type":"integer","default":1}}}`, `{"n":5}`, `{"n":5}`, false},
		{"null is a value", `{"type":"object","properties":{"n":{"type":["integer","null"],"default":1}}}`, `{"n":null}`, `{"n":null}`, false},
		{"nested through $ref", `{` + opts + `,"type":"object","properties":{"o":{"$ref":"#/$defs/Opts"}}}`, `{"o":{}}`, `{"o":{"depth":3,"mode":"fast"}}`, true},
		{"nested absent object not created", `{` + opts + `,"type":"object","properties":{"o":{"$ref":"#/$defs/Opts"}}}`, `{}`, `{}`, false},
		{"default of a referenced definition", `{` + opts + `,"type":"object","properties":{"limit":{"$ref":"#/$defs/Limit"}}}`, `{}`, `{"limit":10}`, true},
		{"allOf", `{"allOf":[{"type":"object","properties":{"a":{"default":"x"}}},{"properties":{"b":{"default":2}}}]}`, `{}`, `{"a":"x","b":2}`, true},
		{"items", `{"type":"array","items":{"type":"object","properties":{"n":{"default":0}}}}`, `[{},{"n":4}]`, `[{"n":0},{"n":4}]`, true},
		{"additionalProperties", `{"type":"object","additionalProperties":{"type":"object","properties":{"n":{"default":0}}}}`, `{"k":{}}`, `{"k":{"n":0}}`, true},
		{"default object copied", `{"type":"object","properties":{"o":{"type":"object","default":{"a":[1]},"properties":{"b":{"default":true}}}}}`, `{}`, `{"o":{"a":[1],"b":true}}`, true},
		// Disjunctions: only the arm CUE could choose contributes.
		{"one arm matches", `{"type":"object","properties":{"u":{"anyOf":[
			{"type":"object","properties":{"a":{"type":"string"},"n":{"default":1}},"required":["a"],"additionalProperties":false},
			{"type":"object","properties":{"b":{"type":"integer"},"m":{"default":2}},"required":["b"],"additionalProperties":false}]}}}`,
			`{"u":{"b":7}}`, `{"u":{"b":7,"m":2}}`, true},
		{"ambiguous arms", `{"type":"object","properties":{"u":{"oneOf":[
			{"type":"object","properties":{"a":{"default":"x"}},"additionalProperties":false},
			{"type":"object","properties":{"b":{"default":2}},"additionalProperties":false}]}}}`,
			`{"u":{}}`, `{"u":{}}`, false},
		{"arms agree", `{"anyOf":[{"type":"object","properties":{"a":{"default":1}}},{"type":"object","properties":{"a":{"default":1}}}]}`, `{}`, `{"a":1}`, true},
		{"no arm matches", `{"anyOf":[{"type":"object","properties":{"a":{"default":1}},"required":["z"]}]}`, `{}`, `{}`, false},
		{"no defaults anywhere", `{"type":"object","properties":{"a":{"type":"string"}}}`, `{}`, `{}`, false},
		{"self reference terminates", `{"$ref":"#","properties":{"a":{"default":1}}}`, `{}`, `{"a":1}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := mustCompile(t, tc.schema)
			val, err := DecodeJSON([]byte(tc.in), nil)
			if err != nil {
				t.Fatal(err)
			}
			out, changed := v.ApplyDefaults(val)
			got, _ := json.Marshal(out)
			var a, b any
			_ = json.Unmarshal(got, &a)
			_ = json.Unmarshal([]byte(tc.want), &b)
			if ja, jb := mustJSON(a), mustJSON(b); ja != jb || changed != tc.changed {
				t.Errorf("got %s changed=%v, want %s changed=%v", ja, changed, jb, tc.changed)
			}
		})
	}
}

func TestApplyDefaultsCopies(t *testing.T) {
	v := mustCompile(t, `{"type":"object","properties":{"o":{"default":{"a":[1]}}}}`)
	first, _ := v.ApplyDefaults(map[string]any{})
	first.(map[string]any)["o"].(map[string]any)["a"].([]any)[0] = "changed"
	second, _ := v.ApplyDefaults(map[string]any{})
	if got := mustJSON(second); got != `{"o":{"a":[1]}}` {
		t.Fatalf("a handler's change leaked into the schema's default: %s", got)
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
