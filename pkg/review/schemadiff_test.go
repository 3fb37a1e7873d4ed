package review

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestSchemaDiff pins the direction rule on small schema pairs: each case
// lists the rules (with severity) the change must produce, in order.
func TestSchemaDiff(t *testing.T) {
	cases := []struct {
		name     string
		dir      Direction
		old, new string
		want     []string
	}{
		{"no change", Request, `{"type":"string"}`, `{"type":"string"}`, nil},
		{"root ref to a non-ASCII definition (percent-encoded pointer)", Request,
			`{"$defs":{"Ü":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}},"$ref":"#/$defs/%C3%9C","type":"object"}`,
			`{"$defs":{"Ü":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["a","b"]}},"$ref":"#/$defs/%C3%9C","type":"object"}`,
			[]string{"breaking request-required-property-added /properties/b"}},
		{"required added", Request,
			`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`,
			`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["a","b"]}`,
			[]string{"breaking request-required-property-added /properties/b"}},
		{"optional added", Request,
			`{"type":"object","properties":{}}`,
			`{"type":"object","properties":{"b":{"type":"string"}}}`,
			[]string{"info request-optional-property-added /properties/b"}},
		{"removed from closed request", Request,
			`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`,
			`{"type":"object","properties":{},"additionalProperties":false}`,
			[]string{"breaking request-property-removed /properties/a"}},
		{"removed from open request", Request,
			`{"type":"object","properties":{"a":{"type":"string"}}}`,
			`{"type":"object","properties":{}}`,
			[]string{"warning request-property-removed /properties/a"}},
		{"response required removed", Response,
			`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`,
			`{"type":"object","properties":{}}`,
			[]string{"breaking response-required-property-removed /properties/a"}},
		{"response became optional", Response,
			`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`,
			`{"type":"object","properties":{"a":{"type":"string"}}}`,
			[]string{"breaking response-property-became-optional /properties/a"}},
		{"request enum narrowed", Request, `{"enum":["a","b"]}`, `{"enum":["a"]}`, []string{"breaking request-enum-narrowed /enum"}},
		{"response enum narrowed", Response, `{"enum":["a","b"]}`, `{"enum":["a"]}`, []string{"info response-enum-narrowed /enum"}},
		{"response enum widened", Response, `{"enum":["a"]}`, `{"enum":["a","b"]}`, []string{"breaking response-enum-widened /enum"}},
		{"request maxLength tightened", Request, `{"type":"string","maxLength":10}`, `{"type":"string","maxLength":5}`, []string{"breaking request-max-length-narrowed /maxLength"}},
		{"response maxLength loosened", Response, `{"type":"string","maxLength":5}`, `{"type":"string","maxLength":10}`, []string{"breaking response-max-length-widened /maxLength"}},
		{"int exclusive equals inclusive", Request, `{"type":"integer","minimum":1}`, `{"type":"integer","exclusiveMinimum":0}`, nil},
		{"request minimum raised", Request, `{"type":"integer","minimum":1}`, `{"type":"integer","minimum":2}`, []string{"breaking request-minimum-narrowed /minimum"}},
		{"request type widened", Request, `{"type":"integer"}`, `{"type":"number"}`, []string{"info request-type-widened /type"}},
		{"response type widened", Response, `{"type":"integer"}`, `{"type":"number"}`, []string{"breaking response-type-widened /type"}},
		{"type changed", Response, `{"type":"string"}`, `{"type":"integer"}`, []string{"breaking response-type-changed /type"}},
		{"pattern changed", Request, `{"type":"string","pattern":"^a"}`, `{"type":"string","pattern":"^b"}`, []string{"breaking request-pattern-changed /pattern"}},
		{"closed request", Request, `{"type":"object"}`, `{"type":"object","additionalProperties":false}`, []string{"breaking request-additional-properties-narrowed /additionalProperties"}},
		{"opened response", Response, `{"type":"object","additionalProperties":false}`, `{"type":"object"}`, []string{"warning response-additional-properties-widened /additionalProperties"}},
		{"self ref with siblings (cycle through a merge)", Request,
			`{"$ref":"#","type":"object","properties":{"a":{"$ref":"#","required":["a"]}}}`,
			`{"$ref":"#","type":"object","properties":{"a":{"$ref":"#","required":["a"]}}}`, nil},
		{"ref resolved, same", Request,
			`{"$ref":"#/$defs/T","$defs":{"T":{"type":"string"}}}`, `{"type":"string"}`, nil},
		{"ref resolved, nested change", Response,
			`{"type":"object","properties":{"t":{"$ref":"#/$defs/T"}},"required":["t"],"$defs":{"T":{"type":"object","properties":{"x":{"type":"string"}},"required":["x"]}}}`,
			`{"type":"object","properties":{"t":{"$ref":"#/$defs/T"}},"required":["t"],"$defs":{"T":{"type":"object","properties":{"x":{"type":"string"}}}}}`,
			[]string{"breaking response-property-became-optional /properties/t/properties/x"}},
		{"recursive schema terminates", Request,
			`{"$ref":"#/$defs/N","$defs":{"N":{"type":"object","properties":{"next":{"$ref":"#/$defs/N"},"v":{"type":"string"}}}}}`,
			`{"$ref":"#/$defs/N","$defs":{"N":{"type":"object","properties":{"next":{"$ref":"#/$defs/N"},"v":{"type":"string","maxLength":3}}}}}`,
			[]string{"breaking request-max-length-narrowed /properties/v/maxLength"}},
		{"oneOf branch removed in request", Request,
			`{"oneOf":[{"type":"object","properties":{"kind":{"const":"a"}}},{"type":"object","properties":{"kind":{"const":"b"}}}]}`,
			`{"oneOf":[{"type":"object","properties":{"kind":{"const":"b"}}}]}`,
			[]string{"breaking request-one-of-narrowed /oneOf/0"}},
		{"oneOf branch added in response", Response,
			`{"oneOf":[{"type":"string"}]}`,
			`{"oneOf":[{"type":"string"},{"type":"integer"}]}`,
			[]string{"breaking response-one-of-widened /oneOf/1"}},
		{"description only", Response, `{"type":"string","description":"a"}`, `{"type":"string","description":"b"}`, []string{"info response-description-changed /description"}},
		{"const changed", Request, `{"const":"a"}`, `{"const":"b"}`, []string{"breaking request-const-changed /const"}},
		{"format added", Request, `{"type":"string"}`, `{"type":"string","format":"email"}`, []string{"breaking request-format-narrowed /format"}},
		{"multipleOf", Request, `{"type":"number","multipleOf":2}`, `{"type":"number","multipleOf":4}`, []string{"breaking request-multiple-of-narrowed /multipleOf"}},
		{"unknown keyword", Request, `{"type":"object","propertyNames":{"maxLength":3}}`, `{"type":"object","propertyNames":{"maxLength":4}}`, []string{"warning request-schema-keyword-changed /propertyNames"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs, err := diffSchemas(c.dir, json.RawMessage(c.old), json.RawMessage(c.new))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range fs {
				got = append(got, fmt.Sprintf("%s %s %s", f.severity, f.rule, f.pointer))
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(c.want, "\n  "))
			}
		})
	}
}
