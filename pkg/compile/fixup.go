package compile

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/token"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// schemaFixer rewrites the output of encoding/jsonschema.Generate where it
// disagrees with what the CUE value accepts, walking the (normalised)
// schema alongside the value it was generated from:
//
//   - a regular field is required. Generate leaves a regular field with a
//     concrete value (kind: "email", items: [...T], meta: {n?: int}) out
//     of "required" because CUE would fill it in; at run time nothing fills
//     it in, so a regular field is required unless it has a default
//     (x: *1 | int). Only x?: is optional.
//   - a "const" holding an object is rewritten as an object schema:
//     Generate writes {...} (open) as {"const": {}} inside a definition,
//     which refuses every non-empty object; a closed struct becomes
//     {"type": "object", "additionalProperties": false} plus one const
//     property per field.
//   - an object schema with a $ref to an object $defs entry next to its own
//     properties is what Generate makes of an embedding ({#Base, id:
//     string}) or a conjunction (#Base & {done?: bool}); JSON Schema
//     applies both closed objects and refuses every instance. The entry's
//     properties are merged into the node, and additionalProperties and the
//     property set follow what the CUE value allows.
//   - a closed struct gets "additionalProperties": false when Generate
//     left it out (an empty struct; a struct with only pattern
//     constraints, whose other labels CUE refuses).
//   - an object schema with no properties for a struct with fields is
//     what Generate makes of a struct embedding a definition inside a
//     schema's field ({t: {#Base, id: string}}: the conjunct it reads
//     evaluates to "field not allowed"); it is rebuilt by generating each
//     field alone (see rebuild).
//   - patternProperties, additionalProperties, items, prefixItems, allOf
//     and the arms of a disjunction are walked with the CUE value they
//     were generated from; a union arm or pattern that cannot be matched
//     to its value is refused (a positioned json-schema diagnostic), as
//     is a pattern value CUE cannot evaluate alone.
//   - not, if/then/else, oneOf and the anyOf/allOf of matchN/matchIf are
//     left as Generate made them (see arms); Generate never writes
//     dependentSchemas.
//
// $defs entries are walked with the value each reference resolved to
// (recorded by the NamesFunc given to Generate).
type schemaFixer struct {
	doc      map[string]any
	defVals  map[string]cue.Value
	builtins map[string]string
	defs     map[string]any // doc["$defs"], nil when absent
	rawDefs  map[string]any // each $defs entry as Generate made it (before fix-ups)
	regen    func(cue.Value) (generated, error)
	lost     []string // fields of a struct Generate left out and regen could not recover
	problems []fixProblem
}

// fixProblem is a part of the schema the fix-ups cannot make mean what the
// CUE value means; the schema is refused.
type fixProblem struct {
	pos token.Pos
	msg string
}

// fixError is the error fixSchema returns for problems: pos is the CUE
// value the first one is about.
type fixError struct {
	pos token.Pos
	msg string
}

func (e *fixError) Error() string { return e.msg }

const maxFixDepth = 200

// fixSchema fixes up g.doc, generated from v, in place. regen generates
// (and normalises, without fixing up) another value: a struct whose fields
// Generate left out is rebuilt from its fields, and a union arm is matched
// to its disjunct by generating the disjunct alone.
func fixSchema(g generated, v cue.Value, regen func(cue.Value) (generated, error)) error {
	f := &schemaFixer{doc: g.doc, defVals: g.defVals, builtins: g.builtins, regen: regen, rawDefs: map[string]any{}}
	f.defs, _ = g.doc["$defs"].(map[string]any)
	for name, def := range f.defs {
		f.rawDefs[name] = deepCopy(def)
		f.defs[name] = f.builtinDef(name, def)
	}
	// Definitions first: a node that embeds one copies its (fixed)
	// properties.
	names := make([]string, 0, len(f.defs))
	for name := range f.defs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if dv, ok := f.defVals[name]; ok && dv.Exists() {
			f.node(f.defs[name], dv, 0)
		}
	}
	f.node(g.doc, v, 0)
	f.pruneDefs()
	if len(f.problems) > 0 {
		slices.SortStableFunc(f.problems, func(a, b fixProblem) int { return strings.Compare(a.msg, b.msg) })
		msgs := make([]string, 0, len(f.problems))
		for _, p := range f.problems {
			msgs = append(msgs, p.msg)
		}
		return &fixError{pos: f.problems[0].pos, msg: strings.Join(slices.Compact(msgs), "; ")}
	}
	if len(f.lost) > 0 {
		slices.Sort(f.lost)
		return fmt.Errorf("the generator left out the fields %s of a struct and they could not be generated one by one (declare that field's schema as a definition, e.g. #T: {#Base, id: string}, and refer to it)", strings.Join(slices.Compact(f.lost), ", "))
	}
	return nil
}

// builtinDef returns the $defs entry name should hold: time.Time accepts
// RFC 3339 text, as time.Format(time.RFC3339) does, which Generate maps to
// "date-time".
func (f *schemaFixer) builtinDef(name string, def any) any {
	if f.builtins[name] == "time.Time" {
		return map[string]any{"type": "string", "format": "date-time"}
	}
	return def
}

func (f *schemaFixer) problem(at cue.Value, format string, args ...any) {
	f.problems = append(f.problems, fixProblem{pos: at.Pos(), msg: fmt.Sprintf(format, args...)})
}

type fieldInfo struct {
	val      cue.Value
	regular  bool
	required bool // x!: T
}

func structFields(v cue.Value) map[string]fieldInfo {
	iter, err := v.Fields(cue.Optional(true))
	if err != nil {
		return nil
	}
	out := map[string]fieldInfo{}
	for iter.Next() {
		sel := iter.Selector()
		ct := sel.ConstraintType()
		out[sel.Unquoted()] = fieldInfo{val: iter.Value(), regular: ct != cue.OptionalConstraint && ct != cue.RequiredConstraint && ct != cue.PatternConstraint, required: ct == cue.RequiredConstraint}
	}
	return out
}

func (f *schemaFixer) node(s any, v cue.Value, depth int) {
	m, ok := s.(map[string]any)
	if !ok || depth > maxFixDepth || !v.Exists() {
		return
	}
	if c, ok := m["const"]; ok && hasObject(c) {
		delete(m, "const")
		for k, e := range constSchema(c, v).(map[string]any) {
			m[k] = e
		}
	}
	if ref, ok := m["$ref"].(string); ok && isObjectNode(m) {
		f.mergeRef(m, ref, v)
	}
	if m["type"] == "object" && v.IncompleteKind() == cue.StructKind && !hasObjectKeyword(m) {
		if fields := structFields(v); len(fields) > 0 {
			// An object schema with no properties for a struct with
			// fields: Generate left them out (it does so for a struct
			// embedding a definition inside a schema's field: the
			// conjunct it reads is an error, "field not allowed").
			f.rebuild(m, v, fields)
		}
	}
	if props, ok := m["properties"].(map[string]any); ok {
		fields := structFields(v)
		for name, ps := range props {
			fi, ok := fields[name]
			if !ok {
				continue
			}
			if fi.regular {
				// Default reports a default for an open list too ([...T]
				// defaults to []); a marked default makes the value
				// non-concrete.
				if _, hasDefault := fi.val.Default(); !hasDefault || fi.val.IsConcrete() {
					addRequired(m, name)
				}
			}
			f.node(ps, fi.val, depth+1)
		}
	}
	if m["type"] == "object" && v.IncompleteKind() == cue.StructKind && !v.Allows(cue.AnyString) {
		_, ap := m["additionalProperties"]
		applied := false
		for _, k := range []string{"allOf", "anyOf", "oneOf", "$ref", "if", "dependentSchemas", "unevaluatedProperties"} {
			if _, ok := m[k]; ok {
				applied = true
			}
		}
		if !ap && !applied {
			// A closed struct: a field matching none of its fields and
			// pattern constraints is refused (additionalProperties
			// applies to what properties and patternProperties do not
			// match).
			m["additionalProperties"] = false
		}
	}
	if pp, ok := m["patternProperties"].(map[string]any); ok {
		pats := patternValues(v)
		for re, ps := range pp {
			pv, ok := pats[re]
			if ok && pv.Err() != nil && needsValue(ps) {
				// cuelang.org/go v0.17.1 evaluates a pattern's value
				// alone and reports "field not allowed" for one
				// embedding a definition ([=~"^x_"]: {#Base, id:
				// string}); no label matching the pattern can be made
				// up to ask for it instead (as anyStringValue does).
				f.problem(v, "the value of the pattern constraint [=~%q] cannot be evaluated on its own (%v); declare it as a definition (#T: {#Base, id: string}) and refer to it", re, oneLine(pv.Err()))
			} else if ok {
				f.node(ps, pv, depth+1)
			} else if needsValue(ps) {
				f.problem(v, "the pattern constraint [=~%q] could not be matched to its CUE value to make its regular fields required", re)
			}
		}
	}
	if ap, ok := m["additionalProperties"].(map[string]any); ok {
		f.node(ap, anyStringValue(v), depth+1)
	}
	if it, ok := m["items"].(map[string]any); ok {
		f.node(it, v.LookupPath(cue.MakePath(cue.AnyIndex)), depth+1)
	}
	if pi, ok := m["prefixItems"].([]any); ok {
		for i, e := range pi {
			f.node(e, v.LookupPath(cue.MakePath(cue.Index(i))), depth+1)
		}
	}
	if all, ok := m["allOf"].([]any); ok {
		for _, e := range all {
			f.node(e, v, depth+1)
		}
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if arms, ok := m[k].([]any); ok {
			f.arms(arms, v, depth)
		}
	}
}

// arms walks the arms of an anyOf/oneOf with the disjuncts of v they were
// generated from. Generate reorders and deduplicates arms, so an arm is
// matched to a disjunct by kind and field names and, when that leaves
// none or several, by generating each candidate disjunct alone and
// comparing. An arm holding fields that matches no disjunct is a problem:
// left alone, its regular fields would stay optional.
//
// A value that is no disjunction (anyOf/oneOf/allOf/not/if of matchN and
// matchIf) is left as Generate made it: those validators test that the
// instance unifies with each schema, so CUE requires none of the fields
// inside them and "a regular field is required" does not apply (and under
// not, oneOf and if it would make the schema accept what CUE refuses).
func (f *schemaFixer) arms(arms []any, v cue.Value, depth int) {
	ds := disjuncts(v, 0)
	if len(ds) == 0 {
		return
	}
	used := make([]bool, len(ds))
	var gens []map[string]any // ds[i] generated alone, on demand
	genOf := func(i int) map[string]any {
		if gens == nil {
			gens = make([]map[string]any, len(ds))
		}
		if gens[i] == nil {
			gens[i] = map[string]any{}
			if g, err := f.regen(ds[i]); err == nil && g.doc != nil {
				delete(g.doc, "$schema")
				delete(g.doc, "$defs")
				gens[i] = g.doc
			}
		}
		return gens[i]
	}
	for _, arm := range arms {
		am, ok := arm.(map[string]any)
		if !ok {
			continue
		}
		var cands []int
		for i, d := range ds {
			if armMatches(am, d) {
				cands = append(cands, i)
			}
		}
		best := -1
		if len(cands) == 1 {
			best = cands[0]
		} else {
			// None or several by kind and field names: the disjunct
			// that generates this very arm. Disjuncts generating the
			// same arm are interchangeable.
			pool := cands
			if len(pool) == 0 {
				pool = make([]int, len(ds))
				for i := range ds {
					pool[i] = i
				}
			}
			for _, same := range []func(gen, arm map[string]any) bool{sameArm, sameSignature} {
				for _, i := range pool {
					if same(genOf(i), am) && (best < 0 || used[best] && !used[i]) {
						best = i
					}
				}
				if best >= 0 {
					break
				}
			}
		}
		if best < 0 {
			if needsValue(am) {
				f.problem(v, "an arm of the union %v could not be matched to its disjunct to make its regular fields required (the generated arm: %s)", v, compactJSON(am))
			}
			continue
		}
		used[best] = true
		f.node(am, ds[best], depth+1)
	}
}

// sameArm compares an arm with a disjunct generated alone. Generated
// alone, a disjunct of a definition's field is no longer in a closed
// context, so "additionalProperties": false is left out of the
// comparison (closedness is read from the CUE value when the arm is
// walked).
func sameArm(gen, arm map[string]any) bool {
	return jsonEqual(withoutClosed(gen), withoutClosed(arm))
}

// sameSignature compares what tells disjuncts apart and does not depend
// on the context a struct is generated in: property names, scalar types,
// consts and enums of scalars, references, recursively through
// properties, items and arms. ({...} is {"const": {}} inside a closed
// context and {"type": "object"} outside.)
func sameSignature(gen, arm map[string]any) bool {
	return jsonEqual(signature(gen), signature(arm))
}

func signature(s any) any {
	m, ok := s.(map[string]any)
	if !ok {
		return s
	}
	out := map[string]any{}
	if props, ok := m["properties"].(map[string]any); ok {
		ps := map[string]any{}
		for k, e := range props {
			ps[k] = signature(e)
		}
		out["properties"] = ps
	}
	if c, ok := m["const"]; ok && !hasObject(c) {
		out["const"] = c
	}
	for _, k := range []string{"enum", "$ref", "items", "prefixItems", "anyOf", "oneOf"} {
		if e, ok := m[k]; ok {
			if l, isList := e.([]any); isList && k != "enum" {
				sl := make([]any, len(l))
				for i, x := range l {
					sl[i] = signature(x)
				}
				out[k] = sl
			} else if k == "items" {
				out[k] = signature(e)
			} else {
				out[k] = e
			}
		}
	}
	if ts, ok := typeSet(m["type"]); ok {
		var scalar []string
		for _, t := range ts {
			if t != "object" {
				scalar = append(scalar, t)
			}
		}
		if len(scalar) > 0 {
			out["type"] = scalar
		}
	}
	return out
}

func withoutClosed(s any) any {
	switch x := s.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if k == "additionalProperties" && e == false || k == "description" {
				continue
			}
			out[k] = withoutClosed(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = withoutClosed(e)
		}
		return out
	}
	return s
}

// needsValue reports whether schema s holds an object or list schema the
// fix-ups read a CUE value for (a $ref alone is fixed where its $defs
// entry is).
func needsValue(s any) bool {
	m, ok := s.(map[string]any)
	if !ok {
		return false
	}
	if _, ok := m["properties"]; ok {
		return true
	}
	if hasObject(m["const"]) {
		return true
	}
	if ts, ok := typeSet(m["type"]); ok && (slices.Contains(ts, "object") || slices.Contains(ts, "array")) {
		return true
	}
	for _, k := range []string{"patternProperties", "additionalProperties", "items", "prefixItems", "anyOf", "oneOf", "allOf"} {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

func compactJSON(v any) string {
	b, err := graph.CanonicalSchema(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// hasObjectKeyword reports whether m says anything about an object's
// properties (or defers to another schema that may); an
// additionalProperties accepting anything ({...}) says nothing.
func hasObjectKeyword(m map[string]any) bool {
	if ap, ok := m["additionalProperties"]; ok {
		if am, isMap := ap.(map[string]any); !(ap == true || isMap && len(am) == 0) {
			return true
		}
	}
	for _, k := range []string{"properties", "patternProperties", "propertyNames", "minProperties", "maxProperties", "required", "dependentSchemas", "dependentRequired", "unevaluatedProperties", "allOf", "anyOf", "oneOf", "not", "if", "$ref", "const", "enum"} {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

// rebuild fills in the properties of object schema m, which Generate left
// out, by generating each field of v alone. Their $defs entries join the
// document's (an entry of the same name must be the same schema). A
// struct with pattern constraints is not rebuilt (its fields are lost).
func (f *schemaFixer) rebuild(m map[string]any, v cue.Value, fields map[string]fieldInfo) {
	lose := func() {
		for name := range fields {
			f.lost = append(f.lost, strconv.Quote(name))
		}
	}
	if len(patternValues(v)) > 0 || f.regen == nil {
		lose()
		return
	}
	names := slices.Sorted(maps.Keys(fields))
	props := map[string]any{}
	newDefs := map[string]any{}
	newVals := map[string]cue.Value{}
	for _, name := range names {
		fi := fields[name]
		g, err := f.regen(fi.val)
		if err != nil || g.doc == nil {
			lose()
			return
		}
		defs, _ := g.doc["$defs"].(map[string]any)
		for dn, def := range defs {
			prev, ok := f.rawDefs[dn]
			if !ok {
				prev, ok = newDefs[dn]
			}
			if ok && !jsonEqual(prev, def) {
				lose()
				return
			}
			newDefs[dn] = def
			newVals[dn] = g.defVals[dn]
			if b, ok := g.builtins[dn]; ok {
				f.builtins[dn] = b
			}
		}
		delete(g.doc, "$schema")
		delete(g.doc, "$defs")
		props[name] = g.doc
	}
	for _, dn := range slices.Sorted(maps.Keys(newDefs)) {
		if _, ok := f.rawDefs[dn]; ok {
			continue
		}
		if f.defs == nil {
			f.defs = map[string]any{}
			f.doc["$defs"] = f.defs
		}
		f.rawDefs[dn] = deepCopy(newDefs[dn])
		f.defs[dn] = f.builtinDef(dn, newDefs[dn])
		f.defVals[dn] = newVals[dn]
		if dv := newVals[dn]; dv.Exists() {
			f.node(f.defs[dn], dv, 0)
		}
	}
	m["properties"] = props
	for _, name := range names {
		if fields[name].required {
			addRequired(m, name)
		}
	}
}

// patternValues maps the regular expression Generate writes for each
// pattern constraint of struct v (see regexpForValue in
// encoding/jsonschema) to the constraint's value; constraints with the
// same expression are unified. The "any string" pattern ([string]: T)
// is left out: Generate writes it as additionalProperties, walked with
// v.LookupPath(cue.MakePath(cue.AnyString)).
func patternValues(v cue.Value) map[string]cue.Value {
	if v.IncompleteKind()&cue.StructKind == 0 {
		return nil
	}
	iter, err := v.Fields(cue.Optional(true), cue.Patterns(true))
	if err != nil {
		return nil
	}
	var out map[string]cue.Value
	for iter.Next() {
		sel := iter.Selector()
		if sel.ConstraintType() != cue.PatternConstraint {
			continue
		}
		re, ok := patternRegexp(sel.Pattern())
		if !ok {
			continue
		}
		if out == nil {
			out = map[string]cue.Value{}
		}
		if prev, ok := out[re]; ok {
			out[re] = prev.Unify(iter.Value())
		} else {
			out[re] = iter.Value()
		}
	}
	return out
}

// anyStringValue returns the value of a field of struct v that none of its
// fields and patterns name ([string]: T, ...T). LookupPath(AnyString)
// reports "field not allowed" when T embeds a definition ([string]:
// {#Base, id: string}); a field filled in under a fresh label is then
// asked instead.
func anyStringValue(v cue.Value) cue.Value {
	e := v.LookupPath(cue.MakePath(cue.AnyString))
	if e.Err() == nil || !v.Allows(cue.AnyString) {
		return e
	}
	label := "\x00any"
	for v.LookupPath(cue.MakePath(cue.Str(label))).Exists() {
		label += "_"
	}
	p := cue.MakePath(cue.Str(label))
	if probe := v.FillPath(p, v.Context().CompileString("_")).LookupPath(p); probe.Err() == nil {
		return probe
	}
	return e
}

// patternRegexp mirrors regexpForValue1 in encoding/jsonschema, less the
// "any string" case.
func patternRegexp(p cue.Value) (string, bool) {
	op, args := p.Expr()
	if op == cue.RegexMatchOp {
		if len(args) != 1 {
			return "", false
		}
		s, err := args[0].String()
		return s, err == nil
	}
	if s, err := p.String(); err == nil {
		return "^" + regexp.QuoteMeta(s) + "$", true
	}
	return "", false
}

func disjuncts(v cue.Value, depth int) []cue.Value {
	if depth > 50 {
		return nil
	}
	op, args := v.Expr()
	if op != cue.OrOp {
		if depth == 0 {
			return nil
		}
		return []cue.Value{v}
	}
	var out []cue.Value
	for _, a := range args {
		out = append(out, disjuncts(a, depth+1)...)
	}
	return out
}

func armMatches(arm map[string]any, d cue.Value) bool {
	k := d.IncompleteKind()
	ts, _ := typeSet(arm["type"])
	var names map[string]any
	if props, ok := arm["properties"].(map[string]any); ok {
		names = props
	} else if c, ok := arm["const"].(map[string]any); ok {
		names = c
	} else if slices.Contains(ts, "object") {
		names = map[string]any{}
	}
	if names != nil {
		if k != cue.StructKind {
			return false
		}
		fields := structFields(d)
		if len(fields) != len(names) {
			return false
		}
		for name := range names {
			if _, ok := fields[name]; !ok {
				return false
			}
		}
		return true
	}
	_, items := arm["items"]
	_, prefix := arm["prefixItems"]
	_, c := arm["const"].([]any)
	if slices.Contains(ts, "array") || items || prefix || c {
		return k == cue.ListKind
	}
	return false
}

// mergeRef inlines the object $defs entry ref points to into m, an object
// schema of its own: CUE unifies the two (an embedding adds the fields, a
// conjunction keeps what both allow), JSON Schema would apply two closed
// objects side by side.
func (f *schemaFixer) mergeRef(m map[string]any, ref string, v cue.Value) {
	name, ok := strings.CutPrefix(ref, "#/$defs/")
	if !ok || f.defs == nil || v.IncompleteKind() != cue.StructKind {
		return
	}
	target, ok := f.defs[name].(map[string]any)
	if !ok || !isObjectNode(target) {
		return
	}
	target = deepCopy(target).(map[string]any)
	merged := map[string]any{}
	for k, tv := range target {
		switch k {
		case "properties", "patternProperties":
			tp, _ := tv.(map[string]any)
			mp, _ := m[k].(map[string]any)
			out := map[string]any{}
			for p, s := range tp {
				out[p] = s
			}
			for p, s := range mp {
				if prev, ok := out[p]; ok {
					out[p] = map[string]any{"allOf": []any{prev, s}}
				} else {
					out[p] = s
				}
			}
			merged[k] = out
		case "required":
			r := unionStrings(tv, m[k])
			if m[k] == nil {
				r = tv
			}
			merged[k] = r
		case "additionalProperties", "description", "title", "$comment":
		case "$defs", "$schema", "$id", "unevaluatedProperties", "allOf", "anyOf", "oneOf", "$ref":
			return
		default:
			if mv, ok := m[k]; ok {
				if k == "type" {
					t, ok := intersectTypes(mv, tv)
					if !ok {
						return
					}
					merged[k] = t
					continue
				}
				if !jsonEqual(mv, tv) {
					return
				}
			}
			merged[k] = tv
		}
	}
	tap, tHas := target["additionalProperties"].(map[string]any)
	map_, mHas := m["additionalProperties"].(map[string]any)
	for k, e := range merged {
		m[k] = e
	}
	delete(m, "$ref")
	if v.Allows(cue.AnyString) {
		switch {
		case tHas && mHas:
			m["additionalProperties"] = map[string]any{"allOf": []any{tap, map_}}
		case tHas:
			m["additionalProperties"] = tap
		case mHas:
		default:
			delete(m, "additionalProperties")
		}
		return
	}
	m["additionalProperties"] = false
	if props, ok := m["properties"].(map[string]any); ok {
		for p := range props {
			// Allows reports an optional field declared by one
			// conjunct (#Base & {done?: bool}) as allowed although the
			// other conjunct refuses it; filling it in tells.
			path := cue.MakePath(cue.Str(p))
			if v.FillPath(path, v.Context().CompileString("_")).LookupPath(path).Err() != nil {
				delete(props, p)
			}
		}
	}
}

// pruneDefs removes $defs entries no longer referenced (after mergeRef).
func (f *schemaFixer) pruneDefs() {
	if f.defs == nil {
		return
	}
	for changed := true; changed; {
		changed = false
		for name := range f.defs {
			if countRefs(f.doc, "#/$defs/"+name) == 0 {
				delete(f.defs, name)
				changed = true
			}
		}
	}
	if len(f.defs) == 0 {
		delete(f.doc, "$defs")
	}
}

func isObjectNode(m map[string]any) bool {
	if ts, ok := typeSet(m["type"]); ok && slices.Contains(ts, "object") && len(ts) == 1 {
		return true
	}
	_, p := m["properties"]
	_, ap := m["additionalProperties"]
	return p || ap
}

func addRequired(m map[string]any, name string) {
	req, _ := m["required"].([]any)
	for _, r := range req {
		if r == name {
			return
		}
	}
	m["required"] = append(req, name)
}

func hasObject(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return true
	case []any:
		for _, e := range x {
			if hasObject(e) {
				return true
			}
		}
	}
	return false
}

// constSchema returns a schema accepting exactly const c, reading the
// openness of each object from the CUE value v it was generated from.
func constSchema(c any, v cue.Value) any {
	switch x := c.(type) {
	case map[string]any:
		out := map[string]any{"type": "object"}
		if len(x) > 0 {
			props := map[string]any{}
			var req []any
			for k, e := range x {
				props[k] = constSchema(e, v.LookupPath(cue.MakePath(cue.Str(k))))
				req = append(req, k)
			}
			out["properties"] = props
			out["required"] = req
		}
		if !v.Exists() || !v.Allows(cue.AnyString) {
			out["additionalProperties"] = false
		}
		return out
	case []any:
		if !hasObject(x) {
			return map[string]any{"const": x}
		}
		items := make([]any, len(x))
		for i, e := range x {
			items[i] = constSchema(e, v.LookupPath(cue.MakePath(cue.Index(i))))
		}
		return map[string]any{"type": "array", "prefixItems": items, "items": false, "minItems": jsonInt(len(x))}
	}
	return map[string]any{"const": c}
}

func jsonInt(n int) json.Number { return json.Number(strconv.Itoa(n)) }

func jsonEqual(a, b any) bool { return reflect.DeepEqual(a, b) }

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}
