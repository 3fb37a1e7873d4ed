package cueschema

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"

	"cuelang.org/go/cue"
)

// Regular expressions. CUE (and pkg/validate) read a pattern as Go RE2;
// JSON Schema consumers (browsers, MCP hosts, ajv) read it as ECMA-262
// with the u flag. A pattern is emitted as written when it only uses the
// syntax both read the same way (see portableSyntax); otherwise it is
// parsed with Go's own parser and printed back in that common syntax,
// which keeps its meaning: `.` becomes [^\n] (ECMA-262's dot also stops at
// \r, U+2028 and U+2029), `\s` becomes [\t\n\f\r ] (ECMA-262's \s is
// Unicode white space), (?i) becomes explicit case classes, \pL becomes
// \p{L}, \Q…\E and Go-only escapes become plain characters. What has no
// common form (multi-line anchors under (?m), \C) is refused.

func (w *walker) portableRegexp(at cue.Value, path, re string) (string, bool) {
	out, msg := PortableRegexp(re)
	if msg != "" {
		hint := "write it without (?m) line anchors: ^ and $ match at the ends of the whole string"
		if strings.HasPrefix(msg, "it is not a valid Go regular expression") {
			hint = "fix the pattern: CUE reads it as Go RE2 syntax (github.com/google/re2/wiki/Syntax)"
		} else if strings.Contains(re, `\C`) {
			hint = `write it without \C (a single byte): match characters`
		}
		w.refuse(at, path, fmt.Sprintf("the regular expression %q", re), msg, hint)
		return "", false
	}
	return out, true
}

// PortableRegexp returns a pattern that means in ECMA-262 (u flag) what re
// means in Go RE2, or a reason it has none.
func PortableRegexp(re string) (string, string) {
	if _, err := regexp.Compile(re); err != nil {
		return "", "it is not a valid Go regular expression: " + err.Error()
	}
	if portableSyntax(re) {
		return re, ""
	}
	tree, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return "", "it is not a valid Go regular expression: " + err.Error()
	}
	var b strings.Builder
	if msg := printRegexp(&b, tree); msg != "" {
		return "", msg
	}
	return b.String(), ""
}

// portableSyntax reports whether re only uses constructs that Go RE2 and
// ECMA-262 with the u flag read the same way.
func portableSyntax(re string) bool {
	inClass := false
	classStart := false
	depth := 0
	for i := 0; i < len(re); i++ {
		c := re[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(re[i:])
			if r == utf8.RuneError || !unicode.IsPrint(r) {
				return false
			}
			i += n - 1
			classStart = false
			continue
		}
		if c < 0x20 || c == 0x7f {
			return false
		}
		if c == '\\' {
			if i+1 >= len(re) {
				return false
			}
			n := re[i+1]
			i++
			switch {
			case strings.IndexByte(`dDwW.*+?()[]{}|\^$/tnrfv`, n) >= 0:
			case n == 'b' || n == 'B':
				if inClass {
					return false
				}
			case n == '-':
				if !inClass {
					return false
				}
			default:
				return false
			}
			classStart = false
			continue
		}
		if inClass {
			switch c {
			case ']':
				if classStart {
					return false
				}
				inClass = false
			case '[':
				return false
			}
			classStart = false
			continue
		}
		switch c {
		case '[':
			inClass, classStart = true, true
			if i+1 < len(re) && re[i+1] == '^' {
				i++
			}
		case '.', ']', '}':
			return false
		case '{':
			j := i + 1
			for j < len(re) && (re[j] >= '0' && re[j] <= '9' || re[j] == ',') {
				j++
			}
			if j == i+1 || j >= len(re) || re[j] != '}' || re[i+1] == ',' {
				return false
			}
			i = j
		case '(':
			if i+1 < len(re) && re[i+1] == '?' {
				if i+2 < len(re) && re[i+2] == ':' {
					i += 2
				} else {
					return false
				}
			}
			depth++
		case ')':
			depth--
		}
	}
	return !inClass && depth == 0
}

// printRegexp prints tree in the syntax common to RE2 and ECMA-262 (u).
func printRegexp(b *strings.Builder, re *syntax.Regexp) string {
	switch re.Op {
	case syntax.OpNoMatch:
		b.WriteString(`[^\d\D]`)
	case syntax.OpEmptyMatch:
		b.WriteString(`(?:)`)
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 {
				if fold := foldClass(r); fold != nil {
					printClass(b, fold)
					continue
				}
			}
			printRune(b, r, false)
		}
	case syntax.OpCharClass:
		printClass(b, re.Rune)
	case syntax.OpAnyCharNotNL:
		b.WriteString(`[^\n]`)
	case syntax.OpAnyChar:
		b.WriteString(`[\d\D]`)
	case syntax.OpBeginText:
		b.WriteString(`^`)
	case syntax.OpEndText:
		b.WriteString(`$`)
	case syntax.OpBeginLine, syntax.OpEndLine:
		return "it uses line anchors ((?m) ^ or $), which ECMA-262 cannot turn on inside a pattern"
	case syntax.OpWordBoundary:
		b.WriteString(`\b`)
	case syntax.OpNoWordBoundary:
		b.WriteString(`\B`)
	case syntax.OpCapture:
		b.WriteString(`(?:`)
		if msg := printRegexp(b, re.Sub[0]); msg != "" {
			return msg
		}
		b.WriteString(`)`)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		sub := re.Sub[0]
		atomic := sub.Op == syntax.OpLiteral && len(sub.Rune) == 1 && sub.Flags&syntax.FoldCase == 0 ||
			sub.Op == syntax.OpCharClass || sub.Op == syntax.OpAnyCharNotNL || sub.Op == syntax.OpAnyChar || sub.Op == syntax.OpCapture
		if !atomic {
			b.WriteString(`(?:`)
		}
		if msg := printRegexp(b, sub); msg != "" {
			return msg
		}
		if !atomic {
			b.WriteString(`)`)
		}
		switch re.Op {
		case syntax.OpStar:
			b.WriteString(`*`)
		case syntax.OpPlus:
			b.WriteString(`+`)
		case syntax.OpQuest:
			b.WriteString(`?`)
		case syntax.OpRepeat:
			switch {
			case re.Max == -1:
				fmt.Fprintf(b, "{%d,}", re.Min)
			case re.Min == re.Max:
				fmt.Fprintf(b, "{%d}", re.Min)
			default:
				fmt.Fprintf(b, "{%d,%d}", re.Min, re.Max)
			}
		}
		if re.Flags&syntax.NonGreedy != 0 {
			b.WriteString(`?`)
		}
	case syntax.OpConcat:
		for _, s := range re.Sub {
			if s.Op == syntax.OpAlternate {
				b.WriteString(`(?:`)
				if msg := printRegexp(b, s); msg != "" {
					return msg
				}
				b.WriteString(`)`)
				continue
			}
			if msg := printRegexp(b, s); msg != "" {
				return msg
			}
		}
	case syntax.OpAlternate:
		for i, s := range re.Sub {
			if i > 0 {
				b.WriteString(`|`)
			}
			if msg := printRegexp(b, s); msg != "" {
				return msg
			}
		}
	default:
		return fmt.Sprintf("it uses %v, which has no common ECMA-262 form", re.Op)
	}
	return ""
}

// foldClass returns the ranges of r and its simple case foldings, or nil
// when r has none.
func foldClass(r rune) []rune {
	var rs []rune
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		rs = append(rs, f)
	}
	if len(rs) == 0 {
		return nil
	}
	rs = append(rs, r)
	var out []rune
	for _, x := range rs {
		out = append(out, x, x)
	}
	return out
}

// printClass prints the ranges of a Go character class. Surrogates cannot
// occur in the strings either side compares, so ranges skip them.
func printClass(b *strings.Builder, ranges []rune) {
	var clean []rune
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if lo <= 0xDFFF && hi >= 0xD800 {
			if lo < 0xD800 {
				clean = append(clean, lo, 0xD7FF)
			}
			if hi > 0xDFFF {
				clean = append(clean, 0xE000, hi)
			}
			continue
		}
		clean = append(clean, lo, hi)
	}
	negate := len(clean) >= 2 && clean[len(clean)-1] == unicode.MaxRune && clean[0] == 0
	if len(clean) == 0 {
		b.WriteString(`[^\d\D]`)
		return
	}
	if negate {
		// Print the complement, negated: shorter and clearer.
		var comp []rune
		next := rune(0)
		for i := 0; i+1 < len(clean); i += 2 {
			if clean[i] > next {
				comp = append(comp, next, clean[i]-1)
			}
			next = clean[i+1] + 1
		}
		var filtered []rune
		for i := 0; i+1 < len(comp); i += 2 {
			if comp[i] == 0xD800 && comp[i+1] == 0xDFFF {
				continue
			}
			filtered = append(filtered, comp[i], comp[i+1])
		}
		if len(filtered) == 0 {
			b.WriteString(`[\d\D]`)
			return
		}
		b.WriteString(`[^`)
		printRanges(b, filtered)
		b.WriteString(`]`)
		return
	}
	b.WriteString(`[`)
	printRanges(b, clean)
	b.WriteString(`]`)
}

func printRanges(b *strings.Builder, rs []rune) {
	for i := 0; i+1 < len(rs); i += 2 {
		printRune(b, rs[i], true)
		if rs[i+1] != rs[i] {
			if rs[i+1] > rs[i]+1 {
				b.WriteByte('-')
			}
			printRune(b, rs[i+1], true)
		}
	}
}

// printRune writes r so both dialects read the character itself.
func printRune(b *strings.Builder, r rune, inClass bool) {
	switch {
	case r < 0x20 || r == 0x7f:
		fmt.Fprintf(b, `\x%02X`, r)
	case r < utf8.RuneSelf:
		special := `\.+*?()|[]{}^$`
		if inClass {
			special = `\]-[^`
		}
		if strings.ContainsRune(special, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	case !unicode.IsPrint(r) || r == utf8.RuneError:
		if r <= 0xFFFF {
			// Both read \uHHHH? Go does not: write the character.
			b.WriteRune(r)
		} else {
			b.WriteRune(r)
		}
	default:
		b.WriteRune(r)
	}
}
