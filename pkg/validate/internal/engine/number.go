package engine

import (
	"encoding/json"
	"math"
	"math/big"
	"math/bits"
	"strconv"
)

// num is an exact JSON number. Every number an instance or a schema holds
// is read from its decimal text (json.Number) without rounding: value =
// ±digits × 10^exp, with digits free of leading and trailing zeros (zero
// has no digits). Integers that fit in an int64 also carry small, so the
// common comparisons never touch the decimal form.
//
// No operation here allocates in proportion to an exponent: comparing
// 1e999999999 with 1 looks at the exponents, and multipleOf reduces
// 10^k modulo the divisor (see multipleOf). A body cannot make the
// validator do unbounded work with a short number.
type num struct {
	neg    bool
	digits string // significant digits, no leading or trailing zeros; "" is zero
	exp    int64  // value = digits × 10^exp
	// small holds the value when isSmall (an integer in int64 range).
	small   int64
	isSmall bool
	// literalInt: the text had no fraction and no exponent ("1", not
	// "1.0" or "1e0"). CUE reads only such literals as int.
	literalInt bool
}

// maxExp saturates decoded exponents: beyond it, every number compares as
// if its exponent were ±maxExp. No JSON text within a request body cap
// can tell the difference in practice, and it keeps arithmetic in int64.
const maxExp = 1 << 40

// parseNumber reads JSON number text. It reports false for text that is
// not a JSON number.
func parseNumber(s string) (num, bool) {
	var n num
	i := 0
	if i < len(s) && s[i] == '-' {
		n.neg = true
		i++
	}
	// Fast path: a plain integer of at most 18 digits.
	if j := i; len(s)-j <= 18 && len(s) > j {
		var v int64
		k := j
		for ; k < len(s); k++ {
			c := s[k]
			if c < '0' || c > '9' {
				break
			}
			v = v*10 + int64(c-'0')
		}
		if k == len(s) {
			if s[j] == '0' && len(s)-j > 1 {
				return num{}, false // leading zero
			}
			if n.neg {
				v = -v
			}
			return smallNum(v), true
		}
	}
	start := i
	if i >= len(s) {
		return num{}, false
	}
	if s[i] == '0' {
		i++
	} else if s[i] >= '1' && s[i] <= '9' {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	} else {
		return num{}, false
	}
	intPart := s[start:i]
	frac := ""
	n.literalInt = true
	if i < len(s) && s[i] == '.' {
		n.literalInt = false
		i++
		fs := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == fs {
			return num{}, false
		}
		frac = s[fs:i]
	}
	var exp int64
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		n.literalInt = false
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		es := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			if exp < maxExp {
				exp = exp*10 + int64(s[i]-'0')
			}
			i++
		}
		if i == es {
			return num{}, false
		}
		if exp > maxExp {
			exp = maxExp
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(s) {
		return num{}, false
	}
	// digits = intPart+frac without leading zeros, exp -= len(frac); then
	// strip trailing zeros into the exponent.
	var d string
	switch {
	case frac == "":
		d = intPart
	case intPart == "0":
		d = frac
	default:
		d = intPart + frac // allocates only for a number with both parts
	}
	exp -= int64(len(frac))
	for len(d) > 0 && d[0] == '0' {
		d = d[1:]
	}
	for len(d) > 0 && d[len(d)-1] == '0' {
		d = d[:len(d)-1]
		exp++
	}
	if d == "" {
		return num{literalInt: n.literalInt, isSmall: true}, true
	}
	n.digits, n.exp = d, exp
	n.fillSmall()
	return n, true
}

func smallNum(v int64) num {
	n := num{small: v, isSmall: true, literalInt: true, neg: v < 0}
	if v == 0 {
		n.neg = false
	}
	return n
}

// fillSmall sets small when the decimal form is an int64.
func (n *num) fillSmall() {
	if n.digits == "" {
		n.isSmall, n.small = true, 0
		return
	}
	if n.exp < 0 || int64(len(n.digits))+n.exp > 18 {
		return
	}
	var v int64
	for i := 0; i < len(n.digits); i++ {
		v = v*10 + int64(n.digits[i]-'0')
	}
	for range n.exp {
		v *= 10
	}
	if n.neg {
		v = -v
	}
	n.small, n.isSmall = v, true
}

// decimal returns the sign, digits and exponent of n, computing them for a
// number built by the fast path.
func (n num) decimal() (bool, string, int64) {
	if n.digits != "" || !n.isSmall || n.small == 0 {
		return n.neg, n.digits, n.exp
	}
	v := n.small
	neg := v < 0
	var u uint64
	if neg {
		u = uint64(-v)
	} else {
		u = uint64(v)
	}
	var exp int64
	for u%10 == 0 {
		u /= 10
		exp++
	}
	return neg, strconv.FormatUint(u, 10), exp
}

// isZero reports whether n is 0.
func (n num) isZero() bool { return n.isSmall && n.small == 0 || !n.isSmall && n.digits == "" }

// isInteger reports whether n is mathematically an integer (JSON Schema's
// reading: 1.0 and 1e2 are integers).
func (n num) isInteger() bool { return n.isSmall || n.exp >= 0 }

// cmpNum compares a and b exactly: -1, 0 or +1.
func cmpNum(a, b num) int {
	if a.isSmall && b.isSmall {
		switch {
		case a.small < b.small:
			return -1
		case a.small > b.small:
			return 1
		}
		return 0
	}
	an, ad, ae := a.decimal()
	bn, bd, be := b.decimal()
	switch {
	case ad == "" && bd == "":
		return 0
	case ad == "":
		if bn {
			return 1
		}
		return -1
	case bd == "":
		if an {
			return -1
		}
		return 1
	case an != bn:
		if an {
			return -1
		}
		return 1
	}
	c := cmpMagnitude(ad, ae, bd, be)
	if an {
		return -c
	}
	return c
}

// cmpMagnitude compares two non-zero normalised decimals by absolute value.
func cmpMagnitude(ad string, ae int64, bd string, be int64) int {
	// The position of the leading digit decides unless it is the same.
	am, bm := int64(len(ad))+ae, int64(len(bd))+be
	switch {
	case am < bm:
		return -1
	case am > bm:
		return 1
	}
	for i := 0; i < len(ad) && i < len(bd); i++ {
		switch {
		case ad[i] < bd[i]:
			return -1
		case ad[i] > bd[i]:
			return 1
		}
	}
	switch {
	case len(ad) < len(bd):
		return -1
	case len(ad) > len(bd):
		return 1
	}
	return 0
}

// multipleOf reports whether x is an integer multiple of m (m > 0),
// exactly. With x = X×10^p and m = M×10^q (X, M normalised, so X is not
// divisible by 10), x/m = X/M × 10^(p-q): for p < q it is never an
// integer (it would need 10 | X), otherwise it is one exactly when
// X × 10^(p-q) ≡ 0 (mod M), computed with 10^(p-q) reduced modulo M.
func multipleOf(x, m num) bool {
	if x.isZero() {
		return true
	}
	if x.isSmall && m.isSmall && m.small > 0 {
		return x.small%m.small == 0
	}
	_, xd, xe := x.decimal()
	_, md, me := m.decimal()
	k := xe - me
	if k < 0 {
		return false
	}
	// Fast path: both digit strings fit in uint64 and 10^k is small.
	if len(xd) <= 18 && len(md) <= 18 && k <= 18 {
		X, _ := strconv.ParseUint(xd, 10, 64)
		M, _ := strconv.ParseUint(md, 10, 64)
		p := uint64(1)
		for range k {
			p *= 10
		}
		hi, lo := bits.Mul64(X%M, p%M)
		_, rem := bits.Div64(hi%M, lo, M)
		return rem == 0
	}
	X, _ := new(big.Int).SetString(xd, 10)
	M, _ := new(big.Int).SetString(md, 10)
	t := new(big.Int).Exp(big.NewInt(10), big.NewInt(k), M)
	t.Mul(t, X.Mod(X, M))
	return t.Mod(t, M).Sign() == 0
}

// numOf reads a numeric instance value: json.Number (what the decoder
// produces) or a Go number handed to Validate directly. ok is false for
// anything else, and for NaN and infinities (not JSON numbers).
func numOf(v any) (num, bool) {
	switch x := v.(type) {
	case json.Number:
		return parseNumber(string(x))
	case float64:
		return floatNum(x)
	case float32:
		return floatNum(float64(x))
	case int:
		return smallNum(int64(x)), true
	case int8:
		return smallNum(int64(x)), true
	case int16:
		return smallNum(int64(x)), true
	case int32:
		return smallNum(int64(x)), true
	case int64:
		return smallNum(x), true
	case uint:
		return uintNum(uint64(x))
	case uint8:
		return smallNum(int64(x)), true
	case uint16:
		return smallNum(int64(x)), true
	case uint32:
		return smallNum(int64(x)), true
	case uint64:
		return uintNum(x)
	}
	return num{}, false
}

func uintNum(u uint64) (num, bool) {
	if u <= math.MaxInt64 {
		return smallNum(int64(u)), true
	}
	return parseNumber(strconv.FormatUint(u, 10))
}

// floatNum reads a Go float through its shortest decimal text, as a JSON
// encoder would write it.
func floatNum(f float64) (num, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return num{}, false
	}
	n, ok := parseNumber(strconv.FormatFloat(f, 'g', -1, 64))
	if ok && f == math.Trunc(f) {
		n.literalInt = true // a Go integral float stands for an integer
	}
	return n, ok
}

// isNumberValue reports whether v is one of the numeric types numOf reads.
func isNumberValue(v any) bool {
	switch v.(type) {
	case json.Number, float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return true
	}
	return false
}

// text returns the decimal text of n for messages: the instance's own
// text where there is one.
func numText(v any) string {
	switch x := v.(type) {
	case json.Number:
		return string(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	}
	n, ok := numOf(v)
	if !ok {
		return "?"
	}
	if n.isSmall {
		return strconv.FormatInt(n.small, 10)
	}
	neg, d, e := n.decimal()
	s := d + "e" + strconv.FormatInt(e, 10)
	if neg {
		s = "-" + s
	}
	return s
}

// Number is an exact JSON number, for format checkers that bound numbers
// (see CompareValue).
type Number struct{ n num }

// ParseNumber reads JSON number text.
func ParseNumber(s string) (Number, bool) {
	n, ok := parseNumber(s)
	return Number{n}, ok
}

// CompareValue compares the numeric instance value v with n exactly: -1,
// 0 or +1. ok is false when v is not a number.
func CompareValue(v any, n Number) (c int, ok bool) {
	x, ok := numOf(v)
	if !ok {
		return 0, false
	}
	return cmpNum(x, n.n), true
}
