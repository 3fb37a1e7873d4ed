// Package schematree walks, resolves and clones JSON Schema 2020-12
// documents held as decoded JSON trees (map[string]any, []any, string,
// bool, nil, json.Number or float64).
//
// It is the one place that knows which keywords hold sub-schemas: the
// compiler's checks, the projector, the breaking-change review and the
// OpenAPI/AsyncAPI exporters all ask [KeywordKind] (directly or through
// [Children], [Walk] and [MapChildren]) instead of keeping their own
// lists, and all of them resolve "$ref" with [Resolve], [Deref] or
// [DerefBare], so they agree on what a reference points at.
//
// Only local references are understood ("#", "#/$defs/Task",
// "#/properties/a~1b/items"): the graph's schemas are self-contained
// documents. Pointer tokens are percent-decoded (a "$ref" is a URI
// reference) and then unescaped ("~1" is "/", "~0" is "~"), as RFC 6901
// §6 says for pointers in URI fragments; [RefTo] builds references the
// same rules read back.
//
//	var doc any // json.Unmarshal(schemaBytes, &doc)
//	schematree.Walk(doc, func(ptr string, c schematree.Child) bool {
//		if ref, ok := schematree.Ref(c.Schema); ok {
//			target, found := schematree.Resolve(doc, ref)
//			fmt.Println(ptr, ref, found, target != nil)
//		}
//		return true
//	})
//
// Every function is bounded: following references stops after [MaxRefs]
// steps (a cycle such as {"$ref": "#"} ends), and walking never follows a
// reference, so it visits each node of the (finite, acyclic) decoded tree
// once. Nothing here panics on malformed input: a keyword whose value has
// the wrong shape is treated as data.
package schematree

import (
	"cmp"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Kind says what the value of a keyword holds.
type Kind int

const (
	// Data is any keyword whose value is not a schema: assertions over
	// scalars ("type", "minimum", "pattern", "required"), instance data
	// ("const", "enum", "default", "examples"), annotations, "$ref",
	// and every keyword this package does not know.
	Data Kind = iota
	// Single holds one sub-schema ("items", "not", "if", ...).
	Single
	// Map holds an object of sub-schemas by name ("properties", "$defs", ...).
	Map
	// List holds an array of sub-schemas ("allOf", "prefixItems", ...).
	List
)

// keywords is the one table of sub-schema keywords (JSON Schema 2020-12
// core and applicator vocabularies, unevaluated and content vocabularies,
// plus the draft-07 spellings "definitions" and "additionalItems" that
// documents from other tools still carry).
var keywords = map[string]Kind{
	"additionalProperties":  Single,
	"items":                 Single,
	"additionalItems":       Single,
	"contains":              Single,
	"not":                   Single,
	"if":                    Single,
	"then":                  Single,
	"else":                  Single,
	"propertyNames":         Single,
	"unevaluatedItems":      Single,
	"unevaluatedProperties": Single,
	"contentSchema":         Single,

	"properties":        Map,
	"patternProperties": Map,
	"dependentSchemas":  Map,
	"$defs":             Map,
	"definitions":       Map,

	"allOf":       List,
	"anyOf":       List,
	"oneOf":       List,
	"prefixItems": List,
}

// KeywordKind returns what the value of keyword k holds.
func KeywordKind(k string) Kind { return keywords[k] }

// Keywords returns the keywords holding sub-schemas of the given kind,
// sorted.
func Keywords(kind Kind) []string {
	var out []string
	for k, v := range keywords {
		if v == kind {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// Child is one sub-schema position of a schema object.
type Child struct {
	// Keyword holds the sub-schema ("properties", "items", "allOf");
	// "" for the root a walk starts at.
	Keyword string
	// Name is the key under a [Map] keyword, else "".
	Name string
	// Index is the position under a [List] keyword (or under a draft-07
	// array form of "items"), else -1.
	Index int
	// Schema is the sub-schema: a map[string]any or a bool (or, in a
	// malformed document, anything else).
	Schema any
}

// Pointer returns the JSON pointer tokens of c relative to its parent,
// escaped: "/properties/a~1b", "/allOf/0", "/items"; "" for the root.
func (c Child) Pointer() string {
	switch {
	case c.Keyword == "":
		return ""
	case c.Index >= 0:
		return "/" + Escape(c.Keyword) + "/" + strconv.Itoa(c.Index)
	case KeywordKind(c.Keyword) == Map:
		return "/" + Escape(c.Keyword) + "/" + Escape(c.Name)
	}
	return "/" + Escape(c.Keyword)
}

// Children returns the sub-schemas held by s (none unless s is an
// object), ordered by keyword, then by name or index, so every walk is
// deterministic. A keyword whose value has the wrong shape for its kind
// is skipped; "items" also accepts the draft-07 array form.
func Children(s any) []Child {
	m, ok := s.(map[string]any)
	if !ok {
		return nil
	}
	var out []Child
	for _, k := range sortedKeys(m) {
		v := m[k]
		switch KeywordKind(k) {
		case Single:
			if l, ok := v.([]any); ok && k == "items" {
				for i, e := range l {
					out = append(out, Child{Keyword: k, Index: i, Schema: e})
				}
				continue
			}
			out = append(out, Child{Keyword: k, Index: -1, Schema: v})
		case Map:
			mm, ok := v.(map[string]any)
			if !ok {
				continue
			}
			for _, name := range sortedKeys(mm) {
				out = append(out, Child{Keyword: k, Name: name, Index: -1, Schema: mm[name]})
			}
		case List:
			l, ok := v.([]any)
			if !ok {
				continue
			}
			for i, e := range l {
				out = append(out, Child{Keyword: k, Index: i, Schema: e})
			}
		}
	}
	return out
}

// MapChildren replaces, in place, every sub-schema s holds directly by
// f's result (f sees the children in [Children] order). It does nothing
// unless s is an object.
func MapChildren(s any, f func(c Child) any) {
	m, ok := s.(map[string]any)
	if !ok {
		return
	}
	for _, c := range Children(m) {
		v := f(c)
		switch {
		case c.Index >= 0:
			m[c.Keyword].([]any)[c.Index] = v
		case KeywordKind(c.Keyword) == Map:
			m[c.Keyword].(map[string]any)[c.Name] = v
		default:
			m[c.Keyword] = v
		}
	}
}

// Walk calls visit for s itself (ptr "", c.Keyword "") and then, depth
// first in [Children] order, for every sub-schema below it, with ptr the
// JSON pointer of the sub-schema from s ("/properties/a/items"; RFC 6901
// string form, for [Lookup], not a URI fragment: build a "$ref" to it
// from its tokens with [RefTo]). When
// visit returns false the sub-schemas of that node are skipped. Walk
// never follows "$ref" and never descends into data keywords ("const",
// "enum", "default", "examples", ...).
func Walk(s any, visit func(ptr string, c Child) bool) {
	walk("", Child{Index: -1, Schema: s}, visit)
}

func walk(ptr string, c Child, visit func(string, Child) bool) {
	if !visit(ptr, c) {
		return
	}
	for _, sub := range Children(c.Schema) {
		walk(ptr+sub.Pointer(), sub, visit)
	}
}

// Clone returns a deep copy of a decoded JSON value: maps and slices are
// copied, scalars shared.
func Clone(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = Clone(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = Clone(e)
		}
		return l
	}
	return v
}

// MaxRefs bounds how many references [Deref] and [DerefBare] follow in a
// row. A longer chain is treated as a cycle.
const MaxRefs = 64

// Ref returns the "$ref" of s when s is an object holding a string one.
func Ref(s any) (string, bool) {
	m, ok := s.(map[string]any)
	if !ok {
		return "", false
	}
	ref, ok := m["$ref"].(string)
	return ref, ok
}

// ParseRef splits a local reference into its decoded pointer tokens:
// "#" is no token, "#/$defs/a~1b" is ["$defs", "a/b"], "#/$defs/%C3%9C"
// is ["$defs", "Ü"]. It reports false for a reference that is not a local
// JSON pointer ("other.json#/x", "#anchor"). A token whose percent
// encoding is malformed is kept as written.
func ParseRef(ref string) ([]string, bool) {
	if ref == "#" {
		return nil, true
	}
	rest, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, false
	}
	toks := strings.Split(rest, "/")
	for i, t := range toks {
		toks[i] = Unescape(t)
	}
	return toks, true
}

// Unescape decodes one pointer token of a URI fragment: percent-decoding
// first, then "~1" to "/" and "~0" to "~" (in that order, so "~01" is
// "~1").
func Unescape(tok string) string {
	if u, err := url.PathUnescape(tok); err == nil {
		tok = u
	}
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
}

// Escape escapes one JSON pointer token: "~" to "~0", "/" to "~1".
func Escape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

// RefTo builds the local reference to the pointer tokens given:
// RefTo("$defs", "a/b c") is "#/$defs/a~1b%20c". Each token is pointer
// escaped and then percent-encoded wherever a URI fragment needs it, so
// [ParseRef] (and every JSON Schema validator) reads the same tokens back.
func RefTo(tokens ...string) string {
	var b strings.Builder
	b.WriteByte('#')
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(fragmentEscape(Escape(t)))
	}
	return b.String()
}

// fragmentEscape percent-encodes the bytes RFC 3986 does not allow in a
// fragment (pchar / "/" / "?"), and "%" itself.
func fragmentEscape(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if fragmentByte(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

func fragmentByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-._~!$&'()*+,;=:@/?", c) >= 0
}

// Resolve returns the value the local reference ref (a "$ref" value, a URI
// fragment: see [ParseRef]) points at in root. Object members are found
// by name, array elements by decimal index.
func Resolve(root any, ref string) (any, bool) {
	toks, ok := ParseRef(ref)
	if !ok {
		return nil, false
	}
	return lookup(root, toks)
}

// Lookup returns the value the JSON pointer ptr (RFC 6901 string form, as
// [Walk] and [Child.Pointer] report it: "" or "/a~1b/0", not
// percent-encoded) points at in root.
func Lookup(root any, ptr string) (any, bool) {
	if ptr == "" {
		return root, true
	}
	rest, ok := strings.CutPrefix(ptr, "/")
	if !ok {
		return nil, false
	}
	toks := strings.Split(rest, "/")
	for i, t := range toks {
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return lookup(root, toks)
}

func lookup(root any, toks []string) (any, bool) {
	var ok bool
	cur := root
	for _, t := range toks {
		switch x := cur.(type) {
		case map[string]any:
			if cur, ok = x[t]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(x) || t != strconv.Itoa(i) {
				return nil, false
			}
			cur = x[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// Deref follows the "$ref" chain starting at s within root, ignoring any
// keyword beside a "$ref", and returns the first schema on it without
// one. It reports false when a reference does not resolve, or when the
// chain is longer than [MaxRefs] (a cycle). A schema without "$ref" is
// returned as it is.
func Deref(root, s any) (any, bool) {
	for range MaxRefs + 1 {
		ref, ok := Ref(s)
		if !ok {
			return s, true
		}
		if s, ok = Resolve(root, ref); !ok {
			return nil, false
		}
	}
	return nil, false
}

// DerefBare follows the chain of bare references from s ("$ref" as the
// only keyword) within root and returns the last schema reached: the
// first one that is not a bare reference, or the bare reference that
// does not resolve, or where a cycle was cut after [MaxRefs] steps. A
// reference with sibling keywords is a schema of its own and is returned
// as it is.
func DerefBare(root, s any) any {
	for range MaxRefs {
		m, ok := s.(map[string]any)
		if !ok || len(m) != 1 {
			return s
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return s
		}
		t, ok := Resolve(root, ref)
		if !ok {
			return s
		}
		s = t
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, cmp.Compare[string])
	return keys
}

// Applicable returns the schema objects that apply to a value of s: s
// itself, what its $ref points at (resolved in root), and every allOf,
// anyOf and oneOf member, at any depth, each once (a reference cycle ends
// the walk) and at most [MaxRefs] levels deep. A member of a union may not
// be the branch a value matches; callers decide what that means (the
// agent keeps a null any branch requires; the CLI reads a flag's types
// from all of them).
func Applicable(root, s any) []map[string]any {
	var out []map[string]any
	var visit func(s any, depth int)
	visit = func(s any, depth int) {
		m, ok := s.(map[string]any)
		if !ok || depth > MaxRefs || slices.ContainsFunc(out, func(o map[string]any) bool { return sameMap(o, m) }) {
			return
		}
		out = append(out, m)
		if ref, ok := Ref(m); ok {
			if t, ok := Resolve(root, ref); ok {
				visit(t, depth+1)
			}
		}
		for _, k := range []string{"allOf", "anyOf", "oneOf"} {
			if l, ok := m[k].([]any); ok {
				for _, b := range l {
					visit(b, depth+1)
				}
			}
		}
	}
	visit(s, 0)
	return out
}

// sameMap reports whether a and b are the same map (not equal contents).
func sameMap(a, b map[string]any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// TypeNames returns the names a "type" keyword value lists: one for a
// string, the strings of an array, none for anything else.
func TypeNames(t any) []string {
	switch x := t.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
