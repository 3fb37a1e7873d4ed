package graph

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCanonicalKeyOrderUTF16(t *testing.T) {
	// U+FF61 (BMP, above the surrogate range) sorts AFTER U+1F600 in UTF-16
	// (0xD83D < 0xFF61) but BEFORE it in Go's byte/code-point order.
	in := map[string]any{"\uff61": 1, "\U0001F600": 2, "b": 3, "a": 4, "10": 5, "9": 6, "": 7}
	got, err := Canonical(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"":7,"10":5,"9":6,"a":4,"b":3,"` + "\U0001F600" + `":2,"` + "\uff61" + `":1}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestCompareUTF16(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"a", "", 1},
		{"", "a", -1},
		{"a", "b", -1},
		{"ab", "a", 1},
		{"\U0001F600", "\uff61", -1},     // surrogate 0xD83D < 0xFF61
		{"\U0001F600", "\u00e9", 1},      // 0xD83D > 0x00E9
		{"\U0001F600", "\U0001F601", -1}, // same high surrogate, low decides
		{"\U00010000", "\U0001F600", -1},
		{"\ue000", "\U0010FFFF", 1}, // 0xE000 > 0xDBFF
	}
	for _, tt := range tests {
		if got := CompareUTF16(tt.a, tt.b); got != tt.want {
			t.Errorf("CompareUTF16(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := CompareUTF16(tt.b, tt.a); got != -tt.want {
			t.Errorf("CompareUTF16(%q, %q) = %d, want %d (antisymmetry)", tt.b, tt.a, got, -tt.want)
		}
	}
}

func TestCanonicalEscaping(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"plain", `"plain"`},
		{`q"b\`, `"q\"b\\"`},
		{"<>&", `"<>&"`},                     // no HTML escaping
		{"\u2028\u2029", "\"\u2028\u2029\""}, // written raw, unlike encoding/json
		{"\b\f\n\r\t", `"\b\f\n\r\t"`},
		{"\x00\x01\x1f", `"\u0000\u0001\u001f"`}, // lower-case hex
		{"\x7f", "\"\x7f\""},
		{"é€😀", `"é€😀"`},
	}
	for _, tt := range tests {
		got, err := Canonical(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tt.want {
			t.Errorf("Canonical(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestCanonicalNumbers(t *testing.T) {
	tests := []struct {
		lit  string
		want string
	}{
		{"0", "0"},
		{"-0", "0"},
		{"-0.0", "0"},
		{"1", "1"},
		{"1.0", "1"},
		{"1.50", "1.5"},
		{"100", "100"},
		{"1e2", "100"},
		{"1E+2", "100"},
		{"0.1", "0.1"},
		{"0.000001", "0.000001"},
		{"0.0000001", "1e-7"},
		{"1.5e-7", "1.5e-7"},
		{"123456789012345678901", "123456789012345680000"},
		{"1e21", "1e+21"},
		{"1.2345e22", "1.2345e+22"},
		{"-2.5e-10", "-2.5e-10"},
		{"9007199254740993", "9007199254740992"}, // as a JavaScript peer rounds it
		{"1e400", "null"},                        // ±Infinity serialise as null
		{"4.9e-324", "5e-324"},
		{"1e-400", "0"},
	}
	for _, tt := range tests {
		got, err := Canonical(json.RawMessage(tt.lit))
		if err != nil {
			t.Fatalf("Canonical(%s): %v", tt.lit, err)
		}
		if string(got) != tt.want {
			t.Errorf("Canonical(%s) = %s, want %s", tt.lit, got, tt.want)
		}
	}
	if got := formatFloat(math.NaN()); got != "null" {
		t.Errorf("NaN = %s", got)
	}
}

func TestCanonicalStructure(t *testing.T) {
	in := json.RawMessage(` { "b" : [ 3, {"z":1,"y":[]}, null ], "a" : { } , "required": ["z","a"] } `)
	got, err := Canonical(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":{},"b":[3,{"y":[],"z":1},null],"required":["z","a"]}`; string(got) != want {
		t.Errorf("Canonical = %s, want %s", got, want)
	}
	// CanonicalSchema sorts all-string "required" arrays at any depth, and
	// only those.
	got, err = CanonicalSchema(json.RawMessage(`{"required":["z","a"],"properties":{"x":{"required":["b","a"]}},"enum":["b","a"],"default":{"required":[2,1]}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"default":{"required":[2,1]},"enum":["b","a"],"properties":{"x":{"required":["a","b"]}},"required":["a","z"]}`
	if string(got) != want {
		t.Errorf("CanonicalSchema = %s, want %s", got, want)
	}
}

func TestDigest(t *testing.T) {
	d, err := DigestOf(map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	// The upstream kit documents digest({}) = 44136fa355b3678a.
	if d != "44136fa355b3678a" {
		t.Errorf("DigestOf({}) = %s, want 44136fa355b3678a", d)
	}
	a, _ := DigestOf(json.RawMessage(`{"a":1,"b":2}`))
	b, _ := DigestOf(json.RawMessage(`{"b":2,"a":1}`))
	if a != b {
		t.Errorf("key order changed the digest: %s vs %s", a, b)
	}
	_, s1, _ := SchemaDigest(json.RawMessage(`{"required":["a","b"]}`))
	_, s2, _ := SchemaDigest(json.RawMessage(`{"required":["b","a"]}`))
	if s1 != s2 {
		t.Errorf("required order changed the schema digest")
	}
	_, e1, _ := SchemaDigest(json.RawMessage(`{"enum":["a","b"]}`))
	_, e2, _ := SchemaDigest(json.RawMessage(`{"enum":["b","a"]}`))
	if e1 == e2 {
		t.Errorf("enum order must change the schema digest")
	}
}

func TestCanonicalRejectsInvalid(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a":1} {"b":2}`, `[1,]`, `nul`} {
		if _, err := Canonical(json.RawMessage(in)); err == nil {
			t.Errorf("Canonical(%q) succeeded, want error", in)
		}
	}
}

// FuzzCanonical checks that canonicalisation never panics, is idempotent,
// produces valid JSON and is insensitive to re-encoding.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `"x"`, `1e21`, `{"b":1,"a":[1,2,{"c":null}]}`, `{"required":["b","a"]}`, `"\u2028<>"`, `-0`, `{"😀":1,"ｱ":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c1, err := CanonicalSchema(json.RawMessage(data))
		if err != nil {
			return
		}
		if !utf8.Valid(c1) {
			t.Fatalf("canonical output is not UTF-8: %q", c1)
		}
		if !json.Valid(c1) {
			t.Fatalf("canonical output is not JSON: %s", c1)
		}
		c2, err := CanonicalSchema(json.RawMessage(c1))
		if err != nil {
			t.Fatalf("re-canonicalising %s: %v", c1, err)
		}
		if string(c1) != string(c2) {
			t.Fatalf("not idempotent:\n%s\n%s", c1, c2)
		}
		if strings.ContainsAny(string(c1), "\n\r\t") {
			t.Fatalf("raw whitespace control character in %q", c1)
		}
	})
}

// The decoded-tree fast path must produce exactly the bytes of the
// marshal/decode path.
func TestCanonicalTreeFastPath(t *testing.T) {
	tree := map[string]any{
		"b":        []any{json.Number("1.50"), float64(2), nil, true, "<\u2028>"},
		"a":        map[string]any{"\U0001F600": "x", "\uff61": json.Number("1e21")},
		"required": []any{"z", "a"},
	}
	if !isJSONTree(tree) {
		t.Fatal("decoded tree not recognised")
	}
	raw, err := json.Marshal(tree)
	if err != nil {
		t.Fatal(err)
	}
	fast, err := CanonicalSchema(tree)
	if err != nil {
		t.Fatal(err)
	}
	slow, err := CanonicalSchema(json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	if string(fast) != string(slow) {
		t.Errorf("fast path %s\nslow path %s", fast, slow)
	}
	if isJSONTree(map[string]any{"n": 1}) || isJSONTree([]any{json.Number("x")}) {
		t.Error("non-JSON leaves must take the marshal path")
	}
}
