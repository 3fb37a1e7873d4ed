package validate

import (
	"reflect"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Defaults (DESIGN invariant 3: "defaults are carried and applied by the
// runner"). CUE gives a field with a default (`limit: *10 | int`) its
// default when the data omits it; the translator carries that as the
// `default` keyword of the property's schema, and [Validator.ApplyDefaults]
// puts the value back before validation, so a handler sees what CUE would
// have produced.
//
// The walk follows the compiled schema:
//
//   - properties: a property absent from the object takes its schema's
//     default (the property schema's own, else the default of the schema a
//     lone $ref points to); present values, defaults included, are walked
//     into, so nested objects get their defaults too;
//   - patternProperties and additionalProperties: walked into for the
//     members they govern (they never create members);
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
//   - not, if/then/else, dependentSchemas, contains and unevaluated*: not
//     walked (CUE's translator does not produce defaults under them).
//
// A default is copied into the value, never shared, so the value can be
// handed to a handler that modifies it.

// ApplyDefaults fills in the defaults v's schema declares for members
// missing from value (as decoded by [DecodeJSON]) and reports whether it
// changed anything. Maps and slices of value are updated in place; the
// returned value is the one to use (it differs from value only when the
// root itself was replaced). Schemas without any default cost nothing.
func (v *Validator) ApplyDefaults(value any) (any, bool) {
	if !v.hasDefaults {
		return value, false
	}
	d := defaulter{}
	out := d.apply(v.schema, value, 0)
	return out, d.changed
}

// HasDefaults reports whether any schema reachable from v declares a
// default, i.e. whether [Validator.ApplyDefaults] can change a value.
func (v *Validator) HasDefaults() bool { return v.hasDefaults }

// maxDefaultDepth bounds the walk on schemas that reach themselves without
// descending into the value (`{"$ref": "#"}` at the root).
const maxDefaultDepth = 256

type defaulter struct{ changed bool }

func (d *defaulter) apply(s *jsonschema.Schema, value any, depth int) any {
	if s == nil || depth > maxDefaultDepth {
		return value
	}
	depth++
	if s.Ref != nil {
		value = d.apply(s.Ref, value, depth)
	}
	for _, sub := range s.AllOf {
		value = d.apply(sub, value, depth)
	}
	switch x := value.(type) {
	case map[string]any:
		for name, ps := range s.Properties {
			m, present := x[name]
			if !present {
				def, ok := defaultOf(ps)
				if !ok {
					continue
				}
				m = deepCopy(def)
				x[name] = m
				d.changed = true
			}
			x[name] = d.apply(ps, m, depth)
		}
		if len(s.PatternProperties) > 0 || s.AdditionalProperties != nil {
			for name, m := range x {
				if _, ok := s.Properties[name]; ok {
					continue
				}
				matched := false
				for re, ps := range s.PatternProperties {
					if re.MatchString(name) {
						matched = true
						x[name] = d.apply(ps, m, depth)
						m = x[name]
					}
				}
				if ap, ok := s.AdditionalProperties.(*jsonschema.Schema); ok && !matched {
					x[name] = d.apply(ap, m, depth)
				}
			}
		}
	case []any:
		for i := range x {
			switch {
			case i < len(s.PrefixItems):
				x[i] = d.apply(s.PrefixItems[i], x[i], depth)
			case s.Items2020 != nil:
				x[i] = d.apply(s.Items2020, x[i], depth)
			}
		}
	}
	if len(s.AnyOf) > 0 {
		value = d.disjunction(s.AnyOf, value, depth)
	}
	if len(s.OneOf) > 0 {
		value = d.disjunction(s.OneOf, value, depth)
	}
	return value
}

// disjunction applies the defaults of the one arm CUE could choose (see the
// package comment on defaults).
func (d *defaulter) disjunction(arms []*jsonschema.Schema, value any, depth int) any {
	var chosen any
	var chosenChanged, found bool
	for _, arm := range arms {
		if !reachesDefault(arm, map[*jsonschema.Schema]bool{}) {
			// An arm without defaults yields the value unchanged.
			if arm.Validate(value) == nil {
				if found && (chosenChanged || !reflect.DeepEqual(chosen, value)) {
					return value // ambiguous
				}
				chosen, chosenChanged, found = value, false, true
			}
			continue
		}
		try := defaulter{}
		cp := try.apply(arm, deepCopy(value), depth)
		if arm.Validate(cp) != nil {
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

// defaultOf returns the default a property schema declares: its own, else
// the one of the schema its $ref chain points to.
func defaultOf(s *jsonschema.Schema) (any, bool) {
	for range 16 {
		if s == nil {
			return nil, false
		}
		if s.Default != nil {
			return *s.Default, true
		}
		s = s.Ref
	}
	return nil, false
}

// reachesDefault reports whether a default is declared anywhere ApplyDefaults
// walks from s.
func reachesDefault(s *jsonschema.Schema, seen map[*jsonschema.Schema]bool) bool {
	if s == nil || seen[s] {
		return false
	}
	seen[s] = true
	if s.Default != nil {
		return true
	}
	subs := []*jsonschema.Schema{s.Ref, s.Items2020}
	subs = append(subs, s.AllOf...)
	subs = append(subs, s.AnyOf...)
	subs = append(subs, s.OneOf...)
	subs = append(subs, s.PrefixItems...)
	if ap, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
		subs = append(subs, ap)
	}
	for _, p := range s.Properties {
		subs = append(subs, p)
	}
	for _, p := range s.PatternProperties {
		subs = append(subs, p)
	}
	for _, sub := range subs {
		if reachesDefault(sub, seen) {
			return true
		}
	}
	return false
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
