package cueschema

import (
	"encoding/json"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/token"
	"fmt"
	"strings"

	"cuelang.org/go/cue"
)

// Validators of structs and lists (list.MaxItems, matchN, struct.MinFields,
// …) are not part of the evaluated value's fields: they sit in its
// conjuncts. conjunctValidators collects them, following references (a
// field whose value is #Tags, itself [...#Tag] & list.MaxItems(10)).

func (w *walker) conjunctValidators(v cue.Value, depth int, out *[]cue.Value) {
	if depth > MaxDepth {
		return
	}
	op, args := v.Expr()
	switch op {
	case cue.CallOp:
		*out = append(*out, v)
	case cue.AndOp:
		for _, a := range args {
			w.conjunctValidators(a, depth+1, out)
		}
	case cue.OrOp:
		// A conjunct that is a disjunction ([...] & (string |
		// list.MaxItems(2))): when the other conjuncts leave one arm
		// of it, that arm's validators are the value's.
		if depth == 0 {
			return
		}
		var keep []cue.Value
		for _, a := range args {
			if o, _ := a.Expr(); o == cue.CallOp || a.IncompleteKind()&w.validatedKind != 0 {
				keep = append(keep, a)
			}
		}
		if len(keep) == 1 {
			w.conjunctValidators(keep[0], depth+1, out)
		}
	case cue.SelectorOp, cue.NoOp:
		root, p := v.ReferencePath()
		if !root.Exists() || len(p.Selectors()) == 0 {
			return
		}
		if builtinPackage(root) != "" {
			return
		}
		key := defKey(root, p)
		if vs, ok := w.t.validators[key]; ok {
			*out = append(*out, vs...)
			return
		}
		w.t.validators[key] = nil // cycle guard
		target := root.LookupPath(p)
		if !target.Exists() {
			return
		}
		var vs []cue.Value
		w.conjunctValidators(target, depth+1, &vs)
		w.t.validators[key] = vs
		*out = append(*out, vs...)
	}
}

// translateValidators translates the validators of struct or list v. It
// reports whether one of them is matchN or matchIf, and whether v is
// written as close({...}).
//
// CUE v0.17.1 opens a struct that matchN or matchIf validates, and the
// elements of a list a list validator (list.MaxItems, list.UniqueItems,
// …) validates, with every struct literal inside them (fields, list
// elements, pattern values, arms, embedded definitions), though not a
// definition they refer to as a value nor a struct written close({...}):
// `#S: {a: int} & matchN(1, [{a: int}])` accepts {"a": 1, "b": 2}, and
// `[...{id: int}] & list.MaxItems(2)` accepts [{"id": 1, "x": 2}] (cue
// vet agrees). struct.MinFields and MaxFields do not open. The schema
// follows.
func (w *walker) translateValidators(v cue.Value, path string, depth int, m mode, out *[]any, inf *info) (opens, closes bool) {
	if w.t.opts.NoStructValidators || plainLiteral(v) {
		return false, false
	}
	var vs []cue.Value
	outerKind := w.validatedKind
	w.validatedKind = v.IncompleteKind()
	w.conjunctValidators(v, 0, &vs)
	w.validatedKind = outerKind
	// matchN and matchIf read v as CUE completes it (see structure).
	prev := w.matchTarget
	w.matchTarget = v
	defer func() { w.matchTarget = prev }()
	seen := map[string]bool{}
	for _, c := range vs {
		key := c.Pos().String() + "|" + fmt.Sprint(c)
		if seen[key] {
			continue
		}
		seen[key] = true
		_, args := c.Expr()
		if len(args) > 0 {
			switch name := builtinName(c, args[0]); {
			case name == "matchN" || name == "matchIf" || strings.HasPrefix(name, "list."):
				opens = true
			case name == "close":
				closes = true
			}
		}
		if x := w.call(c, args, path, depth, m); x != nil {
			*out = append(*out, x)
			// A validator may refuse the completed value.
			inf.exact = false
		}
	}
	return opens, closes
}

func (w *walker) structValidators(v cue.Value, path string, depth int, m mode, out *[]any, inf *info) (opens, closes bool) {
	return w.translateValidators(v, path, depth, m, out, inf)
}

func (w *walker) listValidators(v cue.Value, path string, depth int, m mode, out *[]any, inf *info) (opens bool) {
	opens, _ = w.translateValidators(v, path, depth, m, out, inf)
	return opens
}

// validated translates a value whose evaluation failed on a validator that
// needs a concrete value (matchN on a struct of optional fields): its
// conjuncts say what kind it is.
func (w *walker) validated(v cue.Value, path string, depth int, m mode) (any, info) {
	if err := v.Err(); err != nil && strings.Contains(err.Error(), "cannot reference optional field") {
		// A reference to an optional field (year?: #Book.year): CUE
		// refuses every value of it, so the field must be absent.
		w.optionalReference(v, path)
		return false, info{exact: true}
	}
	if err := v.Err(); err != nil && strings.Contains(err.Error(), "required field missing") && w.requiredFieldReference(v, path) {
		return false, info{exact: true}
	}
	if names, comp, ok := w.conditionalFields(v); comp != nil && (len(names) > 0 || !ok) {
		// Incomplete until the instance says which fields a
		// comprehension yields.
		return w.conditional(v, names, comp, ok, path, depth, m)
	}
	kind := cue.TopKind
	unknown := false
	var base []cue.Value
	var kinds func(c cue.Value, d int)
	kinds = func(c cue.Value, d int) {
		op, args := c.Expr()
		switch {
		case d > MaxDepth || op == cue.CallOp:
		case op == cue.AndOp:
			for _, a := range args {
				kinds(a, d+1)
			}
		default:
			k := c.IncompleteKind()
			if k == cue.BottomKind {
				// An error by itself: its source, or that of the
				// value it refers to, says its kind.
				k = sourceKind(c)
			}
			if k == cue.BottomKind {
				unknown = true // (<=pages: incomplete, no kind of its own)
			}
			kind &= k
			base = append(base, c)
		}
	}
	kinds(v, 0)
	elems := v
	if len(base) > 0 {
		elems = base[0]
		for _, b := range base[1:] {
			elems = elems.Unify(b)
		}
	}
	switch kind {
	case cue.StructKind:
		s, inf := w.structure(v, path, depth, m)
		inf.complete = false
		return s, inf
	case cue.ListKind:
		if len(base) == 0 {
			// A list validator alone (list.MinItems(1)): CUE
			// accepts any list it accepts, whatever the elements.
			elems = v.Context().CompileString("[...]")
		}
		s, inf := w.list(v, elems, path, depth, m)
		inf.complete = false
		return s, inf
	default:
		if len(base) > 0 && !unknown && kind&(cue.StructKind|cue.ListKind) != 0 {
			// A disjunction validated as a whole (([...int] | string) &
			// list.MinItems(1)): CUE unifies every arm with the
			// validators, so a list validator refuses what is not a
			// list, a struct validator what is not a struct.
			return w.validatedUnion(v, elems, path, depth, m)
		}
	}
	switch kind {
	case cue.BottomKind:
		if len(base) > 1 && !unknown {
			// Its conjuncts have no kind in common (int & {…}): a
			// conflict, no value is accepted.
			return false, info{exact: true}
		}
	}
	if err := v.Err(); err != nil {
		if !cue.IsIncomplete(err) && !strings.Contains(err.Error(), "non-concrete value") {
			// A conflict (int & strings.HasPrefix("a")): no value is
			// accepted, as CUE accepts none.
			return false, info{exact: true}
		}
		if strings.Contains(err.Error(), "non-concrete value") {
			w.refuse(v, path, fmt.Sprintf("the value %v", v), "it depends on another field's value (a reference to a sibling value), which JSON Schema cannot express", "compare with a constant, or repeat the constraint")
		} else {
			w.refuse(v, path, fmt.Sprintf("the value %v", v), "CUE cannot evaluate it on its own: "+oneLine(err), "name the value as a definition")
		}
	}
	return false, info{}
}

// validatedUnion translates the validators of v apart from its value
// without them (elems), each validator refusing the kinds it does not
// apply to. It is for a disjunction validated as a whole (V & (A | B)):
// CUE unifies each arm with V, and evaluation drops an arm V fails on
// as written (matchN(2, [{foo!: string}, …]) & ({bar!: int} | null)),
// while an instance is unified with the arm it gives.
func (w *walker) validatedUnion(v, elems cue.Value, path string, depth int, m mode) (any, info) {
	var vs []cue.Value
	w.conjunctValidators(v, 0, &vs)
	kinds := map[string]bool{}
	for _, c := range vs {
		if _, args := c.Expr(); len(args) > 0 {
			name := builtinName(c, args[0])
			switch {
			case strings.HasPrefix(name, "list."):
				kinds["array"] = true
			case strings.HasPrefix(name, "struct."):
				kinds["object"] = true
			case name == "matchN" || name == "matchIf":
				kinds["match"] = true
			}
		}
	}
	if kinds["match"] {
		// (matchN opens the structs it validates, as in structure.)
		w.opened++
		w.openedAt = append(w.openedAt, path)
		defer func() { w.opened--; w.openedAt = w.openedAt[:len(w.openedAt)-1] }()
	}
	if kinds["array"] {
		// (A list validator opens the struct literals of the list, as
		// in list.)
		w.opened++
		w.listOpened++
		defer func() { w.opened--; w.listOpened-- }()
	}
	s, inf := w.valueInfo(elems, path, depth, m)
	var all []any
	w.translateValidators(v, path, depth, m, &all, &inf)
	for _, k := range []string{"array", "object"} {
		if kinds[k] {
			all = append(all, map[string]any{"type": k})
		}
	}
	inf.complete = false
	return conjoinAll(s, all), inf
}

// validatedDisjunction returns the disjunction a value written as
// validators and one disjunction (matchN(…) & (A | B)) holds, when it
// is so written.
func validatedDisjunction(v cue.Value) (cue.Value, bool) {
	b, ok := exprSource(v).(*ast.BinaryExpr)
	if !ok || b.Op != token.AND {
		return cue.Value{}, false
	}
	hasOr, hasCall := false, false
	var walk func(e ast.Expr) bool
	walk = func(e ast.Expr) bool {
		switch x := e.(type) {
		case *ast.ParenExpr:
			return walk(x.X)
		case *ast.BinaryExpr:
			switch x.Op {
			case token.AND:
				return walk(x.X) && walk(x.Y)
			case token.OR:
				hasOr = true
				return true
			}
		case *ast.CallExpr:
			hasCall = true
			return true
		}
		return false
	}
	if !walk(b) || !hasOr || !hasCall {
		return cue.Value{}, false
	}
	op, args := v.Expr()
	if op != cue.AndOp {
		return cue.Value{}, false
	}
	var rest []cue.Value
	for _, a := range args {
		if o, _ := a.Expr(); o != cue.CallOp {
			rest = append(rest, a)
		}
	}
	if len(rest) != 1 {
		return cue.Value{}, false
	}
	return rest[0], true
}

// sourceKind is the kind v's source (or, for a reference, the source of
// the value it refers to) is written as: a struct or list literal
// (BottomKind when it says nothing).
func sourceKind(v cue.Value) cue.Kind {
	for range 8 {
		switch exprSource(v).(type) {
		case *ast.StructLit:
			return cue.StructKind
		case *ast.ListLit:
			return cue.ListKind
		case *ast.Ident, *ast.SelectorExpr:
			root, p := v.ReferencePath()
			if !root.Exists() || len(p.Selectors()) == 0 {
				return cue.BottomKind
			}
			if v = root.LookupPath(p); !v.Exists() {
				return cue.BottomKind
			}
			continue
		}
		return cue.BottomKind
	}
	return cue.BottomKind
}

// matchArms returns the schemas of the list of matchN/matchIf arguments.
// The arguments are open, as the struct they validate is (see
// translateValidators).
func (w *walker) matchArm(v cue.Value, path string, depth int) any {
	w.opened++
	defer func() { w.opened-- }()
	return w.value(v, path, depth+1, modeMatch)
}

func (w *walker) matchN(c cue.Value, params []cue.Value, path string, depth int) any {
	if len(params) != 2 {
		w.refuse(c, path, "matchN", "expects two arguments", "")
		return nil
	}
	var arms []any
	for i := 0; ; i++ {
		a := params[1].LookupPath(cue.MakePath(cue.Index(i)))
		if !a.Exists() {
			break
		}
		arms = append(arms, w.matchArm(a, path, depth))
	}
	n := len(arms)
	count, op := params[0], cue.NoOp
	var k int64
	var err error
	if o, oa := count.Expr(); o == cue.GreaterThanEqualOp && len(oa) == 1 {
		op = o
		k, err = oa[0].Int64()
	} else {
		k, err = count.Int64()
	}
	if err != nil {
		w.refuse(c, path, fmt.Sprintf("%v", c), "only a constant count or >=N has a JSON Schema equivalent", "write matchN(1, …) (oneOf), matchN(>=1, …) (anyOf), matchN(N, …) with N the number of arms (allOf) or matchN(0, …) (not)")
		return nil
	}
	switch {
	case op == cue.GreaterThanEqualOp && k <= 0:
		return true
	case op == cue.GreaterThanEqualOp && k == 1:
		return map[string]any{"anyOf": arms}
	case int(k) == n && n > 0:
		return map[string]any{"allOf": arms}
	case op == cue.NoOp && k == 0:
		if n == 0 {
			return true
		}
		return map[string]any{"not": map[string]any{"anyOf": arms}}
	case op == cue.NoOp && k == 1:
		return map[string]any{"oneOf": arms}
	case int(k) > n:
		return false
	}
	w.refuse(c, path, fmt.Sprintf("%v", c), "only counts 0, 1, >=1 and all have a JSON Schema equivalent", "write matchN(1, …) (oneOf), matchN(>=1, …) (anyOf), matchN(N, …) with N the number of arms (allOf) or matchN(0, …) (not)")
	return nil
}

func (w *walker) matchIf(c cue.Value, params []cue.Value, path string, depth int) any {
	if len(params) != 3 {
		w.refuse(c, path, "matchIf", "expects three arguments", "")
		return nil
	}
	return map[string]any{
		"if":   w.matchArm(params[0], path, depth),
		"then": w.matchArm(params[1], path, depth),
		"else": w.matchArm(params[2], path, depth),
	}
}

func (w *walker) listMatchN(c cue.Value, params []cue.Value, path string, depth int) any {
	if len(params) != 2 {
		w.refuse(c, path, "list.MatchN", "expects two arguments", "")
		return nil
	}
	s := map[string]any{"contains": w.matchArm(params[1], path, depth)}
	bad := func() any {
		w.refuse(c, path, fmt.Sprintf("%v", c), "only a constant count, >=N, <=M or >=N & <=M has a JSON Schema equivalent (contains with minContains/maxContains)", "write list.MatchN(>=1, x)")
		return nil
	}
	var walkN func(v cue.Value, d int) bool
	walkN = func(v cue.Value, d int) bool {
		op, a := v.Expr()
		switch op {
		case cue.NoOp:
			n, err := v.Int64()
			if err != nil || n < 0 {
				return false
			}
			s["minContains"] = json.Number(fmt.Sprint(n))
			s["maxContains"] = json.Number(fmt.Sprint(n))
		case cue.GreaterThanEqualOp, cue.LessThanEqualOp:
			n, err := a[0].Int64()
			if err != nil || n < 0 {
				return false
			}
			if op == cue.GreaterThanEqualOp {
				s["minContains"] = json.Number(fmt.Sprint(n))
			} else {
				s["maxContains"] = json.Number(fmt.Sprint(n))
			}
		case cue.AndOp:
			if d > 0 {
				return false
			}
			for _, x := range a {
				if !walkN(x, d+1) {
					return false
				}
			}
		default:
			return false
		}
		return true
	}
	if !walkN(params[0], 0) {
		return bad()
	}
	if _, ok := s["minContains"]; !ok {
		s["minContains"] = json.Number("0")
	}
	if s["minContains"] == json.Number("0") && s["maxContains"] == nil {
		return true
	}
	// contains applies to arrays only, as list.MatchN does.
	return s
}

var _ = strings.TrimSpace

// plainLiteral reports whether v is one struct or list literal without
// embeddings: it carries no validator, and Expr need not be asked.
func plainLiteral(v cue.Value) bool {
	src := v.Source()
	if f, ok := src.(*ast.Field); ok {
		src = f.Value
	}
	switch x := src.(type) {
	case *ast.StructLit:
		for _, d := range x.Elts {
			if _, ok := d.(*ast.EmbedDecl); ok {
				return false
			}
			if _, ok := d.(*ast.Comprehension); ok {
				return false
			}
		}
		return true
	case *ast.ListLit:
		return true
	}
	return false
}
