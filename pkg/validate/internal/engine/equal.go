package engine

import (
	"fmt"
	"math"
	"slices"
	"strconv"
)

// equal is JSON Schema's equality of two JSON values ("const", "enum",
// "uniqueItems"): numbers compare by value (1 and 1.0 are equal), objects
// regardless of member order. With kinds, numbers must also agree on
// being integer literals (CUE's equality: 1 and 1.0 differ).
func equal(a, b any, kinds bool) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case nil:
		return b == nil
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equal(xv, yv, kinds) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i], kinds) {
				return false
			}
		}
		return true
	}
	na, ok1 := numOf(a)
	nb, ok2 := numOf(b)
	if !ok1 || !ok2 {
		return false
	}
	if kinds && na.literalInt != nb.literalInt {
		return false
	}
	return cmpNum(na, nb) == 0
}

func validFloat(v any) bool {
	switch x := v.(type) {
	case float64:
		return !math.IsNaN(x) && !math.IsInf(x, 0)
	case float32:
		return !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0)
	}
	return true
}

// duplicate finds the first pair of equal items (i < j). Short arrays are
// compared pairwise; longer ones through a canonical text of each item,
// so a long array costs n log n, not n².
func duplicate(a []any, kinds bool) (int, int, bool) {
	if len(a) <= 16 {
		for j := 1; j < len(a); j++ {
			for i := 0; i < j; i++ {
				if equal(a[i], a[j], kinds) {
					return i, j, true
				}
			}
		}
		return 0, 0, false
	}
	seen := make(map[string]int, len(a))
	var buf []byte
	for j, e := range a {
		buf = canonical(buf[:0], e, kinds)
		if i, ok := seen[string(buf)]; ok {
			return i, j, true
		}
		seen[string(buf)] = j
	}
	return 0, 0, false
}

// canonical appends a text for v that two values share exactly when
// equal(…, kinds) holds for them: object members sorted, numbers in
// normalised decimal form.
func canonical(buf []byte, v any, kinds bool) []byte {
	switch x := v.(type) {
	case string:
		return strconv.AppendQuote(append(buf, 's'), x)
	case bool:
		if x {
			return append(buf, 't')
		}
		return append(buf, 'f')
	case nil:
		return append(buf, 'n')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		buf = append(buf, '{')
		for _, k := range keys {
			buf = strconv.AppendQuote(buf, k)
			buf = append(buf, ':')
			buf = canonical(buf, x[k], kinds)
			buf = append(buf, ',')
		}
		return append(buf, '}')
	case []any:
		buf = append(buf, '[')
		for _, e := range x {
			buf = canonical(buf, e, kinds)
			buf = append(buf, ',')
		}
		return append(buf, ']')
	}
	n, ok := numOf(v)
	if !ok {
		// Not a JSON value (a Go value handed to Validate directly).
		return fmt.Appendf(append(buf, '?'), "%T:%v", v, v)
	}
	buf = append(buf, 'd')
	if kinds && !n.literalInt {
		buf = append(buf, 'f')
	}
	neg, d, e := n.decimal()
	if neg {
		buf = append(buf, '-')
	}
	buf = append(buf, d...)
	buf = append(buf, 'e')
	return strconv.AppendInt(buf, e, 10)
}
