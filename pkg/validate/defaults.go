package validate

// Defaults (DESIGN invariant 3: "defaults are carried and applied by the
// runner"). CUE gives a field with a default (`limit: *10 | int`) its
// default when the data omits it; the translator carries that as the
// `default` keyword of the property's schema, and [Validator.ApplyDefaults]
// puts the value back before validation, so a handler sees what CUE would
// have produced. The walk (which keywords it follows, how a disjunction
// picks the one arm CUE could choose) is documented with the engine, in
// internal/engine/defaults.go.

// ApplyDefaults fills in the defaults v's schema declares for members
// missing from value (as decoded by [DecodeJSON]) and reports whether it
// changed anything. Maps and slices of value are updated in place; the
// returned value is the one to use (it differs from value only when the
// root itself was replaced). Schemas without any default cost nothing.
// A default is copied into the value, never shared.
func (v *Validator) ApplyDefaults(value any) (any, bool) {
	return v.schema.ApplyDefaults(value)
}

// HasDefaults reports whether any schema reachable from v declares a
// default, i.e. whether [Validator.ApplyDefaults] can change a value.
func (v *Validator) HasDefaults() bool { return v.schema.HasDefaults() }
