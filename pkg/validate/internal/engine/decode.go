package engine

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// DecodeError says why bytes are not an acceptable JSON value (see
// Decode). Offset is the byte offset at which the problem was found.
type DecodeError struct {
	Offset  int64
	Reason  string
	TooDeep bool
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.Offset, e.Reason)
}

// MaxExponent bounds the decimal exponent of a number Decode accepts:
// the engine judges any exponent without expanding it, but a handler or a
// format that turns 1e999999999 into an exact rational would allocate
// without bound, so such a number is refused at the door.
const MaxExponent = 10000

// Decode decodes one JSON value: map[string]any, []any, json.Number,
// string, bool and nil, exactly what encoding/json with UseNumber builds
// for the same text. It refuses what encoding/json refuses, and also
// nesting deeper than maxDepth, invalid UTF-8, an object that repeats a
// key and a number whose exponent is beyond ±MaxExponent. One pass over the bytes checks and builds at once; strings and
// numbers are slices of one string copy of data (so the caller may reuse
// data afterwards).
func Decode(data []byte, maxDepth int) (any, *DecodeError) {
	d := decoder{data: data, max: maxDepth}
	d.skipSpace()
	if d.pos >= len(d.data) {
		if len(d.data) == 0 {
			return nil, &DecodeError{Reason: "no JSON value"}
		}
		return nil, d.errEOF()
	}
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.skipSpace()
	if d.pos < len(d.data) {
		if err := d.checkUTF8(d.pos); err != nil {
			return nil, err
		}
		return nil, &DecodeError{Offset: int64(d.pos), Reason: "data after the JSON value"}
	}
	return v, nil
}

type decoder struct {
	data []byte
	pos  int
	max  int
	// str is one string copy of data, made on the first string or number,
	// that every unescaped string and number is a slice of.
	str string
	// scratch holds array elements while an array is read; nested arrays
	// use the part above their parent's.
	scratch []any
}

func (d *decoder) text(start, end int) string {
	if d.str == "" {
		d.str = string(d.data)
	}
	return d.str[start:end]
}

func (d *decoder) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *decoder) errEOF() *DecodeError {
	return &DecodeError{Offset: int64(len(d.data)), Reason: "unexpected end of JSON input"}
}

// errAt reports an unexpected byte; invalid UTF-8 is named as such.
func (d *decoder) errAt(i int, context string) *DecodeError {
	if i >= len(d.data) {
		return d.errEOF()
	}
	if err := d.checkUTF8(i); err != nil {
		return err
	}
	return &DecodeError{Offset: int64(i), Reason: "invalid character " + quoteChar(d.data[i:]) + " " + context}
}

// checkUTF8 reports invalid UTF-8 at or after i (bytes outside strings
// are errors anyway; this only picks the better message).
func (d *decoder) checkUTF8(i int) *DecodeError {
	if i < len(d.data) && d.data[i] >= utf8.RuneSelf {
		if r, n := utf8.DecodeRune(d.data[i:]); r == utf8.RuneError && n <= 1 {
			return &DecodeError{Offset: int64(i), Reason: "invalid UTF-8"}
		}
	}
	return nil
}

func quoteChar(b []byte) string {
	r, _ := utf8.DecodeRune(b)
	if r == '\'' {
		return `'\''`
	}
	if r == '"' {
		return `'"'`
	}
	s := strconv.QuoteRune(r)
	return "'" + s[1:len(s)-1] + "'"
}

func (d *decoder) value(depth int) (any, *DecodeError) {
	if d.pos >= len(d.data) {
		return nil, d.errEOF()
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		return d.object(depth + 1)
	case c == '[':
		return d.array(depth + 1)
	case c == '"':
		return d.string()
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	default:
		return nil, d.errAt(d.pos, "looking for beginning of value")
	}
}

func (d *decoder) literal(word string) *DecodeError {
	for i := 0; i < len(word); i++ {
		if d.pos+i >= len(d.data) {
			return d.errEOF()
		}
		if d.data[d.pos+i] != word[i] {
			return d.errAt(d.pos+i, "in literal "+word+" (expecting "+quoteChar([]byte{word[i]})+")")
		}
	}
	d.pos += len(word)
	return nil
}

func (d *decoder) tooDeep() *DecodeError {
	return &DecodeError{Offset: int64(d.pos), Reason: fmt.Sprintf("nested deeper than %d levels", d.max), TooDeep: true}
}

func (d *decoder) object(depth int) (any, *DecodeError) {
	if depth > d.max {
		return nil, d.tooDeep()
	}
	d.pos++ // {
	m := map[string]any{}
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return m, nil
	}
	for {
		if d.pos >= len(d.data) {
			return nil, d.errEOF()
		}
		if d.data[d.pos] != '"' {
			return nil, d.errAt(d.pos, "looking for beginning of object key string")
		}
		keyAt := d.pos
		key, err := d.str1()
		if err != nil {
			return nil, err
		}
		d.skipSpace()
		if d.pos >= len(d.data) {
			return nil, d.errEOF()
		}
		if d.data[d.pos] != ':' {
			return nil, d.errAt(d.pos, "after object key")
		}
		d.pos++
		d.skipSpace()
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		n := len(m)
		m[key] = v
		if len(m) == n {
			return nil, &DecodeError{Offset: int64(keyAt), Reason: fmt.Sprintf("key %q appears twice in one object", key)}
		}
		d.skipSpace()
		if d.pos >= len(d.data) {
			return nil, d.errEOF()
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
			d.skipSpace()
		case '}':
			d.pos++
			return m, nil
		default:
			return nil, d.errAt(d.pos, "after object key:value pair")
		}
	}
}

func (d *decoder) array(depth int) (any, *DecodeError) {
	if depth > d.max {
		return nil, d.tooDeep()
	}
	d.pos++ // [
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		return []any{}, nil
	}
	// The first elements collect in a frame-local array (no allocation);
	// longer arrays continue on d.scratch, shared by all levels.
	var local [8]any
	n := 0
	base := len(d.scratch)
	for {
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		if n < len(local) {
			local[n] = v
		} else {
			d.scratch = append(d.scratch, v)
		}
		n++
		d.skipSpace()
		if d.pos >= len(d.data) {
			return nil, d.errEOF()
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
			d.skipSpace()
		case ']':
			d.pos++
			out := make([]any, n)
			copy(out, local[:min(n, len(local))])
			if n > len(local) {
				copy(out[len(local):], d.scratch[base:])
				clear(d.scratch[base:])
				d.scratch = d.scratch[:base]
			}
			return out, nil
		default:
			return nil, d.errAt(d.pos, "after array element")
		}
	}
}

func (d *decoder) string() (any, *DecodeError) {
	s, err := d.str1()
	if err != nil {
		return nil, err
	}
	return s, nil
}

// str1 reads the string at d.pos (a '"').
func (d *decoder) str1() (string, *DecodeError) {
	start := d.pos + 1
	i := start
	for i < len(d.data) {
		c := d.data[i]
		switch {
		case c == '"':
			d.pos = i + 1
			return d.text(start, i), nil
		case c == '\\':
			return d.escaped(start, i)
		case c < 0x20:
			return "", d.errAt(i, "in string literal")
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(d.data[i:])
			if r == utf8.RuneError && n <= 1 {
				return "", &DecodeError{Offset: int64(i), Reason: "invalid UTF-8"}
			}
			i += n
		default:
			i++
		}
	}
	return "", d.errEOF()
}

// escaped finishes a string that has an escape at i, building it anew.
// A lone or mismatched surrogate escape is an error, as in CUE.
func (d *decoder) escaped(start, i int) (string, *DecodeError) {
	buf := make([]byte, i-start, i-start+16)
	copy(buf, d.data[start:i])
	for i < len(d.data) {
		c := d.data[i]
		switch {
		case c == '"':
			d.pos = i + 1
			return string(buf), nil
		case c == '\\':
			if i+1 >= len(d.data) {
				return "", d.errEOF()
			}
			e := d.data[i+1]
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
				i += 2
			case 'b':
				buf = append(buf, '\b')
				i += 2
			case 'f':
				buf = append(buf, '\f')
				i += 2
			case 'n':
				buf = append(buf, '\n')
				i += 2
			case 'r':
				buf = append(buf, '\r')
				i += 2
			case 't':
				buf = append(buf, '\t')
				i += 2
			case 'u':
				r, err := d.hex4(i + 2)
				if err != nil {
					return "", err
				}
				i += 6
				if utf16.IsSurrogate(r) {
					// A surrogate escape must be the first half of a
					// pair whose second half follows: CUE refuses a
					// lone one ("unmatched surrogate pair"), where
					// encoding/json would make it U+FFFD.
					r2 := rune(-1)
					if i+1 < len(d.data) && d.data[i] == '\\' && d.data[i+1] == 'u' {
						if x, err := d.hex4(i + 2); err == nil {
							r2 = x
						} else {
							return "", err
						}
					}
					dec := utf16.DecodeRune(r, r2)
					if dec == utf8.RuneError {
						return "", &DecodeError{Offset: int64(i - 6), Reason: "unmatched surrogate pair in string escape"}
					}
					r = dec
					i += 6
				}
				buf = utf8.AppendRune(buf, r)
			default:
				return "", d.errAt(i+1, "in string escape code")
			}
		case c < 0x20:
			return "", d.errAt(i, "in string literal")
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(d.data[i:])
			if r == utf8.RuneError && n <= 1 {
				return "", &DecodeError{Offset: int64(i), Reason: "invalid UTF-8"}
			}
			buf = append(buf, d.data[i:i+n]...)
			i += n
		default:
			buf = append(buf, c)
			i++
		}
	}
	return "", d.errEOF()
}

func (d *decoder) hex4(i int) (rune, *DecodeError) {
	var r rune
	for j := i; j < i+4; j++ {
		if j >= len(d.data) {
			return 0, d.errEOF()
		}
		v, ok := hexDigit(d.data[j])
		if !ok {
			return 0, d.errAt(j, "in \\u hexadecimal character escape")
		}
		r = r<<4 | v
	}
	return r, nil
}

func (d *decoder) number() (any, *DecodeError) {
	start := d.pos
	if err := d.numberEnd(); err != nil {
		return nil, err
	}
	return json.Number(d.text(start, d.pos)), nil
}

// numberEnd checks the number at d.pos and moves past it.
func (d *decoder) numberEnd() *DecodeError {
	i := d.pos
	if d.data[i] == '-' {
		i++
	}
	digits := func() int {
		j := i
		for i < len(d.data) && d.data[i] >= '0' && d.data[i] <= '9' {
			i++
		}
		return i - j
	}
	if i >= len(d.data) {
		return d.errEOF()
	}
	switch c := d.data[i]; {
	case c == '0':
		i++
	case c >= '1' && c <= '9':
		digits()
	default:
		return d.errAt(i, "in numeric literal")
	}
	if i < len(d.data) && d.data[i] == '.' {
		i++
		if i >= len(d.data) {
			return d.errEOF()
		}
		if digits() == 0 {
			return d.errAt(i, "after decimal point in numeric literal")
		}
	}
	if i < len(d.data) && (d.data[i] == 'e' || d.data[i] == 'E') {
		at := i
		i++
		if i < len(d.data) && (d.data[i] == '+' || d.data[i] == '-') {
			i++
		}
		if i >= len(d.data) {
			return d.errEOF()
		}
		j := i
		if digits() == 0 {
			return d.errAt(i, "in exponent of numeric literal")
		}
		for j < i-1 && d.data[j] == '0' {
			j++
		}
		if e := d.data[j:i]; len(e) > 5 || len(e) == 5 && string(e) > "10000" {
			return &DecodeError{Offset: int64(at), Reason: fmt.Sprintf("number exponent beyond ±%d", MaxExponent)}
		}
	}
	d.pos = i
	return nil
}
