// Package validators benchmarks JSON Schema validators for Go on the
// schemas stitchkit's compiler emits, to choose pkg/validate's engine by
// measurement (issue 7, item 4). It is a module of its own so that the
// candidates that lost do not become dependencies of stitchkit:
//
//	cd bench/validators && go test -bench . -benchmem
//
// Each case is a schema from the compiled goldens with an instance it
// accepts; every validator is first checked to accept it and to refuse a
// broken copy, so none is timed while failing. Two measurements per
// validator: Validate on a value already decoded in the form the library
// takes (Value), and from the JSON bytes, decoding included (Bytes).
package validators

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	google "github.com/google/jsonschema-go/jsonschema"
	kaptinlin "github.com/kaptinlin/jsonschema"
	santhosh "github.com/santhosh-tekuri/jsonschema/v6"

	"stitchkit.dev/stitchkit/pkg/validate"
)

type benchCase struct {
	name           string
	schema         string
	valid, invalid string
}

func cases(tb testing.TB) []benchCase {
	raw, err := os.ReadFile("../../pkg/compile/testdata/tasks.graph.json")
	if err != nil {
		tb.Fatal(err)
	}
	var g struct {
		Schemas  map[string]json.RawMessage `json:"schemas"`
		Services []struct {
			Name       string
			Operations []struct {
				Action        string
				Input, Output string
			}
		}
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		tb.Fatal(err)
	}
	op := func(action string) (in, out string) {
		for _, s := range g.Services {
			if s.Name != "tasks" {
				continue
			}
			for _, o := range s.Operations {
				if o.Action == action {
					return string(g.Schemas[o.Input]), string(g.Schemas[o.Output])
				}
			}
		}
		tb.Fatalf("no operation tasks.%s", action)
		return
	}
	_, listOut := op("list")
	notifyIn, _ := op("notify")
	task := `{"done":false,"id":"t_1","tags":["docs","api"],"title":"Write docs"}`
	tasks := strings.TrimSuffix(strings.Repeat(task+",", 20), ",")
	return []benchCase{
		{"http-input",
			`{"type":"object","properties":{"name":{"type":"string","minLength":1,"maxLength":100},"count":{"type":"integer","minimum":0},"tags":{"type":"array","items":{"type":"string"},"maxItems":10}},"required":["name","count"],"additionalProperties":false}`,
			`{"name":"Write the benchmark","count":3,"tags":["bench","http"]}`, `{"name":"","count":-1}`},
		{"tasks-list-output", listOut,
			`{"items":[` + tasks + `],"next":"c_2"}`, `{"items":[{"done":false,"id":"x","title":""}]}`},
		{"tasks-notify-input", notifyIn,
			`{"kind":"sms","phone":"+15550100"}`, `{"kind":"sms","phone":"0"}`},
	}
}

type validator struct {
	name  string
	value func(tb testing.TB, schema, instance string) (run func() bool)
	bytes func(tb testing.TB, schema string) (run func(instance []byte) bool)
}

var validators = []validator{
	{"stitchkit",
		func(tb testing.TB, schema, instance string) func() bool {
			v := ours(tb, schema)
			val, err := validate.DecodeJSON([]byte(instance), nil)
			if err != nil {
				tb.Fatal(err)
			}
			return func() bool { return v.Validate(val) == nil }
		},
		func(tb testing.TB, schema string) func([]byte) bool {
			v := ours(tb, schema)
			return func(b []byte) bool {
				val, err := validate.DecodeJSON(b, nil)
				return err == nil && v.Validate(val) == nil
			}
		}},
	{"stitchkit-ValidateJSON", nil,
		func(tb testing.TB, schema string) func([]byte) bool {
			v := ours(tb, schema)
			return func(b []byte) bool { return v.ValidateJSON(b, nil) == nil }
		}},
	{"santhosh-tekuri-v6",
		func(tb testing.TB, schema, instance string) func() bool {
			s := santhoshCompile(tb, schema)
			val, err := santhosh.UnmarshalJSON(strings.NewReader(instance))
			if err != nil {
				tb.Fatal(err)
			}
			return func() bool { return s.Validate(val) == nil }
		},
		func(tb testing.TB, schema string) func([]byte) bool {
			s := santhoshCompile(tb, schema)
			return func(b []byte) bool {
				val, err := santhosh.UnmarshalJSON(bytes.NewReader(b))
				return err == nil && s.Validate(val) == nil
			}
		}},
	{"google-jsonschema-go",
		func(tb testing.TB, schema, instance string) func() bool {
			rs := googleCompile(tb, schema)
			var val any
			if err := json.Unmarshal([]byte(instance), &val); err != nil {
				tb.Fatal(err)
			}
			return func() bool { return rs.Validate(val) == nil }
		},
		func(tb testing.TB, schema string) func([]byte) bool {
			rs := googleCompile(tb, schema)
			return func(b []byte) bool {
				var val any
				return json.Unmarshal(b, &val) == nil && rs.Validate(val) == nil
			}
		}},
	{"kaptinlin-jsonschema",
		func(tb testing.TB, schema, instance string) func() bool {
			s := kaptinlinCompile(tb, schema)
			var val any
			if err := json.Unmarshal([]byte(instance), &val); err != nil {
				tb.Fatal(err)
			}
			return func() bool { return s.Validate(val).IsValid() }
		},
		func(tb testing.TB, schema string) func([]byte) bool {
			s := kaptinlinCompile(tb, schema)
			return func(b []byte) bool { return s.ValidateJSON(b).IsValid() }
		}},
}

func ours(tb testing.TB, schema string) *validate.Validator {
	v, err := validate.Compile([]byte(schema))
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

func santhoshCompile(tb testing.TB, schema string) *santhosh.Schema {
	doc, err := santhosh.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		tb.Fatal(err)
	}
	c := santhosh.NewCompiler()
	c.DefaultDraft(santhosh.Draft2020)
	c.AssertFormat()
	if err := c.AddResource("stitchkit:///s.json", doc); err != nil {
		tb.Fatal(err)
	}
	s, err := c.Compile("stitchkit:///s.json")
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func googleCompile(tb testing.TB, schema string) *google.Resolved {
	var s google.Schema
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		tb.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		tb.Fatal(err)
	}
	return rs
}

func kaptinlinCompile(tb testing.TB, schema string) *kaptinlin.Schema {
	s, err := kaptinlin.NewCompiler().Compile([]byte(schema))
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// TestAgree: every validator accepts each case's instance and refuses its
// broken copy.
func TestAgree(t *testing.T) {
	for _, c := range cases(t) {
		for _, v := range validators {
			run := v.bytes(t, c.schema)
			if !run([]byte(c.valid)) || run([]byte(c.invalid)) {
				t.Errorf("%s/%s: valid→%v invalid→%v", c.name, v.name, run([]byte(c.valid)), run([]byte(c.invalid)))
			}
			if v.value != nil && !v.value(t, c.schema, c.valid)() {
				t.Errorf("%s/%s: refuses the decoded valid instance", c.name, v.name)
			}
		}
	}
}

func BenchmarkValue(b *testing.B) {
	for _, c := range cases(b) {
		for _, v := range validators {
			if v.value == nil {
				continue
			}
			b.Run(c.name+"/"+v.name, func(b *testing.B) {
				run := v.value(b, c.schema, c.valid)
				b.ReportAllocs()
				for b.Loop() {
					if !run() {
						b.Fatal("refused")
					}
				}
			})
		}
	}
}

func BenchmarkBytes(b *testing.B) {
	for _, c := range cases(b) {
		for _, v := range validators {
			b.Run(c.name+"/"+v.name, func(b *testing.B) {
				run := v.bytes(b, c.schema)
				in := []byte(c.valid)
				b.ReportAllocs()
				for b.Loop() {
					if !run(in) {
						b.Fatal("refused")
					}
				}
			})
		}
	}
}

func BenchmarkCompile(b *testing.B) {
	c := cases(b)[1]
	b.Run("stitchkit", func(b *testing.B) {
		for b.Loop() {
			ours(b, c.schema)
		}
	})
	b.Run("santhosh-tekuri-v6", func(b *testing.B) {
		for b.Loop() {
			santhoshCompile(b, c.schema)
		}
	})
	b.Run("google-jsonschema-go", func(b *testing.B) {
		for b.Loop() {
			googleCompile(b, c.schema)
		}
	})
	b.Run("kaptinlin-jsonschema", func(b *testing.B) {
		for b.Loop() {
			kaptinlinCompile(b, c.schema)
		}
	})
}
