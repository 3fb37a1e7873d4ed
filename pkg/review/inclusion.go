package review

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// Whole-set inclusion. Comparing two schemas keyword by keyword (or union
// branch by branch) is right when both have the same shape; when the shape
// changes — a union of variants collapsing into one object that accepts
// every old variant, an object split into variants, a default arm added to
// a union that another arm already covers — only the sets of values
// decide. includes answers "does every value a admits satisfy b?" for the
// schemas stitchkit's translator writes (objects, arrays, tuples,
// scalars with bounds, patterns and formats, value sets, unions), and says
// "unknown" for anything it does not model, so callers fall back to the
// keyword walk.

// maxInclusionDepth bounds the nesting includes walks (a recursive
// definition compared with itself goes no deeper).
const maxInclusionDepth = 24

// maxInclusionVisits bounds the schema pairs the inclusion decisions of
// one comparison visit in all: a schema whose definitions refer to one
// another twice over is a tree of exponential size, and past the budget
// the sets are undecided (the walk branch by branch decides alone).
const maxInclusionVisits = 4000

// constraintKeys lists the keywords includes understands; a schema with
// any other keyword (not, if, patternProperties, …) is undecided.
var inclusionKeys = map[string]bool{
	"type": true, "enum": true, "const": true,
	"minimum": true, "exclusiveMinimum": true, "maximum": true, "exclusiveMaximum": true, "multipleOf": true,
	"minLength": true, "maxLength": true, "minItems": true, "maxItems": true,
	"pattern": true, "format": true, "uniqueItems": true,
	"properties": true, "required": true, "additionalProperties": true,
	"items": true, "prefixItems": true, "anyOf": true, "oneOf": true,
	"deprecated": true, "readOnly": true, "writeOnly": true,
}

// includes reports whether every value schema a (in document aRoot)
// admits is admitted by b (in bRoot); known is false when that is not
// decided here.
func (d *schemaDiff) includes(aRoot, a, bRoot, b any, depth int) (yes, known bool) {
	if d.inclusionBudget--; depth > maxInclusionDepth || d.inclusionBudget < 0 {
		return false, false
	}
	ar, br := resolve(aRoot, a), resolve(bRoot, b)
	am, bm := ar.m, br.m
	if am == nil || bm == nil {
		return false, false
	}
	if unconstrained(bm) {
		return true, true
	}
	if nothing(am) {
		return true, true
	}
	for k := range am {
		if !inclusionKeys[k] && !annotationKeys[k] {
			return false, false
		}
	}
	for k := range bm {
		if !inclusionKeys[k] && !annotationKeys[k] {
			return false, false
		}
	}
	// A value set: each value is checked against b as a whole.
	vs, ok := finiteValues(am)
	if !ok {
		vs, ok = rangeValues(am)
	}
	if ok && !hasUnion(am) {
		vs = d.keepAccepted(aRoot, a, vs)
		for _, v := range vs {
			ok, known := d.vals.accepts(bRoot, b, v)
			if !known {
				return false, false
			}
			if !ok {
				return false, true
			}
		}
		return true, true
	}
	// A union on the left: each variant must be included.
	for _, k := range []string{"anyOf", "oneOf"} {
		if bs, ok := am[k].([]any); ok {
			rest := clone(am)
			delete(rest, k)
			allKnown := true
			for _, branch := range bs {
				x := branch
				if !unconstrained(withoutAnnotations(rest)) {
					m, ok := conj(withoutAnnotations(rest), resolve(aRoot, branch).m)
					if !ok {
						return false, false
					}
					x = m
				}
				yes, known := d.includes(aRoot, x, bRoot, b, depth+1)
				switch {
				case !known:
					allKnown = false
				case !yes && k == "anyOf":
					return false, true
				case !yes:
					allKnown = false // a oneOf refuses values two variants share
				}
			}
			return allKnown, allKnown
		}
	}
	// A union on the right: a must fall within one variant, or — split by
	// a required property that takes finitely many values (a tag) — each
	// part within one variant.
	for _, k := range []string{"anyOf", "oneOf"} {
		bs, ok := bm[k].([]any)
		if !ok {
			continue
		}
		if !pureUnion(bm, k) && !loneUnion(bRoot, bm, k) {
			return false, false
		}
		if k == "oneOf" && !pairwiseDisjoint(bRoot, bs) {
			return false, false
		}
		// within decides x ⊆ union: yes when one variant includes x; no
		// when every variant but (at most) one is disjoint from x and
		// that one is known not to include it.
		within := func(x any) (bool, bool) {
			xm := resolve(aRoot, x).m
			var overlapping []any
			for _, branch := range bs {
				if yes, known := d.includes(aRoot, x, bRoot, branch, depth+1); known && yes {
					return true, true
				}
				if bm := resolve(bRoot, branch).m; xm == nil || bm == nil || !disjoint(xm, bm) {
					overlapping = append(overlapping, branch)
				}
			}
			switch len(overlapping) {
			case 0:
				return false, true
			case 1:
				if yes, known := d.includes(aRoot, x, bRoot, overlapping[0], depth+1); known && !yes {
					return false, true
				}
			}
			return false, false
		}
		if yes, known := within(a); known {
			return yes, true
		}
		parts := splitByTag(aRoot, am)
		if len(parts) == 0 {
			return false, false
		}
		allYes := true
		for _, part := range parts {
			yes, known := within(part)
			switch {
			case known && !yes:
				return false, true
			case !known:
				allYes = false
			}
		}
		return allYes, allYes
	}
	if hasUnion(am) {
		return false, false
	}
	at, bt := typeSet(am), typeSet(bm)
	if !typeSubset(at, bt) {
		return false, true
	}
	has := func(t string) bool { return typeContains(at, t) }
	if has("number") || has("integer") {
		if yes, known := numberIncluded(am, bm); !known || !yes {
			return yes, known
		}
	}
	if has("string") {
		if yes, known := stringIncluded(am, bm); !known || !yes {
			return yes, known
		}
	}
	if has("array") {
		if yes, known := d.arrayIncluded(aRoot, am, bRoot, bm, depth); !known || !yes {
			return yes, known
		}
	}
	if has("object") {
		if yes, known := d.objectIncluded(aRoot, am, bRoot, bm, depth); !known || !yes {
			return yes, known
		}
	}
	return true, true
}

// unconstrained reports whether s admits every value.
func unconstrained(s map[string]any) bool {
	for k := range s {
		if !annotationKeys[k] && k != "deprecated" && k != "readOnly" && k != "writeOnly" {
			return false
		}
	}
	return true
}

// nothing reports whether s admits no value (false, or an empty value set).
func nothing(s map[string]any) bool {
	if not, ok := s["not"].(map[string]any); ok && len(not) == 0 {
		return true
	}
	vs, ok := valueSet(s)
	return ok && len(vs) == 0
}

func withoutAnnotations(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if !annotationKeys[k] {
			out[k] = v
		}
	}
	return out
}

// pairwiseDisjoint reports whether no value matches two of the schemas.
func pairwiseDisjoint(root any, bs []any) bool {
	for i := range bs {
		for j := i + 1; j < len(bs); j++ {
			a, b := resolve(root, bs[i]).m, resolve(root, bs[j]).m
			if a == nil || b == nil || !disjoint(a, b) {
				return false
			}
		}
	}
	return true
}

// splitByTag splits an object schema on a required property restricted to
// finitely many values: one schema per value, the property fixed to it.
// nil when s has no such property.
func splitByTag(root any, s map[string]any) []any {
	props, _ := s["properties"].(map[string]any)
	req := stringSet(s["required"])
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, name := range names {
		if !slices.Contains(req, name) {
			continue
		}
		pm := resolve(root, props[name]).m
		vs, ok := finiteValues(pm)
		if !ok || len(vs) < 2 || len(vs) > 64 {
			continue
		}
		var out []any
		for _, v := range vs {
			part := clone(s)
			np := clone(props)
			np[name] = map[string]any{"const": v}
			part["properties"] = np
			out = append(out, part)
		}
		return out
	}
	return nil
}

// numberIncluded compares numeric bounds and multipleOf: b's bounds must
// hold for every number a admits.
func numberIncluded(a, b map[string]any) (bool, bool) {
	intOnly := isIntegerOnly(a)
	for _, lower := range []bool{true, false} {
		incl, excl := "maximum", "exclusiveMaximum"
		if lower {
			incl, excl = "minimum", "exclusiveMinimum"
		}
		bv, be, bOK := boundOf(b, incl, excl, lower, intOnly)
		if !bOK {
			continue
		}
		av, ae, aOK := boundOf(a, incl, excl, lower, intOnly)
		if !aOK {
			return false, true
		}
		if lower && (av < bv || av == bv && be && !ae) || !lower && (av > bv || av == bv && be && !ae) {
			return false, true
		}
	}
	if bm, ok := number(b["multipleOf"]); ok {
		am, aOK := number(a["multipleOf"])
		switch {
		case aOK && isMultiple(am, bm):
		case !aOK && intOnly && bm == 1:
		case !aOK:
			return false, true
		default:
			return false, false
		}
	}
	return true, true
}

// stringIncluded compares lengths, patterns (a regular-language inclusion;
// a format with a known language counts as its pattern) and formats.
func stringIncluded(a, b map[string]any) (bool, bool) {
	for _, key := range []string{"minLength", "maxLength"} {
		bv, bOK := number(b[key])
		if !bOK {
			continue
		}
		av, aOK := number(a[key])
		if !aOK || key == "minLength" && av < bv || key == "maxLength" && av > bv {
			if !aOK && key == "minLength" && bv == 0 {
				continue
			}
			return false, false // a pattern may imply the length: not decided
		}
	}
	pa, pb := formatsAsPatterns(a, b)
	fa, fb := stringList(pa["format"]), stringList(pb["format"])
	for _, f := range fb {
		if !slices.Contains(fa, f) {
			return false, false
		}
	}
	sa, sb := stringList(pa["pattern"]), stringList(pb["pattern"])
	if len(sb) == 0 {
		return true, true
	}
	return patternsSubset(sa, sb)
}

func (d *schemaDiff) arrayIncluded(aRoot any, a map[string]any, bRoot any, b map[string]any, depth int) (bool, bool) {
	if b["uniqueItems"] == true && a["uniqueItems"] != true {
		return false, false
	}
	aLo, aHi := arity(a)
	bLo, bHi := arity(b)
	inf := func(hi int) int {
		if hi < 0 {
			return math.MaxInt
		}
		return hi
	}
	if aLo < bLo || inf(aHi) > inf(bHi) {
		return false, true
	}
	api, _ := a["prefixItems"].([]any)
	bpi, _ := b["prefixItems"].([]any)
	elem := func(s map[string]any, pi []any, i int) any {
		if i < len(pi) {
			return pi[i]
		}
		return rest(s)
	}
	limit := max(len(api), len(bpi))
	for i := range limit {
		if i >= inf(aHi) {
			break
		}
		if yes, known := d.includes(aRoot, elem(a, api, i), bRoot, elem(b, bpi, i), depth+1); !known || !yes {
			return yes, known
		}
	}
	if limit < inf(aHi) {
		if yes, known := d.includes(aRoot, rest(a), bRoot, rest(b), depth+1); !known || !yes {
			return yes, known
		}
	}
	return true, true
}

func (d *schemaDiff) objectIncluded(aRoot any, a map[string]any, bRoot any, b map[string]any, depth int) (bool, bool) {
	for _, k := range []string{"minProperties", "maxProperties"} {
		if _, ok := b[k]; ok {
			return false, false
		}
	}
	ap, _ := a["properties"].(map[string]any)
	bp, _ := b["properties"].(map[string]any)
	areq, breq := stringSet(a["required"]), stringSet(b["required"])
	for _, r := range breq {
		if !slices.Contains(areq, r) {
			return false, true // a admits objects without it
		}
	}
	extra := func(s map[string]any) any {
		switch openness(s) {
		case closed:
			return false
		case schemaProps:
			return s["additionalProperties"]
		}
		return true
	}
	names := make([]string, 0, len(ap)+len(bp))
	for k := range ap {
		names = append(names, k)
	}
	for k := range bp {
		if _, ok := ap[k]; !ok {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	for _, k := range names {
		as, inA := ap[k]
		bs, inB := bp[k]
		if !inA {
			as = extra(a)
		}
		if !inB {
			bs = extra(b)
		}
		if as == false || as == nil {
			continue // a never has it
		}
		if bs == false {
			if slices.Contains(areq, k) {
				return true, true // a requires what b forbids: a is empty here
			}
			return false, true
		}
		if yes, known := d.includes(aRoot, as, bRoot, bs, depth+1); !known || !yes {
			return yes, known
		}
	}
	// Undeclared properties: what a lets through must pass b's rule.
	if ea := extra(a); ea != false {
		eb := extra(b)
		if eb == false {
			return false, true
		}
		if yes, known := d.includes(aRoot, ea, bRoot, eb, depth+1); !known || !yes {
			return yes, known
		}
	}
	return true, true
}

// setEffect decides how the set of values moved from old to new by
// inclusion both ways: ok is false when either way is undecided.
func (d *schemaDiff) setEffect(oldS, newS any) (e effect, equal, ok bool) {
	sub, k1 := d.includes(d.newRoot, newS, d.oldRoot, oldS, 0)
	super, k2 := d.includes(d.oldRoot, oldS, d.newRoot, newS, 0)
	switch {
	case !k1 || !k2:
		return 0, false, false
	case sub && super:
		return 0, true, true
	case sub:
		return narrowed, false, true
	case super:
		return widened, false, true
	}
	return changed, false, true
}

// annotationRules are the schema rules that do not concern the set of
// values (documentation, defaults, deprecation).
var annotationRules = map[string]bool{"description-changed": true, "examples-changed": true, "default-added": true,
	"default-changed": true, "default-removed": true, "deprecated": true, "undeprecated": true, "annotation-changed": true}

// wholeSet compares a node where a union appears on either side once its
// sets are decided (e: how they moved; equal: not at all). The walk branch
// by branch runs as usual; its findings stand when they agree with the
// sets — the same severity, e.g. a variant added to a request union —
// and are replaced by one finding on the node when they do not (a union
// collapsing into one object that accepts every old variant compared with
// variant 0 alone; an arm another arm covers reported as new values).
// Equal sets leave only the findings about documentation and defaults.
func (d *schemaDiff) wholeSet(ptr string, ctx, nodeCtx defCtx, oldS, newS any, o, n map[string]any, e effect, equal, inlinedDocs bool) {
	prev := d.wholeSetAt
	d.wholeSetAt = "@" + ptr // "@": the root pointer is ""
	defer func() { d.wholeSetAt = prev }()
	start := len(d.out)
	d.compare(ptr, ctx, oldS, newS)
	found := slices.Clone(d.out[start:])
	d.out = d.out[:start]
	prefix := d.dir.String() + "-"
	var docs, sets []schemaFinding
	for _, f := range found {
		if annotationRules[strings.TrimPrefix(f.rule, prefix)] {
			docs = append(docs, f)
		} else {
			sets = append(sets, f)
		}
	}
	// The node's own documentation and default: the walk into a union
	// (a lone schema matched with one variant) does not compare them.
	mark := len(d.out)
	d.annotations(ptr, nodeCtx, o, n, inlinedDocs)
	for _, f := range d.out[mark:] {
		if !slices.ContainsFunc(docs, func(g schemaFinding) bool { return g.rule == f.rule && g.pointer == f.pointer }) {
			docs = append(docs, f)
		}
	}
	d.out = append(d.out[:mark], docs...)
	if equal {
		return
	}
	want := severityOf(d.dir, e)
	agree := len(sets) > 0
	for _, f := range sets {
		if f.severity != want {
			agree = false
		}
	}
	if agree {
		d.out = append(d.out, sets...)
		return
	}
	key := "anyOf"
	if _, ok := n["oneOf"]; ok || !hasUnion(n) && o["oneOf"] != nil {
		key = "oneOf"
	}
	shape := shapeOf(d.oldRoot, oldS, o) + " became " + shapeOf(d.newRoot, newS, n)
	req := d.dir == Request
	var msg string
	switch {
	case e == widened && req:
		msg = "accepts every value it accepted and more: " + shape
	case e == widened:
		msg = "may now be values it never was: " + shape
	case e == narrowed && req:
		msg = "accepts only some of the values it accepted: " + shape
	case e == narrowed:
		msg = "is now always one of the values it could be: " + shape
	default:
		msg = "each version admits values the other refuses: " + shape
	}
	d.addEffect(kebab(key), e, ptr, nodeCtx, "%s", msg)
}

// shapeOf names a schema's shape for a message: "a union of 3 variants"
// or what describe says.
func shapeOf(root, raw any, m map[string]any) string {
	for _, k := range []string{"anyOf", "oneOf"} {
		if bs, ok := m[k].([]any); ok {
			return "a union of " + strconv.Itoa(len(bs)) + " variants"
		}
	}
	return describe(root, raw)
}
