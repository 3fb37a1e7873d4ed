package review

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
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
		{"default gone with the property becoming required: one finding", Request,
			`{"type":"object","properties":{"t":{"type":"array","default":[]}}}`,
			`{"type":"object","properties":{"t":{"type":"array","minItems":1}},"required":["t"]}`,
			[]string{"breaking request-property-became-required /properties/t", "breaking request-min-items-narrowed /properties/t/minItems"}},
		{"default arriving with the property becoming optional: nobody omitted it before", Request,
			`{"type":"object","properties":{"c":{"type":"boolean"}},"required":["c"]}`,
			`{"type":"object","properties":{"c":{"type":"boolean","default":true}}}`,
			[]string{"info request-property-became-optional /properties/c"}},
		{"response value given a default may be left out", Response,
			`{"type":"object","properties":{"c":{"type":"boolean"}},"required":["c"]}`,
			`{"type":"object","properties":{"c":{"type":"boolean","default":true}}}`,
			[]string{"breaking response-property-became-optional /properties/c"}},
		{"request default changed", Request,
			`{"type":"object","properties":{"c":{"type":"boolean","default":true}}}`,
			`{"type":"object","properties":{"c":{"type":"boolean","default":false}}}`,
			[]string{"breaking request-default-changed /properties/c/default"}},
		{"lone object became one variant of a union (another added)", Request,
			`{"type":"object","properties":{"token":{"type":"string"}},"required":["token"],"additionalProperties":false}`,
			`{"anyOf":[{"type":"object","properties":{"kind":{"const":"card"},"number":{"type":"string"}},"required":["kind","number"],"additionalProperties":false},{"type":"object","properties":{"kind":{"const":"token","default":"token"},"token":{"type":"string"}},"required":["token"],"additionalProperties":false}]}`,
			[]string{"info request-any-of-widened /anyOf/0", "info request-optional-property-added /anyOf/1/properties/kind"}},
		{"doc comment next to a $ref (the field's own)", Request,
			`{"$defs":{"C":{"enum":["eur","usd"]}},"type":"object","properties":{"c":{"$ref":"#/$defs/C"}}}`,
			`{"$defs":{"C":{"enum":["eur","usd"]}},"type":"object","properties":{"c":{"$ref":"#/$defs/C","description":"ISO code"}}}`,
			[]string{"info request-description-changed /properties/c/description"}},
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
			`{"oneOf":[{"type":"object","properties":{"a":{"type":"string"}}}]}`,
			`{"oneOf":[{"type":"object","properties":{"a":{"type":"string"}}},{"type":"object","properties":{"b":{"type":"integer"}}}]}`,
			[]string{"breaking response-one-of-widened /oneOf/1"}},
		{"a union of bare types is a type list", Response,
			`{"oneOf":[{"type":"string"}]}`,
			`{"oneOf":[{"type":"string"},{"type":"integer"}]}`,
			[]string{"breaking response-type-widened /type"}},
		{"description only", Response, `{"type":"string","description":"a"}`, `{"type":"string","description":"b"}`, []string{"info response-description-changed /description"}},
		{"const changed", Request, `{"const":"a"}`, `{"const":"b"}`, []string{"breaking request-const-changed /const"}},
		{"format added", Request, `{"type":"string"}`, `{"type":"string","format":"email"}`, []string{"breaking request-format-narrowed /format"}},
		{"multipleOf", Request, `{"type":"number","multipleOf":2}`, `{"type":"number","multipleOf":4}`, []string{"breaking request-multiple-of-narrowed /multipleOf"}},
		// $ref + siblings is a conjunction (2020-12): both apply.
		{"ref gains a sibling pattern: response narrows", Response,
			`{"$defs":{"ID":{"type":"string","pattern":"^[a-z_0-9]+$"}},"type":"object","properties":{"id":{"$ref":"#/$defs/ID"}}}`,
			`{"$defs":{"ID":{"type":"string","pattern":"^[a-z_0-9]+$"}},"type":"object","properties":{"id":{"$ref":"#/$defs/ID","pattern":"^pay_[a-z0-9]+$"}}}`,
			[]string{"info response-pattern-narrowed /properties/id/pattern"}},
		{"ref gains a sibling pattern: request narrows", Request,
			`{"$defs":{"ID":{"type":"string","pattern":"^[a-z_0-9]+$"}},"$ref":"#/$defs/ID"}`,
			`{"$defs":{"ID":{"type":"string","pattern":"^[a-z_0-9]+$"}},"$ref":"#/$defs/ID","pattern":"^pay_"}`,
			[]string{"breaking request-pattern-narrowed /pattern"}},
		{"sibling implied by the ref is no change", Request,
			`{"$defs":{"ID":{"type":"string","maxLength":10}},"$ref":"#/$defs/ID"}`,
			`{"$defs":{"ID":{"type":"string","maxLength":10}},"$ref":"#/$defs/ID","type":"string","maxLength":20}`, nil},
		{"allOf members fold into one schema", Request,
			`{"allOf":[{"type":"integer"},{"minimum":1}]}`, `{"type":"integer","minimum":1}`, nil},
		// Enum values are judged against the other side's constraints.
		{"pattern replaced by an enum whose values all match", Request,
			`{"type":"string","pattern":"^[A-Z]{3}$"}`, `{"enum":["EUR","USD"]}`,
			[]string{"breaking request-enum-narrowed /enum"}},
		{"pattern replaced by an enum whose values all match (response)", Response,
			`{"type":"string","pattern":"^[A-Z]{3}$"}`, `{"enum":["EUR","USD"]}`,
			[]string{"info response-enum-narrowed /enum"}},
		{"pattern replaced by an enum with a value it refused", Response,
			`{"type":"string","pattern":"^[A-Z]{3}$"}`, `{"enum":["EUR","usd"]}`,
			[]string{"breaking response-enum-changed /enum"}},
		{"enum replaced by the pattern all its values match", Request,
			`{"enum":["EUR","USD"]}`, `{"type":"string","pattern":"^[A-Z]{3}$"}`,
			[]string{"info request-enum-widened /enum"}},
		{"keywords that cannot change an enum's set", Request,
			`{"type":"string","enum":["a","bb"]}`, `{"type":"string","enum":["a","bb"],"maxLength":5,"pattern":"^[ab]+$"}`, nil},
		{"a bound that drops an enum value", Request,
			`{"enum":["a","bbb"]}`, `{"enum":["a","bbb"],"maxLength":2}`,
			[]string{"breaking request-enum-narrowed /enum"}},
		{"boolean became a const", Response, `{"type":"boolean"}`, `{"const":true}`,
			[]string{"info response-const-narrowed /const"}},
		// Null, lists and numbers in a client's words.
		{"nullable via a union", Response, `{"type":"string"}`, `{"anyOf":[{"type":"string"},{"type":"null"}]}`,
			[]string{"breaking response-type-widened /type"}},
		{"nullable via type list", Request, `{"type":"string"}`, `{"type":["null","string"]}`,
			[]string{"info request-type-widened /type"}},
		{"nullable enum", Response, `{"enum":["a","b"]}`, `{"anyOf":[{"enum":["a","b"]},{"type":"null"}]}`,
			[]string{"breaking response-enum-widened /enum"}},
		{"scalar became a list (body)", Request, `{"enum":["a","b"]}`, `{"type":"array","items":{"enum":["a","b"]}}`,
			[]string{"breaking request-type-changed /type"}},
		// Defaults.
		{"request default changed", Request, `{"type":"boolean","default":true}`, `{"type":"boolean","default":false}`,
			[]string{"breaking request-default-changed /default"}},
		{"request default added", Request, `{"type":"integer"}`, `{"type":"integer","default":20}`,
			[]string{"warning request-default-added /default"}},
		{"request default removed", Request, `{"type":"integer","default":20}`, `{"type":"integer"}`,
			[]string{"warning request-default-removed /default"}},
		{"response default changed", Response, `{"type":"integer","default":1}`, `{"type":"integer","default":2}`,
			[]string{"info response-default-changed /default"}},
		{"bounds kept next to a default", Request, `{"type":"integer","minimum":1,"maximum":100,"default":20}`, `{"type":"integer","minimum":1,"maximum":50,"default":20}`,
			[]string{"breaking request-maximum-narrowed /maximum"}},
		// Tuples: positions and arity.
		{"tuple: optional item appended (request)", Request,
			`{"type":"array","prefixItems":[{"type":"string"}],"minItems":1,"maxItems":1}`,
			`{"type":"array","prefixItems":[{"type":"string"},{"type":"object"}],"minItems":1,"maxItems":2}`,
			[]string{"info request-tuple-length-widened /prefixItems"}},
		{"tuple: required item appended (response)", Response,
			`{"type":"array","prefixItems":[{"type":"string"}],"minItems":1,"maxItems":1}`,
			`{"type":"array","prefixItems":[{"type":"string"},{"type":"object"}],"minItems":2,"maxItems":2}`,
			[]string{"breaking response-tuple-length-changed /prefixItems"}},
		// != v is a refused value.
		{"value refused", Request, `{"type":"integer","minimum":1}`, `{"type":"integer","minimum":1,"not":{"const":5}}`,
			[]string{"breaking request-enum-narrowed /not"}},
		{"value refused that was never accepted", Request, `{"type":"integer","minimum":1}`, `{"type":"integer","minimum":1,"not":{"const":0}}`, nil},
		{"refusal lifted in a response", Response, `{"type":"string","not":{"const":""}}`, `{"type":"string"}`,
			[]string{"breaking response-enum-widened /not"}},
		{"float became number (response)", Response, `{"type":"number","not":{"type":"integer"}}`, `{"type":"number"}`,
			[]string{"breaking response-type-widened /not"}},
		{"number written as float | int", Request, `{"type":"number"}`, `{"anyOf":[{"type":"number","not":{"type":"integer"}},{"type":"integer"}]}`, nil},
		{"unknown keyword", Request, `{"type":"object","propertyNames":{"maxLength":3}}`, `{"type":"object","propertyNames":{"maxLength":4}}`, []string{"warning request-schema-keyword-changed /propertyNames"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs, err := diffSchemas(c.dir, json.RawMessage(c.old), json.RawMessage(c.new), diffOptions{})
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

// TestPatternsSubset pins regular-language inclusion on patterns as JSON
// Schema reads them (unanchored unless anchored).
func TestPatternsSubset(t *testing.T) {
	for _, c := range []struct {
		sub, sup []string
		subset   bool
		known    bool
	}{
		{[]string{"^pay_[a-z0-9]+$"}, []string{"^pay_[A-Za-z0-9]+$"}, true, true},
		{[]string{"^pay_[A-Za-z0-9]+$"}, []string{"^pay_[a-z0-9]+$"}, false, true},
		{[]string{"^pay_[a-z0-9]{8,}$"}, []string{"^pay_[a-z0-9]+$"}, true, true},
		{[]string{"^t_[a-z0-9]+$"}, []string{"^task_[a-z0-9]+$"}, false, true},
		{[]string{"^[A-Z]{3}$"}, []string{"[A-Z]"}, true, true},    // unanchored: anywhere
		{[]string{"abc"}, []string{"^abc$"}, false, true},          // "xabc" matches the first only
		{[]string{"^a", "b$"}, []string{"(?s)^a.*b$"}, true, true}, // a conjunction of patterns
		{[]string{"^a", "b$"}, []string{"^a.*b$"}, false, true},    // "a\nb": "." does not match "\n"
		{[]string{"^a.*b$"}, []string{"^a", "b$"}, true, true},
		{nil, []string{"^.*$"}, false, true}, // "." does not match "\n"
		{nil, []string{"(?s)^.*$"}, true, true},
		{[]string{`\bword\b`}, []string{"word"}, false, false}, // word boundaries are not modelled
		{[]string{"(?i)abc"}, []string{"abc"}, false, false},   // nor case folding
		{[]string{"^[^@\\s]+@[^@\\s]+$"}, []string{"@"}, true, true},
	} {
		got, known := patternsSubset(c.sub, c.sup)
		if got != c.subset || known != c.known {
			t.Errorf("%q ⊆ %q = %v (known %v); want %v (known %v)", c.sub, c.sup, got, known, c.subset, c.known)
		}
	}
}

// TestDiffIsBounded: definitions referring to one another twice over make
// a tree of exponential size; expansion and comparison stay bounded (this
// took forever before expand kept a stack of the references it follows).
func TestDiffIsBounded(t *testing.T) {
	old := `{"$defs":{"A":{"anyOf":[{"$ref":"#/$defs/A"},{"$ref":"#/$defs/A"}]}},"anyOf":[{"$ref":"#/$defs/A"},{"type":"string"}]}`
	new := `{"$defs":{"A":{"anyOf":[{"$ref":"#/$defs/A"},{"$ref":"#/$defs/A"}]}},"anyOf":[{"$ref":"#/$defs/A"},{"type":"integer"}]}`
	var chain strings.Builder // D0 → D1 twice → … → D40
	chain.WriteString(`{"$ref":"#/$defs/D0","$defs":{`)
	for i := range 40 {
		fmt.Fprintf(&chain, `"D%d":{"type":"object","properties":{"a":{"$ref":"#/$defs/D%d"},"b":{"$ref":"#/$defs/D%d"}}},`, i, i+1, i+1)
	}
	chain.WriteString(`"D40":{"type":"string"}}}`)
	dag := chain.String()
	done := make(chan struct{})
	var fs []schemaFinding
	go func() {
		defer close(done)
		_, _ = diffSchemas(Request, json.RawMessage(old), json.RawMessage(new), diffOptions{})
		fs, _ = diffSchemas(Request, json.RawMessage(dag), json.RawMessage(strings.Replace(dag, `"D40":{"type":"string"}`, `"D40":{"type":"integer"}`, 1)), diffOptions{})
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("diffSchemas did not return: unbounded")
	}
	if len(fs) == 0 {
		t.Error("a changed leaf under an exponential DAG produced no finding")
	}
}
