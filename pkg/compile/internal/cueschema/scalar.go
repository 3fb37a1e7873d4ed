package cueschema

import (
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"time"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	cuelit "cuelang.org/go/cue/literal"
	"cuelang.org/go/cue/token"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// kindTypes maps CUE kinds to JSON Schema types. A float is a number that
// is not an integer literal; bytes and functions have no JSON form.
func kindSchema(k cue.Kind) map[string]any {
	if k&^(cue.BytesKind) == cue.TopKind&^(cue.BytesKind) {
		return map[string]any{}
	}
	var types []any
	float := false
	for _, t := range []struct {
		k cue.Kind
		n string
	}{{cue.NullKind, "null"}, {cue.BoolKind, "boolean"}, {cue.StringKind, "string"}, {cue.ListKind, "array"}, {cue.StructKind, "object"}} {
		if k&t.k != 0 {
			types = append(types, t.n)
		}
	}
	switch k & cue.NumberKind {
	case cue.NumberKind:
		types = append(types, "number")
	case cue.IntKind:
		types = append(types, "integer")
	case cue.FloatKind:
		types = append(types, "number")
		float = true
	}
	s := map[string]any{}
	switch len(types) {
	case 0:
		return nil
	case 1:
		s["type"] = types[0]
	default:
		s["type"] = types
	}
	if float {
		s["not"] = map[string]any{"type": "integer"}
		if len(types) > 1 {
			// Only numbers must not be integers.
			delete(s, "not")
			s["not"] = map[string]any{"type": "integer"}
		}
	}
	return s
}

// scalar translates a value that is neither a struct, a list nor a
// disjunction: a concrete scalar, a basic type with bounds, a regular
// expression, a validator.
func (w *walker) scalar(v, e cue.Value, eop cue.Op, eargs []cue.Value, path string, depth int, m mode) (any, info) {
	k := v.IncompleteKind()
	if v.IsConcrete() {
		return w.constant(v, path), info{complete: true, exact: true}
	}
	if k&^(cue.BytesKind) == 0 {
		w.bytesValue(v, path)
		return false, info{exact: true}
	}
	s := kindSchema(k)
	if s == nil {
		return false, info{exact: true}
	}
	var extra []any
	var walkC func(c cue.Value, d int)
	walkC = func(c cue.Value, d int) {
		if d > MaxDepth {
			return
		}
		op, args := eop, eargs // e.Expr(), which the caller asked already
		if d > 0 {
			if bop, text, ok := literalBound(c); ok {
				w.boundNumber(c, bop, text, path, s)
				return
			}
			op, args = c.Expr()
		}
		switch op {
		case cue.AndOp:
			for _, a := range args {
				walkC(a, d+1)
			}
		case cue.NoOp:
			// A basic type (int, string, …): the kind says it.
		case cue.GreaterThanOp, cue.GreaterThanEqualOp, cue.LessThanOp, cue.LessThanEqualOp:
			w.bound(c, op, args, path, s)
		case cue.NotEqualOp:
			if len(args) == 1 && args[0].IsConcrete() {
				// != compares values: 3.0 != 3 is false in CUE too.
				c := w.constant(args[0], path)
				if cm, ok := c.(map[string]any); ok && cm["const"] != nil {
					delete(cm, "type")
					delete(cm, "not")
				}
				extra = append(extra, map[string]any{"not": c})
			} else {
				w.refuse(c, path, fmt.Sprintf("the comparison %v", c), "JSON Schema cannot compare with a value that is not concrete", "compare with a constant")
			}
		case cue.RegexMatchOp, cue.NotRegexMatchOp:
			re, err := args[0].String()
			if err != nil {
				w.refuse(c, path, fmt.Sprintf("the regular expression %v", c), "it is not a concrete string", "write the pattern as a string literal")
				return
			}
			out, ok := w.portableRegexp(c, path, re)
			if !ok {
				return
			}
			if op == cue.RegexMatchOp {
				extra = append(extra, map[string]any{"pattern": out})
			} else {
				extra = append(extra, map[string]any{"not": map[string]any{"pattern": out}})
			}
		case cue.CallOp:
			if x := w.call(c, args, path, depth, m); x != nil {
				extra = append(extra, x)
			}
		default:
			w.refuse(c, path, fmt.Sprintf("the expression %v", c), "it has no JSON Schema equivalent", "use a basic type with bounds, a regular expression or a supported validator")
		}
	}
	walkC(e, 0)
	for _, u := range []string{"uint64", "uint128"} {
		// uint64 is >=0 & <=2^64-1: its format says both.
		if s["format"] == u+"-upper" && s["minimum"] == json.Number("0") {
			s["format"] = u
		}
	}
	return mergeInto(s, extra), info{complete: false, exact: true}
}

// mergeInto adds each schema of extra to s, as keywords when s does not
// have them yet, else as allOf members.
func mergeInto(s map[string]any, extra []any) any {
	// The order constraints are written in must not reach the schema.
	sortByCanonical(extra)
	var rest []any
	for _, x := range extra {
		xm, ok := x.(map[string]any)
		if !ok {
			rest = append(rest, x)
			continue
		}
		clash := false
		for k, val := range xm {
			// (The same keyword with the same value says nothing new.)
			if old, has := s[k]; has && !sameKeyword(old, val) {
				clash = true
			}
		}
		if clash {
			rest = append(rest, x)
			continue
		}
		for k, val := range xm {
			s[k] = val
		}
	}
	if len(rest) > 0 {
		return conjoinAll(s, rest)
	}
	return s
}

// bytesValue warns about a value that can only be bytes: a JSON value is
// never bytes (a JSON string is a CUE string), so CUE accepts none, and
// the schema says so (false) — which its author hardly meant.
func (w *walker) bytesValue(v cue.Value, path string) {
	w.warn(v, path, "bytes", fmt.Sprintf("%s is bytes: no JSON value is bytes (a JSON string is a CUE string), so CUE accepts none and the schema refuses every value", strings.TrimRight(orRoot(path), "?!")),
		`use string, e.g. with a base64 pattern: string & =~"^[A-Za-z0-9+/]*={0,2}$"`)
}

func orRoot(path string) string {
	if path == "" {
		return "the value"
	}
	return path
}

// sameKeyword reports whether two keyword values are equal (strings,
// the common case, are compared directly).
func sameKeyword(a, b any) bool {
	if x, ok := a.(string); ok {
		y, ok := b.(string)
		return ok && x == y
	}
	return jsonEqual(a, b)
}

// bound adds a numeric bound to s.
func (w *walker) bound(c cue.Value, op cue.Op, args []cue.Value, path string, s map[string]any) {
	if len(args) != 1 || !args[0].IsConcrete() {
		w.refuse(c, path, fmt.Sprintf("the bound %v", c), "JSON Schema bounds are constants", "bound with a number")
		return
	}
	b := args[0]
	switch b.Kind() {
	case cue.IntKind, cue.FloatKind:
	case cue.StringKind:
		w.refuse(c, path, fmt.Sprintf("the string bound %v", c), "JSON Schema cannot order strings", "use a regular expression or an enum")
		return
	default:
		w.refuse(c, path, fmt.Sprintf("the bound %v", c), "it is not a number", "bound with a number")
		return
	}
	w.boundNumber(c, op, numberText(b), path, s)
}

// literalBound reads a bound written as an operator on a decimal integer
// literal (>=1, <100) from c's source, without the evaluation contexts
// Value.Expr builds; ok is false for anything else.
func literalBound(c cue.Value) (op cue.Op, text string, ok bool) {
	u, isUnary := c.Source().(*ast.UnaryExpr)
	if !isUnary {
		return 0, "", false
	}
	lit, isLit := u.X.(*ast.BasicLit)
	if !isLit || lit.Kind != token.INT || !plainDigits(lit.Value) {
		return 0, "", false
	}
	switch u.Op {
	case token.GEQ:
		return cue.GreaterThanEqualOp, lit.Value, true
	case token.GTR:
		return cue.GreaterThanOp, lit.Value, true
	case token.LEQ:
		return cue.LessThanEqualOp, lit.Value, true
	case token.LSS:
		return cue.LessThanOp, lit.Value, true
	}
	return 0, "", false
}

// boundNumber adds the numeric bound op text to s.
func (w *walker) boundNumber(c cue.Value, op cue.Op, text, path string, s map[string]any) {
	kw := map[cue.Op]string{cue.GreaterThanOp: "exclusiveMinimum", cue.GreaterThanEqualOp: "minimum", cue.LessThanOp: "exclusiveMaximum", cue.LessThanEqualOp: "maximum"}[op]
	if f := typeBoundFormat(op, text); f != "" {
		// The bound of int64, uint64, float64, …: a format our
		// validator asserts exactly (the bound itself is beyond what a
		// JSON Schema number states exactly). One bound alone is the
		// format of that side (int64-upper: <= 2^63-1); both are the
		// type's (int64).
		side := "-upper"
		if op == cue.GreaterThanEqualOp {
			side = "-lower"
		}
		other := map[string]string{"-upper": "-lower", "-lower": "-upper"}[side]
		if removeFormat(s, f+other) {
			addFormat(s, f)
		} else {
			addFormat(s, f+side)
		}
		return
	}
	if msg := numberProblem(text); msg != "" {
		// A bound canonical JSON (IEEE doubles) cannot write exactly:
		// the exact decimal is in a format pkg/validate asserts.
		sym := map[cue.Op]string{cue.GreaterThanOp: ">", cue.GreaterThanEqualOp: ">=", cue.LessThanOp: "<", cue.LessThanEqualOp: "<="}[op]
		addFormat(s, "decimal"+sym+text)
		return
	}
	n := json.Number(text)
	if old, ok := s[kw]; ok {
		// Keep the tighter of two bounds of the same kind.
		a, _ := new(big.Rat).SetString(string(old.(json.Number)))
		bb, _ := new(big.Rat).SetString(text)
		lower := op == cue.GreaterThanOp || op == cue.GreaterThanEqualOp
		if a != nil && bb != nil && (bb.Cmp(a) > 0) == lower {
			s[kw] = n
		}
		return
	}
	s[kw] = n
}

// addFormat adds the format assertion f to s (in allOf when s has
// another).
func addFormat(s map[string]any, f string) {
	if old, ok := s["format"]; ok && old != f {
		s["allOf"] = append(asList(s["allOf"]), map[string]any{"format": f})
	} else {
		s["format"] = f
	}
}

// removeFormat removes the format assertion f from s and reports whether
// s had it.
func removeFormat(s map[string]any, f string) bool {
	if s["format"] == f {
		delete(s, "format")
		return true
	}
	all := asList(s["allOf"])
	for i, x := range all {
		if m, ok := x.(map[string]any); ok && len(m) == 1 && m["format"] == f {
			all = append(all[:i:i], all[i+1:]...)
			if len(all) == 0 {
				delete(s, "allOf")
			} else {
				s["allOf"] = all
			}
			return true
		}
	}
	return false
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// typeBounds are the bounds of CUE's sized number types that no JSON
// Schema number states exactly, with the format pkg/validate asserts for
// them.
var typeBounds = map[string]string{
	">=-9223372036854775808":                            "int64",
	"<=9223372036854775807":                             "int64",
	"<=18446744073709551615":                            "uint64",
	">=-170141183460469231731687303715884105728":        "int128",
	"<=170141183460469231731687303715884105727":         "int128",
	"<=340282366920938463463374607431768211455":         "uint128",
	">=-1.797693134862315708145274237317043567981E+308": "double",
	"<=1.797693134862315708145274237317043567981E+308":  "double",
	">=-3.40282346638528859811704183484516925440E+38":   "float",
	"<=3.40282346638528859811704183484516925440E+38":    "float",
}

func typeBoundFormat(op cue.Op, text string) string {
	sym := map[cue.Op]string{cue.GreaterThanEqualOp: ">=", cue.LessThanEqualOp: "<="}[op]
	if sym == "" || len(text) < 16 {
		// Every bound of the table has 19 characters or more.
		return ""
	}
	r, ok := new(big.Rat).SetString(text)
	if !ok {
		return ""
	}
	for k, f := range typeBounds {
		if !strings.HasPrefix(k, sym) {
			continue
		}
		if b, ok := new(big.Rat).SetString(k[2:]); ok && b.Cmp(r) == 0 {
			return f
		}
	}
	return ""
}

// numberText is the decimal text of a concrete CUE number.
func numberText(v cue.Value) string {
	if lit, ok := v.Source().(*ast.BasicLit); ok && lit.Kind == token.INT && plainDigits(lit.Value) {
		// A decimal integer literal is its own JSON text (MarshalJSON
		// builds an evaluation context).
		return lit.Value
	}
	b, err := v.MarshalJSON()
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// numberProblem says why the JSON number text s does not survive
// canonical JSON (IEEE double, shortest round trip) with its exact value,
// or returns "".
func numberProblem(s string) string {
	if len(s) <= 15 && !strings.ContainsAny(s, ".eE") {
		return "" // an integer within ±10^15: exact in a double
	}
	canon, err := graph.Canonical(json.Number(s))
	if err != nil {
		return fmt.Sprintf("the number %s cannot be written as JSON (%v)", s, err)
	}
	a, ok1 := new(big.Rat).SetString(s)
	b, ok2 := new(big.Rat).SetString(string(canon))
	if !ok1 || !ok2 || a.Cmp(b) != 0 {
		return fmt.Sprintf("the number %s is not exactly a JSON Schema number: canonical JSON (IEEE doubles) writes it as %s", s, canon)
	}
	return ""
}

// constant translates a concrete scalar (or a concrete list or struct
// found in a constraint position).
func (w *walker) constant(v cue.Value, path string) any {
	switch v.Kind() {
	case cue.NullKind:
		return map[string]any{"type": "null"}
	case cue.BoolKind:
		b, _ := v.Bool()
		return map[string]any{"const": b}
	case cue.StringKind:
		s, _ := v.String()
		return map[string]any{"const": s}
	case cue.BytesKind:
		w.bytesValue(v, path)
		return false
	case cue.IntKind, cue.FloatKind:
		text := numberText(v)
		s := map[string]any{"const": json.Number(text)}
		if numberProblem(text) != "" {
			// A number canonical JSON (IEEE doubles) cannot write
			// exactly: the exact decimal is in a format pkg/validate
			// asserts.
			s = map[string]any{"type": "number", "format": "decimal==" + text}
		}
		if v.Kind() == cue.IntKind {
			s["type"] = "integer"
		} else if r, ok := new(big.Rat).SetString(text); ok && r.IsInt() {
			// A float constant refuses the integer literal of the same
			// value (CUE: 1.0 & 1 conflict).
			s["not"] = map[string]any{"type": "integer"}
		}
		return s
	case cue.ListKind, cue.StructKind:
		s, _ := w.valueInfo(v, path, 0, modeFull)
		return s
	}
	w.refuse(v, path, fmt.Sprintf("the value %v", v), "it has no JSON form", "")
	return false
}

// call translates a validator call (args[0] is the builtin).
func (w *walker) call(c cue.Value, args []cue.Value, path string, depth int, m mode) any {
	if len(args) == 0 {
		w.refuse(c, path, fmt.Sprintf("the call %v", c), "it has no JSON Schema equivalent", "")
		return nil
	}
	name := builtinName(c, args[0])
	params := args[1:]
	intArg := func(kw string) any {
		if len(params) != 1 {
			w.refuse(c, path, name, "expects one argument", "")
			return nil
		}
		n, err := params[0].Int64()
		if err != nil || n < 0 {
			w.refuse(c, path, fmt.Sprintf("%v", c), "the argument is not a concrete non-negative integer", "")
			return nil
		}
		return map[string]any{kw: json.Number(fmt.Sprint(n))}
	}
	switch name {
	case "strings.MinRunes":
		return intArg("minLength")
	case "strings.MaxRunes":
		return intArg("maxLength")
	case "list.MinItems":
		return intArg("minItems")
	case "list.MaxItems":
		return intArg("maxItems")
	case "struct.MinFields":
		return intArg("minProperties")
	case "struct.MaxFields":
		return intArg("maxProperties")
	case "list.UniqueItems":
		return map[string]any{"uniqueItems": true}
	case "math.MultipleOf":
		if len(params) != 1 || !params[0].IsConcrete() {
			w.refuse(c, path, fmt.Sprintf("%v", c), "the argument is not a concrete number", "")
			return nil
		}
		text := numberText(params[0])
		if r, ok := new(big.Rat).SetString(text); !ok || r.Sign() <= 0 {
			w.refuse(c, path, fmt.Sprintf("%v", c), "JSON Schema's multipleOf must be greater than 0", "")
			return nil
		}
		if msg := numberProblem(text); msg != "" {
			w.refuse(c, path, fmt.Sprintf("%v", c), msg, "")
			return nil
		}
		return map[string]any{"multipleOf": json.Number(text)}
	case "strings.HasPrefix", "strings.HasSuffix", "strings.Contains", "strings.ContainsAny":
		return w.substring(c, name, params, path)
	case "uuid.Valid":
		return map[string]any{"type": "string", "pattern": uuidPattern}
	case "net.IPv4", "net.IPv6", "net.IP":
		// A string as Go's netip.ParseAddr reads it (IPv4: four
		// decimal fields 0–255, no leading zeros; IPv6: RFC 4291 text
		// with an optional %zone), or a list of bytes (4 for IPv4, 16
		// for IPv6).
		var text string
		var lens []int
		switch name {
		case "net.IPv4":
			text, lens = ipv4Pattern, []int{4}
		case "net.IPv6":
			text, lens = ipv6Pattern, []int{16}
		default:
			text, lens = "(?:"+ipv4Pattern+"|"+ipv6Pattern+")", []int{4, 16}
		}
		re, ok := w.portableRegexp(c, path, "^"+text+"$")
		if !ok {
			return nil
		}
		arms := []any{map[string]any{"type": "string", "pattern": re}}
		for _, n := range lens {
			arms = append(arms, map[string]any{"type": "array", "items": byteSchema(), "minItems": json.Number(fmt.Sprint(n)), "maxItems": json.Number(fmt.Sprint(n))})
		}
		return map[string]any{"anyOf": arms}
	case "time.Time":
		return map[string]any{"format": "date-time"}
	case "time.Format":
		layout := ""
		if len(params) == 1 {
			layout, _ = params[0].String()
		}
		switch layout {
		case time.RFC3339, time.RFC3339Nano:
			return map[string]any{"format": "date-time"}
		case time.DateOnly:
			return map[string]any{"format": "date"}
		case "":
			w.refuse(c, path, fmt.Sprintf("%v", c), "the layout is not a concrete string", "")
			return nil
		}
		return map[string]any{"format": "go-time:" + layout}
	case "matchN":
		return w.matchN(c, params, path, depth)
	case "matchIf":
		return w.matchIf(c, params, path, depth)
	case "list.MatchN":
		return w.listMatchN(c, params, path, depth)
	case "error":
		return false
	case "close":
		// close({...}) closes a struct: the evaluated value says so
		// (Allows), and the struct's schema already has it.
		return nil
	}
	if d := builtinDecisions[name]; d != "" {
		w.refuse(c, path, name, d, builtinHints[name])
		return nil
	}
	w.refuse(c, path, fmt.Sprintf("the validator %v", c), "it has no JSON Schema 2020-12 equivalent", "express it with =~, numeric bounds, strings.MinRunes/MaxRunes, list.MinItems/MaxItems/UniqueItems, struct.MinFields/MaxFields, math.MultipleOf, time.Time or time.Format, matchN or matchIf")
	return nil
}

var builtinDecisions = map[string]string{
	"net.FQDN": `the "hostname" format refuses the trailing-dot names FQDN accepts`,
}

var builtinHints = map[string]string{
	"net.FQDN": "use a regular expression",
}

// ipv6Pattern is an IPv6 address as netip.ParseAddr reads it: eight
// groups of one to four hex digits, or fewer around one "::" standing
// for at least one zero group, the last two groups maybe written as a
// dotted IPv4 address, then maybe "%" and a non-empty zone (any text).
var ipv6Pattern = func() string {
	const h = "[0-9a-fA-F]{1,4}"
	groups := func(n int, tail bool) string {
		// n groups: "h:h:…:h", or with tail "h:…:h:" (each followed
		// by a colon).
		if n == 0 {
			return ""
		}
		if tail {
			return fmt.Sprintf("(?:%s:){%d}", h, n)
		}
		if n == 1 {
			return h
		}
		return fmt.Sprintf("%s(?::%s){%d}", h, h, n-1)
	}
	var alts []string
	// Without "::": 8 groups, or 6 and an IPv4 address.
	alts = append(alts, groups(8, false), groups(6, true)+ipv4Pattern)
	// With "::": a groups before, b after, a+b <= 7 (or <= 5 before an
	// IPv4 address).
	for a := 0; a <= 7; a++ {
		for b := 0; a+b <= 7; b++ {
			alts = append(alts, groups(a, false)+"::"+groups(b, false))
		}
	}
	for a := 0; a <= 5; a++ {
		for b := 0; a+b <= 5; b++ {
			alts = append(alts, groups(a, false)+"::"+groups(b, true)+ipv4Pattern)
		}
	}
	return "(?:" + strings.Join(alts, "|") + ")(?:%(?s:.+))?"
}()

// uuidPattern is what uuid.Valid (github.com/google/uuid's Validate)
// accepts: the hyphenated form, bare, braced or after a "urn:uuid:"
// prefix in any case, or 32 hex digits.
const uuidPattern = `^(?:(?:[uU][rR][nN]:[uU][uU][iI][dD]:)?` + uuidHyphenated + `|\{` + uuidHyphenated + `\}|[0-9a-fA-F]{32})$`

const uuidHyphenated = `[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`

// ipv4Pattern is a dotted-decimal IPv4 address as netip.ParseAddr reads
// it (no leading zeros).
const ipv4Pattern = `(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])`

func byteSchema() map[string]any {
	return map[string]any{"type": "integer", "minimum": json.Number("0"), "maximum": json.Number("255")}
}

// substring translates strings.HasPrefix, HasSuffix, Contains and
// ContainsAny into a pattern on strings (they refuse every other kind).
func (w *walker) substring(c cue.Value, name string, params []cue.Value, path string) any {
	if len(params) != 1 {
		w.refuse(c, path, name, "expects one argument", "")
		return nil
	}
	arg, err := params[0].String()
	if err != nil {
		w.refuse(c, path, fmt.Sprintf("%v", c), "the argument is not a concrete string", "write the argument as a string literal")
		return nil
	}
	var re string
	switch name {
	case "strings.HasPrefix":
		re = "^" + regexp.QuoteMeta(arg)
	case "strings.HasSuffix":
		re = regexp.QuoteMeta(arg) + "$"
	case "strings.Contains":
		re = regexp.QuoteMeta(arg)
	case "strings.ContainsAny":
		if arg == "" {
			return false
		}
		var b strings.Builder
		b.WriteString("[")
		for _, r := range arg {
			if strings.ContainsRune(`\^-[]`, r) {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		b.WriteString("]")
		re = b.String()
	}
	out, ok := w.portableRegexp(c, path, re)
	if !ok {
		return nil
	}
	s := map[string]any{"type": "string"}
	if out != "" {
		s["pattern"] = out
	}
	return s
}

// builtinName is the name of the builtin a validator call calls
// ("strings.MinRunes", "matchN"), read from the call's source when it
// shows it (formatting the builtin costs), else from the builtin.
func builtinName(call, fn cue.Value) string {
	if ce, ok := exprSource(call).(*ast.CallExpr); ok {
		switch f := ce.Fun.(type) {
		case *ast.Ident:
			if f.Node == nil && (f.Name == "matchN" || f.Name == "matchIf" || f.Name == "error" || f.Name == "close") {
				return f.Name
			}
		case *ast.SelectorExpr:
			if id, ok := f.X.(*ast.Ident); ok {
				if spec, ok := id.Node.(*ast.ImportSpec); ok {
					if ip, err := cuelit.Unquote(spec.Path.Value); err == nil {
						if sel, _, err := ast.LabelName(f.Sel); err == nil {
							p := ast.ParseImportPath(ip).Unqualified().String()
							return p[strings.LastIndex(p, "/")+1:] + "." + sel
						}
					}
				}
			}
		}
	}
	return strings.TrimSuffix(fmt.Sprint(fn), "()")
}

// plainDigits reports whether s is a decimal integer without a sign,
// separators or a leading zero (CUE also reads 1_000, 0x10, 1Ki).
func plainDigits(s string) bool {
	if s == "" || len(s) > 1 && s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
