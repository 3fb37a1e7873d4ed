package engine

import (
	"encoding/json"
	"math/big"
	"reflect"
	"strings"
)

// Defaults (DESIGN invariant 3: "defaults are carried and applied by the
// runner"). CUE gives a field with a default (`limit: *10 | int`) its
// default when the data omits it; the translator carries that as the
// "default" keyword of the property's schema, and ApplyDefaults puts the
// value back before validation, so a handler sees what CUE would have
// produced.
//
// The walk follows the compiled schema:
//
//   - properties: a property absent from the object takes its schema's
//     default (the property schema's own, else the default of the schema a
//     lone $ref points to); present values, defaults included, are walked
//     into, so nested objects get their defaults too;
//   - patternProperties and additionalProperties: walked into for the
//     members they govern (they never create members); patterns in sorted
//     order;
//   - items, prefixItems: walked into for each element;
//   - $ref and allOf: every referenced schema applies, as in CUE's
//     unification;
//   - anyOf and oneOf (CUE disjunctions): a disjunction has a default only
//     where CUE can choose one arm. Each arm is tried on a copy of the
//     value: the arm's defaults are applied, then the copy is validated
//     against that arm. If exactly one arm accepts (or every arm that
//     accepts produces the same value) that arm's result is used; if none
//     or several different ones accept, no default is applied (CUE would
//     call the value ambiguous, and the validator then judges the value as
//     sent);
//   - not, if/then/else, dependentSchemas and contains: not walked (CUE's
//     translator does not produce defaults under them).
//
// A default is copied into the value, never shared, so the value can be
// handed to a handler that modifies it.

// HasDefaults reports whether any schema ApplyDefaults walks declares a
// default.
func (s *Schema) HasDefaults() bool { return s.hasDefaults }

// ApplyDefaults fills in the defaults the schema declares for members
// missing from value, updating maps and slices in place, and reports
// whether it changed anything. The returned value is the one to use.
func (s *Schema) ApplyDefaults(value any) (any, bool) {
	if !s.hasDefaults {
		return value, false
	}
	d := defaulter{s: s}
	out := d.apply(s.root, value, 0)
	return out, d.changed
}

// maxDefaultDepth bounds the walk on schemas that reach themselves without
// descending into the value (`{"$ref": "#"}` at the root).
const maxDefaultDepth = 256

type defaulter struct {
	s       *Schema
	changed bool
}

func (d *defaulter) apply(n *node, value any, depth int) any {
	if n == nil || !n.reachesDef || depth > maxDefaultDepth {
		return value
	}
	depth++
	if n.ref != nil {
		value = d.apply(n.ref, value, depth)
	}
	for _, sub := range n.allOf {
		value = d.apply(sub, value, depth)
	}
	switch x := value.(type) {
	case map[string]any:
		for i := range n.props {
			p := &n.props[i]
			m, present := x[p.name]
			if !present {
				def, ok := defaultOf(p.node)
				if !ok {
					continue
				}
				m = deepCopy(def)
				x[p.name] = m
				d.changed = true
			}
			x[p.name] = d.apply(p.node, m, depth)
		}
		if len(n.patProps) > 0 || n.addl != nil {
			for _, name := range sortedMapKeys(x) {
				if _, declared := n.lookupProp(name); declared {
					continue
				}
				matched := false
				for _, pp := range n.patProps {
					if pp.re.MatchString(name) {
						matched = true
						x[name] = d.apply(pp.node, x[name], depth)
					}
				}
				if n.addl != nil && !matched {
					x[name] = d.apply(n.addl, x[name], depth)
				}
			}
		}
	case []any:
		for i := range x {
			switch {
			case i < len(n.prefix):
				x[i] = d.apply(n.prefix[i], x[i], depth)
			case n.items != nil:
				x[i] = d.apply(n.items, x[i], depth)
			}
		}
	}
	if len(n.anyOf) > 0 {
		value = d.disjunction(n, n.anyOf, value, depth)
	}
	if len(n.oneOf) > 0 {
		value = d.disjunction(n, n.oneOf, value, depth)
	}
	return value
}

// disjunction applies the defaults of the one arm CUE could choose. When
// several arms accept with different results, CUE takes the default arm
// if one of them is it (*{type: "text"} | {type: "json_object"} completes
// {} to {"type": "text"}): the result the disjunction's own default is
// part of.
func (d *defaulter) disjunction(n *node, arms []*node, value any, depth int) any {
	var results []any
	var changed []bool
	add := func(v any, ch bool) {
		for _, r := range results {
			if reflect.DeepEqual(r, v) {
				return
			}
		}
		results, changed = append(results, v), append(changed, ch)
	}
	for _, arm := range arms {
		if !arm.reachesDef {
			// An arm without defaults yields the value unchanged.
			if d.s.valid(arm, value) {
				add(value, false)
			}
			continue
		}
		if !d.s.guardsHold(arm, value, 0) {
			// The translator refuses an ambiguous instance with a
			// "not" beside the arm; CUE judges ambiguity on the
			// instance as sent, before completing it.
			continue
		}
		try := defaulter{s: d.s}
		cp := try.apply(arm, deepCopy(value), depth)
		if d.s.valid(arm, cp) {
			add(cp, try.changed)
		}
	}
	pick := -1
	switch {
	case len(results) == 1:
		pick = 0
	case len(results) > 1 && n.hasDefault:
		for i, r := range results {
			if holds(r, n.def) {
				if pick >= 0 {
					return value // ambiguous
				}
				pick = i
			}
		}
	}
	if pick < 0 || !changed[pick] {
		return value
	}
	d.changed = true
	return results[pick]
}

// holds reports whether v holds every member def has, recursively, with
// the same value (def is part of v).
func holds(v, def any) bool {
	dm, ok := def.(map[string]any)
	if !ok {
		return reflect.DeepEqual(v, def) || numbersEqual(v, def)
	}
	vm, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for k, dv := range dm {
		x, present := vm[k]
		if !present || !holds(x, dv) {
			return false
		}
	}
	return true
}

// numbersEqual reports whether a and b are numbers of one value and kind
// (integer literal or not).
func numbersEqual(a, b any) bool {
	x, ok1 := a.(json.Number)
	y, ok2 := b.(json.Number)
	if !ok1 || !ok2 {
		return false
	}
	xi, yi := !strings.ContainsAny(string(x), ".eE"), !strings.ContainsAny(string(y), ".eE")
	if xi != yi {
		return false
	}
	rx, ok1 := new(big.Rat).SetString(string(x))
	ry, ok2 := new(big.Rat).SetString(string(y))
	return ok1 && ok2 && rx.Cmp(ry) == 0
}

// guardsHold reports whether value passes the "not" sub-schemas of n and
// of the allOf members of n (followed through $ref).
func (s *Schema) guardsHold(n *node, value any, depth int) bool {
	if n == nil || depth > 16 {
		return true
	}
	if n.not != nil && s.valid(n.not, value) {
		return false
	}
	for _, a := range n.allOf {
		if !s.guardsHold(a, value, depth+1) {
			return false
		}
	}
	return s.guardsHold(n.ref, value, depth+1)
}

func (s *Schema) valid(n *node, v any) bool {
	c := vctx{s: s}
	return n.check(v, &c)
}

// defaultOf returns the default a property schema declares: its own, else
// the one of the schema its $ref chain points to.
func defaultOf(n *node) (any, bool) {
	for range 16 {
		if n == nil {
			return nil, false
		}
		if n.hasDefault {
			return n.def, true
		}
		n = n.ref
	}
	return nil, false
}

// markDefaults sets reachesDef on every node from which ApplyDefaults can
// reach a default, and reports it for root. Cycles through references are
// resolved by iterating to a fixed point over the finite set of nodes.
func markDefaults(root *node) bool {
	var all []*node
	seen := map[*node]bool{}
	var collect func(n *node)
	collect = func(n *node) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		all = append(all, n)
		for _, c := range defaultChildren(n) {
			collect(c)
		}
	}
	collect(root)
	for _, n := range all {
		n.reachesDef = n.hasDefault
	}
	for changed := true; changed; {
		changed = false
		for _, n := range all {
			if n.reachesDef {
				continue
			}
			for _, c := range defaultChildren(n) {
				if c != nil && c.reachesDef {
					n.reachesDef, changed = true, true
					break
				}
			}
		}
	}
	return root.reachesDef
}

// defaultChildren are the sub-schemas ApplyDefaults walks from n.
func defaultChildren(n *node) []*node {
	out := []*node{n.ref, n.items, n.addl}
	out = append(out, n.allOf...)
	out = append(out, n.anyOf...)
	out = append(out, n.oneOf...)
	out = append(out, n.prefix...)
	for _, p := range n.props {
		out = append(out, p.node)
	}
	for _, p := range n.patProps {
		out = append(out, p.node)
	}
	return out
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = deepCopy(e)
		}
		return s
	default:
		return v
	}
}

// floatDefault returns the default of n as the value CUE fills in. A
// canonical JSON document writes the float 1.0 as 1, which CUE (and this
// validator, reading integer literals as integers) takes for an integer:
// a default `*1.0 | float` written 1 would refuse itself. Where the
// default as written does not validate against its own schema, the
// integral numbers in it are read as floats ("1.0"): all of them, or the
// first combination (at most 2^8 tried) that validates.
func (s *Schema) floatDefault(n *node, def any) any {
	if s.valid(n, def) {
		return def
	}
	var leaves []func(float bool)
	var walk func(v any, set func(any))
	walk = func(v any, set func(any)) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(e, func(nv any) { x[k] = nv })
			}
		case []any:
			for i, e := range x {
				walk(e, func(nv any) { x[i] = nv })
			}
		case json.Number:
			if !strings.ContainsAny(string(x), ".eE") {
				leaves = append(leaves, func(float bool) {
					if float {
						set(x + ".0")
					} else {
						set(x)
					}
				})
			}
		}
	}
	var root any
	cp := deepCopy(def)
	walk(cp, func(nv any) { root = nv })
	if root == nil {
		root = cp
	}
	if len(leaves) == 0 {
		return def
	}
	try := func(float func(i int) bool) bool {
		for i, set := range leaves {
			set(float(i))
		}
		return s.valid(n, root)
	}
	if len(leaves) > 8 {
		if try(func(int) bool { return true }) {
			return root
		}
		return def
	}
	for mask := 1; mask < 1<<len(leaves); mask++ {
		if try(func(i int) bool { return mask&(1<<i) != 0 }) {
			return root
		}
	}
	return def
}
