package cueschema

import (
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/token"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// A disjunction accepts an instance x as CUE does (see the package doc):
// the arms x does not conflict with "survive"; if a default arm survives,
// the default arms decide, else the other arms do; of the deciding arms
// exactly one distinct result must remain, and it must be concrete.
//
// For arms that only hold scalars every surviving arm yields x itself, so
// the disjunction is anyOf its arms. For struct and list arms the result of
// an arm is x completed with the arm's own fields, so two surviving arms
// may disagree (ambiguity). With Full(a) the instances arm a accepts and
// Partial(a) those it does not conflict with, arm i decides alone when
//
//	Full(i) ∧ ¬⋁{Partial(j) ∧ ¬Same(i,j) : j ≠ i among the deciding arms}
//
// where Same(i, j) says the two results are equal (CUE deduplicates
// them). Pairs the schemas prove disjoint drop out, so a discriminated
// union is a plain anyOf.

type arm struct {
	v       cue.Value
	full    any
	partial any
	inf     info
	isDef   bool
}

func (w *walker) union(v cue.Value, written []cue.Value, d cue.Value, hasDefault bool, path string, depth int, m mode) (any, info) {
	target, or := w.writtenOr(v)
	if w.root != "" && or != nil && hasReference(or) {
		// An arm referring to a sibling field (b: *a | int) makes the
		// field equal to it: no JSON Schema says that.
		if written == nil {
			written = armsOf(target)
		}
		for _, a := range written {
			if w.siblingRef(a, path) {
				return false, info{}
			}
		}
	}
	e := v.Eval()
	eop, args := e.Expr()
	if or != nil && (!scalarArms(args) || written != nil && !scalarArms(written)) {
		// An instance is unified with the arms as written, and the
		// evaluated disjunction may have merged arms CUE's equality
		// cannot tell apart ({a: int} | {a: int, ...}, [...int] |
		// [...string]). When it has fewer arms than the source (its
		// defaults counted), read the written ones, closed as the
		// definition around them closes them (closing costs an
		// evaluation of the arm, so only then).
		present := len(args)
		if hasDefault && len(defaultArms(or)) > 0 {
			// (Not the [] every open list defaults to.)
			for _, dv := range defaultArmsOf(d) {
				if !slices.ContainsFunc(args, func(a cue.Value) bool { return sameValue(a, dv) }) {
					present++
				}
			}
		}
		star := -1
		if countDisjuncts(or) > present || armCalls(or) || !w.t.opts.NoStructValidators && hasReference(or) && w.deepDisjuncts(target, 0) > present {
			// (Or an arm calls a validator, list.MaxItems: the
			// evaluated arm has lost it. Or an arm refers to a
			// disjunction, null | #Geometry, whose arms evaluation
			// may have dropped as it drops an arm a validator fails
			// on as written: counted through the reference, where a
			// source calls a validator at all.)
			if written == nil {
				written = armsOf(target)
			}
			if len(written) > 0 {
				if !hasDefault {
					// Evaluation dropped every arm but the default
					// (*[0] | [...int] & list.MinItems(1): the
					// other fails as written), and with them the
					// mark: the source still has it.
					if stars := starredArms(or); len(stars) == len(written) && slices.Contains(stars, true) {
						star = slices.Index(stars, true)
					}
				}
				args = w.closeArms(written)
				if star >= 0 {
					d, hasDefault = args[star], true
				}
				if w.opened == 0 {
					w.rewrapped++
					defer func() { w.rewrapped-- }()
				}
			}
		}
	}
	// Where Allows cannot be trusted (see walker.rewrapped), the source
	// says whether the struct arms are closed.
	closedArms := w.rewrapped > 0 && w.opened == 0 && or != nil && litArmsClosed(or)
	if limit := maxUnionArms; len(args) > limit || len(args) > maxScalarArms {
		if scalarArms(args) {
			limit = maxScalarArms
		}
		if len(args) > limit {
			w.refuse(v, path, fmt.Sprintf("a disjunction of %d arms", len(args)), fmt.Sprintf("more than %d arms: its schema would grow with the square of the arms", limit), "split it into named definitions, each a disjunction of fewer arms")
			return false, info{}
		}
	}
	impliedEmpty := false
	if hasDefault && emptyList(d) {
		// Every open list defaults to []: when an arm accepts [] as
		// it is, the default changes nothing but completeness.
		for _, a := range args {
			if a.IncompleteKind() == cue.ListKind && a.Unify(d).Validate(cue.Concrete(true)) == nil {
				impliedEmpty, hasDefault = true, false
				break
			}
		}
	}
	var defs []cue.Value
	if hasDefault {
		defs = defaultArmsOf(d)
	}
	var arms []*arm
	for _, a := range args {
		dup := false
		for _, dv := range defs {
			if sameValue(a, dv) {
				dup = true
				break
			}
		}
		if !dup {
			arms = append(arms, &arm{v: a})
		}
	}
	scalar := scalarArms(append(slices.Clone(args), defs...))
	if !scalar {
		// Default arms decide ambiguity between struct and list arms;
		// for scalars the evaluated arms (defaults the others subsume
		// left out) are exact.
		for _, dv := range defs {
			arms = append(arms, &arm{v: dv, isDef: true})
		}
	} else {
		arms = arms[:0]
		for _, a := range args {
			arms = append(arms, &arm{v: a})
		}
	}
	inf := info{exact: true, complete: impliedEmpty}
	if hasDefault {
		_, di := w.valueInfo(d, path, depth+1, modePartial)
		inf.complete = di.complete || d.IsConcrete()
	}
	if !inf.complete && eop != cue.OrOp && v.Validate(cue.Concrete(true)) == nil {
		// Evaluation left one arm, concrete: the arms it eliminated
		// conflict with the value as written (["a"] | [...string] &
		// list.MinItems(1) is ["a"]), and CUE completes a field left
		// out with it.
		inf.complete = true
	}
	// How deep a value sits in its arm decides whether a comprehension
	// left unresolved eliminates the arm (see conditional).
	outerDepth := w.armDepth
	w.armDepth = 0
	defer func() { w.armDepth = outerDepth }()
	if scalar || m != modeFull {
		var out []any
		for _, a := range arms {
			s, ai := w.armInfo(a.v, closedArms, path, depth+1, m)
			if !ai.exact {
				inf.exact = false
			}
			out = append(out, s)
		}
		if !scalar {
			inf.exact = false
		}
		return anyOf(out), inf
	}
	for _, a := range arms {
		a.full, a.inf = w.armInfo(a.v, closedArms, path, depth+1, modeFull)
		if a.inf.exact {
			a.partial = a.full
		} else {
			a.partial, _ = w.armInfo(a.v, closedArms, path, depth+1, modePartial)
		}
	}
	var nonDef, def []*arm
	for _, a := range arms {
		if a.isDef {
			def = append(def, a)
		} else {
			nonDef = append(nonDef, a)
		}
	}
	conflicts := false
	decide := func(group []*arm) any {
		var out []any
		for _, a := range group {
			var against []any
			for _, b := range group {
				if a == b || w.disjoint(a.full, b.partial, 0) {
					continue
				}
				same, always := w.same(a.v, b.v, 0)
				if always {
					continue
				}
				conflicts = true
				if same != nil {
					against = append(against, map[string]any{"allOf": []any{b.partial, map[string]any{"not": same}}})
				} else {
					against = append(against, b.partial)
				}
			}
			if len(against) == 0 {
				out = append(out, a.full)
			} else {
				out = append(out, map[string]any{"allOf": []any{a.full, map[string]any{"not": anyOf(against)}}})
			}
		}
		return anyOf(out)
	}
	var result any
	switch {
	case len(def) == 0:
		result = decide(nonDef)
	case len(nonDef) == 0:
		result = decide(def)
	case len(def) == 1 && def[0].inf.exact:
		result = anyOf([]any{decide(def), decide(nonDef)})
	default:
		var dp []any
		for _, a := range def {
			dp = append(dp, a.partial)
		}
		result = anyOf([]any{decide(def), map[string]any{"allOf": []any{map[string]any{"not": anyOf(dp)}, decide(nonDef)}}})
	}
	for _, a := range arms {
		if !a.inf.exact {
			inf.exact = false
		}
	}
	if conflicts {
		inf.exact = false
	}
	return result, inf
}

// sameValue reports whether two arms are the same disjunct.
func sameValue(a, b cue.Value) bool {
	if a.IsConcrete() && b.IsConcrete() && a.IncompleteKind()&(cue.StructKind|cue.ListKind) == 0 {
		return a.Equals(b)
	}
	if a.Pos() != b.Pos() {
		return false
	}
	if a.IncompleteKind() == cue.ListKind || b.IncompleteKind() == cue.ListKind {
		if fixedLen(a) != fixedLen(b) || a.LookupPath(cue.MakePath(cue.AnyIndex)).Exists() != b.LookupPath(cue.MakePath(cue.AnyIndex)).Exists() {
			return false
		}
	}
	return a.Subsume(b) == nil && b.Subsume(a) == nil
}

// anyOf returns the disjunction of schemas, folding constants into enum.
func anyOf(l []any) any {
	var flat []any
	for _, s := range l {
		if m, ok := s.(map[string]any); ok && len(m) == 1 {
			if inner, ok := m["anyOf"].([]any); ok {
				flat = append(flat, inner...)
				continue
			}
		}
		if s == false {
			continue
		}
		if s == true {
			return true
		}
		flat = append(flat, s)
	}
	if len(flat) == 0 {
		return false
	}
	// Constants: one enum per "type" they carry (integer constants carry
	// one, strings and booleans none).
	groups := map[string][]any{}
	var rest []any
	for _, s := range flat {
		m, ok := s.(map[string]any)
		c, has := m["const"]
		t, _ := m["type"].(string)
		_, not := m["not"]
		if !ok || !has || not || len(m) > 2 || len(m) == 2 && t == "" {
			rest = append(rest, s)
			continue
		}
		groups[t] = append(groups[t], c)
	}
	for t, vals := range groups {
		vals = sortUnique(vals)
		var g map[string]any
		if len(vals) == 1 {
			g = map[string]any{"const": vals[0]}
		} else {
			g = map[string]any{"enum": vals}
		}
		if t != "" {
			g["type"] = t
		}
		rest = append(rest, g)
	}
	flat = rest
	if len(flat) == 1 {
		return flat[0]
	}
	flat = sortUnique(flat)
	if len(flat) == 1 {
		return flat[0]
	}
	return map[string]any{"anyOf": flat}
}

func canonicalString(v any) string {
	b, _ := graph.CanonicalSchema(v)
	return string(b)
}

func jsonEqual(a, b any) bool { return canonicalString(a) == canonicalString(b) }

// sortUnique sorts l by canonical JSON and drops repeats (each element is
// serialised once).
func sortUnique(l []any) []any {
	keys := make([]string, len(l))
	idx := make([]int, len(l))
	for i, e := range l {
		keys[i] = canonicalString(e)
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return strings.Compare(keys[a], keys[b]) })
	out := make([]any, 0, len(l))
	for n, j := range idx {
		if n > 0 && keys[j] == keys[idx[n-1]] {
			continue
		}
		out = append(out, l[j])
	}
	return out
}

func sortByCanonical(l []any) {
	keys := make([]string, len(l))
	idx := make([]int, len(l))
	for i, e := range l {
		keys[i] = canonicalString(e)
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return strings.Compare(keys[a], keys[b]) })
	sorted := make([]any, len(l))
	for i, j := range idx {
		sorted[i] = l[j]
	}
	copy(l, sorted)
}

// same approximates CUE's equality of the results of two surviving arms:
// it returns always=true when they are always equal, else a schema the
// instance must match for them to be equal (nil: never).
func (w *walker) same(a, b cue.Value, depth int) (any, bool) {
	a, b = structural(a), structural(b)
	ka, kb := a.IncompleteKind(), b.IncompleteKind()
	// An arm that is an error by itself (a validator fails on it as
	// written): its source says what it is.
	if ka == cue.BottomKind {
		ka = sourceKind(a)
	}
	if kb == cue.BottomKind {
		kb = sourceKind(b)
	}
	scalarOnly := func(k cue.Kind) bool { return k != cue.BottomKind && k&(cue.StructKind|cue.ListKind) == 0 }
	if scalarOnly(ka) || scalarOnly(kb) || ka&(cue.StructKind|cue.ListKind) == 0 && kb&(cue.StructKind|cue.ListKind) == 0 {
		// An instance one of them accepts is a scalar: both results
		// are the instance (1 | _ on 1).
		return nil, true
	}
	if depth > 8 {
		return nil, false
	}
	if ka == cue.ListKind && kb == cue.ListKind {
		// *[] | [...T] compares as [...T] (on [] both arms give
		// []); another disjunction of lists has no elements to
		// compare: its results may differ.
		var ok bool
		if a, ok = openListArm(a); !ok {
			return nil, false
		}
		if b, ok = openListArm(b); !ok {
			return nil, false
		}
		// An instance list surviving both arms keeps its length and
		// its scalar elements: the results differ only where the
		// elements' arms complete structs differently.
		n := max(fixedLen(a), fixedLen(b))
		rest := cue.MakePath(cue.AnyIndex)
		var prefix []any
		var items any
		for i := 0; i <= n; i++ {
			ea, eb := a.LookupPath(rest), b.LookupPath(rest)
			if i < n {
				if e := a.LookupPath(cue.MakePath(cue.Index(i))); e.Exists() {
					ea = e
				}
				if e := b.LookupPath(cue.MakePath(cue.Index(i))); e.Exists() {
					eb = e
				}
			}
			if i < n {
				prefix = append(prefix, true)
			}
			if !ea.Exists() || !eb.Exists() {
				continue // no instance of that length survives both
			}
			cond, always := w.same(ea, eb, depth+1)
			switch {
			case always:
			case cond == nil && i < n:
				// Every instance surviving both has the element.
				return nil, false
			case i < n:
				prefix[i] = cond
			default:
				// cond == nil: equal only without such elements.
				items = cond
				if items == nil {
					items = false
				}
			}
		}
		cond := map[string]any{}
		if items != nil || slices.ContainsFunc(prefix, func(s any) bool { return s != true }) {
			// (prefixItems of n elements: items is about the rest.)
			if len(prefix) > 0 {
				cond["prefixItems"] = prefix
			}
			if items != nil {
				cond["items"] = items
			}
		}
		if len(cond) == 0 {
			return nil, true
		}
		return cond, false
	}
	isTop := func(v cue.Value, k cue.Kind) bool { return k == cue.TopKind && !v.IsConcrete() }
	if ka != cue.StructKind && !isTop(a, ka) || kb != cue.StructKind && !isTop(b, kb) {
		return nil, false
	}
	fa, ok1 := fieldMap(a)
	fb, ok2 := fieldMap(b)
	// (_ has no fields, and its result is the instance.)
	if isTop(a, ka) {
		fa, ok1 = map[string]fieldInfo{}, true
	}
	if isTop(b, kb) {
		fb, ok2 = map[string]fieldInfo{}, true
	}
	if !ok1 || !ok2 {
		return nil, false
	}
	var need []any
	props := map[string]any{}
	for name, y := range fb {
		if _, ok := fa[name]; !ok {
			if need = w.oneSided(need, props, name, y, a); need == nil {
				return nil, false
			}
		}
	}
	for name, x := range fa {
		y, ok := fb[name]
		if !ok {
			if need = w.oneSided(need, props, name, x, b); need == nil {
				return nil, false
			}
			continue
		}
		// given: the field is equal in both results when the instance
		// gives it and its value meets the condition for equal values
		// (id!: [...[...int]] beside id?: [...{b!: string}] on []).
		given := func() bool {
			c, always := w.same(x.v, y.v, depth+1)
			if !always && c == nil {
				return false
			}
			need = append(need, name)
			if c != nil {
				props[name] = c
			}
			return true
		}
		if x.ct != y.ct {
			// (o: int, o!: int, o?: int) Equal when the instance
			// gives the field: both hold its value.
			if !given() {
				return nil, false
			}
			continue
		}
		if x.v.Subsume(y.v, cue.Raw()) == nil && y.v.Subsume(x.v, cue.Raw()) == nil && (x.ct == cue.OptionalConstraint || sameDefault(x.v, y.v)) {
			// (Raw: compare the values as written, not their
			// defaults; equal defaults matter too, as they complete
			// a regular field the instance leaves out.)
			continue
		}
		if x.v.IncompleteKind()&(cue.StructKind|cue.ListKind) != 0 && (isDisjunction(x.v) || isDisjunction(y.v)) {
			// The field's results stay disjunctions, which differ.
			return nil, false
		}
		// Equal only when the instance gives the field (an optional
		// one left out keeps each arm's constraint, which differ).
		if !given() {
			return nil, false
		}
	}
	if len(need) == 0 {
		return nil, true
	}
	slices.SortFunc(need, func(x, y any) int { return strings.Compare(x.(string), y.(string)) })
	cond := map[string]any{"required": need}
	if len(props) > 0 {
		cond["properties"] = props
	}
	return cond, false
}

// openListArm returns list v, or for *[] | [...T] (a disjunction of
// empty lists and one open list) the open list; ok is false for any
// other disjunction.
func openListArm(v cue.Value) (cue.Value, bool) {
	if v.LookupPath(cue.MakePath(cue.AnyIndex)).Exists() || !isDisjunction(v) {
		return v, true
	}
	op, args := v.Eval().Expr()
	if op != cue.OrOp {
		// (Value.Expr leaves out the default the open arm
		// subsumes: *[] | [...T] is [...T].)
		op, args = v.Expr()
	}
	if op != cue.OrOp && !(op == cue.NoOp && len(args) == 1) {
		return v, false
	}
	var open cue.Value
	for _, a := range args {
		switch {
		case a.LookupPath(cue.MakePath(cue.AnyIndex)).Exists():
			if open.Exists() {
				return v, false
			}
			open = a
		case fixedLen(a) != 0 || a.IncompleteKind() != cue.ListKind:
			return v, false
		}
	}
	return open, open.Exists()
}

// isDisjunction reports whether v is (evaluated as) a disjunction or has
// a default.
func isDisjunction(v cue.Value) bool {
	if _, ok := v.Default(); ok {
		return true
	}
	op, _ := v.Eval().Expr()
	return op == cue.OrOp
}

// sameDefault reports whether neither value has a default, or both have
// the same one.
func sameDefault(a, b cue.Value) bool {
	da, oka := a.Default()
	db, okb := b.Default()
	if oka != okb {
		return false
	}
	return !oka || da.Subsume(db) == nil && db.Subsume(da) == nil
}

// structural returns v, or when v is an error by itself (an open list
// with a validator its implied [] fails: [...string] &
// list.MinItems(1)) the conjunction of its conjuncts other than
// validator calls, which says its kind and elements.
func structural(v cue.Value) cue.Value {
	if v.IncompleteKind() != cue.BottomKind {
		return v
	}
	op, args := v.Expr()
	if op != cue.AndOp {
		return v
	}
	var out cue.Value
	for _, a := range args {
		if aop, _ := a.Expr(); aop == cue.CallOp {
			continue
		}
		if !out.Exists() {
			out = a
		} else {
			out = out.Unify(a)
		}
	}
	if !out.Exists() {
		return v
	}
	return out
}

// oneSided extends need for a field only one of two surviving arms
// declares: the other accepted the instance, so it is open, and both
// results hold the instance's value of the field when the instance gives
// it (a scalar: the declaring arm cannot complete it further); when the
// instance leaves it out, one result has the field and the other not. It
// returns nil when the two results can never be equal (the other arm is
// closed to the field, or the field may hold a struct the declaring arm
// completes).
//
// A struct of scalar fields the declaring arm completes nothing of when
// the instance gives every one of them ({n?: *null | string, a?: bool}
// with n and a given: both results hold the instance's struct): props
// gets that condition on the field.
func (w *walker) oneSided(need []any, props map[string]any, name string, f fieldInfo, other cue.Value) []any {
	if w.opened == 0 && !other.Allows(cue.Str(name)) {
		return nil
	}
	switch k := f.v.IncompleteKind(); {
	case k == cue.BottomKind:
		// An error by itself (a validator fails on it as written,
		// a comprehension is unresolved): what it completes is
		// unknown.
		return nil
	case k == cue.ListKind && scalarList(f.v):
		// A list of scalars: the result holds the instance's list.
	case k == cue.StructKind:
		inner, ok := scalarFields(f.v)
		if !ok {
			return nil
		}
		if len(inner) > 0 {
			props[name] = map[string]any{"required": inner}
		}
	case k&(cue.StructKind|cue.ListKind) != 0:
		return nil
	}
	if need == nil {
		need = []any{}
	}
	return append(need, name)
}

// scalarList reports whether list v is no disjunction and its elements
// can hold only scalars.
func scalarList(v cue.Value) bool {
	// (An open list's default is [], which is no disjunction.)
	if d, ok := v.Default(); ok && !emptyList(d) {
		return false
	}
	if op, _ := v.Eval().Expr(); op == cue.OrOp {
		return false
	}
	n := fixedLen(v)
	scalar := func(e cue.Value) bool {
		k := e.IncompleteKind()
		return k != cue.BottomKind && k&(cue.StructKind|cue.ListKind) == 0
	}
	for i := range n {
		if !scalar(v.LookupPath(cue.MakePath(cue.Index(i)))) {
			return false
		}
	}
	if e := v.LookupPath(cue.MakePath(cue.AnyIndex)); e.Exists() && !scalar(e) {
		return false
	}
	return true
}

// scalarFields returns the names of the fields of struct v (sorted) when
// v is no disjunction, has no pattern constraint and every field of it
// can hold only scalars.
func scalarFields(v cue.Value) ([]any, bool) {
	if isDisjunction(v) || v.LookupPath(cue.MakePath(cue.AnyString)).Exists() {
		return nil, false
	}
	fs, ok := fieldMap(v)
	if !ok {
		return nil, false
	}
	var names []string
	for n, f := range fs {
		if k := f.v.IncompleteKind(); k == cue.BottomKind || k&(cue.StructKind|cue.ListKind) != 0 {
			return nil, false
		}
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = n
	}
	return out, true
}

type fieldInfo struct {
	v  cue.Value
	ct cue.SelectorType
}

func fieldMap(v cue.Value) (map[string]fieldInfo, bool) {
	iter, err := v.Fields(cue.Optional(true))
	if err != nil {
		return nil, false
	}
	out := map[string]fieldInfo{}
	for iter.Next() {
		s := iter.Selector()
		if s.LabelType() != cue.StringLabel {
			continue
		}
		out[s.Unquoted()] = fieldInfo{v: iter.Value(), ct: s.ConstraintType()}
	}
	return out, true
}

func fixedLen(v cue.Value) int {
	n := 0
	for v.LookupPath(cue.MakePath(cue.Index(n))).Exists() {
		n++
	}
	return n
}

// disjoint reports whether no JSON value is accepted by both schemas (a
// proof; false means "maybe not").
func (w *walker) disjoint(a, b any, depth int) bool {
	if depth > 16 {
		return false
	}
	if a == false || b == false {
		return true
	}
	am, ok1 := w.resolve(a)
	bm, ok2 := w.resolve(b)
	if !ok1 || !ok2 {
		return false
	}
	for _, p := range [][2]map[string]any{{am, bm}, {bm, am}} {
		x, y := p[0], p[1]
		if l, ok := x["anyOf"].([]any); ok {
			all := true
			for _, s := range l {
				if !w.disjoint(s, y, depth+1) {
					all = false
					break
				}
			}
			if all {
				return true
			}
		}
		if l, ok := x["allOf"].([]any); ok {
			for _, s := range l {
				if w.disjoint(s, y, depth+1) {
					return true
				}
			}
		}
	}
	ta, tb := typeSet(am), typeSet(bm)
	if ta&tb == 0 {
		return true
	}
	if ca, ok := constSet(am); ok {
		if cb, ok := constSet(bm); ok {
			common := false
			for _, x := range ca {
				for _, y := range cb {
					if jsonEqual(x, y) {
						common = true
					}
				}
			}
			if !common {
				return true
			}
		}
	}
	if rangesDisjoint(am, bm) {
		return true
	}
	for _, p := range [][2]map[string]any{{am, bm}, {bm, am}} {
		x, y := p[0], p[1]
		if ta&tb != tObject {
			break
		}
		req, _ := x["required"].([]any)
		xp, _ := x["properties"].(map[string]any)
		yp, _ := y["properties"].(map[string]any)
		for _, r := range req {
			name, _ := r.(string)
			ys, declared := yp[name]
			if !declared {
				if forbids(y, name) {
					return true
				}
				continue
			}
			if xs, ok := xp[name]; ok && w.disjoint(xs, ys, depth+1) {
				return true
			}
		}
	}
	return false
}

// resolve returns a schema object, following a $ref to a definition.
func (w *walker) resolve(s any) (map[string]any, bool) {
	for i := 0; i < 8; i++ {
		switch x := s.(type) {
		case bool:
			if x {
				return map[string]any{}, true
			}
			return nil, false
		case map[string]any:
			ref, ok := x["$ref"].(string)
			if !ok {
				return x, true
			}
			e := w.t.byRef(ref)
			if e == nil {
				return nil, false
			}
			if strings.HasSuffix(ref, "~0partial") {
				if !e.pdone {
					w.t.translatePartial(e)
				}
				s = e.partial
			} else {
				if !e.done {
					w.t.translateDef(e)
				}
				s = e.schema
			}
			if s == nil {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	return nil, false
}

func (t *Translator) byRef(ref string) *defEntry {
	for _, e := range t.defs {
		if "#/$defs/"+pointerFragment(e.name) == ref || "#/$defs/"+pointerFragment(e.name+partialSuffix) == ref {
			return e
		}
	}
	return nil
}

const (
	tNull = 1 << iota
	tBool
	tString
	tNumber
	tArray
	tObject
	tAll = tNull | tBool | tString | tNumber | tArray | tObject
)

func typeBit(s string) int {
	switch s {
	case "null":
		return tNull
	case "boolean":
		return tBool
	case "string":
		return tString
	case "number", "integer":
		return tNumber
	case "array":
		return tArray
	case "object":
		return tObject
	}
	return 0
}

func valueBit(v any) int {
	switch v.(type) {
	case nil:
		return tNull
	case bool:
		return tBool
	case string:
		return tString
	case json.Number:
		return tNumber
	case []any:
		return tArray
	case map[string]any:
		return tObject
	}
	return 0
}

// typeSet is the set of JSON types s may accept.
func typeSet(s map[string]any) int {
	set := tAll
	switch t := s["type"].(type) {
	case string:
		set = typeBit(t)
	case []any:
		set = 0
		for _, x := range t {
			if n, ok := x.(string); ok {
				set |= typeBit(n)
			}
		}
	}
	if cs, ok := constSet(s); ok {
		c := 0
		for _, v := range cs {
			c |= valueBit(v)
		}
		set &= c
	}
	return set
}

func constSet(s map[string]any) ([]any, bool) {
	if c, ok := s["const"]; ok {
		return []any{c}, true
	}
	if e, ok := s["enum"].([]any); ok {
		return e, true
	}
	return nil, false
}

func rat(v any) *big.Rat {
	n, ok := v.(json.Number)
	if !ok {
		return nil
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return nil
	}
	return r
}

// rangesDisjoint reports numeric ranges that cannot overlap when both
// schemas only accept numbers.
func rangesDisjoint(a, b map[string]any) bool {
	if typeSet(a) != tNumber || typeSet(b) != tNumber {
		return false
	}
	check := func(lo map[string]any, hi map[string]any) bool {
		// lo's lower bound above hi's upper bound.
		l, lx := rat(lo["minimum"]), false
		if e := rat(lo["exclusiveMinimum"]); e != nil && (l == nil || e.Cmp(l) >= 0) {
			l, lx = e, true
		}
		h, hx := rat(hi["maximum"]), false
		if e := rat(hi["exclusiveMaximum"]); e != nil && (h == nil || e.Cmp(h) <= 0) {
			h, hx = e, true
		}
		if l == nil || h == nil {
			return false
		}
		c := l.Cmp(h)
		return c > 0 || c == 0 && (lx || hx)
	}
	return check(a, b) || check(b, a)
}

// forbids reports whether object schema s refuses a property called name.
func forbids(s map[string]any, name string) bool {
	if s["additionalProperties"] != false {
		return false
	}
	if pp, ok := s["patternProperties"].(map[string]any); ok {
		for re := range pp {
			r, err := regexp.Compile(re)
			if err != nil || r.MatchString(name) {
				return false
			}
		}
	}
	return true
}

// closeArms returns the arms of a disjunction as written, each closed the
// way the definition it sits in closes it. Value.Expr builds an arm on its
// own, outside the definition, so a struct literal arm comes back open;
// filling it into a definition (#W) restores CUE's recursive closing, while
// an arm written open ({a: int, ...}) stays open.
func (t *Translator) closeArms(arms []cue.Value) []cue.Value {
	out := make([]cue.Value, len(arms))
	for i, a := range arms {
		if a.IncompleteKind()&(cue.StructKind|cue.ListKind) == 0 || isDefinitionRef(a) || a.IncompleteKind() == cue.StructKind && !a.Allows(cue.Str(probes[0])) || openComprehension(a) {
			// A definition is closed by itself, and stays a $ref;
			// an arm that kept its closedness (one of a definition
			// itself) is closed all the way down.
			out[i] = a
			continue
		}
		ctx := a.Context()
		if t.wrapCtx != ctx {
			t.wrapCtx, t.wrap = ctx, ctx.CompileString("#W: _")
		}
		out[i] = t.wrap.FillPath(wrapPath, a).LookupPath(wrapPath)
	}
	return out
}

var wrapPath = cue.MakePath(cue.Def("W"))

// openComprehension reports whether arm a is written as a struct literal
// open by "..." that holds a comprehension: it needs no closing, and
// filled into #W it would lose the source the comprehension is read from.
func openComprehension(a cue.Value) bool {
	lit, ok := exprSource(a).(*ast.StructLit)
	return ok && hasEllipsis(lit) && slices.ContainsFunc(lit.Elts, func(d ast.Decl) bool {
		_, ok := d.(*ast.Comprehension)
		return ok
	})
}

// armInfo translates arm av of a disjunction; closed says that every
// struct arm of it is written as a closed literal.
func (w *walker) armInfo(av cue.Value, closed bool, path string, depth int, m mode) (any, info) {
	if k := av.IncompleteKind(); closed && (k == cue.StructKind || k == cue.BottomKind) {
		w.forceClosed = true
		defer func() { w.forceClosed = false }()
	}
	return w.valueInfo(av, path, depth, m)
}

// litArmsClosed reports whether every arm of the written disjunction or
// that can be a struct is a struct literal with neither "..." nor an
// embedding (other arms, such as a reference, may be open: false).
func litArmsClosed(or *ast.BinaryExpr) bool {
	var arms []ast.Expr
	var flatten func(e ast.Expr, d int) bool
	flatten = func(e ast.Expr, d int) bool {
		if d > MaxDepth {
			return false
		}
		switch x := e.(type) {
		case *ast.ParenExpr:
			return flatten(x.X, d+1)
		case *ast.UnaryExpr:
			if x.Op == token.MUL {
				return flatten(x.X, d+1)
			}
		case *ast.BinaryExpr:
			if x.Op == token.OR {
				return flatten(x.X, d+1) && flatten(x.Y, d+1)
			}
		}
		arms = append(arms, e)
		return true
	}
	if !flatten(or, 0) {
		return false
	}
	structs := 0
	for _, e := range arms {
		switch x := e.(type) {
		case *ast.StructLit:
			if !plainClosed(x) {
				return false
			}
			structs++
		case *ast.BasicLit, *ast.ListLit:
		default:
			return false
		}
	}
	return structs > 0
}

// closeArms is Translator.closeArms, except where a matchN or matchIf
// opens the arms (see translateValidators).
func (w *walker) closeArms(arms []cue.Value) []cue.Value {
	if w.opened > 0 {
		return arms
	}
	return w.t.closeArms(arms)
}

// writtenOr returns the value v is written as a disjunction in, and that
// disjunction's source, following references to regular or hidden fields
// (a definition is a $ref of its own); the source is nil when v is not
// written as a disjunction. Only the source is read, and a reference
// followed: it is cheap where Value.Expr is not.
func (w *walker) writtenOr(v cue.Value) (cue.Value, *ast.BinaryExpr) {
	for range 8 {
		src := exprSource(v)
		if src == nil && w.peel && v.IncompleteKind()&(cue.StructKind|cue.ListKind) != 0 {
			// Several conjuncts, all but one _ (a pattern constraint
			// [string]: _ applies to the field; only then, as
			// Value.Expr costs): the other is how the value is
			// written.
			if op, args := v.Expr(); op == cue.AndOp {
				var keep []cue.Value
				for _, a := range args {
					if a.IncompleteKind() == cue.TopKind && !a.IsConcrete() && exprSource(a) != nil {
						if id, ok := exprSource(a).(*ast.Ident); ok && id.Name == "_" {
							continue
						}
					}
					keep = append(keep, a)
				}
				if len(keep) == 1 && len(args) > 1 {
					v = keep[0]
					continue
				}
			}
		}
		switch x := src.(type) {
		case *ast.BinaryExpr:
			if x.Op == token.OR {
				return v, x
			}
			return cue.Value{}, nil
		case *ast.Ident, *ast.SelectorExpr:
			root, p := v.ReferencePath()
			sels := p.Selectors()
			if !root.Exists() || len(sels) == 0 || sels[len(sels)-1].IsDefinition() {
				return cue.Value{}, nil
			}
			if v = root.LookupPath(p); !v.Exists() {
				return cue.Value{}, nil
			}
		default:
			return cue.Value{}, nil
		}
	}
	return cue.Value{}, nil
}

// exprSource is the expression v is written as (nil when CUE computed it
// or it has several conjuncts).
func exprSource(v cue.Value) ast.Expr {
	src := v.Source()
	if f, ok := src.(*ast.Field); ok {
		src = f.Value
	}
	e, _ := src.(ast.Expr)
	for {
		p, ok := e.(*ast.ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}

// countDisjuncts counts the arms of a disjunction's source.
func countDisjuncts(e ast.Expr) int {
	switch x := e.(type) {
	case *ast.ParenExpr:
		return countDisjuncts(x.X)
	case *ast.BinaryExpr:
		if x.Op == token.OR {
			return countDisjuncts(x.X) + countDisjuncts(x.Y)
		}
	}
	return 1
}

// starredArms reports, for each arm of a disjunction's source in order,
// whether it is marked as the default (*).
func starredArms(e ast.Expr) []bool {
	switch x := e.(type) {
	case *ast.ParenExpr:
		return starredArms(x.X)
	case *ast.BinaryExpr:
		if x.Op == token.OR {
			return append(starredArms(x.X), starredArms(x.Y)...)
		}
	case *ast.UnaryExpr:
		if x.Op == token.MUL {
			return []bool{true}
		}
	}
	return []bool{false}
}

// armCalls reports whether an arm of a disjunction's source calls a
// function outside a struct or list literal ([...string] &
// list.MaxItems(4)): the evaluated arm keeps no trace of such a validator.
func armCalls(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.ParenExpr:
		return armCalls(x.X)
	case *ast.UnaryExpr:
		return armCalls(x.X)
	case *ast.BinaryExpr:
		return armCalls(x.X) || armCalls(x.Y)
	case *ast.CallExpr:
		return true
	case *ast.StructLit:
		// (A comprehension in an arm's struct literal: the
		// evaluated arm has lost it too.)
		return slices.ContainsFunc(x.Elts, func(d ast.Decl) bool {
			_, ok := d.(*ast.Comprehension)
			return ok
		})
	}
	return false
}

// deepDisjuncts counts the arms of the disjunction v is written as, an
// arm that refers to another disjunction (a definition included) counted
// as that disjunction's arms.
func (w *walker) deepDisjuncts(v cue.Value, depth int) int {
	or, ok := exprSource(v).(*ast.BinaryExpr)
	if !ok || or.Op != token.OR || depth > 8 {
		return 1
	}
	n := 0
	for _, a := range armsOf(v) {
		root, p := a.ReferencePath()
		if literal(a) || !root.Exists() || len(p.Selectors()) == 0 || builtinPackage(root) != "" {
			n++
			continue
		}
		t := root.LookupPath(p)
		if !t.Exists() {
			n++
			continue
		}
		n += w.deepDisjuncts(t, depth+1)
	}
	return n
}

// hasReference reports whether an arm of a disjunction's source is, or
// starts with, an identifier (it may refer to a sibling field).
func hasReference(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.ParenExpr:
		return hasReference(x.X)
	case *ast.UnaryExpr:
		return hasReference(x.X)
	case *ast.BinaryExpr:
		return hasReference(x.X) || hasReference(x.Y)
	case *ast.Ident:
		return true
	case *ast.SelectorExpr:
		return true
	case *ast.IndexExpr:
		return hasReference(x.X)
	}
	return false
}

// writtenArms returns the arms of v as written when v is written as a
// disjunction (see writtenOr).
func (w *walker) writtenArms(v cue.Value) []cue.Value {
	target, or := w.writtenOr(v)
	if or == nil {
		return nil
	}
	return armsOf(target)
}

// armsOf returns the arms of a value written as a disjunction. Value.Expr
// leaves out a default arm another arm subsumes (*[] | [...int] is
// [...int]); the default itself comes from Value.Default.
func armsOf(v cue.Value) []cue.Value {
	switch op, args := v.Expr(); {
	case op == cue.OrOp:
		return args
	case op == cue.NoOp && len(args) == 1 && !writtenOr1(args[0]):
		// (One arm of an evaluated disjunction, a default, still has
		// the whole disjunction as its source: it is not an arm.)
		return args
	}
	return nil
}

// writtenOr1 reports whether v's own source is a disjunction.
func writtenOr1(v cue.Value) bool {
	b, ok := exprSource(v).(*ast.BinaryExpr)
	return ok && b.Op == token.OR
}

// defaultArmsOf returns the arms of a default value (one, or those of a
// disjunction of defaults).
func defaultArmsOf(d cue.Value) []cue.Value {
	if dop, dargs := d.Eval().Expr(); dop == cue.OrOp {
		return dargs
	}
	return []cue.Value{d}
}

// scalarArms reports whether no arm can hold a struct or a list.
func scalarArms(arms []cue.Value) bool {
	for _, a := range arms {
		k := a.IncompleteKind()
		if k == cue.BottomKind {
			// An error by itself (a validator fails on it as
			// written): its source says what it is.
			k = sourceKind(a)
			if k == cue.BottomKind && isDefinitionRef(a) {
				// (A definition every arm of which evaluation
				// dropped, #Lines: #Point | #LineString: read as
				// written, it is a $ref.)
				return false
			}
		}
		if k&(cue.StructKind|cue.ListKind) != 0 {
			return false
		}
	}
	return true
}

// isDefinitionRef reports whether v is a reference to a definition.
func isDefinitionRef(v cue.Value) bool {
	if literal(v) {
		return false
	}
	root, p := v.ReferencePath()
	sels := p.Selectors()
	return root.Exists() && len(sels) > 0 && sels[len(sels)-1].IsDefinition()
}

// emptyList reports whether v is the closed empty list.
func emptyList(v cue.Value) bool {
	return v.IncompleteKind() == cue.ListKind && v.IsConcrete() && !v.LookupPath(cue.MakePath(cue.Index(0))).Exists() && !v.LookupPath(cue.MakePath(cue.AnyIndex)).Exists()
}
