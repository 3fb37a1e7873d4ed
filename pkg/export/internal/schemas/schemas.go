// Package schemas embeds the graph's canonical JSON Schema 2020-12 documents
// into API description documents (OpenAPI 3.1, AsyncAPI 3.0).
//
// A graph schema is a self-contained document: its named definitions live
// under "$defs" and are referred to as "#/$defs/NAME". Once the schema sits
// inside a larger document those references would point at the wrong root,
// so a [Hoister] moves every definition into the document's component
// section and rewrites the references:
//
//   - A definition keeps its own name ("Task") when every schema that
//     declares a definition of that name declares the same one (the same
//     bytes, and the same definitions it reaches).
//   - When two different definitions share a name, every variant is named
//     "<label>_<Name>", where label identifies the first schema (in the
//     order they were added) that declares that variant, e.g.
//     "tasks_get_output_Task". A remaining clash gets "_2", "_3", ….
//   - A schema that refers to its own root ("#" or "#/properties/…") is
//     itself hoisted under its label, since its root must stay addressable.
//   - A schema that is a named definition's body (`#output: #Task`, which
//     the graph holds inlined) is embedded as a reference to the
//     definition's component.
//
// Schemas are never degraded: every keyword is kept; only "$defs" moves and
// "$schema" (the containing document declares the dialect) is dropped.
package schemas

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"stitchkit.dev/stitchkit/internal/schematree"
	"stitchkit.dev/stitchkit/pkg/graph"
)

// Hoister collects the schemas of one document, then names and rewrites
// them. Add every schema first, then call [Hoister.Resolve] once.
type Hoister struct {
	// prefix is what a component reference starts with, e.g.
	// "#/components/schemas/".
	prefix string
	// suffix follows the component name in references, e.g. "/schema" when
	// each component wraps its schema in a multi-format object.
	suffix   string
	uses     []*Use
	resolved bool
	// names maps a definition key to its component name.
	names      map[string]string
	components map[string]any
}

// NewHoister returns a Hoister whose references read prefix+NAME+suffix.
func NewHoister(prefix, suffix string) *Hoister {
	return &Hoister{prefix: prefix, suffix: suffix}
}

// Use is one schema embedded in the document.
type Use struct {
	h     *Hoister
	label string
	root  map[string]any // without $defs and $schema
	other any            // a non-object schema (true/false)
	defs  map[string]any // original $defs
	keys  map[string]string
	// rootRefd reports a reference to the root other than via $defs.
	rootRefd bool
	rootName string
	// rootComp names the component whose body the root is (see
	// Hoister.nameRoots).
	rootComp string
}

// Add parses a canonical schema and registers it under label (a
// component-name-safe identifier such as "tasks_get_output").
func (h *Hoister) Add(label string, raw json.RawMessage) (*Use, error) {
	if h.resolved {
		return nil, fmt.Errorf("schemas: Add after Resolve")
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("schemas: %s: schema not found in graph", label)
	}
	v, err := decode(raw)
	if err != nil {
		return nil, fmt.Errorf("schemas: %s: %w", label, err)
	}
	u := &Use{h: h, label: Sanitize(label), keys: map[string]string{}}
	obj, ok := v.(map[string]any)
	if !ok {
		u.other = v
		h.uses = append(h.uses, u)
		return u, nil
	}
	root := make(map[string]any, len(obj))
	for k, val := range obj {
		root[k] = val
	}
	if d, ok := root["$defs"].(map[string]any); ok {
		u.defs = d
		delete(root, "$defs")
	}
	delete(root, "$schema")
	u.root = root

	walk(root, func(ref string) { u.noteRootRef(ref) })
	for _, name := range sortedKeys(u.defs) {
		walk(u.defs[name], func(ref string) { u.noteRootRef(ref) })
	}
	for name := range u.defs {
		k, err := u.defKey(name)
		if err != nil {
			return nil, fmt.Errorf("schemas: %s: %w", label, err)
		}
		u.keys[name] = k
	}
	h.uses = append(h.uses, u)
	return u, nil
}

func (u *Use) noteRootRef(ref string) {
	if ref == "#" || (strings.HasPrefix(ref, "#/") && !strings.HasPrefix(ref, "#/$defs/")) {
		u.rootRefd = true
	}
}

// defKey identifies a definition by its name, its bytes and the bytes of
// every definition it reaches, so equal keys rewrite to equal components.
func (u *Use) defKey(name string) (string, error) {
	closure := map[string]any{}
	var visit func(n string)
	visit = func(n string) {
		if _, seen := closure[n]; seen {
			return
		}
		d, ok := u.defs[n]
		if !ok {
			return
		}
		closure[n] = d
		walk(d, func(ref string) {
			if dn, _, ok := splitDefRef(ref); ok {
				visit(dn)
			}
		})
	}
	visit(name)
	key := map[string]any{"name": name, "closure": closure}
	if u.rootRefd {
		// Root references rewrite to this use's own component, so the
		// definition is specific to it.
		key["root"] = u.root
		key["label"] = u.label
	}
	b, err := graph.Canonical(key)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// Resolve assigns component names. It must be called once, after every Add.
func (h *Hoister) Resolve() error {
	if h.resolved {
		return fmt.Errorf("schemas: Resolve called twice")
	}
	h.resolved = true
	h.names = map[string]string{}

	// Group definition keys by their (sanitised) name, remembering the
	// label of the first use declaring each key.
	type variant struct{ key, firstLabel string }
	byName := map[string][]variant{}
	seenKey := map[string]bool{}
	for _, u := range h.uses {
		for _, name := range sortedKeys(u.defs) {
			k := u.keys[name]
			if seenKey[k] {
				continue
			}
			seenKey[k] = true
			sn := Sanitize(name)
			byName[sn] = append(byName[sn], variant{k, u.label})
		}
	}

	taken := map[string]bool{}
	claim := func(want string) string {
		name := want
		for i := 2; taken[name]; i++ {
			name = fmt.Sprintf("%s_%d", want, i)
		}
		taken[name] = true
		return name
	}
	// Hoisted roots claim their labels first: labels are unique per use
	// by construction of the callers.
	for _, u := range h.uses {
		if u.rootRefd {
			u.rootName = claim(u.label)
		}
	}
	names := sortedKeys(byName)
	// Unshared names first, so that a prefixed variant can never take a
	// plain definition name away.
	for _, sn := range names {
		if vs := byName[sn]; len(vs) == 1 {
			h.names[vs[0].key] = claim(sn)
		}
	}
	for _, sn := range names {
		vs := byName[sn]
		if len(vs) == 1 {
			continue
		}
		slices.SortFunc(vs, func(a, b variant) int {
			if c := strings.Compare(a.firstLabel, b.firstLabel); c != 0 {
				return c
			}
			return strings.Compare(a.key, b.key)
		})
		for _, v := range vs {
			h.names[v.key] = claim(v.firstLabel + "_" + sn)
		}
	}

	// Build the components, checking that equal names mean equal bytes.
	h.components = map[string]any{}
	put := func(name string, s any) error {
		if prev, ok := h.components[name]; ok {
			a, err1 := graph.Canonical(prev)
			b, err2 := graph.Canonical(s)
			if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
				return fmt.Errorf("schemas: component %q has two different definitions", name)
			}
			return nil
		}
		h.components[name] = s
		return nil
	}
	for _, u := range h.uses {
		for _, name := range sortedKeys(u.defs) {
			if err := put(h.names[u.keys[name]], u.rewrite(u.defs[name])); err != nil {
				return err
			}
		}
		if u.rootRefd {
			if err := put(u.rootName, u.rewrite(u.root)); err != nil {
				return err
			}
		}
	}
	h.nameRoots()
	return nil
}

// nameRoots points each schema that is a named definition's body — a
// contract schema such as `#output: #Task` carries the body inlined, not
// a reference — at that definition's component, so code generators make
// one Task type instead of one per operation. A root is named when its
// rewritten body equals exactly one component's, documentation at the top
// aside (the inlined body lacks the definition's doc comment).
func (h *Hoister) nameRoots() {
	byBody := map[string][]string{}
	for _, name := range sortedKeys(h.components) {
		if k, ok := bodyKey(h.components[name]); ok {
			byBody[k] = append(byBody[k], name)
		}
	}
	for _, u := range h.uses {
		if u.other != nil || u.rootRefd {
			continue
		}
		if k, ok := bodyKey(u.rewrite(u.root)); ok && len(byBody[k]) == 1 {
			u.rootComp = byBody[k][0]
		}
	}
}

// bodyKey is the canonical form of a schema without its top-level
// documentation.
func bodyKey(s any) (string, bool) {
	m, ok := s.(map[string]any)
	if !ok {
		return "", false
	}
	body := make(map[string]any, len(m))
	for k, v := range m {
		switch k {
		case "title", "description", "$comment", "examples":
		default:
			body[k] = v
		}
	}
	b, err := graph.Canonical(body)
	return string(b), err == nil
}

// Components returns the hoisted schemas by component name. The result is
// shared; callers must not modify it.
func (h *Hoister) Components() map[string]any { return h.components }

// Ref returns the reference to a component name.
func (h *Hoister) Ref(name string) string { return h.prefix + name + h.suffix }

// Schema returns the rewritten schema to embed: the schema itself, or a
// reference to its hoisted root.
func (u *Use) Schema() any {
	if u.other != nil {
		return u.other
	}
	if u.rootRefd {
		return map[string]any{"$ref": u.h.Ref(u.rootName)}
	}
	if u.rootComp != "" {
		return map[string]any{"$ref": u.h.Ref(u.rootComp)}
	}
	return u.rewrite(u.root)
}

// Component returns the name of the component the schema is (a hoisted
// root, or the named definition whose body it is), or "".
func (u *Use) Component() string {
	if u.rootRefd {
		return u.rootName
	}
	return u.rootComp
}

// Object returns the object view of the schema, following root references
// into its definitions: whether it is an object schema ("type" is or
// includes "object", or it declares properties), its properties in
// code-unit order (each rewritten) and its required names.
func (u *Use) Object() (props []Property, isObject bool, required []string) {
	s := u.resolveRoot()
	if s == nil {
		return nil, false, nil
	}
	isObject = hasType(s["type"], "object")
	if p, ok := s["properties"].(map[string]any); ok {
		if s["type"] == nil {
			isObject = true
		}
		names := sortedKeys(p)
		for _, n := range names {
			props = append(props, Property{Name: n, Schema: u.rewrite(p[n])})
		}
	}
	if r, ok := s["required"].([]any); ok {
		for _, x := range r {
			if n, ok := x.(string); ok {
				required = append(required, n)
			}
		}
	}
	graph.SortUTF16(required)
	for i := range props {
		props[i].Required = slices.Contains(required, props[i].Name)
	}
	return props, isObject, required
}

// Property is one property of an object schema.
type Property struct {
	Name     string
	Schema   any
	Required bool
}

// resolveRoot returns the root object schema, following a lone "$ref" to a
// definition (at most a few hops, to stay safe on cycles).
func (u *Use) resolveRoot() map[string]any {
	if u.root == nil {
		return nil
	}
	if _, ok := u.root["properties"]; ok {
		return u.root
	}
	// The use's own document, $defs put back, resolves its references.
	doc := make(map[string]any, len(u.root)+1)
	for k, v := range u.root {
		doc[k] = v
	}
	doc["$defs"] = u.defs
	target, ok := schematree.Deref(doc, u.root)
	if m, isMap := target.(map[string]any); ok && isMap {
		return m
	}
	return u.root
}

func hasType(t any, want string) bool {
	switch t := t.(type) {
	case string:
		return t == want
	case []any:
		for _, x := range t {
			if x == want {
				return true
			}
		}
	}
	return false
}

// rewrite returns a deep copy of a schema with its references rewritten.
func (u *Use) rewrite(s any) any {
	return mapSchema(s, func(ref string) string {
		if name, rest, ok := splitDefRef(ref); ok {
			if k, ok := u.keys[name]; ok {
				return u.h.Ref(u.h.names[k]) + rest
			}
			return ref
		}
		if u.rootRefd && (ref == "#" || strings.HasPrefix(ref, "#/")) {
			return u.h.Ref(u.rootName) + strings.TrimPrefix(ref, "#")
		}
		return ref
	})
}

// splitDefRef splits "#/$defs/NAME/rest" into NAME (unescaped) and "/rest".
func splitDefRef(ref string) (name, rest string, ok bool) {
	const p = "#/$defs/"
	if !strings.HasPrefix(ref, p) {
		return "", "", false
	}
	tail := ref[len(p):]
	tok := tail
	if i := strings.IndexByte(tail, '/'); i >= 0 {
		tok, rest = tail[:i], tail[i:]
	}
	return schematree.Unescape(tok), rest, true
}

// Sanitize maps a name onto the component-name alphabet [A-Za-z0-9._-].
func Sanitize(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}

func decode(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// walk calls f for every "$ref" and "$dynamicRef" held by s or its
// subschemas.
func walk(s any, f func(ref string)) {
	mapSchema(s, func(ref string) string { f(ref); return ref })
}

// mapSchema returns a deep copy of s with every reference replaced by f
// (which sub-schemas a keyword holds is schematree's one table; data such
// as const, enum and default is never rewritten) and every untyped enum or
// const given its type.
func mapSchema(s any, f func(ref string) string) any {
	obj, ok := s.(map[string]any)
	if !ok {
		return s
	}
	out := make(map[string]any, len(obj)+1)
	if t := valueType(obj); t != nil {
		// An enum or const without "type" is untyped to code generators
		// (oapi-codegen makes it interface{}); the values say the type, so
		// stating it changes nothing the schema accepts.
		out["type"] = t
	}
	for k, v := range obj {
		switch x := v.(type) {
		case string:
			if k == "$ref" || k == "$dynamicRef" {
				v = f(x)
			}
		case map[string]any:
			if schematree.KeywordKind(k) == schematree.Map {
				cp := make(map[string]any, len(x))
				for name, sub := range x {
					cp[name] = sub
				}
				v = cp
			}
		case []any:
			if schematree.KeywordKind(k) != schematree.Data {
				v = slices.Clone(x)
			}
		}
		out[k] = v
	}
	schematree.MapChildren(out, func(c schematree.Child) any { return mapSchema(c.Schema, f) })
	return out
}

// valueType returns the "type" an untyped enum or const schema implies:
// the JSON types of its values ("number" absorbing "integer"), or nil when
// the schema has a type already or no values.
func valueType(s map[string]any) any {
	if _, ok := s["type"]; ok {
		return nil
	}
	var vals []any
	if c, ok := s["const"]; ok {
		vals = []any{c}
	} else if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		vals = e
	} else {
		return nil
	}
	set := map[string]bool{}
	for _, v := range vals {
		switch x := v.(type) {
		case nil:
			set["null"] = true
		case bool:
			set["boolean"] = true
		case string:
			set["string"] = true
		case []any:
			set["array"] = true
		case map[string]any:
			set["object"] = true
		case json.Number:
			if _, err := x.Int64(); err == nil && !strings.ContainsAny(string(x), ".eE") {
				set["integer"] = true
			} else {
				set["number"] = true
			}
		default:
			return nil
		}
	}
	if set["number"] {
		delete(set, "integer")
	}
	types := make([]string, 0, len(set))
	for t := range set {
		types = append(types, t)
	}
	slices.Sort(types)
	if len(types) == 1 {
		return types[0]
	}
	out := make([]any, len(types))
	for i, t := range types {
		out[i] = t
	}
	return out
}
