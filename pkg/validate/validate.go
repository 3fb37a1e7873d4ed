// Package validate compiles the canonical JSON Schema documents of a
// [graph.Graph] into validators and runs them on request and response
// values. It is the one validator every mount uses (DESIGN invariant 3): the
// bytes it compiles are the bytes the graph digests and advertises.
//
// It links no CUE: a server built from a compiled graph validates with this
// package alone.
//
//	set, err := validate.ForGraph(g)          // compile every schema once
//	v := set.Get(op.Input)
//	value, err := validate.DecodeJSON(body, nil)
//	if err := v.Validate(value); err != nil {
//		var verr *validate.Error
//		errors.As(err, &verr)                 // verr.Issues: path, keyword, message
//	}
//
// The engine is this package's own (internal/engine), chosen by benchmark
// over santhosh-tekuri/jsonschema/v6, google/jsonschema-go and
// kaptinlin/jsonschema on the schemas the compiler emits (bench/validators):
// a document is compiled once into nodes specialised per keyword, an
// accepted value costs no allocation, numbers are compared exactly on their
// decimal text, patterns are Go's regexp (CUE's own engine, so a pattern
// means what it means in CUE), and CUE's readings where JSON Schema's
// differs (integer literals, uniqueness by kind, formats; see cue.go) are
// options of the engine rather than extra keywords. It is checked against
// santhosh-tekuri on the official test suite, the golden schemas and a
// fuzz target (internal/engine/*_test.go).
//
// Values are the decoded form [DecodeJSON] produces: map[string]any,
// []any, string, bool, nil and json.Number (numbers keep their exact text,
// so integers beyond 2^53 and 1 vs 1.0 are judged on the wire value).
package validate

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/validate/internal/engine"
)

// Validator is one compiled JSON Schema. It is safe for concurrent use.
type Validator struct {
	digest graph.Digest
	schema *engine.Schema
}

// Digest returns the digest of the schema v was compiled from (empty when
// it was compiled from bytes that are not in a graph).
func (v *Validator) Digest() graph.Digest { return v.digest }

// Issue is one reason a value was refused.
type Issue struct {
	// Path is the JSON Pointer (RFC 6901) of the offending value in the
	// instance; "" is the instance itself.
	Path string `json:"path"`
	// Keyword is the JSON Schema keyword that failed (e.g. "required",
	// "minimum", "additionalProperties", "type").
	Keyword string `json:"keyword"`
	// Message says what is wrong in words a client can act on.
	Message string `json:"message"`
}

// String formats the issue as "path: message" ("/" for the root).
func (i Issue) String() string {
	p := i.Path
	if p == "" {
		p = "/"
	}
	return p + ": " + i.Message
}

// Error is returned by [Validator.Validate] when a value does not match its
// schema. Issues are in a stable order (instance path, then keyword, then
// message).
type Error struct {
	Issues []Issue
}

func (e *Error) Error() string {
	if len(e.Issues) == 0 {
		return "value does not match its schema"
	}
	var b strings.Builder
	for i, is := range e.Issues {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(is.String())
	}
	return b.String()
}

// Compile compiles one canonical JSON Schema 2020-12 document. A keyword
// or format the validator does not implement is an error: no constraint
// is ever ignored.
func Compile(schema []byte) (*Validator, error) {
	doc, err := DecodeJSON(schema, &DecodeOptions{MaxDepth: 10000})
	if err != nil {
		return nil, fmt.Errorf("validate: schema is not JSON: %w", err)
	}
	s, err := engine.Compile(doc, &cueReading)
	if err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	return &Validator{schema: s}, nil
}

// Validate reports whether value (as decoded by [DecodeJSON]) matches the
// schema. A mismatch is an *[Error]. An accepted value costs no
// allocation.
func (v *Validator) Validate(value any) error {
	if v.schema.Valid(value) {
		return nil
	}
	return issuesError(v.schema.Validate(value))
}

// ValidateJSON decodes data as [DecodeJSON] does and validates the value:
// the error is a *[DecodeError] for bytes that are not one acceptable JSON
// value, an *[Error] for a value the schema refuses. It is for callers
// that need the verdict, not the value (a handler's output): an accepted
// value is judged on the bytes, without building it and without
// allocating, wherever the schema allows (see the engine's ValidJSON); a
// refused one is decoded and validated to say why.
func (v *Validator) ValidateJSON(data []byte, opts *DecodeOptions) error {
	if v.schema.ValidJSON(data, maxDepth(opts)) {
		return nil
	}
	val, err := DecodeJSON(data, opts)
	if err != nil {
		return err
	}
	return v.Validate(val)
}

func issuesError(is []engine.Issue) error {
	if is == nil {
		return nil
	}
	out := make([]Issue, len(is))
	for i, x := range is {
		out[i] = Issue(x)
	}
	return &Error{Issues: out}
}

// Set holds one validator per schema digest of a graph, compiled once.
//
// Cost: every schema of the graph is compiled when the set is built (about
// 0.3 ms per schema node on a 2-core machine), so requests never compile; the
// set keeps each compiled schema for its lifetime. Lookups take no lock.
type Set struct {
	byDigest map[graph.Digest]*Validator
}

// ForGraph compiles every schema of g. It fails if any schema does not
// compile, naming its digest.
func ForGraph(g *graph.Graph) (*Set, error) {
	s := &Set{byDigest: make(map[graph.Digest]*Validator, len(g.Schemas))}
	for d, raw := range g.Schemas {
		v, err := Compile(raw)
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", d, err)
		}
		v.digest = d
		s.byDigest[d] = v
	}
	return s, nil
}

// Get returns the validator for digest d, or nil when d is empty or not in
// the graph.
func (s *Set) Get(d graph.Digest) *Validator {
	if s == nil || d == "" {
		return nil
	}
	return s.byDigest[d]
}

// Cache compiles validators on first use, keyed by digest, and keeps them.
// It is for schemas that are not in a graph's Schemas map up front (for
// example advertised tool documents). Safe for concurrent use; a schema is
// compiled at most once per digest.
type Cache struct {
	m sync.Map // graph.Digest → *cacheEntry
}

type cacheEntry struct {
	once sync.Once
	v    *Validator
	err  error
}

// Get returns the validator for schema, compiling it on first use. d must be
// the digest of schema (graph.SchemaDigest computes it).
func (c *Cache) Get(d graph.Digest, schema []byte) (*Validator, error) {
	e, _ := c.m.LoadOrStore(d, &cacheEntry{})
	ent := e.(*cacheEntry)
	ent.once.Do(func() {
		ent.v, ent.err = Compile(schema)
		if ent.v != nil {
			ent.v.digest = d
		}
	})
	return ent.v, ent.err
}

// Number returns n as a json.Number if it is one.
func Number(v any) (json.Number, bool) {
	n, ok := v.(json.Number)
	return n, ok
}
