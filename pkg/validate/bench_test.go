package validate

import (
	"encoding/json"
	"testing"
)

// The HTTP bench row's operation (bench/http_test.go): its input and
// output schemas and bodies.
const (
	benchInput  = `{"type":"object","properties":{"name":{"type":"string","minLength":1,"maxLength":100},"count":{"type":"integer","minimum":0},"tags":{"type":"array","items":{"type":"string"},"maxItems":10}},"required":["name","count"],"additionalProperties":false}`
	benchOutput = `{"type":"object","properties":{"id":{"type":"string"},"name":{"type":"string"},"count":{"type":"integer","minimum":0},"tags":{"type":"array","items":{"type":"string"}}},"required":["id","name","count"],"additionalProperties":false}`
	benchBody   = `{"name":"Write the benchmark","count":3,"tags":["bench","http"]}`
	benchOut    = `{"id":"i_42","name":"Write the benchmark","count":4,"tags":["bench","http"]}`
)

func BenchmarkDecodeJSON(b *testing.B) {
	body := []byte(benchBody)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeJSON(body, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeEncodingJSON(b *testing.B) {
	body := []byte(benchBody)
	b.ReportAllocs()
	for b.Loop() {
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidate(b *testing.B) {
	v, err := Compile([]byte(benchInput))
	if err != nil {
		b.Fatal(err)
	}
	val, _ := DecodeJSON([]byte(benchBody), nil)
	b.ReportAllocs()
	for b.Loop() {
		if err := v.Validate(val); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidateJSONOutput(b *testing.B) {
	v, err := Compile([]byte(benchOutput))
	if err != nil {
		b.Fatal(err)
	}
	out := []byte(benchOut)
	b.ReportAllocs()
	for b.Loop() {
		if err := v.ValidateJSON(out, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidateParams(b *testing.B) {
	v, err := Compile([]byte(`{"type":"object","properties":{"id":{"type":"string","pattern":"^i_[a-z0-9]+$"}},"required":["id"],"additionalProperties":false}`))
	if err != nil {
		b.Fatal(err)
	}
	val := map[string]any{"id": "i_42"}
	b.ReportAllocs()
	for b.Loop() {
		if err := v.Validate(val); err != nil {
			b.Fatal(err)
		}
	}
}
