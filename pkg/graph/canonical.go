package graph

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// DigestVersion identifies the canonicalisation and digest algorithm below.
// Bump it only when Canonical, CanonicalSchema or Digest change their bytes.
const DigestVersion = 1

// Digest is the first 16 lower-case hex characters of the SHA-256 of a
// value's canonical JSON. Digests are change detectors, not identifiers.
type Digest string

// Canonical returns the canonical JSON text of v: object keys sorted by
// UTF-16 code units, arrays in order, no insignificant whitespace, numbers in
// the shortest form that round-trips (ECMAScript formatting), and only the
// escapes JSON requires (no HTML or U+2028/U+2029 escaping).
//
// v may be any value encoding/json can marshal; it is first marshalled and
// then re-encoded, so struct field order and map iteration order never reach
// the output.
func Canonical(v any) ([]byte, error) { return canonical(v, false) }

// CanonicalSchema is Canonical with the one schema-specific rule of
// digestVersion 1: every array held under a key named "required" whose
// elements are all strings is sorted by UTF-16 code units (at any depth).
// No keyword is removed.
func CanonicalSchema(v any) ([]byte, error) { return canonical(v, true) }

// canonical writes a decoded JSON tree directly (one walk, no separate
// isJSONTree pass), and anything else through toTree.
func canonical(v any, schema bool) ([]byte, error) {
	w := writerPool.Get().(*canonicalWriter)
	defer w.release()
	w.schema = schema
	if _, raw := v.(json.RawMessage); !raw {
		if _, raw := v.([]byte); !raw && w.tree(v) {
			return bytes.Clone(w.buf.Bytes()), nil
		}
	}
	w.buf.Reset()
	tree, err := toTree(v)
	if err != nil {
		return nil, err
	}
	if err := writeCanonical(&w.buf, tree, schema); err != nil {
		return nil, err
	}
	return bytes.Clone(w.buf.Bytes()), nil
}

// canonicalWriter reuses its buffer and key scratch space across calls:
// canonicalisation runs once per schema and allocation dominated it.
type canonicalWriter struct {
	buf    bytes.Buffer
	keys   []string
	schema bool
}

var writerPool = sync.Pool{New: func() any { return new(canonicalWriter) }}

func (w *canonicalWriter) release() {
	if w.buf.Cap() > 1<<20 {
		return // keep the pool small
	}
	w.buf.Reset()
	clear(w.keys)
	w.keys = w.keys[:0]
	writerPool.Put(w)
}

// tree writes v, a tree isJSONTree accepts, as writeCanonical does; it
// returns false (leaving partial output) at the first leaf isJSONTree
// refuses, so the caller can take the general path instead.
func (w *canonicalWriter) tree(v any) bool {
	buf := &w.buf
	if writeLiteral(buf, v) {
		return true
	}
	switch x := v.(type) {
	case json.Number:
		if plainInteger(string(x)) {
			buf.WriteString(string(x))
			return true
		}
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return false
		}
		buf.WriteString(formatFloat(f))
	case float64:
		buf.WriteString(formatFloat(x))
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			if !w.tree(e) {
				return false
			}
		}
		buf.WriteByte(']')
	case map[string]any:
		start := len(w.keys)
		for k := range x {
			w.keys = append(w.keys, k)
		}
		end := len(w.keys)
		SortUTF16(w.keys[start:end])
		buf.WriteByte('{')
		for i := start; i < end; i++ {
			// Read through w.keys: nested maps may reallocate it.
			k := w.keys[i]
			if i > start {
				buf.WriteByte(',')
			}
			writeString(buf, k)
			buf.WriteByte(':')
			val := x[k]
			if w.schema && k == "required" && w.required(val) {
				continue
			}
			if !w.tree(val) {
				return false
			}
		}
		clear(w.keys[start:end])
		w.keys = w.keys[:start]
		buf.WriteByte('}')
	default:
		return false
	}
	return true
}

// required writes v sorted when it is an all-string array (as
// sortedRequired), reporting whether it did.
func (w *canonicalWriter) required(v any) bool {
	arr, ok := v.([]any)
	if !ok {
		return false
	}
	start := len(w.keys)
	for _, e := range arr {
		s, ok := e.(string)
		if !ok {
			clear(w.keys[start:])
			w.keys = w.keys[:start]
			return false
		}
		w.keys = append(w.keys, s)
	}
	strs := w.keys[start:]
	SortUTF16(strs)
	w.buf.WriteByte('[')
	for i, s := range strs {
		if i > 0 {
			w.buf.WriteByte(',')
		}
		writeString(&w.buf, s)
	}
	w.buf.WriteByte(']')
	clear(strs)
	w.keys = w.keys[:start]
	return true
}

// DigestBytes returns the digest of already-canonical bytes.
func DigestBytes(canonical []byte) Digest {
	sum := sha256.Sum256(canonical)
	var h [16]byte
	hex.Encode(h[:], sum[:8])
	return Digest(h[:])
}

// DigestOf returns the digest of the canonical JSON of v.
func DigestOf(v any) (Digest, error) {
	b, err := Canonical(v)
	if err != nil {
		return "", err
	}
	return DigestBytes(b), nil
}

// SchemaDigest returns the canonical schema bytes of a JSON Schema document
// and their digest.
func SchemaDigest(schema any) ([]byte, Digest, error) {
	b, err := CanonicalSchema(schema)
	if err != nil {
		return nil, "", err
	}
	return b, DigestBytes(b), nil
}

// toTree turns v into a tree of map[string]any, []any, string, bool, nil and
// json.Number, decoding with UseNumber so that no number is rounded before it
// is formatted.
func toTree(v any) (any, error) {
	if isJSONTree(v) {
		// Already decoded JSON (the compiler's normalised schemas): skip
		// the marshal/decode round trip, which dominated canonicalisation.
		return v, nil
	}
	var raw []byte
	switch x := v.(type) {
	case json.RawMessage:
		raw = x
	case []byte:
		raw = x
	default:
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return nil, fmt.Errorf("canonical json: %w", err)
		}
		raw = buf.Bytes()
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("canonical json: trailing data after value")
	}
	return tree, nil
}

// isJSONTree reports whether v consists only of the types a UseNumber JSON
// decode produces (plus float64), so it can be canonicalised as is.
func isJSONTree(v any) bool {
	switch x := v.(type) {
	case nil, bool, string, float64:
		return true
	case json.Number:
		_, err := strconv.ParseFloat(string(x), 64)
		return err == nil
	case []any:
		for _, e := range x {
			if !isJSONTree(e) {
				return false
			}
		}
		return true
	case map[string]any:
		for _, e := range x {
			if !isJSONTree(e) {
				return false
			}
		}
		return true
	}
	return false
}

// writeLiteral writes null, a boolean or a string as both canonical
// writers do, and reports whether v was one.
func writeLiteral(buf *bytes.Buffer, v any) bool {
	switch x := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		if x {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case string:
		writeString(buf, x)
	default:
		return false
	}
	return true
}

func writeCanonical(buf *bytes.Buffer, v any, schema bool) error {
	if writeLiteral(buf, v) {
		return nil
	}
	switch x := v.(type) {
	case json.Number:
		s, err := formatNumber(string(x))
		if err != nil {
			return err
		}
		buf.WriteString(s)
	case float64:
		buf.WriteString(formatFloat(x))
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeCanonical(buf, e, schema); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		SortUTF16(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k)
			buf.WriteByte(':')
			val := x[k]
			if schema && k == "required" {
				val = sortedRequired(val)
			}
			if err := writeCanonical(buf, val, schema); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	default:
		return fmt.Errorf("canonical json: unexpected %T", v)
	}
	return nil
}

// sortedRequired sorts an all-string array; anything else is returned as is.
func sortedRequired(v any) any {
	arr, ok := v.([]any)
	if !ok {
		return v
	}
	strs := make([]string, len(arr))
	for i, e := range arr {
		s, ok := e.(string)
		if !ok {
			return v
		}
		strs[i] = s
	}
	SortUTF16(strs)
	out := make([]any, len(strs))
	for i, s := range strs {
		out[i] = s
	}
	return out
}

// LessUTF16 reports whether a sorts before b when both are compared as
// sequences of UTF-16 code units (the order JavaScript's default sort uses).
// It differs from Go's byte order only for characters above U+FFFF compared
// with characters in U+E000–U+FFFF.
func LessUTF16(a, b string) bool {
	return CompareUTF16(a, b) < 0
}

// CompareUTF16 compares a and b by UTF-16 code units, returning -1, 0 or +1.
func CompareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			ua, ub := firstUnit(ra), firstUnit(rb)
			if ua != ub {
				if ua < ub {
					return -1
				}
				return 1
			}
			// Same high surrogate: the low surrogates decide.
			la, lb := secondUnit(ra), secondUnit(rb)
			if la < lb {
				return -1
			}
			return 1
		}
		a, b = a[na:], b[nb:]
	}
	switch {
	case a == "" && b == "":
		return 0
	case a == "":
		return -1
	default:
		return 1
	}
}

func firstUnit(r rune) uint16 {
	if r >= 0x10000 && r <= utf8.MaxRune {
		hi, _ := utf16.EncodeRune(r)
		return uint16(hi)
	}
	return uint16(r)
}

func secondUnit(r rune) uint16 {
	if r >= 0x10000 && r <= utf8.MaxRune {
		_, lo := utf16.EncodeRune(r)
		return uint16(lo)
	}
	return 0
}

// SortUTF16 sorts s in place by UTF-16 code units.
func SortUTF16(s []string) {
	for _, k := range s {
		if !bytewiseUTF16(k) {
			slices.SortFunc(s, CompareUTF16)
			return
		}
	}
	// Byte order is UTF-16 order for these strings (almost every key).
	slices.Sort(s)
}

// bytewiseUTF16 reports whether s holds no character at or above U+E000
// (no UTF-8 lead byte 0xEE or more, invalid bytes included): strings made
// only of such characters sort the same by bytes as by UTF-16 code units,
// since UTF-8 and UTF-16 order code points alike below U+E000.
func bytewiseUTF16(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0xEE {
			return false
		}
	}
	return true
}

const hexDigits = "0123456789abcdef"

// plainString reports whether s is printable ASCII without '"' or '\\',
// so it is its own JSON string body.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// writeString writes s as a JSON string, escaping only '"', '\\', control
// characters below U+0020 and invalid UTF-8 (written as U+FFFD, since Go
// strings cannot hold lone surrogates once decoded from JSON).
func writeString(buf *bytes.Buffer, s string) {
	buf.WriteByte('"')
	if plainString(s) {
		buf.WriteString(s)
	} else {
		writeEscaped(buf, s)
	}
	buf.WriteByte('"')
}

// writeEscaped writes the body of the JSON string s (see writeString).
func writeEscaped(buf *bytes.Buffer, s string) {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"':
				buf.WriteString(`\"`)
			case '\\':
				buf.WriteString(`\\`)
			case '\b':
				buf.WriteString(`\b`)
			case '\f':
				buf.WriteString(`\f`)
			case '\n':
				buf.WriteString(`\n`)
			case '\r':
				buf.WriteString(`\r`)
			case '\t':
				buf.WriteString(`\t`)
			default:
				if c < 0x20 {
					buf.WriteString(`\u00`)
					buf.WriteByte(hexDigits[c>>4])
					buf.WriteByte(hexDigits[c&0xf])
				} else {
					buf.WriteByte(c)
				}
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			buf.WriteString("\ufffd")
		} else {
			buf.WriteString(s[i : i+n])
		}
		i += n
	}
}

// formatNumber formats a JSON number literal the way ECMAScript's
// Number.prototype.toString does: integers without a fraction, exponent
// notation below 1e-6 and from 1e21, -0 as 0. Integers that fit in 64 bits
// but not exactly in a float64 are still formatted from the float64, exactly
// as a JavaScript peer would, so digests agree across languages.
func formatNumber(lit string) (string, error) {
	if plainInteger(lit) {
		return lit, nil
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		// Out of range: JSON.parse yields ±Infinity, which serialises as null.
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange && math.IsInf(f, 0) {
			return "null", nil
		}
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return formatFloat(f), nil
		}
		return "", fmt.Errorf("canonical json: bad number %q", lit)
	}
	return formatFloat(f), nil
}

// plainInteger reports whether lit is an integer literal of at most 15
// digits without a leading zero (and not -0): ECMAScript prints such a
// number exactly as written.
func plainInteger(lit string) bool {
	d := strings.TrimPrefix(lit, "-")
	if d == "" || len(d) > 15 || (d[0] == '0' && (len(d) > 1 || len(d) != len(lit))) {
		return false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	return true
}

// formatFloat implements ECMAScript Number::toString for finite values.
func formatFloat(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "null"
	}
	if f == 0 {
		return "0"
	}
	neg := f < 0
	if neg {
		f = -f
	}
	// Shortest round-trip digits and exponent: d.ddd × 10^e.
	s := strconv.FormatFloat(f, 'e', -1, 64)
	mant, expStr, _ := strings.Cut(s, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(expStr)
	k := len(digits)
	n := exp + 1 // position of the decimal point relative to the digits
	var out string
	switch {
	case k <= n && n <= 21:
		out = digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		out = digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		out = "0." + strings.Repeat("0", -n) + digits
	default:
		e := n - 1
		sign := "+"
		if e < 0 {
			sign = "-"
			e = -e
		}
		if k == 1 {
			out = digits + "e" + sign + strconv.Itoa(e)
		} else {
			out = digits[:1] + "." + digits[1:] + "e" + sign + strconv.Itoa(e)
		}
	}
	if neg {
		return "-" + out
	}
	return out
}
