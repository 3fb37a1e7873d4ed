package compile

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/literal"
	"cuelang.org/go/cue/token"
)

// Literal values a schema carries into JSON: regular expressions, which
// JSON Schema reads as ECMA-262 while CUE (and our validators) read them
// as Go RE2, and numbers, which canonical JSON (JavaScript number
// semantics, DESIGN §4) turns into IEEE doubles. A literal the two sides
// would read differently is refused, never rewritten.

// maxSafeInteger is 2^53: every integer up to it in magnitude survives an
// IEEE double unchanged.
var maxSafeInteger = new(big.Int).Lsh(big.NewInt(1), 53)

// numberProblem describes why the concrete number v cannot be written into
// a schema unchanged, or returns "". The literal v was written as is
// checked too: CUE's own arithmetic changes some of them (-1e999999
// evaluates to -1).
func numberProblem(v cue.Value) string {
	if lit := sourceNumber(v.Source()); lit != "" {
		if msg := numberTextProblem(lit); msg != "" {
			return msg
		}
	}
	switch v.Kind() {
	case cue.IntKind:
		i, err := v.Int(nil)
		if err != nil {
			return ""
		}
		return intProblem(i)
	case cue.FloatKind, cue.NumberKind:
		b, err := v.MarshalJSON()
		if err != nil {
			return fmt.Sprintf("the number %v cannot be written as JSON (%v)", v, err)
		}
		return numberTextProblem(string(b))
	}
	return ""
}

func intProblem(i *big.Int) string {
	if new(big.Int).Abs(i).Cmp(maxSafeInteger) > 0 {
		return fmt.Sprintf("the integer %s is beyond ±2^53 (9007199254740992): JSON Schema numbers are IEEE doubles (canonical JSON and validators would change it); use a bound within ±2^53 or a string with a pattern", i)
	}
	return ""
}

// numberTextProblem checks the JSON number text s.
func numberTextProblem(s string) string {
	if !strings.ContainsAny(s, ".eE") {
		if i, ok := new(big.Int).SetString(s, 10); ok {
			return intProblem(i)
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if math.IsInf(f, 0) || err != nil && !strings.Contains(err.Error(), "range") {
		return fmt.Sprintf("the number %s overflows a 64-bit float: JSON Schema numbers are IEEE doubles (canonical JSON cannot write it); use a smaller value", s)
	}
	exact, ok := new(big.Rat).SetString(s)
	if !ok {
		return fmt.Sprintf("the number %s is not a JSON number", s)
	}
	if exact.Cmp(new(big.Rat).SetFloat64(f)) != 0 {
		// Not exactly a double: fine when the shortest decimal that
		// round-trips is the text itself (0.1), not when canonical
		// JSON would print another value (1e-400 → 0, 0.1000000000000000000001 → 0.1).
		short, _ := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
		if exact.Cmp(short) != 0 {
			return fmt.Sprintf("the number %s cannot be written exactly as JSON: JSON Schema numbers are IEEE doubles and canonical JSON would write %s; use a value a 64-bit float holds", s, strconv.FormatFloat(f, 'g', -1, 64))
		}
	}
	return ""
}

// regexpProblem describes why the regular expression re cannot go into a
// JSON Schema "pattern" (or "patternProperties" key), or returns "": it
// must compile with Go's regexp (CUE and the validators), and ECMA-262
// (JSON Schema's dialect, read without the u flag) must read it the same
// way.
func regexpProblem(re string) string {
	if _, err := regexp.Compile(re); err != nil {
		return fmt.Sprintf("is not a valid regular expression (%v)", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	if feat := ecmaProblem(re); feat != "" {
		return "uses " + feat + "; JSON Schema patterns are ECMA-262 regular expressions, which read it differently (or not at all)"
	}
	return ""
}

// ecmaProblem names the first construct of the (valid RE2) expression re
// that ECMA-262 without the u flag does not read as Go does, or returns "".
func ecmaProblem(re string) string {
	rs := []rune(re)
	inClass, classStart := false, false
	quantifier := func(i int) bool {
		return i < len(rs) && strings.ContainsRune("*+?{", rs[i])
	}
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '\\' && i+1 < len(rs):
			n := rs[i+1]
			i++
			classStart = false
			switch n {
			case 'A':
				return `\A (Go's start of text; use ^)`
			case 'z':
				return `\z (Go's end of text; use $)`
			case 'Q', 'E':
				return `\Q…\E quoting (escape each character instead)`
			case 'p', 'P':
				return fmt.Sprintf(`\%c Unicode classes (ECMA-262 without the u flag reads \%c as the letter %c)`, n, n, n)
			case 'C':
				return `\C (any byte)`
			case 'a':
				return `\a (Go's bell character; ECMA-262 reads the letter a)`
			case 'x':
				if i+1 < len(rs) && rs[i+1] == '{' {
					return `\x{…} (use \xHH or \uHHHH)`
				}
			case '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
				return fmt.Sprintf(`\%c (an octal escape in Go, a back reference or legacy octal in ECMA-262)`, n)
			}
		case inClass:
			switch {
			case r == '[' && i+1 < len(rs) && rs[i+1] == ':':
				return `a POSIX class [[:name:]] (use explicit ranges)`
			case r == ']' && classStart:
				return `] first in a character class (Go reads a literal ], ECMA-262 an empty class; escape it as \])`
			case r == ']':
				inClass = false
			case r > 0xFFFF:
				return fmt.Sprintf("the character %q outside the Basic Multilingual Plane in a character class (ECMA-262 without the u flag sees two UTF-16 code units)", r)
			}
			classStart = false
		case r == '[':
			inClass, classStart = true, true
			if i+1 < len(rs) && rs[i+1] == '^' {
				i++
			}
		case r == '(' && i+1 < len(rs) && rs[i+1] == '?':
			next := rune(0)
			if i+2 < len(rs) {
				next = rs[i+2]
			}
			switch {
			case next == ':':
			case next == '<' && i+3 < len(rs) && rs[i+3] != '=' && rs[i+3] != '!':
				// (?<name>…) is a named group in both.
			case next == 'P':
				return `a (?P<name>…) group (write (?<name>…))`
			default:
				return `(?flags) (Go-only inline flags such as (?i), (?s), (?m), (?U))`
			}
		case r > 0xFFFF && quantifier(i+1):
			return fmt.Sprintf("the character %q outside the Basic Multilingual Plane before a quantifier (ECMA-262 without the u flag repeats only its second UTF-16 code unit)", r)
		}
	}
	return ""
}

// literalProblems scans a generated schema for numbers and regular
// expressions the representability walk did not see (it reports where
// they come from in CUE; this is the net under it).
func literalProblems(s any, out *[]string) {
	switch x := s.(type) {
	case map[string]any:
		for k, e := range x {
			switch k {
			case "pattern":
				if re, ok := e.(string); ok {
					if msg := regexpProblem(re); msg != "" {
						*out = append(*out, fmt.Sprintf("the regular expression %q %s", re, msg))
					}
				}
			case "patternProperties":
				if pp, ok := e.(map[string]any); ok {
					for re := range pp {
						if msg := regexpProblem(re); msg != "" {
							*out = append(*out, fmt.Sprintf("the label regular expression %q %s", re, msg))
						}
					}
				}
			}
			literalProblems(e, out)
		}
	case []any:
		for _, e := range x {
			literalProblems(e, out)
		}
	case json.Number:
		if msg := numberTextProblem(string(x)); msg != "" {
			*out = append(*out, msg)
		}
	}
}

// sourceNumber returns the decimal text of the number literal n (or of a
// field's value, or of a negated literal), or "".
func sourceNumber(n ast.Node) string {
	switch x := n.(type) {
	case *ast.Field:
		return sourceNumber(x.Value)
	case *ast.ParenExpr:
		return sourceNumber(x.X)
	case *ast.UnaryExpr:
		if x.Op == token.SUB {
			if s := sourceNumber(x.X); s != "" && !strings.HasPrefix(s, "-") {
				return "-" + s
			}
		}
	case *ast.BasicLit:
		if x.Kind != token.INT && x.Kind != token.FLOAT {
			return ""
		}
		var ni literal.NumInfo
		if err := literal.ParseNum(x.Value, &ni); err != nil {
			return ""
		}
		return ni.String()
	}
	return ""
}
