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
// The engine is santhosh-tekuri/jsonschema/v6: it reads patterns with Go's
// regexp (CUE's own engine, so a pattern means what it means in CUE),
// compares json.Number values exactly (big.Rat, never float64), and lets a
// vocabulary add the keywords that carry CUE's meaning where JSON Schema's
// differs (integer literals, uniqueness by kind; see cue.go). An engine
// without those three would need its own number and regexp handling to
// agree with CUE.
//
// Values are the decoded form [DecodeJSON] produces: map[string]any,
// []any, string, bool, nil and json.Number (numbers keep their exact text,
// so integers beyond 2^53 and 1 vs 1.0 are judged on the wire value).
package validate

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// Validator is one compiled JSON Schema. It is safe for concurrent use.
type Validator struct {
	digest graph.Digest
	schema *jsonschema.Schema
	// hasDefaults is computed once at compile time, so ApplyDefaults on a
	// schema without defaults does not walk anything.
	hasDefaults bool
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
// schema. Issues are in a stable order (instance path, then keyword).
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

// Compile compiles one canonical JSON Schema 2020-12 document.
func Compile(schema []byte) (*Validator, error) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(schema)))
	if err != nil {
		return nil, fmt.Errorf("validate: schema is not JSON: %w", err)
	}
	c := newCompiler()
	goTimeFormats(doc, c, map[string]bool{})
	const url = "stitchkit:///schema.json"
	if err := c.AddResource(url, rewrite(doc)); err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	return &Validator{schema: s, hasDefaults: reachesDefault(s, map[*jsonschema.Schema]bool{})}, nil
}

func newCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	// Formats are assertions with CUE's meaning (formats.go), never
	// annotations: a schema that says date-time refuses what CUE refuses.
	c.AssertFormat()
	for _, f := range formats {
		c.RegisterFormat(f)
	}
	c.AssertVocabs()
	c.RegisterVocabulary(vocabulary)
	return c
}

// Validate reports whether value (as decoded by [DecodeJSON]) matches the
// schema. A mismatch is an *[Error].
func (v *Validator) Validate(value any) error {
	err := v.schema.Validate(value)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &Error{Issues: []Issue{{Keyword: "", Message: err.Error()}}}
	}
	var issues []Issue
	collect(ve, &issues)
	return &Error{Issues: sortIssues(issues)}
}

var printer = message.NewPrinter(language.English)

// collect flattens the error tree to its leaves: the causes a client can act
// on. A oneOf/anyOf failure keeps its own summary rather than every arm's
// causes, which would be noise.
func collect(e *jsonschema.ValidationError, out *[]Issue) {
	switch e.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf:
		*out = append(*out, leaf(e))
		return
	}
	if len(e.Causes) == 0 {
		if _, ok := e.ErrorKind.(*kind.Schema); ok {
			return
		}
		*out = append(*out, leaf(e))
		return
	}
	for _, c := range e.Causes {
		collect(c, out)
	}
}

func leaf(e *jsonschema.ValidationError) Issue {
	kw := ""
	if p := e.ErrorKind.KeywordPath(); len(p) > 0 {
		kw = p[len(p)-1]
		if len(p) > 1 && (p[0] == "format" || p[0] == "required" || p[0] == "additionalProperties") {
			kw = p[0]
		}
	}
	return Issue{
		Path:    pointer(e.InstanceLocation),
		Keyword: kw,
		Message: e.ErrorKind.LocalizedString(printer),
	}
}

// pointer encodes an instance location as a JSON Pointer.
func pointer(toks []string) string {
	var b strings.Builder
	for _, t := range toks {
		b.WriteByte('/')
		t = strings.ReplaceAll(t, "~", "~0")
		b.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	return b.String()
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
