package cueschema

import (
	"encoding/json"

	"cuelang.org/go/cue/ast"
	"fmt"
	"net/url"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/token"
)

// mode says which schema of a value the walk builds.
type mode int

const (
	// modeFull accepts the instances CUE accepts.
	modeFull mode = iota
	// modePartial accepts the instances that do not conflict with the
	// value, concrete or not: what survives as an arm of a disjunction
	// (CUE eliminates an arm only when it conflicts; an arm that is
	// merely incomplete stays and makes the disjunction ambiguous).
	modePartial
	// modeMatch accepts the instances an argument of matchN or matchIf
	// matches: they do not conflict with it and give its required (!)
	// fields.
	modeMatch
)

// walker translates one value (a schema node or a definition).
type walker struct {
	t        *Translator
	refs     map[string]bool // definitions referred to in full form
	prefs    map[string]bool // definitions referred to in partial form
	refusals []*Refusal
	inDef    *defEntry
	deep     bool
	// root is the path of the value being translated: a reference to a
	// regular field below it is a reference to a sibling value.
	root string
	// structs are the struct literals being translated, outermost first.
	structs []structFrame
	// rewrapped counts the disjunctions being translated whose arms
	// are read as written and closed by wrapping (see union), and the
	// structs that are errors by themselves: Value.Allows is wrong
	// about the struct literals in them (see structure).
	rewrapped int
	// forceClosed tells the next struct translated that it is an arm of
	// a disjunction whose struct arms are all written as closed
	// literals, where Allows cannot be trusted (see armInfo).
	forceClosed bool
	// listOpened counts those of opened that a list validator opens
	// (the elements stay open even when they embed a definition).
	listOpened int
	// openedAt holds the paths of the structs a matchN or matchIf
	// opened, innermost last.
	openedAt []string
	// opened counts the structs and lists being translated that a
	// matchN or matchIf validates: CUE opens the struct literals in them
	// (see translateValidators).
	opened int
	// condCases is the product of the cases of the conditional fields
	// being expanded (0 or 1 outside them; see conditional).
	condCases int
	// topAt is the path of the field being translated when a pattern
	// constraint whose value is _ applies to it; peel is set while its
	// value is translated (see writtenOr).
	topAt string
	peel  bool
	// armDepth counts the fields and list elements descended into since
	// the innermost disjunction arm (see conditional).
	armDepth int
	// at is the position of the field being translated.
	at token.Pos
	// validatedKind is the kind of the value whose validators
	// conjunctValidators collects.
	validatedKind cue.Kind
	// matchTarget is the value (a field of it, below the top of a
	// struct argument) that the matchN or matchIf argument being
	// translated validates.
	matchTarget cue.Value
}

type structFrame struct {
	src *ast.StructLit
	v   cue.Value
}

// siblingRef refuses v when it is a reference to a regular field of the
// value being translated ({a: int, b: a}): CUE requires the two to be
// equal, which JSON Schema cannot say.
func (w *walker) siblingRef(v cue.Value, path string) bool {
	if !w.isSiblingRef(v) {
		return false
	}
	_, p := v.ReferencePath()
	ps := p.String()
	w.refuse(v, path, fmt.Sprintf("the reference to %s", ps), "a reference to a sibling value cannot be expressed in JSON Schema (CUE requires both fields to be equal)", "repeat the constraint, or name it as a definition and refer to that")
	return true
}

// isSiblingRef reports whether v is a reference to a regular field of
// the value being translated.
func (w *walker) isSiblingRef(v cue.Value) bool {
	if w.root == "" || literal(v) {
		return false
	}
	_, p := v.ReferencePath()
	ps := p.String()
	if ps == "" || !strings.HasPrefix(ps, w.root+".") {
		return false
	}
	// A hidden field (#S: {_h: {...}, l: [..._h]}) is a helper no
	// instance sets: a reference to it is its value.
	for _, sel := range p.Selectors() {
		if sel.LabelType() == cue.HiddenLabel {
			return false
		}
	}
	return true
}

func (w *walker) warn(v cue.Value, path, rule, msg, hint string) {
	if w.t.opts.Warn != nil {
		w.t.opts.Warn(&Warning{Pos: v.Pos(), Path: path, Rule: rule, Message: msg, Hint: hint})
	}
}

func (w *walker) refuse(v cue.Value, path, construct, msg, hint string) {
	pos := v.Pos()
	if !pos.IsValid() || pos.Filename() == "" {
		// A builtin's value (net.IPv6) has no position of its own:
		// the field holding it has.
		pos = w.at
	}
	w.refusals = append(w.refusals, &Refusal{Pos: pos, Path: path, Construct: construct, Message: msg, Hint: hint})
}

// info is what the walk learns about a value besides its schema.
type info struct {
	// complete: CUE makes the value concrete by itself (a concrete value,
	// a default, a struct whose regular fields are all complete), so a
	// regular field holding it may be omitted.
	complete bool
	// exact: the full and partial schemas of the value are the same
	// (nothing in it can be incomplete).
	exact bool
}

func joinPath(path, label string) string {
	if path == "" {
		return label
	}
	if strings.HasPrefix(label, "[") {
		return path + label
	}
	return path + "." + label
}

// value translates v. path is its CUE path relative to the translated root
// (for refusals).
func (w *walker) value(v cue.Value, path string, depth int, m mode) any {
	s, _ := w.valueInfo(v, path, depth, m)
	return s
}

func (w *walker) valueInfo(v cue.Value, path string, depth int, m mode) (any, info) {
	if peel := path != "" && path == w.topAt; peel != w.peel {
		defer func(old bool) { w.peel = old }(w.peel)
		w.peel = peel
	}
	if w.t.steps++; w.t.steps > maxSteps {
		if !w.t.tooLarge {
			w.t.tooLarge = true
			at := v
			if !at.Pos().IsValid() {
				at = w.t.root
			}
			w.refuse(at, path, "a schema this large", fmt.Sprintf("translating it visits more than %d values (references to fields that are not definitions are expanded where they are used, and repeated nesting multiplies them)", maxSteps), "name the repeated parts as definitions (#Part: {...}): a definition is translated once and referred to with $ref")
		}
		return false, info{exact: true}
	}
	if depth > MaxDepth {
		if !w.deep {
			w.deep = true
			w.refuse(v, path, "a schema nested more than 64 values deep", "every level must be translated before the schema is used, and this one does not end", "split it into definitions; a recursive definition (#Node: {next?: #Node}) is fine")
		}
		return true, info{}
	}
	if depth > 0 {
		if s, e, ok := w.defRef(v, path, m, depth); ok {
			// A definition CUE completes by itself (a struct of
			// optional fields) completes a field referring to it.
			if e.complete == 0 {
				e.complete = 1
				if _, ok := w.completion(e.value); ok {
					e.complete = 2
				}
			}
			return s, info{complete: e.complete == 2, exact: false}
		}
		if w.siblingRef(v, path) {
			return false, info{}
		}
	}
	if v.IncompleteKind() != cue.BottomKind {
		// Not an error (Err costs an evaluation context).
	} else if err := v.Err(); err != nil {
		if cue.IsIncomplete(err) {
			if names, comp, ok := w.conditionalFields(v); comp != nil && (len(names) > 0 || !ok) {
				// Incomplete until the instance says which fields
				// a comprehension yields.
				return w.conditional(v, names, comp, ok, path, depth, m)
			}
		}
		emptyOr := strings.Contains(err.Error(), "empty disjunction") && w.validatorArms(v)
		if !emptyOr && (v.Validate() == nil || hasCall(v, 0) || w.validatorFailure(v, 0)) {
			// (Not a disjunction every arm of which evaluation
			// dropped, #Lines: #Point | #LineString where a list
			// validator fails on each as written: that one the
			// union reads below.)
			// A struct or list validator that fails on the value as
			// written (matchN on a struct of optional fields), maybe
			// in a field of a struct literal: the conjuncts say what
			// it is.
			return w.validated(v, path, depth, m)
		}
		if strings.Contains(err.Error(), "structural cycle") {
			// A field that is not a definition refers to itself
			// (_node: {next?: _node}): CUE cuts the recursion where
			// its evaluation stops, not where instances do.
			w.refuse(v, path, "a recursive reference to a field that is not a definition", "CUE evaluates it to a structural cycle a few levels down, which is not the end of the values it accepts", "name the recursive value as a definition (#Node: {next?: #Node}), which becomes a $ref")
			return false, info{}
		}
		if !w.validatorArms(v) {
			// A conflict: no value is accepted (an optional field
			// x?: _|_ forbids x).
			return false, info{exact: true}
		}
		// A disjunction whose every arm is such a failure (or no
		// error): the union reads the arms.
	}
	if plainLiteral(v) {
		// One struct or list literal (a single conjunct: a value with
		// several has no source): not a disjunction, no default but
		// an open list's [], no validator.
		if v.IncompleteKind() == cue.StructKind {
			return w.structure(v, path, depth, m)
		}
		if v.IncompleteKind() == cue.ListKind {
			return w.list(v, v, path, depth, m)
		}
	}
	e := v.Eval()
	op, args := e.Expr()
	if op == cue.OrOp && !w.t.opts.NoStructValidators {
		if elems, ok := validatedDisjunction(v); ok {
			return w.validatedUnion(v, elems, path, depth, m)
		}
	}
	if op != cue.OrOp && !literal(v) {
		// Evaluation merged the arms of a disjunction ({a: int} | {a:
		// int, ...}): the union reads them as written.
		if arms := w.writtenArms(v); len(arms) > 0 && !scalarArms(arms) {
			d, ok := v.Default()
			if len(arms) > 1 || ok && v.IncompleteKind() == cue.StructKind {
				return w.union(v, arms, d, ok, path, depth, m)
			}
			if !ok && v.IncompleteKind() == cue.StructKind {
				// One arm left once Value.Expr drops the default it
				// subsumes, and evaluation merged the two (CUE's
				// equality ignores closedness: *{a: int} | {a: int,
				// ...}): what the default accepts, the arm does, so
				// the arm alone says what is accepted.
				return w.valueInfo(w.closeArms(arms)[0], path, depth, m)
			}
		}
	}
	if op != cue.OrOp && v.IncompleteKind() == cue.ListKind {
		// An open list's "default" is the empty list, and *[] | [...T]
		// is [...T] (its evaluated form): not a disjunction.
		if op == cue.NoOp && len(args) == 1 && !v.LookupPath(cue.MakePath(cue.AnyIndex)).Exists() && fixedLen(v) == 0 && args[0].LookupPath(cue.MakePath(cue.AnyIndex)).Exists() {
			return w.defaultEmptyList(v, args[0], path, depth, m)
		}
		return w.list(v, v, path, depth, m)
	}
	if d, ok := v.Default(); ok {
		return w.union(v, nil, d, true, path, depth, m)
	}
	if op == cue.OrOp {
		return w.union(v, nil, cue.Value{}, false, path, depth, m)
	}
	switch k := v.IncompleteKind(); {
	case k == cue.StructKind:
		return w.structure(v, path, depth, m)
	case k == cue.ListKind:
		return w.list(v, v, path, depth, m)
	case k == cue.BottomKind:
		return w.validated(v, path, depth, m)
	}
	return w.scalar(v, e, op, args, path, depth, m)
}

// defKey identifies a definition: the package it is in and its path.
func defKey(root cue.Value, p cue.Path) string {
	pkg := ""
	if bi := root.BuildInstance(); bi != nil {
		pkg = bi.ImportPath
		if pkg == "" {
			pkg = bi.Dir
		}
	}
	return pkg + "\x00" + p.String()
}

// defRef returns the $ref to a definition when v is exactly a reference
// to one.
func (w *walker) defRef(v cue.Value, path string, m mode, depth int) (any, *defEntry, bool) {
	if literal(v) {
		return nil, nil, false
	}
	root, p := v.ReferencePath()
	if !root.Exists() && (w.peel || depth == 1 && strings.HasPrefix(path, "[")) {
		// An element of a tuple (#args: [#Task]) is the reference and
		// the contract language's placeholder (_), a field a
		// [string]: _ pattern applies to the reference and the
		// pattern's _: look past the _ (only here: Expr costs).
		if op, args := v.Expr(); op == cue.AndOp {
			var keep []cue.Value
			for _, a := range args {
				if a.IncompleteKind() == cue.TopKind && !a.IsConcrete() {
					continue
				}
				keep = append(keep, a)
			}
			if len(keep) == 1 {
				root, p = keep[0].ReferencePath()
			}
		}
	}
	if !root.Exists() {
		return nil, nil, false
	}
	sels := p.Selectors()
	if len(sels) == 0 || !sels[len(sels)-1].IsDefinition() {
		return nil, nil, false
	}
	if builtinPackage(root) != "" {
		return nil, nil, false
	}
	target := root.LookupPath(p)
	if !target.Exists() {
		return nil, nil, false
	}
	key := defKey(root, p)
	e := w.t.defs[key]
	if e == nil {
		e = &defEntry{value: target, name: w.t.defName(root, p, key)}
		w.t.defs[key] = e
	}
	name := e.name
	if m == modePartial {
		if w.prefs == nil {
			w.prefs = map[string]bool{}
		}
		w.prefs[key] = true
		name += partialSuffix
	} else {
		w.refs[key] = true
	}
	return map[string]any{"$ref": "#/$defs/" + pointerFragment(name)}, e, true
}

// defName picks the $defs name of the definition at p of root: its path
// without '#' ("Task", "A.B"), prefixed with the last element of its
// package's import path when another definition took that name.
func (t *Translator) defName(root cue.Value, p cue.Path, key string) string {
	var parts []string
	for _, s := range p.Selectors() {
		parts = append(parts, strings.TrimPrefix(s.String(), "#"))
	}
	base := strings.Join(parts, ".")
	name := base
	if owner, taken := t.names[name]; taken && owner != key {
		pkg := ""
		if bi := root.BuildInstance(); bi != nil {
			pkg = bi.ImportPath
		}
		if i := strings.LastIndexAny(pkg, "/:"); i >= 0 {
			pkg = pkg[i+1:]
		}
		if pkg != "" {
			name = pkg + "." + base
		}
		for i := 2; ; i++ {
			if owner, taken := t.names[name]; !taken || owner == key {
				break
			}
			name = fmt.Sprintf("%s.%d", base, i)
		}
	}
	t.names[name] = key
	return name
}

// pointerFragment escapes a $defs name for a "#/$defs/..." reference: JSON
// Pointer escapes (~0, ~1) and then URI fragment percent-encoding.
func pointerFragment(name string) string {
	name = strings.ReplaceAll(name, "~", "~0")
	name = strings.ReplaceAll(name, "/", "~1")
	u := url.URL{Fragment: name}
	return strings.TrimPrefix(u.EscapedFragment(), "#")
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

// structure translates a struct value.
func (w *walker) structure(v cue.Value, path string, depth int, m mode) (any, info) {
	if names, comp, ok := w.conditionalFields(v); comp != nil && (len(names) > 0 || !ok) {
		// Evaluation took the default's outcome of a comprehension
		// that reads a field of this struct; the instance may choose
		// another.
		return w.conditional(v, names, comp, ok, path, depth, m)
	}
	forceClosed := w.forceClosed
	w.forceClosed = false
	if lit, ok := exprSource(v).(*ast.StructLit); ok {
		// A default in a nested struct may copy a field of this one.
		w.structs = append(w.structs, structFrame{src: lit, v: v})
		defer func() { w.structs = w.structs[:len(w.structs)-1] }()
	}
	s := map[string]any{"type": "object"}
	inf := info{complete: true, exact: true}
	var all []any // validators of the struct
	opens, closes := w.structValidators(v, path, depth, m, &all, &inf)
	if opens {
		w.opened++
		w.openedAt = append(w.openedAt, path)
		defer func() { w.opened--; w.openedAt = w.openedAt[:len(w.openedAt)-1] }()
	}
	if v.IncompleteKind() == cue.BottomKind {
		// An error by itself (a validator in it fails on the value as
		// written): Allows calls the struct literals in it open.
		w.rewrapped++
		defer func() { w.rewrapped-- }()
	}
	iter, err := v.Fields(cue.Optional(true), cue.Patterns(true))
	if err != nil {
		w.refuse(v, path, "this struct", "CUE cannot list its fields: "+oneLine(err), "")
		return false, info{}
	}
	props := map[string]any{}
	var required []any
	var patterns []pattern
	var declared []string
	anyLabel := false
	var entries []entry
	// CUE v0.17.1 opens the contents of a list field that a pattern
	// constraint whose value is _ ([string]: _) applies to: {c:
	// [...{id: int}], [string]: _} accepts {"c": [{"id": 1, "x": 2}]}
	// (cue vet agrees; a struct field stays closed).
	var topPatterns []*regexp.Regexp
	anyTop := false
	retried := false
	for iter.Next() {
		en := entry{sel: iter.Selector(), fv: iter.Value()}
		if !retried && en.sel.ConstraintType() != cue.PatternConstraint && en.fv.IncompleteKind() == cue.BottomKind && notAllowedArtifact(v, en) {
			// See notAllowedArtifact: start again from v & {}.
			retried = true
			v = v.Unify(v.Context().CompileString("{}"))
			if iter, err = v.Fields(cue.Optional(true), cue.Patterns(true)); err != nil {
				w.refuse(v, path, "this struct", "CUE cannot list its fields: "+oneLine(err), "")
				return false, info{}
			}
			entries, topPatterns, anyTop = nil, nil, false
			continue
		}
		if en.sel.ConstraintType() == cue.PatternConstraint {
			en.re, en.ok = w.labelPattern(en.sel.Pattern(), path)
			if en.ok && en.fv.IncompleteKind() == cue.TopKind && !en.fv.IsConcrete() {
				if en.re == "" {
					anyTop = true
				} else if r, err := regexp.Compile(en.re); err == nil {
					topPatterns = append(topPatterns, r)
				}
			}
		}
		entries = append(entries, en)
	}
	names := map[string]bool{}
	for _, en := range entries {
		if en.sel.ConstraintType() != cue.PatternConstraint && en.sel.LabelType() == cue.StringLabel {
			names[en.sel.Unquoted()] = true
		}
	}
	for _, en := range entries {
		sel, fv := en.sel, en.fv
		switch sel.ConstraintType() {
		case cue.PatternConstraint:
			re, ok := en.re, en.ok
			if !ok {
				continue
			}
			// The pattern's value alone has lost the closedness of its
			// context: a label it selects, filled in, has it back.
			probe, filledIn := patternProbe(sel.Pattern(), re, v, names)
			if filledIn && isDefinitionRef(fv) {
				// ([string]: #J: a definition is closed by itself,
				// and filled in it would no longer be the reference
				// that ends a recursion in a $ref.)
				filledIn = false
			}
			if filledIn {
				filled := v.FillPath(cue.MakePath(cue.Str(probe)), v.Context().CompileString("_"))
				if pv := filled.LookupPath(cue.MakePath(cue.Str(probe))); pv.Exists() {
					// (In an arm of a disjunction the filled label
					// may not get the pattern's value: keep it.)
					fv = pv.Unify(fv)
				} else {
					filledIn = false
				}
			}
			pp := joinPath(path, "["+fmt.Sprint(sel.Pattern())+"]")
			ps := w.value(fv, pp, depth+1, m)
			if filledIn && labelAliased(en.fv) {
				// [Name=string]: {name: Name}: the filled label's
				// value stands where the member's own name does.
				ps = w.unprobe(en.fv, pp, ps, probe, re)
			}
			if re == "" {
				anyLabel = true
			}
			patterns = append(patterns, pattern{re: re, schema: ps})
			continue
		}
		if sel.LabelType() != cue.StringLabel {
			continue
		}
		name := sel.Unquoted()
		declared = append(declared, name)
		fp := joinPath(path, sel.String())
		// A matchN or matchIf argument sees the value CUE completes:
		// a field the instance leaves out holds its default.
		target := cue.Value{}
		if m == modeMatch && w.matchTarget.Exists() {
			target = w.matchTarget.LookupPath(cue.MakePath(cue.Str(name)))
			if target.Exists() && sel.ConstraintType() != cue.RequiredConstraint {
				// Left out, the field holds the target's value: when
				// that conflicts with the argument's (its default, or
				// the constraint itself), the field must be given.
				if d, ok := w.completion(target); ok {
					if fv.Unify(d).Validate(cue.Concrete(true)) != nil {
						required = append(required, name)
					}
				} else if err := fv.Unify(target).Err(); err != nil && !cue.IsIncomplete(err) {
					required = append(required, name)
				}
			}
		}
		outer, outerAt, outerOpened, outerListOpened, outerDepth := w.matchTarget, w.at, w.opened, w.listOpened, w.armDepth
		w.armDepth++
		w.matchTarget = target
		if p := fv.Pos(); p.IsValid() {
			w.at = p
		}
		if anyTop || slices.ContainsFunc(topPatterns, func(r *regexp.Regexp) bool { return r.MatchString(name) }) {
			if fv.IncompleteKind()&cue.ListKind != 0 {
				w.opened++
				w.listOpened++
			}
			w.topAt = fp
		}
		ps, fi, needs, copied := w.siblingDefault(v, fv, fp, depth, m)
		if copied {
			// b: *a | int: CUE completes b from a, b may be left out
			// (when a is given, if a is optional). No keyword says so.
			if needs != "" && m == modeFull && sel.ConstraintType() != cue.OptionalConstraint {
				all = append(all, map[string]any{"anyOf": []any{map[string]any{"required": []any{needs}}, map[string]any{"required": []any{name}}}})
			}
		} else {
			ps, fi = w.valueInfo(fv, fp, depth+1, m)
		}
		w.matchTarget, w.at, w.opened, w.listOpened, w.armDepth = outer, outerAt, outerOpened, outerListOpened, outerDepth
		if !fi.exact {
			inf.exact = false
		}
		switch sel.ConstraintType() {
		case cue.OptionalConstraint:
			// Only a default written as one (*x | …): CUE leaves an
			// absent optional field absent, but the default documents
			// what the application assumes.
			if explicitDefault(fv) && !copied {
				if d, ok := w.defaultOf(fv, fi); ok {
					ps = withKeyword(ps, "default", d)
				}
			}
		case cue.RequiredConstraint:
			inf.complete = false
			inf.exact = false
			if m != modePartial || w.eliminates(fv) {
				required = append(required, name)
			}
		default:
			if fi.complete {
				if d, ok := w.defaultOf(fv, fi); ok && !copied {
					ps = withKeyword(ps, "default", d)
				}
			} else {
				inf.complete = false
				inf.exact = false
				if m == modeFull || m == modePartial && w.eliminates(fv) {
					required = append(required, name)
				}
			}
		}
		if d := w.doc(fv); d != "" {
			ps = withKeyword(ps, "description", d)
		}
		props[name] = ps
	}
	if len(props) > 0 {
		s["properties"] = props
	}
	if len(required) > 0 {
		s["required"] = required
	}
	// Pattern constraints apply to every matching label, declared ones
	// included (whose values CUE has already unified with them); JSON
	// Schema's patternProperties does the same. A constraint on any
	// label ([string]: T) applies to the labels of the regex patterns
	// too, and to the rest as additionalProperties.
	var anySchema any = nil
	for _, p := range patterns {
		if p.re == "" {
			anySchema = conjoin(anySchema, p.schema)
		}
	}
	if len(patterns) > 0 {
		pp := map[string]any{}
		for _, p := range patterns {
			if p.re == "" {
				continue
			}
			pp[p.re] = conjoin(conjoin(pp[p.re], p.schema), anySchema)
		}
		if len(pp) > 0 {
			s["patternProperties"] = pp
		}
	}
	switch {
	case anyLabel:
		s["additionalProperties"] = anySchema
	case w.opened > 0 && !closes && (w.listOpened > 0 || !embedsDefinition(v) || writtenOpen(v) || !w.inListSinceOpened(path)):
		// Opened by a matchN, matchIf or list validator around it
		// (see translateValidators). Under matchN and matchIf only,
		// a struct in a list element (at any depth) that embeds a
		// definition stays closed, as CUE v0.17.1 keeps it; a field
		// that does is opened like any other.
	case v.IncompleteKind() == cue.BottomKind:
		// An error by itself (a validator in it fails on the value as
		// written): Allows says nothing, the source does. A struct in
		// a definition is closed unless written open.
		if !writtenOpen(v) {
			s["additionalProperties"] = false
		}
	case w.rewrapped > 0 && (forceClosed || closedLiteral(v)):
		// A struct literal in an arm read as written and closed by
		// wrapping (see Translator.closeArms), or in a struct that is
		// an error by itself: Allows calls it open, but in the
		// definition it is written in it is closed.
		s["additionalProperties"] = false
	case !w.open(v, declared, patterns):
		s["additionalProperties"] = false
	}
	if len(all) > 0 {
		return mergeInto(s, all), inf
	}
	return s, inf
}

// defaultEmptyList translates *[] | arm, which evaluation keeps as the
// open arm alone (arm: [...T], maybe with validators, which only the arm's
// own conjuncts show). The arm decides, and [] is accepted too when the
// arm's validators refuse it (list.MinItems(1)): the default arm gives it.
func (w *walker) defaultEmptyList(v, arm cue.Value, path string, depth int, m mode) (any, info) {
	written := arm
	if !w.t.opts.NoStructValidators {
		// The evaluated arm has lost its conjuncts; the written one
		// has them (but, built on its own, not the closedness of the
		// definition around it, which the evaluated arm's elements
		// keep).
		if op, args := v.Expr(); op == cue.NoOp && len(args) == 1 && args[0].IncompleteKind() == cue.ListKind {
			written = args[0]
		}
	}
	// *[] | [...T] is a disjunction to CUE: a comprehension left
	// unresolved in an element eliminates the arm as it does in an
	// element of any arm (see conditional).
	outerDepth := w.armDepth
	w.armDepth = 0
	s, inf := w.list(written, arm, path, depth, m)
	w.armDepth = outerDepth
	inf.complete = true
	if s != true && written.Unify(v.Context().CompileString("[]")).Validate(cue.Concrete(true)) != nil {
		s = anyOf([]any{map[string]any{"type": "array", "maxItems": json.Number("0")}, s})
		inf.exact = false
	}
	return s, inf
}

// eliminates reports whether fv, the value of a regular or required field
// of a struct in a disjunction arm, eliminates the arm when the instance
// leaves the field out (so the arm's partial form needs the field): a
// value a validator fails on as written does, wherever it sits in the arm;
// a struct left incomplete by a comprehension its instance must resolve
// does only as a field of the arm itself (CUE v0.17.1 treats it as
// incomplete deeper down).
func (w *walker) eliminates(fv cue.Value) bool {
	if fv.IncompleteKind() != cue.BottomKind {
		return false
	}
	if err := fv.Err(); err != nil && !cue.IsIncomplete(err) {
		return true
	}
	// (fv is a field of the struct being translated, at armDepth.)
	return w.armDepth == 0
}

// hasEllipsis reports whether struct literal lit is written open (...).
func hasEllipsis(lit *ast.StructLit) bool {
	for _, d := range lit.Elts {
		if _, ok := d.(*ast.Ellipsis); ok {
			return true
		}
	}
	return false
}

// validatorFailure reports whether v is an error only because a
// validator in it fails on the value as written (matchN over optional
// fields), which an instance may still satisfy, rather than a conflict
// no instance can mend: v calls a validator, or v is a struct literal
// whose erroneous regular fields are such values.
func (w *walker) validatorFailure(v cue.Value, depth int) bool {
	if depth > 8 {
		return false
	}
	if hasCall(v, 0) {
		return true
	}
	if sourceKind(v) != cue.StructKind && !w.peelsToStruct(v) {
		return false
	}
	iter, err := v.Fields(cue.Optional(true))
	if err != nil {
		return false
	}
	for iter.Next() {
		if iter.Selector().ConstraintType() == cue.OptionalConstraint {
			continue
		}
		if fv := iter.Value(); fv.IncompleteKind() == cue.BottomKind && !w.validatorFailure(fv, depth+1) {
			return false
		}
	}
	return true
}

// validatorArms reports whether v, an error by itself, is written as a
// disjunction one arm of which at least is no error or an error only
// because a validator fails on it as written (see validatorFailure); the
// other arms may be conflicts (they accept nothing).
func (w *walker) validatorArms(v cue.Value) bool {
	arms := w.writtenArms(v)
	if len(arms) < 2 {
		return false
	}
	for _, a := range arms {
		if a.IncompleteKind() != cue.BottomKind || a.Validate() == nil || hasCall(a, 0) || w.validatorFailure(a, 0) {
			return true
		}
	}
	return false
}

// entry is a field or pattern of a struct being translated.
type entry struct {
	sel cue.Selector
	fv  cue.Value
	re  string
	ok  bool
}

// notAllowedArtifact reports whether field en of struct v is evaluated
// as "field not allowed" though v allows it: CUE v0.17.1 evaluates so a
// list element {#D1, e?: float} in a definition that embeds another,
// while an instance unified with the whole is not refused. v unified
// with {} has the field's value back.
func notAllowedArtifact(v cue.Value, en entry) bool {
	err := en.fv.Err()
	return err != nil && strings.Contains(err.Error(), "field not allowed") && v.Allows(cue.Str(en.sel.Unquoted()))
}

// peelsToStruct reports whether v's conjuncts are a struct literal and _
// (a pattern constraint [string]: _ applies to the field).
func (w *walker) peelsToStruct(v cue.Value) bool {
	op, args := v.Expr()
	if op != cue.AndOp {
		return false
	}
	structs := 0
	for _, a := range args {
		if id, ok := exprSource(a).(*ast.Ident); ok && id.Name == "_" {
			continue
		}
		if sourceKind(a) != cue.StructKind {
			return false
		}
		structs++
	}
	return structs > 0
}

// isLiteral reports whether e is a struct or list literal.
func isLiteral(e ast.Expr) bool {
	switch e.(type) {
	case *ast.StructLit, *ast.ListLit:
		return true
	}
	return false
}

// completion returns the concrete value CUE gives v when an instance
// leaves it out (a constant, a default, a struct of optional fields).
func (w *walker) completion(v cue.Value) (cue.Value, bool) {
	d, _ := v.Default()
	if d.Validate(cue.Concrete(true)) != nil {
		return cue.Value{}, false
	}
	return d, true
}

// explicitDefault reports whether v is a disjunction with a default
// (an open list's implied default, the empty list, does not count).
func explicitDefault(v cue.Value) bool {
	if _, ok := v.Default(); !ok {
		return false
	}
	op, args := v.Eval().Expr()
	if op == cue.OrOp {
		return true
	}
	// *20 | int & >=1: the evaluated form drops the default the other
	// arm subsumes.
	return v.IncompleteKind() != cue.ListKind && v.IncompleteKind() != cue.StructKind && len(args) == 1
}

// pattern is a translated pattern constraint: re selects the labels ("" =
// any label).
type pattern struct {
	re     string
	schema any
}

// probes are labels tried to learn whether a struct is closed; one that
// is neither declared nor matched by a pattern decides.
var probes = []string{"\x00stitchkit-probe", "__stitchkit_probe__", "0", "-", "", "Z", "~", "\U0010FFFF"}

// open reports whether v accepts labels it does not declare.
func (w *walker) open(v cue.Value, declared []string, ps []pattern) bool {
	var compiled []*regexp.Regexp
	for _, p := range ps {
		if r, err := regexp.Compile(p.re); err == nil {
			compiled = append(compiled, r)
		}
	}
probe:
	for _, p := range probes {
		if slices.Contains(declared, p) {
			continue
		}
		for _, r := range compiled {
			if r.MatchString(p) {
				continue probe
			}
		}
		return v.Allows(cue.Str(p))
	}
	return true
}

// inListSinceOpened reports whether path passes through a list element
// below the struct the innermost matchN or matchIf opened.
func (w *walker) inListSinceOpened(path string) bool {
	if len(w.openedAt) == 0 {
		return false
	}
	rest, ok := strings.CutPrefix(path, w.openedAt[len(w.openedAt)-1])
	return ok && strings.Contains(rest, "[")
}

// embedsDefinition reports whether v is written as a struct literal that
// embeds a definition ({#D, extra?: int}).
func embedsDefinition(v cue.Value) bool {
	lit, ok := exprSource(v).(*ast.StructLit)
	if !ok {
		return false
	}
	for _, d := range lit.Elts {
		e, ok := d.(*ast.EmbedDecl)
		if !ok {
			continue
		}
		switch x := e.Expr.(type) {
		case *ast.Ident:
			if strings.HasPrefix(x.Name, "#") {
				return true
			}
		case *ast.SelectorExpr:
			if id, ok := x.Sel.(*ast.Ident); ok && strings.HasPrefix(id.Name, "#") {
				return true
			}
		}
	}
	return false
}

// closedLiteral reports whether v is written as one struct literal with
// neither "..." nor an embedding (which may open it).
func closedLiteral(v cue.Value) bool {
	lit, ok := exprSource(v).(*ast.StructLit)
	return ok && plainClosed(lit)
}

// plainClosed reports whether a struct literal has neither "..." nor an
// embedding.
func plainClosed(lit *ast.StructLit) bool {
	for _, d := range lit.Elts {
		switch d.(type) {
		case *ast.Ellipsis, *ast.EmbedDecl:
			return false
		}
	}
	return true
}

// writtenOpen reports whether v is written as one struct literal with
// "..." (beside _ conjuncts only, such as a [string]: _ pattern lends to
// the field): such a struct is open whatever encloses it.
func writtenOpen(v cue.Value) bool {
	src := exprSource(v)
	if src == nil {
		op, args := v.Expr()
		if op != cue.AndOp {
			return false
		}
		for _, a := range args {
			if id, ok := exprSource(a).(*ast.Ident); ok && id.Name == "_" && a.IncompleteKind() == cue.TopKind {
				continue
			}
			if src != nil {
				return false
			}
			if src = exprSource(a); src == nil {
				return false
			}
		}
	}
	var n ast.Node = src
	if id, ok := src.(*ast.Ident); ok {
		// A reference (#S: #D2): the struct it refers to.
		n = id.Node
		if f, ok := n.(*ast.Field); ok {
			n = f.Value
		}
	}
	lit, ok := n.(*ast.StructLit)
	return ok && litOpen(lit, 0)
}

// litOpen reports whether a struct literal is written open: with "...",
// or embedding a definition written open ({#D, extra?: int} with #D:
// {..., ...}).
func litOpen(lit *ast.StructLit, depth int) bool {
	if hasEllipsis(lit) {
		return true
	}
	if depth > 8 {
		return false
	}
	for _, d := range lit.Elts {
		e, ok := d.(*ast.EmbedDecl)
		if !ok {
			continue
		}
		id, ok := e.Expr.(*ast.Ident)
		if !ok {
			continue
		}
		n := id.Node
		if f, ok := n.(*ast.Field); ok {
			n = f.Value
		}
		if inner, ok := n.(*ast.StructLit); ok && litOpen(inner, depth+1) {
			return true
		}
	}
	return false
}

// defaultOf returns the JSON value CUE gives v when the data leaves it out,
// when there is one.
func (w *walker) defaultOf(v cue.Value, fi info) (any, bool) {
	if !fi.complete {
		if _, ok := v.Default(); !ok {
			return nil, false
		}
	}
	d, _ := v.Default()
	if d.Validate(cue.Concrete(true)) != nil {
		return nil, false
	}
	b, err := d.MarshalJSON()
	if err != nil {
		return nil, false
	}
	var out any
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if dec.Decode(&out) != nil {
		return nil, false
	}
	return out, true
}

// withKeyword adds keyword k to schema s (wrapping a boolean schema).
func withKeyword(s any, k string, val any) any {
	m, ok := s.(map[string]any)
	if !ok {
		if s == false {
			return s
		}
		m = map[string]any{}
	}
	m[k] = val
	return m
}

// conjoin returns a schema accepting what both a and b accept (nil is
// "nothing yet").
func conjoin(a, b any) any {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case a == true:
		return b
	case b == true:
		return a
	case a == false || b == false:
		return false
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok && len(am) == 0 {
		return b
	}
	if aok && bok && len(bm) == 0 {
		return a
	}
	var l []any
	if aok && len(am) == 1 && am["allOf"] != nil {
		l = slices.Clone(am["allOf"].([]any))
	} else {
		l = []any{a}
	}
	l = append(l, b)
	// The order conjuncts are written in must not reach the schema.
	sortByCanonical(l)
	return map[string]any{"allOf": l}
}

// conjoinAll adds the schemas in extra to s as allOf members.
func conjoinAll(s any, extra []any) any {
	if len(extra) < 2 {
		for _, e := range extra {
			s = conjoin(s, e)
		}
		return s
	}
	// One sort for all of them (conjoin sorts each time).
	l := []any{s}
	for _, e := range extra {
		switch {
		case e == false:
			return false
		case e == true:
			continue
		}
		l = append(l, e)
	}
	var flat []any
	for _, e := range l {
		if m, ok := e.(map[string]any); ok && len(m) == 1 && m["allOf"] != nil {
			flat = append(flat, m["allOf"].([]any)...)
		} else if m, ok := e.(map[string]any); ok && len(m) == 0 {
			continue
		} else if e == true {
			continue
		} else {
			flat = append(flat, e)
		}
	}
	switch len(flat) {
	case 0:
		return true
	case 1:
		return flat[0]
	}
	sortByCanonical(flat)
	return map[string]any{"allOf": flat}
}

// labelPattern translates a pattern constraint's label into a regular
// expression ("" for any label).
func (w *walker) labelPattern(p cue.Value, path string) (string, bool) {
	e := p.Eval()
	op, args := e.Expr()
	switch op {
	case cue.RegexMatchOp:
		if len(args) == 1 {
			if re, err := args[0].String(); err == nil {
				if out, ok := w.portableRegexp(p, path, re); ok {
					return out, true
				}
				return "", false
			}
		}
	case cue.OrOp:
		var alts []string
		for _, a := range args {
			s, err := a.String()
			if err != nil {
				alts = nil
				break
			}
			alts = append(alts, regexp.QuoteMeta(s))
		}
		if len(alts) > 0 {
			slices.Sort(alts)
			return "^(?:" + strings.Join(alts, "|") + ")$", true
		}
	case cue.NoOp:
		if s, err := p.String(); err == nil {
			return "^" + regexp.QuoteMeta(s) + "$", true
		}
		if p.IncompleteKind() == cue.StringKind || p.IncompleteKind() == cue.TopKind {
			return "", true
		}
	}
	w.refuse(p, path, fmt.Sprintf("the label constraint [%v]", p), "only a regular expression (=~), a string, an enum of strings or string/_ can select labels in JSON Schema (patternProperties)", `write [=~"^prefix_"]: T, or declare the fields`)
	return "", false
}

// list translates a list value: validators come from v, elements from
// elems (the evaluated list when v is *[] | [...T]).
func (w *walker) list(v, elems cue.Value, path string, depth int, m mode) (any, info) {
	s := map[string]any{"type": "array"}
	inf := info{complete: true, exact: true}
	var all []any
	if w.listValidators(v, path, depth, m, &all, &inf) {
		w.opened++
		w.listOpened++
		defer func() { w.opened--; w.listOpened-- }()
	}
	var prefix []any
	fixed := -1 // unknown
	if l, ok := exprSource(elems).(*ast.ListLit); ok {
		// One list literal: its source says how many elements are
		// fixed (each lookup builds an evaluation context).
		fixed = 0
		for _, e := range l.Elts {
			switch e.(type) {
			case *ast.Ellipsis:
			case *ast.Comprehension:
				fixed = -1
			default:
				if fixed >= 0 {
					fixed++
				}
			}
			if fixed < 0 {
				break
			}
		}
	}
	for i := 0; fixed < 0 || i < fixed; i++ {
		ev := elems.LookupPath(cue.MakePath(cue.Index(i)))
		if !ev.Exists() {
			break
		}
		if i >= 10000 {
			w.refuse(v, path, "a list of more than 10000 fixed elements", "too large to translate", "use [...T] with list.MaxItems")
			return false, info{}
		}
		w.armDepth++
		es, ei := w.valueInfo(ev, joinPath(path, fmt.Sprintf("[%d]", i)), depth+1, m)
		w.armDepth--
		if !ei.complete {
			inf.complete = false
		}
		if !ei.exact {
			inf.exact = false
		}
		prefix = append(prefix, es)
	}
	rest := elems.LookupPath(cue.MakePath(cue.AnyIndex))
	if len(prefix) > 0 {
		s["prefixItems"] = prefix
		s["minItems"] = json.Number(fmt.Sprint(len(prefix)))
	}
	if rest.Exists() {
		w.armDepth++
		rs, ri := w.valueInfo(rest, joinPath(path, "[_]"), depth+1, m)
		w.armDepth--
		if !ri.exact {
			inf.exact = false
		}
		if rs != true {
			s["items"] = rs
		}
	} else if len(prefix) > 0 || !validatorOnly(elems) {
		s["items"] = false
	}
	if len(all) > 0 {
		return mergeInto(s, all), inf
	}
	return s, inf
}

// labelAliased reports whether the pattern constraint fv is written with
// a label alias ([Name=string]: …), whose value may refer to the label.
func labelAliased(fv cue.Value) bool {
	f, ok := fv.Source().(*ast.Field)
	if !ok {
		return false
	}
	l, ok := f.Label.(*ast.ListLit)
	if !ok || len(l.Elts) != 1 {
		return false
	}
	_, ok = l.Elts[0].(*ast.Alias)
	return ok
}

// unprobe replaces, in the schema of a pattern's value, the label filled
// in to translate it (probe) by what it stands for: any label the pattern
// matches. JSON Schema cannot say that a value equals the name of the
// member holding it, so {name: Name} accepts any such name and the runner
// cannot fill it in (see docs/contract-language.md); a value computed
// from the label ("x-" + Name) is refused.
func (w *walker) unprobe(at cue.Value, path string, s any, probe, re string) any {
	label := map[string]any{"type": "string"}
	if re != "" {
		label["pattern"] = re
	}
	leaked := false
	var walk func(x any) any
	walk = func(x any) any {
		switch t := x.(type) {
		case map[string]any:
			if c, ok := t["const"].(string); ok && c == probe {
				out := map[string]any{}
				for k, v := range t {
					if k != "const" && k != "default" {
						out[k] = v
					}
				}
				for k, v := range label {
					out[k] = v
				}
				return out
			}
			for k, v := range t {
				t[k] = walk(v)
			}
		case []any:
			for i, v := range t {
				t[i] = walk(v)
			}
		case string:
			if len(probe) >= 8 && strings.Contains(t, probe) {
				leaked = true
			}
		}
		return x
	}
	s = walk(s)
	if leaked {
		w.refuse(at, path, "a value computed from a label alias", "JSON Schema cannot relate a member's value to its name", "use the alias's value as it is ({name: Name}), or drop the alias")
		return false
	}
	w.warn(at, path, "label-alias", "a field equal to its member's name ([Name=string]: {name: Name}) is checked as any name the label accepts, and the runner does not fill it in", "send the field with each member, or drop it")
	return s
}

// validatorOnly reports whether v is written as list validators alone
// (list.MinItems(1)), no list literal: CUE accepts any elements.
func validatorOnly(v cue.Value) bool {
	if _, ok := exprSource(v).(*ast.ListLit); ok {
		return false
	}
	op, args := v.Expr()
	switch op {
	case cue.CallOp:
		return true
	case cue.AndOp:
		calls := 0
		for _, a := range args {
			switch o, _ := a.Expr(); {
			case o == cue.CallOp:
				calls++
			case a.IncompleteKind() == cue.TopKind && !a.IsConcrete():
				// (_: an arm read as written is filled into a
				// definition #W: _.)
			default:
				return false
			}
		}
		return calls > 0
	}
	return false
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
}

var _ = token.NoPos

// patternProbe returns a label the pattern selects that v does not
// declare.
func patternProbe(p cue.Value, re string, v cue.Value, declared map[string]bool) (string, bool) {
	var cands []string
	if re == "" {
		cands = probes
	} else if r, err := regexp.Compile(re); err == nil {
		if tree, err := syntax.Parse(re, syntax.Perl); err == nil {
			sample := sampleMatch(tree.Simplify())
			// (Variants, for when a field is declared with the
			// sample's name.)
			cands = append(cands, sample, sample+"0", sample+"_", sample+"z", sample+sample)
		}
		cands = append(cands, probes...)
		var ok []string
		for _, c := range cands {
			if r.MatchString(c) {
				ok = append(ok, c)
			}
		}
		cands = ok
	}
	for _, c := range cands {
		// (Not a declared field, optional or required ones included:
		// filled in, it would carry that field's value too.)
		if !declared[c] && !v.LookupPath(cue.MakePath(cue.Str(c))).Exists() {
			return c, true
		}
	}
	return "", false
}

// sampleMatch builds a short string the regular expression matches (best
// effort; the caller checks it).
func sampleMatch(re *syntax.Regexp) string {
	switch re.Op {
	case syntax.OpLiteral:
		return string(re.Rune)
	case syntax.OpCharClass:
		if len(re.Rune) > 0 {
			return string(re.Rune[0])
		}
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return "a"
	case syntax.OpCapture, syntax.OpPlus:
		return sampleMatch(re.Sub[0])
	case syntax.OpRepeat:
		return strings.Repeat(sampleMatch(re.Sub[0]), re.Min)
	case syntax.OpConcat:
		var b strings.Builder
		for _, s := range re.Sub {
			b.WriteString(sampleMatch(s))
		}
		return b.String()
	case syntax.OpAlternate:
		return sampleMatch(re.Sub[0])
	}
	return ""
}

// hasCall reports whether a conjunct of v is a validator call.
func hasCall(v cue.Value, depth int) bool {
	if depth > 4 {
		return false
	}
	op, args := v.Expr()
	switch op {
	case cue.CallOp:
		return true
	case cue.AndOp:
		for _, a := range args {
			if hasCall(a, depth+1) {
				return true
			}
		}
	}
	return false
}

// doc returns the doc comments of v as a description ("" when none, or
// when the Translator's DropDoc drops them all).
func (w *walker) doc(v cue.Value) string {
	var parts []string
	for _, cg := range v.Doc() {
		t := strings.TrimSpace(cg.Text())
		if t == "" || w.t.opts.DropDoc != nil && w.t.opts.DropDoc(t) || slices.Contains(parts, t) {
			continue
		}
		parts = append(parts, t)
	}
	return strings.Join(parts, "\n\n")
}

// literal reports whether v's source shows it is not a reference (a
// struct, list or basic literal, a predeclared type such as int, a
// conjunction or an operator), so asking CUE for its reference path — which
// costs — can be skipped. A disjunction is not a literal: it may be
// written through references to fields (see writtenOr).
func literal(v cue.Value) bool {
	src := v.Source()
	if f, ok := src.(*ast.Field); ok {
		src = f.Value
	}
	switch x := src.(type) {
	case *ast.StructLit, *ast.ListLit, *ast.BasicLit, *ast.CallExpr, *ast.Interpolation:
		return true
	case *ast.UnaryExpr:
		_, lit := x.X.(*ast.BasicLit)
		return lit || x.Op != token.MUL && x.Op != token.AND
	case *ast.BinaryExpr:
		return x.Op != token.OR
	case *ast.Ident:
		// A predeclared type (a field of another file of the package
		// is unresolved in this one too, so only these names).
		return x.Node == nil && predeclared[x.Name]
	}
	return false
}

// predeclared are CUE's predeclared types.
var predeclared = map[string]bool{
	"_": true, "bool": true, "string": true, "bytes": true, "number": true, "int": true, "float": true, "null": true,
	"uint": true, "uint8": true, "uint16": true, "uint32": true, "uint64": true, "uint128": true,
	"int8": true, "int16": true, "int32": true, "int64": true, "int128": true,
	"float32": true, "float64": true, "rune": true,
}
