package review

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"stitchkit.dev/stitchkit/internal/schematree"
)

// The classifier compares *effective* schemas: what one schema node
// accepts once everything that applies to it is taken together. In JSON
// Schema 2020-12 the siblings of a $ref apply in addition to the
// referenced schema, and so do the members of allOf; a union of one schema
// and null is that schema admitting null. This file computes that view.

// maxRefs bounds the $refs one resolution follows, through conjunctions
// too, so a cycle ({"$ref":"#","x":1} refers to itself) ends.
const maxRefs = 64

// resolved is the effective schema of one side at one node of the walk.
type resolved struct {
	// m is the effective schema; nil when the node is absent.
	m map[string]any
	// def is the $defs name the node *is*: set when the node is a chain of
	// bare $refs (no siblings) ending in a definition. A change below such
	// a node was made in the definition, not at the place using it.
	def string
	// chain lists the refs taken, for the cycle guard.
	chain string
}

// resolve returns the effective schema of s in root.
func resolve(root, s any) resolved {
	budget := maxRefs
	return resolveBudget(root, s, &budget)
}

func resolveBudget(root, s any, budget *int) resolved {
	var refs []string
	def := ""
	for ; *budget > 0; *budget-- {
		switch x := s.(type) {
		case nil:
			return resolved{chain: strings.Join(refs, ">")}
		case bool:
			return resolved{m: boolSchema(x), def: def, chain: strings.Join(refs, ">")}
		case map[string]any:
			ref, ok := x["$ref"].(string)
			if !ok {
				return resolved{m: fold(root, x, budget), def: def, chain: strings.Join(refs, ">")}
			}
			target, found := schematree.Resolve(root, ref)
			if !found || target == nil {
				// An unresolvable ref compares as itself.
				return resolved{m: x, chain: strings.Join(refs, ">")}
			}
			refs = append(refs, ref)
			if bareRef(x) {
				def = defName(ref)
				s = target
				continue
			}
			// $ref with siblings: both apply (a conjunction).
			*budget--
			t := resolveBudget(root, target, budget)
			rest := make(map[string]any, len(x)-1)
			for k, v := range x {
				if k != "$ref" && !docKeys[k] {
					rest[k] = v
				}
			}
			r := fold(root, rest, budget)
			chain := strings.Join(refs, ">") + ">" + t.chain
			if t.m == nil {
				return resolved{m: r, chain: chain}
			}
			if merged, ok := conj(t.m, r); ok {
				return resolved{m: merged, chain: chain}
			}
			return resolved{m: map[string]any{"allOf": []any{t.m, r}}, chain: chain}
		default:
			return resolved{chain: strings.Join(refs, ">")}
		}
	}
	return resolved{m: map[string]any{}, chain: strings.Join(refs, ">")}
}

// docKeys are keywords about the document, not the value: a $ref next to
// only these is a bare reference.
var docKeys = map[string]bool{"$defs": true, "definitions": true, "$schema": true, "$id": true, "$comment": true}

// bareRef reports whether x is a $ref with no sibling that constrains or
// describes the value.
func bareRef(x map[string]any) bool {
	for k := range x {
		if k != "$ref" && !docKeys[k] {
			return false
		}
	}
	return true
}

func boolSchema(b bool) map[string]any {
	if b {
		return map[string]any{}
	}
	return map[string]any{"not": map[string]any{}}
}

// defName returns NAME for a reference "#/$defs/NAME" (decoded), else "".
func defName(ref string) string {
	toks, ok := schematree.ParseRef(ref)
	if !ok || len(toks) != 2 || toks[0] != "$defs" {
		return ""
	}
	return toks[1]
}

// fold conjoins the allOf members of m into it where that is exact, and
// turns a two-branch union of a schema and null into that schema admitting
// null.
func fold(root any, m map[string]any, budget *int) map[string]any {
	out := m
	if all, ok := m["allOf"].([]any); ok {
		base := make(map[string]any, len(m))
		for k, v := range m {
			if k != "allOf" {
				base[k] = v
			}
		}
		var keep, nots []any
		for _, member := range all {
			r := resolveBudget(root, member, budget)
			if r.m == nil {
				continue
			}
			if not, ok := r.m["not"]; ok && len(r.m) == 1 {
				nots = append(nots, not)
				continue
			}
			if merged, ok := conj(base, r.m); ok {
				base = merged
			} else {
				keep = append(keep, member)
			}
		}
		// A negated member that cannot overlap the rest excludes nothing:
		// the translator writes one arm of a CUE disjunction as
		// allOf[arm, not(other arm)], so values matching both are refused.
		for _, not := range nots {
			if y := resolveBudget(root, not, budget).m; y == nil || len(keep) > 0 || !disjoint(base, y) {
				keep = append(keep, map[string]any{"not": not})
			}
		}
		if len(keep) > 0 {
			base["allOf"] = keep
		}
		out = base
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		br, ok := out[k].([]any)
		if !ok || !pureUnion(out, k) {
			continue
		}
		if t, ok := typeUnion(root, br, budget); ok {
			for ak, av := range out {
				if ak != k {
					t[ak] = av
				}
			}
			return t
		}
		if t, ok := tupleUnion(root, br, budget); ok {
			for ak, av := range out {
				if ak != k {
					t[ak] = av
				}
			}
			return t
		}
		if len(br) != 2 {
			continue
		}
		for i := range 2 {
			nb := resolveBudget(root, br[i], budget)
			if nb.m == nil || !isNullSchema(nb.m) {
				continue
			}
			other := resolveBudget(root, br[1-i], budget)
			if other.m == nil {
				break
			}
			f, ok := admitNull(other.m)
			if !ok {
				break
			}
			for ak, av := range out {
				if ak != k {
					f[ak] = av // the union's own annotations
				}
			}
			return f
		}
	}
	return out
}

// typeUnion folds a union of bare types (int | string) into one type
// list: {"type": ["integer", "string"]}.
func typeUnion(root any, branches []any, budget *int) (map[string]any, bool) {
	var ts []string
	fractions := false // float: a number that is not an integer
	for _, b := range branches {
		m := resolveBudget(root, b, budget).m
		t, ok := m["type"]
		if m == nil || !ok {
			return nil, false
		}
		for k, v := range m {
			switch {
			case k == "type", annotationKeys[k]:
			case k == "not" && jsonEqual(v, map[string]any{"type": "integer"}) && jsonEqual(t, "number"):
				fractions = true
			default:
				return nil, false
			}
		}
		if fractions && jsonEqual(t, "number") {
			continue
		}
		ts = append(ts, schematree.TypeNames(t)...)
	}
	if fractions {
		if !slices.Contains(ts, "integer") && !slices.Contains(ts, "number") {
			return nil, false // float alone (or with other types) needs its "not"
		}
		ts = append(ts, "number")
	}
	slices.Sort(ts)
	ts = slices.Compact(ts)
	if slices.Contains(ts, "number") {
		ts = slices.DeleteFunc(ts, func(t string) bool { return t == "integer" })
	}
	return map[string]any{"type": typeValue(ts)}, len(ts) > 0
}

// tupleUnion folds a union of fixed-length tuples that extend one another
// ([A] | [A, B], the CUE way to write an optional trailing argument) into
// one tuple of the longest prefix with a length range. ok is false unless
// that is exact: every branch a fixed-length tuple, the shorter ones
// prefixes of the longer ones, the lengths contiguous.
func tupleUnion(root any, branches []any, budget *int) (map[string]any, bool) {
	if len(branches) < 2 {
		return nil, false
	}
	type tup struct {
		prefix []any
		rest   map[string]any
	}
	var ts []tup
	for _, b := range branches {
		m := resolveBudget(root, b, budget).m
		if m == nil {
			return nil, false
		}
		pi, ok := m["prefixItems"].([]any)
		if !ok {
			return nil, false
		}
		lo, hi := arity(m)
		if lo != len(pi) || hi != len(pi) {
			return nil, false
		}
		rest := clone(m)
		for _, k := range []string{"prefixItems", "minItems", "maxItems", "items"} {
			delete(rest, k)
		}
		ts = append(ts, tup{pi, rest})
	}
	slices.SortStableFunc(ts, func(a, b tup) int { return len(a.prefix) - len(b.prefix) })
	longest := ts[len(ts)-1]
	for i, t := range ts {
		if !jsonEqual(t.rest, longest.rest) || (i > 0 && len(t.prefix) != len(ts[i-1].prefix)+1) {
			return nil, false
		}
		if !jsonEqual(t.prefix, longest.prefix[:len(t.prefix)]) {
			return nil, false
		}
	}
	out := clone(longest.rest)
	out["prefixItems"] = longest.prefix
	out["minItems"] = json.Number(strconv.Itoa(len(ts[0].prefix)))
	out["maxItems"] = json.Number(strconv.Itoa(len(longest.prefix)))
	return out, true
}

// disjoint reports whether no value can match both a and b, when that
// follows from their types, their tuple lengths, their value sets or a
// property required by either whose values differ; false when it does not
// follow.
func disjoint(a, b map[string]any) bool {
	at, bt := typeSet(a), typeSet(b)
	if !typesOverlap(at, bt) {
		return true
	}
	if av, ok := finiteValues(a); ok {
		if bv, ok := finiteValues(b); ok && len(valuesMinus(av, bv)) == len(av) {
			return true
		}
	}
	if hasPrefix(a) && hasPrefix(b) {
		alo, ahi := arity(a)
		blo, bhi := arity(b)
		if (ahi >= 0 && ahi < blo) || (bhi >= 0 && bhi < alo) {
			return true
		}
	}
	ap, _ := a["properties"].(map[string]any)
	bp, _ := b["properties"].(map[string]any)
	areq, breq := stringSet(a["required"]), stringSet(b["required"])
	for name, as := range ap {
		bs, ok := bp[name]
		// Required on either side: a value both admit has it, and it
		// must then match both property schemas.
		if !ok || !slices.Contains(areq, name) && !slices.Contains(breq, name) {
			continue
		}
		am, _ := as.(map[string]any)
		bm, _ := bs.(map[string]any)
		if am != nil && bm != nil && disjoint(am, bm) {
			return true
		}
	}
	return false
}

// isNullSchema reports whether s admits exactly null.
func isNullSchema(s map[string]any) bool {
	ok := false
	for k, v := range s {
		switch {
		case annotationKeys[k]:
		case k == "type":
			if v != "null" {
				return false
			}
			ok = true
		case k == "const":
			if v != nil {
				return false
			}
			ok = true
		case k == "enum":
			e, _ := v.([]any)
			if len(e) != 1 || e[0] != nil {
				return false
			}
			ok = true
		default:
			return false
		}
	}
	return ok
}

// admitNull returns a copy of s that also admits null, when that can be
// said without a union.
func admitNull(s map[string]any) (map[string]any, bool) {
	out := clone(s)
	for k := range s {
		switch k {
		case "anyOf", "oneOf", "allOf", "not", "$ref", "if", "then", "else":
			return nil, false
		}
	}
	if t, ok := out["type"]; ok {
		ts := schematree.TypeNames(t)
		if !slices.Contains(ts, "null") {
			ts = append(ts, "null")
		}
		slices.Sort(ts)
		out["type"] = typeValue(ts)
	}
	if c, ok := out["const"]; ok {
		delete(out, "const")
		out["enum"] = []any{c, nil}
	}
	if e, ok := out["enum"].([]any); ok && !slices.Contains(e, nil) {
		out["enum"] = append(slices.Clone(e), nil)
	}
	return out, true
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func typeValue(ts []string) any {
	if len(ts) == 1 {
		return ts[0]
	}
	out := make([]any, len(ts))
	for i, t := range ts {
		out[i] = t
	}
	return out
}

// lowerKeys and upperKeys combine by taking the tighter value.
var (
	lowerKeys = map[string]bool{"minimum": true, "exclusiveMinimum": true, "minLength": true, "minItems": true, "minProperties": true}
	upperKeys = map[string]bool{"maximum": true, "exclusiveMaximum": true, "maxLength": true, "maxItems": true, "maxProperties": true}
)

// conj returns the schema accepting exactly what both a and b accept, when
// it can be written as one schema; ok is false otherwise (the caller keeps
// the conjunction as allOf). Annotations of b win.
func conj(a, b map[string]any) (map[string]any, bool) {
	if openness(a) != open && openness(b) != open && !jsonEqual(a["additionalProperties"], b["additionalProperties"]) {
		return nil, false
	}
	// A closed side refuses the properties only the other side declares.
	for _, pair := range [][2]map[string]any{{a, b}, {b, a}} {
		if openness(pair[0]) == open {
			continue
		}
		own, _ := pair[0]["properties"].(map[string]any)
		other, _ := pair[1]["properties"].(map[string]any)
		for k := range other {
			if _, ok := own[k]; !ok {
				return nil, false
			}
		}
	}
	out := clone(a)
	for k, bv := range b {
		av, both := out[k]
		if !both {
			out[k] = bv
			continue
		}
		switch {
		case jsonEqual(av, bv):
		case annotationKeys[k] || k == "deprecated" || k == "readOnly" || k == "writeOnly":
			out[k] = bv
		case k == "type":
			at, bt := schematree.TypeNames(av), schematree.TypeNames(bv)
			var both []string
			for _, t := range at {
				switch {
				case slices.Contains(bt, t):
					both = append(both, t)
				case t == "number" && slices.Contains(bt, "integer"):
					both = append(both, "integer")
				}
			}
			for _, t := range bt {
				if t == "number" && slices.Contains(at, "integer") && !slices.Contains(both, "integer") {
					both = append(both, "integer")
				}
			}
			if len(both) == 0 {
				return boolSchema(false), true
			}
			slices.Sort(both)
			out[k] = typeValue(slices.Compact(both))
		case k == "enum":
			ae, _ := av.([]any)
			be, _ := bv.([]any)
			var keep []any
			for _, v := range ae {
				if slices.ContainsFunc(be, func(w any) bool { return jsonEqual(v, w) }) {
					keep = append(keep, v)
				}
			}
			if len(keep) == 0 {
				return boolSchema(false), true
			}
			out[k] = keep
		case k == "const":
			return boolSchema(false), true
		case lowerKeys[k] || upperKeys[k]:
			x, ok1 := number(av)
			y, ok2 := number(bv)
			if !ok1 || !ok2 {
				return nil, false
			}
			if (lowerKeys[k] && y > x) || (upperKeys[k] && y < x) {
				out[k] = bv
			}
		case k == "pattern" || k == "format":
			set := append(stringList(av), stringList(bv)...)
			slices.Sort(set)
			set = slices.Compact(set)
			vals := make([]any, len(set))
			for i, s := range set {
				vals[i] = s
			}
			out[k] = vals // several patterns (formats): each must hold
		case k == "required":
			set := append(stringSet(av), stringSet(bv)...)
			slices.Sort(set)
			set = slices.Compact(set)
			vals := make([]any, len(set))
			for i, s := range set {
				vals[i] = s
			}
			out[k] = vals
		case k == "uniqueItems":
			out[k] = av == true || bv == true
		case k == "properties":
			ap, ok1 := av.(map[string]any)
			bp, ok2 := bv.(map[string]any)
			if !ok1 || !ok2 {
				return nil, false
			}
			merged := clone(ap)
			for name, ps := range bp {
				if prev, ok := merged[name]; ok && !jsonEqual(prev, ps) {
					merged[name] = map[string]any{"allOf": []any{prev, ps}}
				} else {
					merged[name] = ps
				}
			}
			out[k] = merged
		case k == "items" || k == "additionalProperties":
			out[k] = map[string]any{"allOf": []any{av, bv}}
		case k == "prefixItems":
			ap, ok1 := av.([]any)
			bp, ok2 := bv.([]any)
			if !ok1 || !ok2 {
				return nil, false
			}
			n := max(len(ap), len(bp))
			merged := make([]any, n)
			for i := range n {
				switch {
				case i >= len(ap):
					merged[i] = bp[i]
				case i >= len(bp):
					merged[i] = ap[i]
				default:
					merged[i] = map[string]any{"allOf": []any{ap[i], bp[i]}}
				}
			}
			out[k] = merged
		case k == "allOf":
			ae, _ := av.([]any)
			be, _ := bv.([]any)
			out[k] = append(slices.Clone(ae), be...)
		case k == "$defs" || k == "definitions" || k == "$schema" || k == "$id":
		default:
			return nil, false
		}
	}
	return out, true
}

// stringList returns a string keyword that may hold several values
// (patterns and formats conjoined by conj).
func stringList(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		return stringSet(x)
	}
	return nil
}

// openness of an object schema's additionalProperties.
type opennessKind int

const (
	open        opennessKind = iota // absent or true
	closed                          // false
	schemaProps                     // a schema
)

func openness(s map[string]any) opennessKind {
	switch v := s["additionalProperties"].(type) {
	case nil:
		return open
	case bool:
		if v {
			return open
		}
		return closed
	case map[string]any:
		if len(v) == 0 {
			return open
		}
		if not, ok := v["not"].(map[string]any); ok && len(v) == 1 && len(not) == 0 {
			return closed
		}
	}
	return schemaProps
}

// annotationKeys never change which values a schema accepts.
var annotationKeys = map[string]bool{"title": true, "description": true, "examples": true, "$comment": true,
	"$defs": true, "definitions": true, "$schema": true, "$id": true, "default": true}

// pureUnion reports whether s is only a union under key (plus annotations).
func pureUnion(s map[string]any, key string) bool {
	for k := range s {
		if k != key && !annotationKeys[k] {
			return false
		}
	}
	return true
}

// loneUnion reports whether s is only a union under key: pureUnion, or a
// union of object schemas beside "type": "object" (which then restricts
// nothing — the root of an advertised tool input, where the projector says
// the arguments are one object).
func loneUnion(root any, s map[string]any, key string) bool {
	if pureUnion(s, key) {
		return true
	}
	if s["type"] != "object" {
		return false
	}
	for k := range s {
		if k != key && k != "type" && !annotationKeys[k] {
			return false
		}
	}
	bs, _ := s[key].([]any)
	for _, b := range bs {
		if r := resolve(root, b); r.m == nil || r.m["type"] != "object" {
			return false
		}
	}
	return len(bs) > 0
}

func hasUnion(s map[string]any) bool {
	_, a := s["anyOf"]
	_, o := s["oneOf"]
	return a || o
}
