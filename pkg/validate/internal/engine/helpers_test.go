package engine

import (
	"bytes"
	"encoding/json"
	"testing"
)

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
