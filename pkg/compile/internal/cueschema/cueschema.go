// Package cueschema translates a CUE value into a JSON Schema 2020-12
// document that accepts exactly the JSON values CUE accepts, or refuses the
// construct it cannot state exactly.
//
// It is the one translator of stitchkit (DESIGN invariant 3): every schema
// node of a contract (#params, #query, #input, #output, #args, #ack) goes
// through [Translator.Schema] once, and the bytes the graph digests,
// advertises and validates with are its output.
//
//	t := cueschema.New(nil)
//	doc, err := t.Schema(v) // v: the evaluated CUE value of a schema node
//	var terr *cueschema.Error
//	if errors.As(err, &terr) {
//		for _, r := range terr.Refusals {
//			fmt.Println(r.Pos, r.Construct, r.Message, r.Hint)
//		}
//	}
//
// The walk reads the evaluated value (kinds, fields, closedness through
// Allows, defaults through Default, the evaluated constraint of a scalar
// through Eval().Expr()) and calls the costlier conjunct-level Expr() only
// where it must: on lists and structs, to find the validators
// (list.MaxItems, matchN, …) that evaluation keeps out of sight (unless
// Options.NoStructValidators says no source calls one), and on a
// disjunction whose evaluated form has fewer arms than its source. CUE's
// evaluation merges arms its equality cannot tell apart ({a: int} | {a:
// int, ...}, [...int] | [...string]), while an instance is unified with the
// arms as written: those arms are read as written and closed the way the
// definition around them closes them. The source (Value.Source) answers
// the cheap questions first: a plain literal has one conjunct, a
// conjunction or a predeclared type is no reference, and a default copying
// a sibling field (b: *a | int), which CUE's API no longer shows, is read
// from it.
//
// Constructs translated exactly that their author most likely did not mean
// (a reference to an optional field, a default copied from another field)
// are reported through Options.Warn.
//
// "Accepts" is CUE's own verdict: an instance x is accepted when the schema
// unified with x is free of errors and concrete once defaults are taken
// (cue vet -c). So a regular field whose value CUE completes by itself (a
// concrete value, a default, a struct of optional fields) may be omitted,
// and carries that value as "default"; a disjunction whose arms both accept
// an instance with different results is ambiguous and refused, exactly as
// CUE refuses it. Numbers keep CUE's kinds: "type": "integer" means an
// integer literal (1, not 1.0), which pkg/validate asserts; a float is
// {"type": "number", "not": {"type": "integer"}}.
//
// Recursion and work are bounded: references to definitions become $defs
// entries reached through $ref (so recursive definitions terminate), every
// walk stops at [MaxDepth] nested values, and one schema's translation
// visits at most 10,000 values (a few lines of CUE expand exponentially
// through references to fields that are not definitions), each with a
// positioned refusal. What CUE itself takes too long to evaluate is the
// caller's to bound (pkg/compile runs a watchdog).
package cueschema

import (
	"fmt"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/token"
)

// Dialect is the $schema of every document.
const Dialect = "https://json-schema.org/draft/2020-12/schema"

// MaxDepth bounds how deeply nested a schema may be (values inside values,
// references followed included).
const MaxDepth = 64

// maxUnionArms bounds the arms of one disjunction of structs or lists,
// whose ambiguity must be spelled out (the schema grows with the square of
// the arms); maxScalarArms bounds an enum (its schema grows with the arms).
const (
	maxUnionArms  = 32
	maxScalarArms = 4096
)

// maxSteps bounds the values one schema node's translation visits,
// definitions it refers to included, so no contract makes the translator
// run for long: CUE values grow exponentially through references
// (_h1: {x: _h0, y: _h0}, _h2: {x: _h1, y: _h1}, …) in a few lines.
const maxSteps = 10000

// Options configure a [Translator]. A nil *Options means the defaults.
type Options struct {
	// DropDoc reports whether a doc comment must not become a
	// "description" (the contract language's own docs, for example).
	DropDoc func(doc string) bool
	// Warn, when set, receives the warnings of the translation:
	// constructs translated with exactly CUE's meaning that a user most
	// likely did not mean, or whose meaning the run time cannot carry in
	// full. A definition is translated once, so its warnings come once.
	Warn func(*Warning)
	// NoStructValidators, when set, says that no value translated can
	// carry a struct or list validator (list.MaxItems, struct.MinFields,
	// matchN, matchIf, …): no source the values come from calls one. The
	// translator then does not search the conjuncts of structs and lists
	// for them, which costs an evaluation of each (Value.Expr finalises
	// every conjunct anew). Leave it unset unless that is proven, as the
	// compiler does by scanning the contract's files.
	NoStructValidators bool
	// NoConditionalFields, when set, says that no source the values
	// come from holds a comprehension, so the translator need not
	// search the conjuncts of a struct for one that reads the struct's
	// own fields (if kind == "child" {guardian!: string}). Leave it
	// unset unless that is proven.
	NoConditionalFields bool
}

// Warning is a construct translated exactly whose meaning is likely not
// what its author meant (see [Options.Warn]).
type Warning struct {
	// Pos is where the construct is written.
	Pos token.Pos
	// Path is the CUE path of the value, relative to the translated
	// value.
	Path string
	// Rule names the finding ("optional-field-reference",
	// "default-from-field").
	Rule string
	// Message says what the construct means.
	Message string
	// Hint is the rewrite that says what was most likely meant.
	Hint string
}

// Refusal is one construct that has no exact JSON Schema equivalent.
type Refusal struct {
	// Pos is where the construct is written (may be invalid when CUE
	// computed the value).
	Pos token.Pos
	// Path is the CUE path of the value the construct constrains,
	// relative to the translated value ("" for the value itself).
	Path string
	// Construct names what is refused ("strings.HasPrefix", "the
	// regular expression \"(?i)a\"", "a bytes value").
	Construct string
	// Message says why it cannot be translated exactly.
	Message string
	// Hint is a rewrite that works.
	Hint string
}

func (r *Refusal) Error() string {
	var b strings.Builder
	if r.Path != "" {
		b.WriteString(r.Path)
		b.WriteString(": ")
	}
	b.WriteString(r.Construct)
	b.WriteString(": ")
	b.WriteString(r.Message)
	if r.Hint != "" {
		b.WriteString(" (")
		b.WriteString(r.Hint)
		b.WriteString(")")
	}
	return b.String()
}

// Error is returned when a value holds constructs that cannot be
// translated exactly. Refusals is never empty.
type Error struct {
	Refusals []*Refusal
}

func (e *Error) Error() string {
	parts := make([]string, len(e.Refusals))
	for i, r := range e.Refusals {
		parts[i] = r.Error()
	}
	return strings.Join(parts, "; ")
}

// Translator translates the schema values of one compilation. Definitions
// referenced from several schemas are translated once. A Translator is not
// safe for concurrent use (nor are CUE values).
type Translator struct {
	opts Options
	// defs caches translated definitions by their key (see defKey).
	defs map[string]*defEntry
	// names maps a $defs name to the key that owns it, so two
	// definitions with the same name (#T of two packages) get distinct
	// names.
	names map[string]string
	// validators caches the validators found behind a reference.
	validators map[string][]cue.Value
	// steps counts the values the current Schema call visited; tooLarge
	// is set when they passed maxSteps.
	steps    int
	tooLarge bool
	root     cue.Value // the value Schema translates
	// wrap is "#W: _" in wrapCtx (see closeArms).
	wrapCtx *cue.Context
	wrap    cue.Value
}

type defEntry struct {
	name     string
	value    cue.Value
	schema   any // nil while being translated
	partial  any // the survival form (see survival), translated on demand
	refusals []*Refusal
	deps     []string // keys of the definitions its schema refers to
	fpdeps   []string // keys whose partial forms its schema refers to
	pdeps    []string // keys its partial form refers to
	done     bool
	pdone    bool
	// complete: 0 unknown, 1 no, 2 CUE completes the definition by
	// itself (a struct of optional fields).
	complete int8
}

// New returns a Translator.
func New(opts *Options) *Translator {
	t := &Translator{defs: map[string]*defEntry{}, names: map[string]string{}, validators: map[string][]cue.Value{}}
	if opts != nil {
		t.opts = *opts
	}
	return t
}

// Schema translates v into a JSON Schema document: a tree of
// map[string]any, []any, string, bool, nil and json.Number, with "$schema"
// at its root and "$defs" holding every definition it refers to. It
// returns an *[Error] when v holds constructs JSON Schema cannot state
// exactly.
func (t *Translator) Schema(v cue.Value) (doc map[string]any, err error) {
	t.steps, t.tooLarge, t.root = 0, false, v
	w := &walker{t: t, refs: map[string]bool{}, root: v.Path().String()}
	s := w.value(v, "", 0, modeFull)
	// Translate the definitions the schema refers to (and theirs).
	for changed := true; changed; {
		changed = false
		for key := range w.refs {
			e := t.defs[key]
			if !e.done {
				t.translateDef(e)
				changed = true
			}
			for _, d := range e.deps {
				if !w.refs[d] {
					w.refs[d] = true
					changed = true
				}
			}
			for _, d := range e.fpdeps {
				if w.prefs == nil {
					w.prefs = map[string]bool{}
				}
				if !w.prefs[d] {
					w.prefs[d] = true
					changed = true
				}
			}
		}
		for key := range w.prefs {
			e := t.defs[key]
			if !e.pdone {
				t.translatePartial(e)
				changed = true
			}
			for _, d := range e.pdeps {
				if !w.prefs[d] {
					w.prefs[d] = true
					changed = true
				}
			}
		}
	}
	refusals := w.refusals
	defs := map[string]any{}
	for key := range w.refs {
		e := t.defs[key]
		refusals = append(refusals, e.refusals...)
		defs[e.name] = e.schema
	}
	for key := range w.prefs {
		e := t.defs[key]
		defs[e.name+partialSuffix] = e.partial
	}
	if len(refusals) > 0 {
		return nil, &Error{Refusals: dedupRefusals(refusals)}
	}
	doc = asObject(s)
	if d := w.doc(v); d != "" {
		doc["description"] = d
	}
	if len(defs) > 0 {
		doc["$defs"] = defs
	}
	doc["$schema"] = Dialect
	return doc, nil
}

// asObject returns s as a schema object (true → {}, false → {"not": {}}).
func asObject(s any) map[string]any {
	switch x := s.(type) {
	case map[string]any:
		return x
	case bool:
		if !x {
			return map[string]any{"not": map[string]any{}}
		}
	}
	return map[string]any{}
}

func dedupRefusals(rs []*Refusal) []*Refusal {
	seen := map[string]bool{}
	var out []*Refusal
	for _, r := range rs {
		k := fmt.Sprint(r.Pos, "|", r.Error())
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, r)
	}
	return out
}

func (t *Translator) translateDef(e *defEntry) {
	e.done = true
	w := &walker{t: t, refs: map[string]bool{}, inDef: e, root: e.value.Path().String()}
	e.schema = w.value(e.value, "", 0, modeFull)
	if d := w.doc(e.value); d != "" {
		e.schema = withKeyword(e.schema, "description", d)
	}
	e.refusals = w.refusals
	for k := range w.refs {
		e.deps = append(e.deps, k)
	}
	for k := range w.prefs {
		// (A disjunction in the schema compares its arms with the
		// partial forms of the definitions they refer to.)
		e.fpdeps = append(e.fpdeps, k)
	}
}

func (t *Translator) translatePartial(e *defEntry) {
	e.pdone = true
	w := &walker{t: t, refs: map[string]bool{}, inDef: e, root: e.value.Path().String()}
	e.partial = w.value(e.value, "", 0, modePartial)
	for k := range w.prefs {
		e.pdeps = append(e.pdeps, k)
	}
	for k := range w.refs {
		// A partial form refers only to partial forms.
		e.pdeps = append(e.pdeps, k)
	}
}

// partialSuffix names the survival form of a definition in $defs.
const partialSuffix = "~partial"
