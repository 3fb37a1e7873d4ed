package engine

import (
	"encoding/json"
	"unicode/utf8"
)

// ValidJSON reports whether data is one JSON value that Decode(data,
// maxDepth) accepts and the schema accepts, judged on the bytes without
// building the value where the schema allows it. It never reports true
// for data that Decode or Validate would refuse; false means "not
// accepted as it stands", and a caller that wants the reason decodes and
// validates (the slow path that words it).
//
// Streamed: type, scalar const and string enum, the numeric and string
// keywords, format, properties/required/additionalProperties,
// min/maxProperties, items/prefixItems/min/maxItems and bare $refs. Any
// other keyword (combinators, uniqueItems, contains, patternProperties, …)
// makes its value be decoded and validated as a tree, so the verdict is
// the tree validator's by construction.
func (s *Schema) ValidJSON(data []byte, maxDepth int) bool {
	sc := scanner{decoder: decoder{data: data, max: maxDepth}, s: s}
	sc.skipSpace()
	if sc.pos >= len(data) || !sc.value(s.root, 0) {
		return false
	}
	sc.skipSpace()
	return sc.pos == len(data)
}

type scanner struct {
	decoder
	s *Schema
}

// streamable reports whether n can be judged on the bytes in one pass.
func (n *node) streamable() bool {
	return n.allOf == nil && n.anyOf == nil && n.oneOf == nil && n.not == nil && n.ifN == nil &&
		!n.unique && n.contains == nil && n.patProps == nil && n.propNames == nil &&
		n.depReq == nil && n.depSch == nil && len(n.props) <= 64 && len(n.required) <= 64 &&
		(n.enum == nil || n.enumStr != nil) && (!n.hasConst || isScalar(n.constV))
}

// bare reports whether n says nothing but "$ref" (annotations aside).
func (n *node) bare() bool {
	return n.ref != nil && n.types == 0 && !n.hasConst && n.enum == nil && n.format == nil &&
		!n.hasNumKw && n.minLen < 0 && n.maxLen < 0 && n.pattern == nil && !n.hasArrKw && !n.hasObjKw &&
		n.allOf == nil && n.anyOf == nil && n.oneOf == nil && n.not == nil && n.ifN == nil
}

func isScalar(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return false
	}
	return true
}

// value judges the value at sc.pos against n and moves past it.
func (sc *scanner) value(n *node, depth int) bool {
	for hops := 0; n != nil && n.bare(); hops++ {
		if hops > maxRefHops {
			return false
		}
		n = n.ref
	}
	if n == nil || n.always {
		return sc.skip(depth)
	}
	if n.never {
		return false
	}
	if !n.streamable() || n.ref != nil {
		v, err := sc.decoder.value(depth)
		return err == nil && n.check(v, &vctx{s: sc.s})
	}
	if sc.pos >= len(sc.data) {
		return false
	}
	switch c := sc.data[sc.pos]; {
	case c == '{':
		if n.types != 0 && n.types&tObject == 0 || n.hasConst || n.enum != nil {
			return false
		}
		return sc.object(n, depth+1)
	case c == '[':
		if n.types != 0 && n.types&tArray == 0 || n.hasConst || n.enum != nil {
			return false
		}
		return sc.array(n, depth+1)
	case c == '"':
		if n.types != 0 && n.types&tString == 0 {
			return false
		}
		return sc.str(n)
	case c == '-' || c >= '0' && c <= '9':
		return sc.number(n)
	case c == 't' || c == 'f' || c == 'n':
		var v any
		var err *DecodeError
		switch c {
		case 't':
			v, err = true, sc.literal("true")
		case 'f':
			v, err = false, sc.literal("false")
		default:
			v, err = nil, sc.literal("null")
		}
		return err == nil && n.check(v, &vctx{s: sc.s})
	}
	return false
}

// stringEnd scans the string at sc.pos (a '"') for validity and returns
// the end of its content (the closing quote) and whether it has escapes.
func (sc *scanner) stringEnd() (int, bool, bool) {
	i := sc.pos + 1
	esc := false
	for i < len(sc.data) {
		c := sc.data[i]
		switch {
		case c == '"':
			return i, esc, true
		case c == '\\':
			// Escapes are checked by the decoder when the string is
			// read; here only skip the escaped byte, but a surrogate
			// escape must be half of a pair (see escaped).
			esc = true
			if i+5 < len(sc.data) && sc.data[i+1] == 'u' {
				r := hexRune(sc.data[i+2 : i+6])
				switch {
				case r >= 0xDC00 && r < 0xE000:
					return 0, false, false
				case r >= 0xD800 && r < 0xDC00:
					if i+11 >= len(sc.data) || sc.data[i+6] != '\\' || sc.data[i+7] != 'u' {
						return 0, false, false
					}
					if r2 := hexRune(sc.data[i+8 : i+12]); r2 < 0xDC00 || r2 >= 0xE000 {
						return 0, false, false
					}
					i += 6
				}
			}
			i += 2
		case c < 0x20:
			return 0, false, false
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(sc.data[i:])
			if r == utf8.RuneError && size <= 1 {
				return 0, false, false
			}
			i += size
		default:
			i++
		}
	}
	return 0, false, false
}

func (sc *scanner) str(n *node) bool {
	end, esc, ok := sc.stringEnd()
	if !ok {
		return false
	}
	if esc || n.format != nil || n.hasConst {
		s, err := sc.str1()
		if err != nil {
			return false
		}
		return n.check(s, &vctx{s: sc.s})
	}
	b := sc.data[sc.pos+1 : end]
	sc.pos = end + 1
	if n.enumStr != nil {
		if _, ok := n.enumStr[string(b)]; !ok {
			return false
		}
	}
	if n.minLen > 0 && (len(b) < n.minLen || len(b) < 4*n.minLen && utf8.RuneCount(b) < n.minLen) {
		return false
	}
	if n.maxLen >= 0 && len(b) > n.maxLen && utf8.RuneCount(b) > n.maxLen {
		return false
	}
	return n.pattern == nil || n.pattern.Match(b)
}

func (sc *scanner) number(n *node) bool {
	start := sc.pos
	if sc.numberEnd() != nil {
		return false
	}
	b := sc.data[start:sc.pos]
	if n.hasConst || n.format != nil || n.enum != nil {
		return n.check(jsonNumber(b), &vctx{s: sc.s})
	}
	if n.types != 0 && n.types&(tNumber|tInteger) == 0 {
		return false
	}
	x, ok := smallFromBytes(b)
	if !ok {
		if x, ok = parseNumber(string(b)); !ok {
			return false
		}
	}
	if n.types != 0 && n.types&tNumber == 0 {
		if sc.s.opts.IntegerLiterals && !x.literalInt || !x.isInteger() {
			return false
		}
	}
	return !n.hasNumKw || n.checkNumber(x, nil, &vctx{s: sc.s})
}

// smallFromBytes reads a plain integer of at most 18 digits.
func smallFromBytes(b []byte) (num, bool) {
	i := 0
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		i = 1
	}
	if len(b)-i == 0 || len(b)-i > 18 || b[i] == '0' && len(b)-i > 1 {
		return num{}, false
	}
	var v int64
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return num{}, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return smallNum(v), true
}

func (sc *scanner) object(n *node, depth int) bool {
	if depth > sc.max {
		return false
	}
	sc.pos++
	var seen, seenReq uint64 // props and n.required found
	count := 0
	var others [16][]byte // undeclared keys, for the repeated-key check
	nOthers := 0
	sc.skipSpace()
	if sc.pos < len(sc.data) && sc.data[sc.pos] == '}' {
		sc.pos++
	} else {
		for {
			if sc.pos >= len(sc.data) || sc.data[sc.pos] != '"' {
				return false
			}
			end, esc, ok := sc.stringEnd()
			if !ok || esc {
				return false // an escaped key: the slow path compares it decoded
			}
			key := sc.data[sc.pos+1 : end]
			sc.pos = end + 1
			sc.skipSpace()
			if sc.pos >= len(sc.data) || sc.data[sc.pos] != ':' {
				return false
			}
			sc.pos++
			sc.skipSpace()
			count++
			i, declared := n.lookupPropBytes(key)
			var sub *node
			if declared {
				if seen&(1<<i) != 0 {
					return false // repeated key
				}
				seen |= 1 << i
				sub = n.props[i].node
			} else {
				for _, o := range others[:nOthers] {
					if string(o) == string(key) {
						return false
					}
				}
				if nOthers == len(others) {
					return false
				}
				others[nOthers] = key
				nOthers++
				for j, r := range n.required {
					if r == string(key) {
						seenReq |= 1 << j
					}
				}
				if n.addl != nil {
					if n.addl.never {
						return false
					}
					sub = n.addl
				}
			}
			if sub == nil {
				if !sc.skip(depth) {
					return false
				}
			} else if !sc.value(sub, depth) {
				return false
			}
			sc.skipSpace()
			if sc.pos >= len(sc.data) {
				return false
			}
			if sc.data[sc.pos] == ',' {
				sc.pos++
				sc.skipSpace()
				continue
			}
			if sc.data[sc.pos] != '}' {
				return false
			}
			sc.pos++
			break
		}
	}
	if n.minProps >= 0 && count < n.minProps || n.maxProps >= 0 && count > n.maxProps {
		return false
	}
	for i := range n.props {
		if n.props[i].required && seen&(1<<i) == 0 {
			return false
		}
	}
	return len(n.required) == 0 || seenReq == 1<<len(n.required)-1
}

func (n *node) lookupPropBytes(key []byte) (int, bool) {
	if n.propIdx != nil {
		i, ok := n.propIdx[string(key)]
		return i, ok
	}
	for i := range n.props {
		if n.props[i].name == string(key) {
			return i, true
		}
	}
	return -1, false
}

func (sc *scanner) array(n *node, depth int) bool {
	if depth > sc.max {
		return false
	}
	sc.pos++
	sc.skipSpace()
	count := 0
	if sc.pos < len(sc.data) && sc.data[sc.pos] == ']' {
		sc.pos++
	} else {
		for {
			var sub *node
			if count < len(n.prefix) {
				sub = n.prefix[count]
			} else {
				sub = n.items
			}
			if sub == nil {
				if !sc.skip(depth) {
					return false
				}
			} else if !sc.value(sub, depth) {
				return false
			}
			count++
			sc.skipSpace()
			if sc.pos >= len(sc.data) {
				return false
			}
			if sc.data[sc.pos] == ',' {
				sc.pos++
				sc.skipSpace()
				continue
			}
			if sc.data[sc.pos] != ']' {
				return false
			}
			sc.pos++
			break
		}
	}
	return (n.minItems < 0 || count >= n.minItems) && (n.maxItems < 0 || count <= n.maxItems)
}

// skip moves past a value no schema constrains, checking what Decode
// checks (syntax, nesting, UTF-8, repeated keys). Objects and arrays are
// handed to the decoder, which checks them while building (a rare path:
// the translator gives every member a schema).
func (sc *scanner) skip(depth int) bool {
	if sc.pos >= len(sc.data) {
		return false
	}
	switch c := sc.data[sc.pos]; c {
	case '"':
		if end, esc, ok := sc.stringEnd(); ok && !esc {
			sc.pos = end + 1
			return true
		}
	case '{', '[':
	default:
		if c == '-' || c >= '0' && c <= '9' {
			return sc.numberEnd() == nil
		}
	}
	_, err := sc.decoder.value(depth)
	return err == nil
}

func jsonNumber(b []byte) any { return json.Number(string(b)) }

// hexRune reads four hex digits (-1 when they are not).
func hexRune(b []byte) rune {
	var r rune
	for _, c := range b {
		v, ok := hexDigit(c)
		if !ok {
			return -1
		}
		r = r<<4 | v
	}
	return r
}

// hexDigit is the value of one hexadecimal digit (the one reading both
// decoders share).
func hexDigit(c byte) (rune, bool) {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0'), true
	case c >= 'a' && c <= 'f':
		return rune(c-'a') + 10, true
	case c >= 'A' && c <= 'F':
		return rune(c-'A') + 10, true
	}
	return 0, false
}
