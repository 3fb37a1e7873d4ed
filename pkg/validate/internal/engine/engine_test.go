package engine

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func mustCompile(t *testing.T, schema string, opts *Options) *Schema {
	t.Helper()
	s, err := Compile(decode(t, []byte(schema)), opts)
	if err != nil {
		t.Fatalf("%s: %v", schema, err)
	}
	return s
}

// TestNumbersExact: bounds and multipleOf are decided on the decimal text,
// beyond float64 and int64, and a huge exponent costs nothing.
func TestNumbersExact(t *testing.T) {
	for _, tc := range []struct {
		schema, value string
		ok            bool
	}{
		{`{"maximum":9007199254740992}`, `9007199254740993`, false}, // float64 would round it to the bound
		{`{"maximum":9007199254740993}`, `9007199254740993`, true},
		{`{"minimum":18446744073709551616}`, `18446744073709551615`, false},
		{`{"exclusiveMinimum":0.1}`, `0.1000000000000000000001`, true},
		{`{"exclusiveMinimum":0.1}`, `1e-1`, false},
		{`{"maximum":1e308}`, `1e309`, false},
		{`{"minimum":-1e-400}`, `-1e-401`, true},
		{`{"multipleOf":0.1}`, `0.3`, true}, // float64: 0.3/0.1 = 2.9999999999999996
		{`{"multipleOf":0.01}`, `19.99`, true},
		{`{"multipleOf":3}`, `1e9999`, false},
		{`{"multipleOf":7}`, `7e9999`, true},
		{`{"multipleOf":2}`, `1e9999`, true},
		{`{"multipleOf":0.5}`, `1e308`, true},
		{`{"multipleOf":1e-300}`, `1`, true},
		{`{"multipleOf":3}`, `-0`, true},
		{`{"multipleOf":123456789012345678901234567890}`, `246913578024691357802469135780`, true},
		{`{"multipleOf":123456789012345678901234567890}`, `246913578024691357802469135781`, false},
		{`{"type":"integer"}`, `1.0`, true}, // JSON Schema's reading
		{`{"type":"integer"}`, `1e2`, true},
		{`{"type":"integer"}`, `1.5`, false},
		{`{"const":1}`, `1.0`, true},
		{`{"enum":[100]}`, `1e2`, true},
	} {
		s := mustCompile(t, tc.schema, nil)
		if got := s.Valid(decode(t, []byte(tc.value))); got != tc.ok {
			t.Errorf("%s on %s: valid=%v, want %v", tc.schema, tc.value, got, tc.ok)
		}
		if got := s.ValidJSON([]byte(tc.value), 64); got != tc.ok {
			t.Errorf("%s on %s: ValidJSON=%v, want %v", tc.schema, tc.value, got, tc.ok)
		}
	}
}

// TestCUEReadings: the options that give CUE's meaning.
func TestCUEReadings(t *testing.T) {
	cue := &Options{IntegerLiterals: true, UniqueKinds: true}
	for _, tc := range []struct {
		schema, value string
		json, cue     bool
	}{
		{`{"type":"integer"}`, `1.0`, true, false},
		{`{"type":"integer"}`, `1e2`, true, false},
		{`{"type":"integer"}`, `12`, true, true},
		{`{"type":["integer","null"]}`, `2.0`, true, false},
		{`{"type":["integer","number"]}`, `2.0`, true, true},
		{`{"type":"number","not":{"type":"integer"}}`, `1.0`, false, true}, // CUE's float
		{`{"type":"number","not":{"type":"integer"}}`, `1`, false, false},
		{`{"uniqueItems":true}`, `[1,1.0]`, false, true},
		{`{"uniqueItems":true}`, `[1.0,1.00]`, false, false},
		{`{"uniqueItems":true}`, `[{"a":1},{"a":1.0}]`, false, true},
	} {
		v := decode(t, []byte(tc.value))
		if got := mustCompile(t, tc.schema, nil).Valid(v); got != tc.json {
			t.Errorf("JSON reading: %s on %s: %v, want %v", tc.schema, tc.value, got, tc.json)
		}
		s := mustCompile(t, tc.schema, cue)
		if got := s.Valid(v); got != tc.cue {
			t.Errorf("CUE reading: %s on %s: %v, want %v", tc.schema, tc.value, got, tc.cue)
		}
		if got := s.ValidJSON([]byte(tc.value), 64); got != tc.cue {
			t.Errorf("CUE reading: %s on %s: ValidJSON %v, want %v", tc.schema, tc.value, got, tc.cue)
		}
	}
	// A long array goes through the canonical-text path of uniqueItems.
	long := `[` + strings.Repeat(`2,`, 0) + `0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,3.0]`
	if !mustCompile(t, `{"uniqueItems":true}`, cue).Valid(decode(t, []byte(long))) {
		t.Error("CUE reading: 3 and 3.0 in a long array are distinct")
	}
	if mustCompile(t, `{"uniqueItems":true}`, nil).Valid(decode(t, []byte(long))) {
		t.Error("JSON reading: 3 and 3.0 in a long array are equal")
	}
}

// TestIssues: paths, keywords and messages, in a stable order, with the
// additionalProperties keys sorted.
func TestIssues(t *testing.T) {
	s := mustCompile(t, `{"type":"object","properties":{"a/b":{"type":"array","items":{"type":"integer","minimum":1}},"n":{"type":"string","minLength":2}},"required":["n","z"],"additionalProperties":false}`, nil)
	v := decode(t, []byte(`{"a/b":[1,0,"x"],"q":1,"c":2,"b":3}`))
	got := s.Validate(v)
	want := []Issue{
		{"", "additionalProperties", "additional properties 'b', 'c', 'q' not allowed"},
		{"", "required", "missing properties 'n', 'z'"},
		{"/a~1b/1", "minimum", "minimum: got 0, want 1"},
		{"/a~1b/2", "type", "got string, want integer"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("issue %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	for range 20 {
		again := s.Validate(decode(t, []byte(`{"a/b":[1,0,"x"],"q":1,"c":2,"b":3}`)))
		if len(again) != len(got) || again[0] != got[0] {
			t.Fatalf("issues differ between runs: %v / %v", again, got)
		}
	}
	if is := mustCompile(t, `{"type":"integer"}`, &Options{IntegerLiterals: true}).Validate(json.Number("1.0")); len(is) != 1 || !strings.Contains(is[0].Message, "without a fraction or exponent") {
		t.Errorf("integer literal message: %v", is)
	}
}

// TestRefused: a keyword the engine does not implement is a compile error,
// never ignored.
func TestRefused(t *testing.T) {
	for _, schema := range []string{
		`{"unevaluatedProperties":false}`,
		`{"$dynamicRef":"#x"}`,
		`{"properties":{"a":{"x-extension":1}}}`,
		`{"format":"email"}`,
		`{"$ref":"other.json#/a"}`,
		`{"$ref":"#/$defs/missing"}`,
		`{"items":[{"type":"string"}]}`,
		`{"dependencies":{"a":["b"]}}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#"}`,
		`{"pattern":"(?<name>x"}`,
		`{"multipleOf":0}`,
		`{"minLength":-1}`,
		`{"type":"text"}`,
		`{"allOf":[]}`,
		`{"$defs":{"a":{"$id":"http://x/a"}}}`,
		`7`,
	} {
		_, err := Compile(decode(t, []byte(schema)), nil)
		var ce *CompileError
		if !errors.As(err, &ce) || ce.Reason == "" {
			t.Errorf("%s: err=%v, want a CompileError", schema, err)
		}
	}
	f := func(any) error { return nil }
	if _, err := Compile(decode(t, []byte(`{"format":"email"}`)), &Options{Format: func(n string) (Format, bool) { return f, n == "email" }}); err != nil {
		t.Errorf("a format the options know: %v", err)
	}
}

// TestCycles: recursive schemas validate recursive values; a reference
// cycle that never descends into the value fails the value instead of
// looping.
func TestCycles(t *testing.T) {
	list := mustCompile(t, `{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}},"additionalProperties":false}},"$ref":"#/$defs/n"}`, nil)
	if !list.Valid(decode(t, []byte(`{"next":{"next":{"next":{}}}}`))) || list.Valid(decode(t, []byte(`{"next":{"next":{"x":1}}}`))) {
		t.Error("recursive list judged wrongly")
	}
	loop := mustCompile(t, `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`, nil)
	if loop.Valid(json.Number("1")) || loop.ValidJSON([]byte("1"), 64) {
		t.Error("a reference cycle accepted a value")
	}
	if is := loop.Validate(json.Number("1")); len(is) == 0 || is[0].Keyword != "$ref" {
		t.Errorf("cycle issues: %v", is)
	}
}

// TestNoAllocations: accepting a value allocates nothing, decoded or on
// the bytes.
func TestNoAllocations(t *testing.T) {
	s := mustCompile(t, `{"type":"object","properties":{"name":{"type":"string","minLength":1,"maxLength":100,"pattern":"^[A-Z]"},"count":{"type":"integer","minimum":0},"tags":{"type":"array","items":{"type":"string"},"maxItems":10}},"required":["name","count"],"additionalProperties":false}`, &Options{IntegerLiterals: true})
	body := []byte(`{"name":"Write the benchmark","count":3,"tags":["bench","http"]}`)
	v := decode(t, body)
	if n := testing.AllocsPerRun(100, func() {
		if !s.Valid(v) {
			t.Fatal("refused")
		}
	}); n != 0 {
		t.Errorf("Valid: %v allocations", n)
	}
	if n := testing.AllocsPerRun(100, func() {
		if !s.ValidJSON(body, 64) {
			t.Fatal("refused")
		}
	}); n != 0 {
		t.Errorf("ValidJSON: %v allocations", n)
	}
}
