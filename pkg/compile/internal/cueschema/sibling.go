package cueschema

import (
	"fmt"
	"slices"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/format"
	"cuelang.org/go/cue/token"
)

// siblingDefault translates the field fv of struct v when it is written
// with a default that is a reference to a sibling field (b: *a | int next
// to a: int) which the other arms subsume. CUE then completes b from a,
// so an instance may leave b out, and a given b must meet the other arms.
// Value.Expr and Value.Default do not show such a default as what it is
// (CUE drops a default another arm subsumes, or reports the sibling's own
// default as b's), so the source tells. When the sibling is an optional
// field, b may be left out only when a is given: needs is then a's name.
//
// A default copying a nested field an instance may leave out is refused:
// whether b may be left out would depend on more than a's presence.
func (w *walker) siblingDefault(v, fv cue.Value, path string, depth int, m mode) (s any, inf info, needs string, ok bool) {
	f, isField := fv.Source().(*ast.Field)
	if !isField {
		return nil, info{}, "", false
	}
	for _, d := range defaultArms(f.Value) {
		scope, sels, isRef := fieldReference(d)
		if !isRef {
			continue
		}
		// The struct declaring the field referred to: this one, or one
		// around it within the translated value.
		owner, here := cue.Value{}, false
		if declares(scope, f) {
			owner, here = v, true
		} else {
			for i := len(w.structs) - 1; i >= 0; i-- {
				if w.structs[i].src == scope {
					owner = w.structs[i].v
					break
				}
			}
		}
		if !owner.Exists() {
			continue
		}
		ref := pathString(sels)
		target := owner.LookupPath(cue.MakePath(strSelectors(sels)...))
		if !target.Exists() && len(sels) == 1 && here {
			if v.LookupPath(cue.MakePath(cue.Str(sels[0]).Optional())).Exists() {
				// Given, the optional field is a regular one (and
				// only a regular one can be compared with Subsume).
				p := cue.MakePath(cue.Str(sels[0]))
				target = v.FillPath(p, v.Context().CompileString("_")).LookupPath(p)
				needs = sels[0]
			}
		}
		if !target.Exists() {
			w.refuse(fv, path, fmt.Sprintf("the default *%s", ref), fmt.Sprintf("it copies %s, which an instance may leave out, so whether %s may be left out depends on more than one field's presence", ref, path), fmt.Sprintf("make %s a regular field, or give %s a constant default", ref, path))
			return false, info{}, "", true
		}
		// The other arms, as written: what a given b must meet.
		var others []cue.Value
		for _, a := range w.writtenArms(fv) {
			if !w.isSiblingRef(a) {
				others = append(others, a)
			}
		}
		if len(others) == 0 {
			others = []cue.Value{fv.Eval()}
		}
		covered := false
		for _, a := range others {
			if a.Subsume(target) == nil {
				covered = true
			}
		}
		if !covered {
			// The default is an arm of its own (b equals a, or is
			// a string): the union refuses it as a sibling reference.
			return nil, info{}, "", false
		}
		var out []any
		for _, a := range w.closeArms(others) {
			out = append(out, w.value(a, path, depth+1, m))
		}
		w.warn(fv, path, "default-from-field", fmt.Sprintf("the default of %s copies %s: the schema lets %s be left out as CUE does, but JSON Schema has no keyword for a default taken from another field, so the runner does not fill it in (the handler sees %s absent)", path, ref, path, path), fmt.Sprintf("give %s a constant default, or make it required", path))
		return anyOf(out), info{complete: true}, needs, true
	}
	return nil, info{}, "", false
}

func strSelectors(names []string) []cue.Selector {
	out := make([]cue.Selector, len(names))
	for i, n := range names {
		out[i] = cue.Str(n)
	}
	return out
}

func pathString(names []string) string {
	return cue.MakePath(strSelectors(names)...).String()
}

// defaultArms returns the arms of a disjunction written with * (*x | y).
func defaultArms(e ast.Expr) []ast.Expr {
	var out []ast.Expr
	var walk func(e ast.Expr)
	walk = func(e ast.Expr) {
		switch x := e.(type) {
		case *ast.ParenExpr:
			walk(x.X)
		case *ast.BinaryExpr:
			if x.Op == token.OR {
				walk(x.X)
				walk(x.Y)
			}
		case *ast.UnaryExpr:
			if x.Op == token.MUL {
				out = append(out, x.X)
			}
		}
	}
	walk(e)
	return out
}

// fieldReference reports whether e is an identifier (or a selection from
// one: c.d) naming a field, and returns the struct literal declaring it
// and the path from there.
func fieldReference(e ast.Expr) (*ast.StructLit, []string, bool) {
	var sels []string
	for {
		switch x := e.(type) {
		case *ast.ParenExpr:
			e = x.X
			continue
		case *ast.SelectorExpr:
			name, _, err := ast.LabelName(x.Sel)
			if err != nil {
				return nil, nil, false
			}
			sels = append([]string{name}, sels...)
			e = x.X
			continue
		case *ast.Ident:
			st, ok := x.Scope.(*ast.StructLit)
			if !ok {
				return nil, nil, false
			}
			// x names a field of st (the resolver points an
			// identifier at the field's value).
			for _, d := range st.Elts {
				if df, ok := d.(*ast.Field); ok && (ast.Node(df) == x.Node || ast.Node(df.Value) == x.Node) {
					return st, append([]string{x.Name}, sels...), true
				}
			}
		}
		return nil, nil, false
	}
}

// declares reports whether the struct literal st declares field f.
func declares(st *ast.StructLit, f *ast.Field) bool {
	for _, d := range st.Elts {
		if d == f {
			return true
		}
	}
	return false
}

// optionalReference warns about v, a reference to an optional field
// (year?: #Book.year): CUE refuses every value of it ("cannot reference
// optional field"), so the schema is false, exactly as CUE means it —
// which is almost never what its author meant.
func (w *walker) optionalReference(v cue.Value, path string) {
	w.fieldReference(v, path, "optional", "?", "cannot reference optional field")
}

// requiredFieldReference reports whether v is a reference to a required
// field (name: #Member.name, with name!: string): CUE refuses every value
// of it too ("required field missing"), and it is handled the same way.
func (w *walker) requiredFieldReference(v cue.Value, path string) bool {
	root, p := v.ReferencePath()
	sels := p.Selectors()
	n := len(sels)
	if !root.Exists() || n == 0 || sels[n-1].LabelType() != cue.StringLabel {
		return false
	}
	req := append(slices.Clone(sels[:n-1]), cue.Str(sels[n-1].Unquoted()).Required())
	if !root.LookupPath(cue.MakePath(req...)).Exists() {
		return false
	}
	w.fieldReference(v, path, "required", "!", "required field missing")
	return true
}

func (w *walker) fieldReference(v cue.Value, path, kind, marker, cueSays string) {
	ref, constraint := "a "+kind+" field", "int & >=1450"
	label := "year"
	if root, p := v.ReferencePath(); root.Exists() {
		ref = p.String()
		sels := p.Selectors()
		if n := len(sels); n > 0 {
			last := sels[n-1]
			if last.LabelType() == cue.StringLabel {
				label = last.Unquoted()
			}
			opt := append(slices.Clone(sels[:n-1]), cue.Str(label).Optional())
			if kind == "required" {
				opt[n-1] = cue.Str(label).Required()
			}
			if t := root.LookupPath(cue.MakePath(opt...)); t.Exists() {
				if src, err := format.Node(t.Source()); err == nil && len(src) < 80 {
					constraint = string(src)
				} else {
					constraint = fmt.Sprint(t)
				}
			}
		}
	}
	name := strings.TrimRight(path, "?!")
	def := "#" + strings.ToUpper(label[:1]) + label[1:]
	if label == "" || !ast.IsValidIdent(def) {
		def = "#T"
	}
	w.warn(v, path, kind+"-field-reference", fmt.Sprintf("%s refers to the %s field %s: CUE refuses every value of such a reference (%q), so %s can never be given", name, kind, ref, cueSays, name),
		fmt.Sprintf("name the constraint as a definition and refer to it from both places: %s: %s, then %s%s: %s", def, strings.TrimSuffix(strings.TrimPrefix(constraint, label+marker+": "), ","), label, marker, def))
}
