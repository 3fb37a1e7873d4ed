package engine

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
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
		s *Schema
		o interface{ Validate(any) error }
	}
	all := make([]compiled, len(names))
	for i, name := range names {
		doc := decode(f, schemas[name])
		s, err := Compile(doc, formatOptions(testFormats))
		if err != nil {
			f.Fatalf("%s: %v", name, err)
		}
		all[i] = compiled{s, oracle(doc, testFormats)}
		g := newGen(doc, uint64(i))
		for range 3 {
			f.Add(uint16(i), mustJSON(g.instance(doc, 0)))
		}
	}
	f.Fuzz(func(t *testing.T, which uint16, data []byte) {
		c := all[int(which)%len(all)]
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
