package validate

import (
	"fmt"

	"stitchkit.dev/stitchkit/pkg/validate/internal/engine"
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
// would allocate without bound), invalid UTF-8 is refused, so is a string
// escape of half a UTF-16 surrogate pair ("\ud83d" alone: CUE refuses it,
// where encoding/json makes it U+FFFD), and so is an
// object that repeats a key: CUE would unify the two values and
// encoding/json would keep the last, so a repeated key has no single
// meaning. Trailing data after the value is an error.
//
// Values are map[string]any, []any, json.Number, string, bool and nil,
// exactly what encoding/json with UseNumber builds for the same text. The
// decoder is one pass over the bytes that checks and builds at once; a
// body is refused at the first byte that breaks a rule, before the rest of
// its tree is built. Strings and numbers share one copy of the input
// (data is copied once, so the caller may reuse data afterwards; a string
// kept from the value keeps that copy alive, which for a request body
// bounded by the mount's cap is the price of not allocating per string).
func DecodeJSON(data []byte, opts *DecodeOptions) (any, error) {
	v, err := engine.Decode(data, maxDepth(opts))
	if err != nil {
		return nil, &DecodeError{Offset: err.Offset, Reason: err.Reason, TooDeep: err.TooDeep}
	}
	return v, nil
}

func maxDepth(opts *DecodeOptions) int {
	if opts != nil && opts.MaxDepth > 0 {
		return opts.MaxDepth
	}
	return DefaultMaxDepth
}
