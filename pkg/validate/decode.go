package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// DefaultMaxDepth is the nesting limit [DecodeJSON] applies when
// DecodeOptions.MaxDepth is zero: deep enough for any real payload, shallow
// enough that a hostile body cannot exhaust the stack of any later walk.
const DefaultMaxDepth = 64

// DecodeOptions bound what [DecodeJSON] accepts. A nil *DecodeOptions means
// the defaults.
type DecodeOptions struct {
	// MaxDepth is the deepest nesting of arrays and objects accepted
	// (0 = DefaultMaxDepth). The top-level value is depth 1 when it is an
	// array or object.
	MaxDepth int
}

// DecodeError says why bytes are not an acceptable JSON value. Offset is the
// byte offset at which the problem was found.
type DecodeError struct {
	Offset int64
	Reason string
	// TooDeep reports that the value nests deeper than the limit.
	TooDeep bool
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.Offset, e.Reason)
}

// DecodeJSON decodes one JSON value for validation. Numbers stay
// json.Number (their exact text), nesting is bounded, a number whose
// exponent is beyond ±10000 is refused (exact arithmetic on 1e999999999
// would allocate without bound), invalid UTF-8 is refused, and so is an object that repeats a key: CUE would unify the two
// values and encoding/json would keep the last, so a repeated key has no
// single meaning. Trailing data after the value is an error.
func DecodeJSON(data []byte, opts *DecodeOptions) (any, error) {
	max := DefaultMaxDepth
	if opts != nil && opts.MaxDepth > 0 {
		max = opts.MaxDepth
	}
	if err := scan(data, max); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, &DecodeError{Offset: se.Offset, Reason: strings.TrimPrefix(se.Error(), "json: ")}
		}
		if errors.Is(err, io.EOF) {
			return nil, &DecodeError{Reason: "no JSON value"}
		}
		return nil, &DecodeError{Reason: err.Error()}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &DecodeError{Offset: dec.InputOffset(), Reason: "data after the JSON value"}
	}
	return v, nil
}

// scan checks nesting depth, UTF-8 and repeated keys in one pass, before
// encoding/json builds anything: a hostile body is refused without
// allocating its tree. Syntax errors are left to encoding/json, which words
// them better; scan only has to stay safe on malformed input.
func scan(data []byte, max int) error {
	if !utf8.Valid(data) {
		return &DecodeError{Offset: int64(invalidUTF8At(data)), Reason: "invalid UTF-8"}
	}
	type frame struct {
		object bool
		keys   []string
	}
	var stack []frame
	expectKey := false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '{', '[':
			if len(stack) >= max {
				return &DecodeError{Offset: int64(i), Reason: fmt.Sprintf("nested deeper than %d levels", max), TooDeep: true}
			}
			stack = append(stack, frame{object: c == '{'})
			expectKey = c == '{'
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			expectKey = false
		case ',':
			expectKey = len(stack) > 0 && stack[len(stack)-1].object
		case ':':
			expectKey = false
		case 'e', 'E':
			if i > 0 && (data[i-1] >= '0' && data[i-1] <= '9' || data[i-1] == '.') {
				j := i + 1
				if j < len(data) && (data[j] == '+' || data[j] == '-') {
					j++
				}
				for j < len(data) && data[j] == '0' {
					j++
				}
				k := j
				for k < len(data) && data[k] >= '0' && data[k] <= '9' {
					k++
				}
				if k-j > 5 || k-j == 5 && string(data[j:k]) > "10000" {
					return &DecodeError{Offset: int64(i), Reason: fmt.Sprintf("number exponent beyond ±%d", maxExponent)}
				}
				i = k - 1
			}
		case '"':
			end, hasEscape := stringEnd(data, i)
			if end < 0 {
				return nil // unterminated: encoding/json reports it
			}
			if expectKey && len(stack) > 0 {
				key := string(data[i+1 : end])
				if hasEscape {
					var s string
					if json.Unmarshal(data[i:end+1], &s) != nil {
						return nil
					}
					key = s
				}
				top := &stack[len(stack)-1]
				if slices.Contains(top.keys, key) {
					return &DecodeError{Offset: int64(i), Reason: fmt.Sprintf("key %q appears twice in one object", key)}
				}
				top.keys = append(top.keys, key)
				expectKey = false
			}
			i = end
		}
	}
	return nil
}

// stringEnd returns the index of the closing quote of the string starting at
// data[start], and whether it contains an escape; -1 if unterminated.
func stringEnd(data []byte, start int) (int, bool) {
	esc := false
	for j := start + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			esc = true
			j++
		case '"':
			return j, esc
		}
	}
	return -1, esc
}

func invalidUTF8At(data []byte) int {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(data)
}
