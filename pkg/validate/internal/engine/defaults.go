package engine

import (
	"reflect"
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
		value = d.disjunction(n.anyOf, value, depth)
	}
	if len(n.oneOf) > 0 {
		value = d.disjunction(n.oneOf, value, depth)
	}
	return value
}

// disjunction applies the defaults of the one arm CUE could choose.
func (d *defaulter) disjunction(arms []*node, value any, depth int) any {
	var chosen any
	var chosenChanged, found bool
	for _, arm := range arms {
		if !arm.reachesDef {
			// An arm without defaults yields the value unchanged.
			if d.s.valid(arm, value) {
				if found && (chosenChanged || !reflect.DeepEqual(chosen, value)) {
					return value // ambiguous
				}
				chosen, chosenChanged, found = value, false, true
			}
			continue
		}
		try := defaulter{s: d.s}
		cp := try.apply(arm, deepCopy(value), depth)
		if !d.s.valid(arm, cp) {
			continue
		}
		if found && !reflect.DeepEqual(chosen, cp) {
			return value // ambiguous
		}
		if !found {
			chosen, chosenChanged, found = cp, try.changed, true
		}
	}
	if !found || !chosenChanged {
		return value
	}
	d.changed = true
	return chosen
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
