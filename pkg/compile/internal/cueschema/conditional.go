package cueschema

import (
	"fmt"
	"maps"
	"slices"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/format"
)

// Conditional fields: a comprehension whose clauses read a field of the
// struct it sits in (kind: "adult" | "child", if kind == "child"
// {guardian!: string}). CUE evaluates it with the instance's value of the
// field (or its default when the instance leaves it out, or not at all
// when the field has no value: the struct is then incomplete). The
// evaluated schema alone shows one outcome only (the default's), or none.
//
// When every field the clauses read holds one of a few constants (an enum,
// a bool), the struct is the disjunction of the struct with each
// combination of them filled in: CUE evaluates each one exactly, and the
// arms are disjoint (each holds its constants). An arm whose constant is
// not the field's default needs the field given, even as (a struct in)
// an arm of an enclosing disjunction: left out, the comprehension
// eliminates the arm rather than leaving it incomplete — when it is the
// arm or a field of it; deeper down (a field of a field, a list element)
// CUE v0.17.1 leaves the arm incomplete. Anything else is refused.

// maxConditionalArms bounds the combinations a struct's conditional
// fields expand into.
const maxConditionalArms = maxUnionArms

// conditionalFields returns the fields of v that the clauses of a
// comprehension in v's struct literals read and that have no concrete
// value of their own, with that comprehension (nil when there is none).
// ok is false when a clause reads one in a way expansion cannot carry (a
// for clause, a field of an enclosing struct).
func (w *walker) conditionalFields(v cue.Value) (names []string, comp *ast.Comprehension, ok bool) {
	lits := w.structLits(v)
	ok = true
	seen := map[*ast.StructLit]bool{}
	var scan func(lit *ast.StructLit, depth int)
	scan = func(lit *ast.StructLit, depth int) {
		if depth > 8 || seen[lit] {
			return
		}
		seen[lit] = true
		for _, d := range lit.Elts {
			switch x := d.(type) {
			case *ast.EmbedDecl:
				// An embedded definition's comprehensions read the
				// embedding struct's fields too.
				if id, isID := x.Expr.(*ast.Ident); isID {
					n := id.Node
					if f, isField := n.(*ast.Field); isField {
						n = f.Value
					}
					if inner, isLit := n.(*ast.StructLit); isLit {
						scan(inner, depth+1)
					}
				}
			case *ast.Comprehension:
				for _, ref := range w.clauseReads(x, lit) {
					owner := v
					if ref.outer.Exists() {
						owner = ref.outer
					}
					fv := lookupField(owner, ref.name)
					if !fv.Exists() || fv.IsConcrete() && fv.Validate(cue.Concrete(true)) == nil {
						continue // a constant: evaluation has read it
					}
					if ref.outer.Exists() || ref.inFor {
						if comp == nil || ok {
							comp, ok = x, false
						}
						continue
					}
					if comp == nil {
						comp = x
					}
					if !slices.Contains(names, ref.name) {
						names = append(names, ref.name)
					}
				}
			}
		}
	}
	for _, lit := range lits {
		scan(lit, 0)
	}
	slices.Sort(names)
	return names, comp, ok
}

// structLits returns the struct literals v is written as: its own source,
// or (unless no file holds a comprehension) those of its conjuncts and
// the definitions they refer to.
func (w *walker) structLits(v cue.Value) []*ast.StructLit {
	if lit, ok := exprSource(v).(*ast.StructLit); ok {
		return []*ast.StructLit{lit}
	}
	if w.t.opts.NoConditionalFields {
		return nil
	}
	var out []*ast.StructLit
	var walk func(c cue.Value, depth int)
	walk = func(c cue.Value, depth int) {
		if depth > 8 {
			return
		}
		if lit, ok := exprSource(c).(*ast.StructLit); ok {
			out = append(out, lit)
			return
		}
		op, args := c.Expr()
		switch op {
		case cue.AndOp:
			for _, a := range args {
				walk(a, depth+1)
			}
		case cue.SelectorOp, cue.NoOp:
			root, p := c.ReferencePath()
			if !root.Exists() || len(p.Selectors()) == 0 || builtinPackage(root) != "" {
				return
			}
			if t := root.LookupPath(p); t.Exists() {
				walk(t, depth+1)
			}
		}
	}
	walk(v, 0)
	return out
}

type clauseRead struct {
	name  string
	outer cue.Value // the struct around lit, within the schema, declaring it
	inFor bool      // read by a for clause
}

// clauseReads returns the fields of lit (or of the struct literals being
// translated around it) the clauses of comprehension c read, nested
// comprehensions in its value included.
func (w *walker) clauseReads(c *ast.Comprehension, lit *ast.StructLit) []clauseRead {
	var out []clauseRead
	var visit func(e ast.Node, inFor bool)
	visit = func(e ast.Node, inFor bool) {
		ast.Walk(e, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			scope, sels, isRef := fieldReference(id)
			if !isRef || len(sels) == 0 {
				return true
			}
			if scope == lit {
				out = append(out, clauseRead{name: sels[0], inFor: inFor})
				return true
			}
			for _, f := range w.structs {
				if f.src == scope {
					out = append(out, clauseRead{name: sels[0], outer: f.v, inFor: inFor})
				}
			}
			return true
		}, nil)
	}
	var clauses func(c *ast.Comprehension)
	clauses = func(c *ast.Comprehension) {
		for _, cl := range c.Clauses {
			switch x := cl.(type) {
			case *ast.IfClause:
				visit(x.Condition, false)
			case *ast.ForClause:
				visit(x.Source, true)
			case *ast.LetClause:
				visit(x.Expr, false)
			}
		}
		if lit, ok := c.Value.(*ast.StructLit); ok {
			for _, d := range lit.Elts {
				if inner, ok := d.(*ast.Comprehension); ok {
					clauses(inner)
				}
			}
		}
	}
	clauses(c)
	return out
}

// lookupField returns the field name of v, regular, required or
// optional.
func lookupField(v cue.Value, name string) cue.Value {
	for _, sel := range []cue.Selector{cue.Str(name), cue.Str(name).Required(), cue.Str(name).Optional()} {
		if f := v.LookupPath(cue.MakePath(sel)); f.Exists() {
			return f
		}
	}
	return cue.Value{}
}

// choices returns the constants field value fv can hold, and its default.
func choices(fv cue.Value) (vals []cue.Value, def cue.Value, hasDef bool, ok bool) {
	def, hasDef = fv.Default()
	if hasDef && !def.IsConcrete() {
		hasDef = false
	}
	if fv.IncompleteKind() == cue.BoolKind && !fv.IsConcrete() {
		ctx := fv.Context()
		return []cue.Value{ctx.CompileString("true"), ctx.CompileString("false")}, def, hasDef, true
	}
	if fv.IsConcrete() {
		return []cue.Value{fv}, def, hasDef, fv.IncompleteKind()&(cue.StructKind|cue.ListKind) == 0
	}
	op, args := fv.Eval().Expr()
	if op != cue.OrOp {
		return nil, def, hasDef, false
	}
	for _, a := range args {
		if !a.IsConcrete() || a.IncompleteKind()&(cue.StructKind|cue.ListKind) != 0 {
			return nil, def, hasDef, false
		}
	}
	return args, def, hasDef, true
}

// conditional translates struct v whose comprehension comp reads the
// fields names (see conditionalFields).
func (w *walker) conditional(v cue.Value, names []string, comp *ast.Comprehension, ok bool, path string, depth int, m mode) (any, info) {
	what := "the comprehension"
	switch c := comp.Clauses[0].(type) {
	case *ast.IfClause:
		if b, err := format.Node(c.Condition); err == nil && len(b) < 60 {
			what = fmt.Sprintf("the comprehension if %s {…}", b)
		}
	case *ast.ForClause:
		if b, err := format.Node(c.Source); err == nil && len(b) < 60 {
			what = fmt.Sprintf("the comprehension for … in %s {…}", b)
		}
	}
	refuse := func(msg string) (any, info) {
		w.refusals = append(w.refusals, &Refusal{Pos: comp.Pos(), Path: path, Construct: what, Message: msg,
			Hint: `write the alternatives as a disjunction of structs, e.g. {kind: "adult"} | {kind: "child", guardian!: string}`})
		return false, info{}
	}
	if !ok {
		return refuse("it reads a field of an enclosing struct, or loops over one, so which fields exist depends on the instance in a way JSON Schema cannot follow")
	}
	type choice struct {
		name   string
		vals   []cue.Value
		def    cue.Value
		hasDef bool
	}
	var cs []choice
	n := 1
	for _, name := range names {
		vals, def, hasDef, ok := choices(lookupField(v, name))
		if !ok {
			return refuse(fmt.Sprintf("it reads %s, which is not one of a few constants, so which fields exist depends on the instance in a way JSON Schema cannot follow", name))
		}
		cs = append(cs, choice{name, vals, def, hasDef})
		if n *= len(vals); n*max(w.condCases, 1) > maxConditionalArms {
			return refuse(fmt.Sprintf("the fields it reads combine into more than %d cases (with those of the conditional fields around it, whose cases each repeat it)", maxConditionalArms))
		}
	}
	outer := w.condCases
	w.condCases = max(outer, 1) * n
	defer func() { w.condCases = outer }()
	var arms []any
	inf := info{complete: false, exact: false}
	idx := make([]int, len(cs))
	for {
		a := v
		var need []any
		for i, c := range cs {
			val := c.vals[idx[i]]
			a = a.FillPath(cue.MakePath(cue.Str(c.name)), val)
			if !c.hasDef || !c.def.Equals(val) {
				need = append(need, c.name)
			}
		}
		s, ai := w.valueInfo(a, path, depth+1, m)
		if len(need) > 0 && (m != modePartial || w.armDepth <= 1) {
			// (In the partial form too: a comprehension whose field
			// is left out eliminates the arm of a disjunction it is
			// the arm of, or a field of; deeper down it only leaves
			// the arm incomplete.)
			// The field filled in is concrete in the case, so it
			// carries its value as a default: not so in a case the
			// instance must choose.
			for _, name := range need {
				dropDefault(s, name.(string))
			}
			s = requireAlso(s, need)
		} else if ai.complete {
			inf.complete = true
		}
		arms = append(arms, s)
		// Next combination.
		i := len(idx) - 1
		for ; i >= 0; i-- {
			if idx[i]++; idx[i] < len(cs[i].vals) {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			break
		}
	}
	if m == modePartial && w.armDepth > 1 {
		// Deep in an arm, a field of those it reads left out leaves
		// the comprehension unresolved and the arm merely incomplete:
		// no conflict.
		var unresolved []any
		for _, c := range cs {
			if !c.hasDef {
				unresolved = append(unresolved, c.name)
			}
		}
		if len(unresolved) > 0 {
			arms = append(arms, unresolvedCase(v, arms, unresolved))
		}
	}
	return anyOf(arms), inf
}

// unresolvedCase is the partial form of a struct whose conditional
// fields unresolved are left out, deep in a disjunction arm: the
// comprehension stays unresolved and the struct merely incomplete, but its
// other fields still conflict with a wrong value ({o?: int} with o: 1e2
// eliminates the arm). CUE then checks neither the fields the
// comprehension would add nor closedness (it could add any field), and a
// missing field is only incomplete. So the case keeps, of the keywords
// every expanded case shares, those on the fields v has without the
// comprehension, and drops required and a closing additionalProperties.
// When the cases are not all plain object schemas it says only that the
// fields are left out (a looser partial form: the arm may be called
// possible where CUE eliminates it).
func unresolvedCase(v cue.Value, cases []any, unresolved []any) any {
	out := map[string]any{"type": "object", "not": map[string]any{"required": unresolved}}
	var ms []map[string]any
	for _, c := range cases {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != "object" {
			return out
		}
		ms = append(ms, m)
	}
	if len(ms) == 0 {
		return out
	}
	shared := func(get func(map[string]any) (any, bool)) (any, bool) {
		first, ok := get(ms[0])
		if !ok {
			return nil, false
		}
		for _, m := range ms[1:] {
			x, ok := get(m)
			if !ok || !jsonEqual(first, x) {
				return nil, false
			}
		}
		return first, true
	}
	// The fields v has without the comprehension (not those it reads:
	// they are left out).
	props := map[string]any{}
	iter, err := v.Fields(cue.Optional(true))
	if err == nil {
		for iter.Next() {
			name := iter.Selector().Unquoted()
			if slices.Contains(unresolved, any(name)) {
				continue
			}
			p, ok := shared(func(m map[string]any) (any, bool) {
				ps, _ := m["properties"].(map[string]any)
				p, has := ps[name]
				return p, has
			})
			if ok {
				props[name] = p
			}
		}
	}
	if len(props) > 0 {
		out["properties"] = props
	}
	for k := range ms[0] {
		switch k {
		case "type", "properties", "required", "not", "default":
			continue
		case "additionalProperties", "unevaluatedProperties":
			if ms[0][k] == false {
				continue
			}
		}
		if x, ok := shared(func(m map[string]any) (any, bool) { x, has := m[k]; return x, has }); ok {
			out[k] = x
		}
	}
	return out
}

// requireAlso is s with the properties need required too. A "required"
// beside s's own keywords means the same as allOf [s, {required: need}]
// (the keywords of one schema object all apply), and keeps a case one
// object schema: the MCP and agent presentations flatten unions of
// objects, not of allOf.
func requireAlso(s any, need []any) any {
	m, ok := s.(map[string]any)
	if !ok {
		return conjoin(s, map[string]any{"required": need})
	}
	req, ok := m["required"].([]any)
	if _, has := m["required"]; has && !ok {
		return conjoin(s, map[string]any{"required": need})
	}
	out := maps.Clone(m)
	req = slices.Clone(req)
	for _, n := range need {
		if !slices.Contains(req, n) {
			req = append(req, n)
		}
	}
	out["required"] = req
	return out
}

// dropDefault removes the default of property name from object schema s.
func dropDefault(s any, name string) {
	m, ok := s.(map[string]any)
	if !ok {
		return
	}
	if props, ok := m["properties"].(map[string]any); ok {
		if p, ok := props[name].(map[string]any); ok {
			delete(p, "default")
		}
	}
	if all, ok := m["allOf"].([]any); ok {
		for _, x := range all {
			dropDefault(x, name)
		}
	}
}
