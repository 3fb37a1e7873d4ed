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
	w := &repWalker{c: c, node: node, seen: c.seen, roots: []cue.Path{v.Path()}}
	w.walkExpr(v, op, args, 0)
	return w.found
}

type repWalker struct {
	c     *compiler
	node  string
	seen  map[string]bool
	found bool
	// roots are the paths of the values being walked: the schema node
	// and each referenced declaration on the way down. A reference to a
	// regular field under one of them is a reference to a sibling value.
	roots []cue.Path
	deep  bool // the depth limit was reported
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

// fail reports a problem whose message is not the "has no JSON Schema
// equivalent" sentence.
func (w *repWalker) fail(at cue.Value, format string, args ...any) {
	w.found = true
	pos := w.c.relPos(at.Pos())
	if !pos.IsValid() || strings.HasPrefix(pos.File, "cue.mod/") || strings.HasPrefix(pos.File, "../") {
		pos = w.c.index.lookup(w.node)
	}
	w.c.report(pos, "unrepresentable", "%s: %s", w.node, fmt.Sprintf(format, args...))
}

func (w *repWalker) walk(v cue.Value, depth int) {
	if depth > maxRepDepth {
		if !w.deep {
			w.deep = true
			w.fail(v, "the schema is too deeply nested to check (more than %d levels); every constraint must be checked before it is compiled, so split it into definitions", maxRepDepth)
		}
		return
	}
	op, args := v.Expr()
	w.walkExpr(v, op, args, depth)
}

// underRoot reports whether path p lies strictly under one of the roots.
func (w *repWalker) underRoot(p cue.Path) bool {
	ps := p.Selectors()
	for _, r := range w.roots {
		rs := r.Selectors()
		if len(rs) == 0 || len(rs) >= len(ps) {
			continue
		}
		same := true
		for i := range rs {
			if rs[i].String() != ps[i].String() {
				same = false
				break
			}
		}
		if same {
			return true
		}
	}
	return false
}

// builtinPackage reports the import path of pkg when it is one of CUE's
// builtin packages (no dot in its first path element), else "".
func builtinPackage(pkg cue.Value) string {
	bi := pkg.BuildInstance()
	if bi == nil || bi.ImportPath == "" {
		return ""
	}
	first, _, _ := strings.Cut(bi.ImportPath, "/")
	if strings.Contains(first, ".") {
		return ""
	}
	return bi.ImportPath
}

// builtinDecisions says why a builtin validator used as a type has no
// JSON Schema equivalent. time.Time is mapped (format "date-time", like
// time.Format(time.RFC3339)); list.UniqueItems is mapped by Generate.
var builtinDecisions = map[string]string{
	"net.IP":     `it accepts IPv4 and IPv6 text and byte lists; JSON Schema's "ipv4"/"ipv6" formats are annotations our validators do not assert, and their grammars differ; use a regular expression`,
	"net.IPv4":   `it accepts byte lists too, and the "ipv4" format is an annotation our validators do not assert; use a regular expression`,
	"net.IPv6":   `the "ipv6" format is an annotation our validators do not assert, and Go's parser differs from RFC 4291's grammar; use a regular expression`,
	"net.FQDN":   `the "hostname" format is an annotation our validators do not assert, and it refuses a trailing dot FQDN accepts; use a regular expression`,
	"uuid.Valid": `it also accepts "urn:uuid:", braced and unhyphenated forms; the "uuid" format is an annotation our validators do not assert; use =~"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"`,
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
			if ip := builtinPackage(pkg); ip != "" {
				name := ip + "." + path.String()
				switch {
				case name == "time.Time", target.Exists() && target.IsConcrete():
					w.number(target)
				case builtinDecisions[name] != "":
					w.fail(v, "%s has no exact JSON Schema 2020-12 equivalent: %s", name, builtinDecisions[name])
				default:
					w.problem(v, "the builtin %s", name)
				}
				return
			}
			if sels := path.Selectors(); len(sels) > 0 && !sels[len(sels)-1].IsDefinition() && w.underRoot(path) {
				w.fail(v, "the reference to %v, a field of the same schema: a reference to a sibling value cannot be expressed in JSON Schema (CUE requires both fields to be equal); repeat the constraint, or name it as a definition and refer to that", path)
				return
			}
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
			w.roots = append(w.roots, path)
			w.walk(target, depth+1)
			w.roots = w.roots[:len(w.roots)-1]
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
		w.regexp(v, re)
		return
	case cue.EqualOp, cue.NotEqualOp:
		if len(args) > 1 {
			w.problem(v, "the comparison %v between two values", v)
		} else if !args[0].IsConcrete() {
			w.problem(v, "the comparison %v with a non-concrete value", v)
		} else {
			w.number(args[0])
		}
		return
	case cue.LessThanOp, cue.LessThanEqualOp, cue.GreaterThanOp, cue.GreaterThanEqualOp:
		if len(args) > 1 {
			w.problem(v, "the comparison %v between two values", v)
			return
		}
		switch args[0].Kind() {
		case cue.IntKind, cue.FloatKind, cue.NumberKind:
			if w.number(args[0]) {
				return
			}
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
			w.concrete(v, depth)
			return
		}
		switch v.IncompleteKind() {
		case cue.StructKind, cue.ListKind:
		default:
			w.problem(v, "the computed expression %v", v)
			return
		}
	}
	if k := v.IncompleteKind(); k != cue.TopKind && k&cue.BytesKind != 0 {
		w.problem(v, "the bytes type %v (JSON has no bytes; use string, e.g. with a base64 pattern)", v)
		return
	}
	if v.IsConcrete() {
		switch v.Kind() {
		case cue.IntKind, cue.FloatKind, cue.NumberKind:
			w.number(v)
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
			} else if op, args := sel.Pattern().Expr(); op == cue.RegexMatchOp && len(args) == 1 {
				if re, err := args[0].String(); err == nil {
					w.regexp(iter.Value(), re)
				}
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
		} else if w.number(args[1]) {
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

// regexp checks a regular expression of the schema (see regexpProblem).
func (w *repWalker) regexp(at cue.Value, re string) {
	if msg := regexpProblem(re); msg != "" {
		w.fail(at, "the regular expression %q %s", re, msg)
	}
}

// number refuses a concrete number canonical JSON would change (see
// numberProblem) and reports whether it did.
func (w *repWalker) number(v cue.Value) bool {
	if msg := numberProblem(v); msg != "" {
		w.fail(v, "%s", msg)
		return true
	}
	return false
}

// concrete checks the numbers and bytes of a concrete value (a const or
// enum value of the schema).
func (w *repWalker) concrete(v cue.Value, depth int) {
	if depth > maxRepDepth {
		w.walk(v, depth)
		return
	}
	switch v.Kind() {
	case cue.IntKind, cue.FloatKind, cue.NumberKind:
		w.number(v)
	case cue.BytesKind:
		w.problem(v, "the bytes value %v (JSON has no bytes)", v)
	case cue.StructKind:
		iter, err := v.Fields()
		if err != nil {
			return
		}
		for iter.Next() {
			w.concrete(iter.Value(), depth+1)
		}
	case cue.ListKind:
		iter, err := v.List()
		if err != nil {
			return
		}
		for iter.Next() {
			w.concrete(iter.Value(), depth+1)
		}
	}
}
