package cueschema

import (
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strings"

	"cuelang.org/go/cue"

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

func (w *walker) union(v, d cue.Value, hasDefault bool, path string, depth int, m mode) (any, info) {
	if sop, src := v.Expr(); sop == cue.OrOp && w.root != "" {
		// An arm referring to a sibling field (b: *a | int) makes the
		// field equal to it: no JSON Schema says that.
		for _, a := range src {
			if w.siblingRef(a, path) {
				return false, info{}
			}
		}
	}
	e := v.Eval()
	_, args := e.Expr()
	if len(args) > maxUnionArms {
		w.refuse(v, path, fmt.Sprintf("a disjunction of %d arms", len(args)), fmt.Sprintf("more than %d arms", maxUnionArms), "split it into named definitions")
		return false, info{}
	}
	var defs []cue.Value
	if hasDefault {
		de := d.Eval()
		if dop, dargs := de.Expr(); dop == cue.OrOp {
			defs = dargs
		} else {
			defs = []cue.Value{d}
		}
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
	scalar := true
	for _, a := range append(slices.Clone(args), defs...) {
		if a.IncompleteKind()&(cue.StructKind|cue.ListKind) != 0 {
			scalar = false
		}
	}
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
	inf := info{exact: true}
	if hasDefault {
		_, di := w.valueInfo(d, path, depth+1, modePartial)
		inf.complete = di.complete || d.IsConcrete()
	}
	if scalar || m != modeFull {
		var out []any
		for _, a := range arms {
			s, ai := w.valueInfo(a.v, path, depth+1, m)
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
		a.full, a.inf = w.valueInfo(a.v, path, depth+1, modeFull)
		if a.inf.exact {
			a.partial = a.full
		} else {
			a.partial = w.value(a.v, path, depth+1, modePartial)
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
		sortByCanonical(vals)
		vals = slices.CompactFunc(vals, func(a, b any) bool { return jsonEqual(a, b) })
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
	sortByCanonical(flat)
	flat = slices.CompactFunc(flat, func(a, b any) bool { return jsonEqual(a, b) })
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
	ka, kb := a.IncompleteKind(), b.IncompleteKind()
	if ka&(cue.StructKind|cue.ListKind) == 0 && kb&(cue.StructKind|cue.ListKind) == 0 {
		return nil, true
	}
	if depth > 8 {
		return nil, false
	}
	if ka == cue.ListKind && kb == cue.ListKind {
		la, lb := fixedLen(a), fixedLen(b)
		if la == 0 && lb == 0 {
			return nil, true
		}
		return nil, false
	}
	if ka != cue.StructKind || kb != cue.StructKind {
		return nil, false
	}
	fa, ok1 := fieldMap(a)
	fb, ok2 := fieldMap(b)
	if !ok1 || !ok2 || len(fa) != len(fb) {
		return nil, false
	}
	var need []any
	for name, x := range fa {
		y, ok := fb[name]
		if !ok || x.ct != y.ct {
			return nil, false
		}
		if x.v.Subsume(y.v) == nil && y.v.Subsume(x.v) == nil {
			continue
		}
		if x.ct == cue.OptionalConstraint {
			return nil, false
		}
		// Equal only when the instance gives the field.
		if _, always := w.same(x.v, y.v, depth+1); !always {
			return nil, false
		}
		need = append(need, name)
	}
	if len(need) == 0 {
		return nil, true
	}
	return map[string]any{"required": need}, false
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
