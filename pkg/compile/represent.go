package compile

import (
	"fmt"
	"strings"
	"time"

	"cuelang.org/go/cue"
)

// checkRepresentable walks the expression tree of a schema value the way
// encoding/jsonschema.Generate does (makeItem0/makeCallItem in
// cuelang.org/go v0.17.1) and reports every constraint Generate would map
// to "accept anything" or weaken silently: calls of validators it does not
// know (strings.HasPrefix, net.IP, …), comparisons between two values,
// bounds that are not concrete numbers, bounds on strings (<"m"), time
// layouts without a JSON Schema format, pattern constraints on labels that
// are not regular expressions, computed non-concrete expressions and
// regular expressions using Go-only syntax. It reports true when it found
// any.
//
// op and args are v.Expr(), which the caller has already computed (Expr
// re-evaluates every conjunct of a multi-conjunct value, so it is asked
// once per schema).
func (c *compiler) checkRepresentable(v cue.Value, op cue.Op, args []cue.Value, node string) bool {
	// Referenced schemas are walked once per compilation, not once per
	// schema that refers to them (their problems are reported against the
	// first referring node).
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	w := &repWalker{c: c, node: node, seen: c.seen}
	w.walkExpr(v, op, args, 0)
	return w.found
}

type repWalker struct {
	c     *compiler
	node  string
	seen  map[string]bool
	found bool
}

const maxRepDepth = 200

func (w *repWalker) problem(at cue.Value, format string, args ...any) {
	w.found = true
	pos := w.c.relPos(at.Pos())
	if !pos.IsValid() || strings.HasPrefix(pos.File, "cue.mod/") || strings.HasPrefix(pos.File, "../") {
		pos = w.c.index.lookup(w.node)
	}
	w.c.report(pos, "unrepresentable", "%s: %s has no JSON Schema 2020-12 equivalent and would be silently dropped; express it with a supported constraint (=~, numeric bounds, strings.MinRunes/MaxRunes, list.MinItems/MaxItems/UniqueItems, math.MultipleOf, time.Format(time.RFC3339))",
		w.node, fmt.Sprintf(format, args...))
}

func (w *repWalker) walk(v cue.Value, depth int) {
	if depth > maxRepDepth {
		return
	}
	op, args := v.Expr()
	w.walkExpr(v, op, args, depth)
}

func (w *repWalker) walkExpr(v cue.Value, op cue.Op, args []cue.Value, depth int) {
	switch op {
	case cue.NoOp, cue.SelectorOp:
		if pkg, path := v.ReferencePath(); pkg.Exists() && len(path.Selectors()) > 0 {
			// Formatting a value is costly: only a reference whose last
			// selector is UniqueItems can be list.UniqueItems.
			if sels := path.Selectors(); sels[len(sels)-1].String() == "UniqueItems" {
				if name := fmt.Sprint(v); name == "list.UniqueItems" || name == "list.UniqueItems()" {
					return
				}
			}
			target := pkg.LookupPath(path)
			if !target.Exists() {
				// An optional field (#T.opt) is not found by LookupPath;
				// its value is v itself.
				break
			}
			key := target.Pos().String() + "|" + path.String()
			if w.seen[key] {
				return
			}
			w.seen[key] = true
			w.walk(target, depth+1)
			return
		}
	case cue.AndOp:
		if v.Kind() == cue.StructKind {
			w.structure(v, depth)
			return
		}
		for _, a := range args {
			w.walk(a, depth+1)
		}
		return
	case cue.OrOp:
		for _, a := range args {
			w.walk(a, depth+1)
		}
		return
	case cue.SpreadOp:
	case cue.RegexMatchOp, cue.NotRegexMatchOp:
		re, err := args[0].String()
		if err != nil {
			w.problem(v, "a regular expression that is not a concrete string (%v)", v)
			return
		}
		if feat := goOnlyRegexp(re); feat != "" {
			w.problem(v, "the regular expression %q (Go-only syntax %s; JSON Schema patterns are ECMA-262)", re, feat)
		}
		return
	case cue.EqualOp, cue.NotEqualOp:
		if len(args) > 1 {
			w.problem(v, "the comparison %v between two values", v)
		} else if !args[0].IsConcrete() {
			w.problem(v, "the comparison %v with a non-concrete value", v)
		}
		return
	case cue.LessThanOp, cue.LessThanEqualOp, cue.GreaterThanOp, cue.GreaterThanEqualOp:
		if len(args) > 1 {
			w.problem(v, "the comparison %v between two values", v)
			return
		}
		switch args[0].Kind() {
		case cue.IntKind, cue.FloatKind, cue.NumberKind:
			if _, err := args[0].Float64(); err != nil {
				w.problem(v, "the bound %v (not a concrete number)", v)
			}
		case cue.StringKind:
			w.problem(v, "the string bound %v", v)
		default:
			w.problem(v, "the bound %v", v)
		}
		return
	case cue.CallOp:
		w.call(v, args, depth)
		return
	default:
		if v.IsConcrete() {
			return
		}
		switch v.IncompleteKind() {
		case cue.StructKind, cue.ListKind:
		default:
			w.problem(v, "the computed expression %v", v)
			return
		}
	}
	switch v.IncompleteKind() {
	case cue.StructKind:
		w.structure(v, depth)
	case cue.ListKind:
		w.list(v, depth)
	}
}

func (w *repWalker) structure(v cue.Value, depth int) {
	iter, err := v.Fields(cue.Optional(true), cue.Patterns(true), cue.Definitions(false))
	if err != nil {
		return
	}
	for iter.Next() {
		sel := iter.Selector()
		if sel.ConstraintType() == cue.PatternConstraint {
			if !representablePattern(sel.Pattern()) {
				w.problem(iter.Value(), "the label constraint [%v]", sel.Pattern())
			}
		}
		w.walk(iter.Value(), depth+1)
	}
}

func (w *repWalker) list(v cue.Value, depth int) {
	if n, err := v.Len().Int64(); err == nil {
		for i := int64(0); i < n && i < 10000; i++ {
			w.walk(v.LookupPath(cue.MakePath(cue.Index(int(i)))), depth+1)
		}
	} else {
		for i := 0; i < 10000; i++ {
			e := v.LookupPath(cue.MakePath(cue.Index(i)))
			if !e.Exists() {
				break
			}
			w.walk(e, depth+1)
		}
	}
	if rest := v.LookupPath(cue.MakePath(cue.AnyIndex)); rest.Exists() {
		w.walk(rest, depth+1)
	}
}

func (w *repWalker) call(v cue.Value, args []cue.Value, depth int) {
	if len(args) == 0 {
		w.problem(v, "the call %v", v)
		return
	}
	name := fmt.Sprint(args[0])
	intArg := func() {
		if len(args) != 2 {
			w.problem(v, "%v (expects one argument)", v)
			return
		}
		if _, err := args[1].Int64(); err != nil {
			w.problem(v, "%v (the argument is not a concrete integer)", v)
		}
	}
	switch name {
	case "error()", "error", "list.UniqueItems", "list.UniqueItems()":
	case "close":
		if len(args) == 2 {
			w.walk(args[1], depth+1)
		}
	case "strings.MinRunes", "strings.MaxRunes", "list.MinItems", "list.MaxItems":
		intArg()
	case "math.MultipleOf":
		if len(args) != 2 {
			w.problem(v, "%v (expects one argument)", v)
		} else if _, err := args[1].Float64(); err != nil {
			w.problem(v, "%v (the argument is not a concrete number)", v)
		}
	case "time.Format":
		layout := ""
		if len(args) == 2 {
			layout, _ = args[1].String()
		}
		switch layout {
		case time.RFC3339, time.RFC3339Nano, time.DateOnly, time.TimeOnly:
		default:
			w.problem(v, "%v (only the RFC3339, RFC3339Nano, DateOnly and TimeOnly layouts have a format)", v)
		}
	case "matchN":
		if len(args) != 3 {
			w.problem(v, "%v", v)
			return
		}
		var items []cue.Value
		for i := 0; ; i++ {
			e := args[2].LookupPath(cue.MakePath(cue.Index(i)))
			if !e.Exists() {
				break
			}
			items = append(items, e)
		}
		ok := false
		op, opArgs := args[1].Expr()
		switch op {
		case cue.NoOp:
			if n, err := args[1].Int64(); err == nil {
				ok = n == 0 && len(items) == 1 || n == 1 || int(n) == len(items)
			}
		case cue.GreaterThanEqualOp:
			if len(opArgs) == 1 {
				n, err := opArgs[0].Int64()
				ok = err == nil && n == 1
			}
		}
		if !ok {
			w.problem(v, "%v (only matchN(0, [x]), matchN(1, …), matchN(>=1, …) and matchN(len, …) map to not/oneOf/anyOf/allOf)", v)
			return
		}
		for _, it := range items {
			w.walk(it, depth+1)
		}
	case "matchIf":
		if len(args) != 4 {
			w.problem(v, "%v", v)
			return
		}
		for _, a := range args[1:] {
			w.walk(a, depth+1)
		}
	case "list.MatchN":
		if len(args) != 3 || !matchNCount(args[1]) {
			w.problem(v, "%v (only list.MatchN(>=N, x) and list.MatchN(>=N & <=M, x) map to contains)", v)
			return
		}
		if args[2].Err() == nil {
			w.walk(args[2], depth+1)
		}
	default:
		w.problem(v, "the validator %v", v)
	}
}

func matchNCount(v cue.Value) bool {
	op, args := v.Expr()
	switch op {
	case cue.NoOp:
		_, err := v.Int64()
		return err == nil
	case cue.GreaterThanEqualOp:
		if len(args) != 1 {
			return false
		}
		_, err := args[0].Int64()
		return err == nil
	case cue.AndOp:
		if len(args) != 2 {
			return false
		}
		op1, a1 := args[0].Expr()
		op2, a2 := args[1].Expr()
		if op1 != cue.GreaterThanEqualOp || op2 != cue.LessThanEqualOp || len(a1) != 1 || len(a2) != 1 {
			return false
		}
		_, err1 := a1[0].Int64()
		_, err2 := a2[0].Int64()
		return err1 == nil && err2 == nil
	}
	return false
}

// representablePattern mirrors Generate's regexpForValue: a label
// constraint maps to patternProperties only when it is a regular
// expression, an exact string or "any string".
func representablePattern(p cue.Value) bool {
	op, args := p.Expr()
	if op == cue.RegexMatchOp {
		if len(args) != 1 {
			return false
		}
		_, err := args[0].String()
		return err == nil
	}
	if _, err := p.String(); err == nil {
		return true
	}
	sv := p.Context().CompileString("string")
	return p.Unify(sv).Subsume(sv, cue.Final()) == nil
}

// goOnlyRegexp names RE2 syntax that ECMA-262 (JSON Schema's regex
// dialect) does not share, or returns "".
func goOnlyRegexp(re string) string {
	for _, f := range []string{`(?i`, `(?m`, `(?s`, `(?U`, `(?P<`, `\A`, `\z`, `\Q`, `[[:`, `\pL`, `\PL`} {
		if strings.Contains(re, f) {
			return f
		}
	}
	return ""
}
