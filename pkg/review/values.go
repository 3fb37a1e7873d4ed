package review

import (
	"cmp"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"stitchkit.dev/stitchkit/internal/schematree"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/validate"
)

// A schema that admits finitely many values (const, enum, or only boolean
// and null) is compared as a set: each side's values are checked against
// the other side's whole schema with the validator every mount uses
// (pkg/validate). So an enum that replaced a pattern is a narrowing when
// every value matches the pattern, an enum with maxLength admits only the
// short values, and a change to keywords that cannot alter a finite set is
// no change at all.

// valueChecker compiles subschemas into validators, once per distinct
// schema. It is safe for concurrent use.
type valueChecker struct {
	mu    sync.Mutex
	cache map[string]*validate.Validator // nil entry: cannot be compiled
}

func newValueChecker() *valueChecker {
	return &valueChecker{cache: map[string]*validate.Validator{}}
}

// accepts reports whether the subschema raw of root admits v; known is
// false when that cannot be decided here (a subschema referring to its
// document's root, a schema the validator refuses).
func (vc *valueChecker) accepts(root, raw, v any) (ok, known bool) {
	switch x := raw.(type) {
	case nil:
		return true, true
	case bool:
		return x, true
	case map[string]any:
		if refersOutsideDefs(x) {
			return false, false
		}
		doc := clone(x)
		if r, isMap := root.(map[string]any); isMap {
			if defs, ok := r["$defs"]; ok {
				doc["$defs"] = defs
			}
		}
		doc["$schema"] = "https://json-schema.org/draft/2020-12/schema"
		b, err := graph.Canonical(doc)
		if err != nil {
			return false, false
		}
		val := vc.compile(string(b))
		if val == nil {
			return false, false
		}
		return val.Validate(v) == nil, true
	}
	return false, false
}

func (vc *valueChecker) compile(doc string) *validate.Validator {
	vc.mu.Lock()
	defer vc.mu.Unlock()
	if v, ok := vc.cache[doc]; ok {
		return v
	}
	v, err := validate.Compile([]byte(doc))
	if err != nil {
		v = nil
	}
	vc.cache[doc] = v
	return v
}

// refersOutsideDefs reports whether s holds a $ref that is not to
// "#/$defs/…" (those keep their meaning when s is lifted out of its
// document with the document's $defs).
func refersOutsideDefs(s any) bool {
	outside := false
	schematree.Walk(s, func(_ string, c schematree.Child) bool {
		if m, ok := c.Schema.(map[string]any); ok {
			for _, k := range []string{"$ref", "$dynamicRef"} {
				if v, has := m[k]; has {
					if ref, ok := v.(string); !ok || !strings.HasPrefix(ref, "#/$defs/") {
						outside = true
					}
				}
			}
		}
		return !outside
	})
	return outside
}

// valueSet returns the values a schema restricts itself to via const or
// enum, and whether it does.
func valueSet(s map[string]any) ([]any, bool) {
	c, hasConst := s["const"]
	e, hasEnum := s["enum"].([]any)
	switch {
	case hasConst && hasEnum:
		for _, v := range e {
			if jsonEqual(v, c) {
				return []any{c}, true
			}
		}
		return nil, true
	case hasConst:
		return []any{c}, true
	case hasEnum:
		return e, true
	}
	return nil, false
}

// maxRangeValues bounds the integers a bounded integer range is
// enumerated into (int & >=1 & <=6 is the set 1…6).
const maxRangeValues = 1024

// finiteValues returns every value s can admit when there are finitely
// many: its const or enum values, or true/false/null for a schema typed
// boolean and/or null only.
func finiteValues(s map[string]any) ([]any, bool) {
	if vs, ok := valueSet(s); ok {
		return vs, true
	}
	t, ok := s["type"]
	if !ok {
		return nil, false
	}
	var out []any
	for _, name := range schematree.TypeNames(t) {
		switch name {
		case "boolean":
			out = append(out, false, true)
		case "null":
			out = append(out, nil)
		default:
			return nil, false
		}
	}
	return out, len(out) > 0
}

// keepAccepted returns the values of vs the subschema raw of root admits
// (all of them when that cannot be decided).
func (d *schemaDiff) keepAccepted(root, raw any, vs []any) []any {
	var out []any
	for _, v := range vs {
		if ok, known := d.vals.accepts(root, raw, v); ok || !known {
			out = append(out, v)
		}
	}
	return out
}

// rangeValues returns the integers of a small bounded integer range (int
// & >=1 & <=6 is the set 1…6, as 1 | 2 | 3 | 4 | 5 | 6 is); the caller
// keeps only those the whole schema admits (multipleOf).
func rangeValues(s map[string]any) ([]any, bool) {
	if !isIntegerOnly(s) {
		return nil, false
	}
	if _, ok := valueSet(s); ok {
		return nil, false
	}
	lo, _, okLo := boundOf(s, "minimum", "exclusiveMinimum", true, true)
	hi, _, okHi := boundOf(s, "maximum", "exclusiveMaximum", false, true)
	if !okLo || !okHi || hi-lo >= maxRangeValues || math.Abs(lo) > 1<<53 || math.Abs(hi) > 1<<53 {
		return nil, false
	}
	out := []any{}
	for v := int64(lo); v <= int64(hi); v++ {
		out = append(out, json.Number(strconv.FormatInt(v, 10)))
	}
	return out, true
}

// valueTypes returns the JSON types of vs, sorted.
func valueTypes(vs []any) []string {
	var out []string
	for _, v := range vs {
		t := jsonType(v)
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

func typesOverlap(a, b []string) bool {
	for _, t := range a {
		if typeContains(b, t) {
			return true
		}
	}
	for _, t := range b {
		if typeContains(a, t) {
			return true
		}
	}
	return false
}

// values compares the two sides as value sets when either admits finitely
// many values. It reports whether that decided the node: then the other
// constraint keywords cannot matter and are not compared.
func (d *schemaDiff) values(ptr string, ctx defCtx, oRaw, nRaw any, o, n map[string]any) bool {
	_, oEnum := valueSet(o)
	_, nEnum := valueSet(n)
	if !oEnum && !nEnum {
		return false // no const or enum on either side: compare keywords
	}
	ov, oFin := finiteValues(o)
	nv, nFin := finiteValues(n)
	if oFin {
		ov = d.keepAccepted(d.oldRoot, oRaw, ov)
	}
	if nFin {
		nv = d.keepAccepted(d.newRoot, nRaw, nv)
	}
	// A bounded integer range on the other side is the set of its
	// integers (int & >=1 & <=6 is 1 | 2 | 3 | 4 | 5 | 6): the sets are
	// compared value by value, in both directions; the messages still
	// speak of the range rather than list its values.
	oRange, nRange := false, false
	if rv, ok := rangeValues(o); ok && nFin && !oFin {
		ov, oFin, oRange = d.keepAccepted(d.oldRoot, oRaw, rv), true, true
	}
	if rv, ok := rangeValues(n); ok && oFin && !nFin {
		nv, nFin, nRange = d.keepAccepted(d.newRoot, nRaw, rv), true, true
	}
	// The rule is about an enum when either side lists values, about a
	// const when neither does; the pointer names the new side's keyword
	// (the old side's when the new one has neither).
	_, oe := o["enum"]
	_, ne := n["enum"]
	_, nc := n["const"]
	kind := "const"
	if oe || ne {
		kind = "enum"
	}
	p := ptr + "/enum"
	if nc || !ne && !nEnum {
		if _, oc := o["const"]; nc || oc {
			p = ptr + "/const"
		}
	}
	key := kind
	req := d.dir == Request
	switch {
	case oFin && nFin:
		if len(ov) > 0 && len(nv) > 0 && !typesOverlap(valueTypes(ov), valueTypes(nv)) {
			return false // a type change; types() says so
		}
		removed, added := valuesMinus(ov, nv), valuesMinus(nv, ov)
		verb := "now accepts only"
		if !req {
			verb = "is now always"
		}
		switch {
		case len(removed) == 0 && len(added) == 0:
		case oRange && len(added) == 0:
			d.addEffect(key, narrowed, p, ctx, "%s %s (each was allowed before)", verb, valuesOr(nv))
		case oRange && len(removed) > 0:
			d.addEffect(key, changed, p, ctx, "%s %s; %s was not allowed before", verb, valuesOr(nv), valuesString(added))
		case nRange && len(removed) == 0:
			d.addEffect(key, widened, p, ctx, "is no longer limited to %s", valuesString(ov))
		case nRange && len(added) > 0:
			d.addEffect(key, changed, p, ctx, "is no longer limited to %s, and %s is no longer allowed", valuesString(ov), valuesString(removed))
		case len(added) == 0 && req:
			d.addEffect(key, narrowed, p, ctx, "no longer accepts %s", valuesString(removed))
		case len(added) == 0:
			d.addEffect(key, narrowed, p, ctx, "is never %s any more", valuesOr(removed))
		case len(removed) == 0 && req:
			d.addEffect(key, widened, p, ctx, "now also accepts %s", valuesString(added))
		case len(removed) == 0:
			d.addEffect(key, widened, p, ctx, "may now be %s", valuesOr(added))
		case req:
			d.addEffect(key, changed, p, ctx, "no longer accepts %s and now accepts %s", valuesString(removed), valuesString(added))
		default:
			d.addEffect(key, changed, p, ctx, "is never %s any more but may now be %s", valuesOr(removed), valuesOr(added))
		}
		return true
	case nFin:
		if !typesOverlap(valueTypes(nv), typeSet(o)) {
			return false
		}
		var fresh []any
		for _, v := range nv {
			ok, known := d.vals.accepts(d.oldRoot, oRaw, v)
			if !known {
				return false
			}
			if !ok {
				fresh = append(fresh, v)
			}
		}
		verb := "now accepts only"
		if !req {
			verb = "is now always"
		}
		if len(fresh) == 0 {
			d.addEffect(key, narrowed, p, ctx, "%s %s (each was allowed before)", verb, valuesOr(nv))
		} else {
			d.addEffect(key, changed, p, ctx, "%s %s; %s was not allowed before", verb, valuesOr(nv), valuesString(fresh))
		}
		return true
	default:
		if !typesOverlap(valueTypes(ov), typeSet(n)) {
			return false
		}
		var lost []any
		for _, v := range ov {
			ok, known := d.vals.accepts(d.newRoot, nRaw, v)
			if !known {
				return false
			}
			if !ok {
				lost = append(lost, v)
			}
		}
		if len(lost) == 0 {
			d.addEffect(key, widened, p, ctx, "is no longer limited to %s", valuesString(ov))
		} else {
			d.addEffect(key, changed, p, ctx, "is no longer limited to %s, and %s is no longer allowed", valuesString(ov), valuesString(lost))
		}
		return true
	}
}

func valuesMinus(a, b []any) []any {
	var out []any
	for _, v := range a {
		if !slices.ContainsFunc(b, func(w any) bool { return jsonEqual(v, w) }) {
			out = append(out, v)
		}
	}
	return out
}

// numericOrder returns vs sorted by value when every one is a number (the
// canonical schema orders enum values by their JSON text: 10, 100, 50).
func numericOrder(vs []any) []any {
	fs := make([]float64, len(vs))
	for i, v := range vs {
		f, ok := number(v)
		if !ok {
			return vs
		}
		fs[i] = f
	}
	idx := make([]int, len(vs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(fs[a], fs[b]) })
	out := make([]any, len(vs))
	for i, j := range idx {
		out[i] = vs[j]
	}
	return out
}

func valuesString(vs []any) string {
	vs = numericOrder(vs)
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = short(v)
	}
	return strings.Join(parts, ", ")
}

// valuesOr lists values as alternatives: "a", "a or b", "a, b or c".
func valuesOr(vs []any) string {
	vs = numericOrder(vs)
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = short(v)
	}
	switch len(parts) {
	case 0:
		return "nothing"
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case json.Number:
		if _, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return "integer"
		}
		return "number"
	}
	return "null"
}
