// Package oracletest holds the engine's differential tests against
// santhosh-tekuri/jsonschema/v6, the JSON Schema test suite and the
// repository's compiled schemas. It is a module of its own so that the
// root module, which run-time users depend on, does not require the oracle.
package oracletest

import (
	"bytes"
	"encoding/json"
	"errors"
	"stitchkit.dev/stitchkit/pkg/validate/internal/engine"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The differential oracle: santhosh-tekuri/jsonschema/v6, the validator
// this engine replaced, compiled in the same reading (2020-12, formats
// asserted with the same functions). Any verdict on which the two differ is
// a bug in one of them; the tests below decide which with the suite or the
// spec.

// decode reads JSON text as the decoder of pkg/validate does (numbers as
// json.Number).
func decode(tb testing.TB, b []byte) any {
	tb.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		tb.Fatalf("%s: %v", b, err)
	}
	return v
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// oracle compiles doc with santhosh-tekuri. It returns nil when santhosh
// refuses the document.
func oracle(doc any, formats map[string]engine.Format) *jsonschema.Schema {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	for name, f := range formats {
		c.RegisterFormat(&jsonschema.Format{Name: name, Validate: f})
	}
	// santhosh's own copy of the document: it may keep references into it.
	cp, err := jsonschema.UnmarshalJSON(bytes.NewReader(mustJSON(doc)))
	if err != nil {
		return nil
	}
	const url = "stitchkit:///oracle.json"
	if err := c.AddResource(url, cp); err != nil {
		return nil
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil
	}
	return s
}

// oracleValid is santhosh-tekuri's verdict, or an error when it could not
// judge (a reference cycle it detects while validating counts as invalid,
// as it reports it).
func oracleValid(s *jsonschema.Schema, v any) bool {
	err := s.Validate(v)
	if err == nil {
		return true
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		panic(err)
	}
	return false
}

// formatOptions returns engine.Options knowing the given formats.
func formatOptions(formats map[string]engine.Format) *engine.Options {
	return &engine.Options{Format: func(name string) (engine.Format, bool) {
		f, ok := formats[name]
		return f, ok
	}}
}

func short(b []byte) string {
	s := string(b)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return strings.ReplaceAll(s, "\n", " ")
}
