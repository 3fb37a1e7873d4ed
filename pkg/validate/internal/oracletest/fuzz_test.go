package oracletest

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"stitchkit.dev/stitchkit/pkg/validate/internal/engine"
	"testing"
)

// hugeExponent matches exponents santhosh-tekuri cannot judge in bounded
// time (it expands them into a big.Rat); the engine can, but the oracle
// must answer too.
var hugeExponent = regexp.MustCompile(`[eE][+-]?0*[0-9]{4,}`)

// FuzzDifferential mutates instances of the golden schemas and compares
// the engine's verdict with santhosh-tekuri's. Seeds: every schema with a
// few instances from the boundary generator.
func FuzzDifferential(f *testing.F) {
	schemas := goldenSchemas(f)
	names := slices.Sorted(mapsKeys(schemas))
	type compiled struct {
		s *engine.Schema
		o interface{ Validate(any) error }
	}
	all := make([]compiled, len(names))
	for i, name := range names {
		doc := decode(f, schemas[name])
		s, err := engine.Compile(doc, formatOptions(testFormats))
		if err != nil {
			f.Fatalf("%s: %v", name, err)
		}
		all[i] = compiled{s, oracle(doc, testFormats)}
		g := newGen(doc, uint64(i))
		for range 3 {
			f.Add(uint16(i), mustJSON(g.instance(doc, 0)))
		}
	}
	for i := range names {
		for _, tricky := range []string{` {"a" : 1 , "a":2} `, `{"\u0061":1,"a":1}`, `[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]`, `{"name":"x\n","count":1e2}`, "\"\xff\"", `[1,2,]`, `{"id":"t_1","title":"é"}  x`} {
			f.Add(uint16(i), []byte(tricky))
		}
	}
	f.Fuzz(func(t *testing.T, which uint16, data []byte) {
		c := all[int(which)%len(all)]
		// The streaming verdict never accepts what decoding and validating
		// refuses, on any bytes (it may decline what it cannot judge on
		// the bytes, such as an escaped key: the caller then decodes).
		tree, derr := engine.Decode(data, 16)
		if sv, tv := c.s.ValidJSON(data, 16), derr == nil && c.s.Valid(tree); sv && !tv {
			t.Fatalf("%s: %q: ValidJSON=%v, Decode+Valid=%v (%v)", names[int(which)%len(all)], data, sv, tv, derr)
		}
		if hugeExponent.Match(data) || !json.Valid(data) {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return
		}
		got := c.s.Valid(v)
		want := c.o.Validate(v) == nil
		if got != want {
			t.Fatalf("%s: instance %s: engine valid=%v, santhosh-tekuri %v", names[int(which)%len(all)], data, got, want)
		}
		if issues := c.s.Validate(v); (issues == nil) != got {
			t.Fatalf("Valid=%v but Validate says %v", got, issues)
		}
	})
}
