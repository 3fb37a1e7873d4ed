package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"stitchkit.dev/stitchkit/internal/schematree"
	"stitchkit.dev/stitchkit/pkg/graph"
)

// This file turns the JSON Schema documents of a graph into Go type
// declarations. docs/gen.md is the user-facing statement of the mapping;
// keep the two in step.

// declKind says what Go declaration a decl renders as.
type declKind int

const (
	kindStruct  declKind = iota // type X struct{...}
	kindDefined                 // type X U (U a basic, slice or map type), with enum constants
	kindAlias                   // type X = U
	kindOneOf                   // discriminated union: one pointer field per variant
	kindAnyOf                   // other unions: json.RawMessage with typed accessors
	kindTuple                   // fixed-position array as a struct
)

// decl is one named Go type of the generated package.
type decl struct {
	name string
	doc  string
	kind declKind
	// inRoot: declared while building a root (an operation's own
	// schema), not a definition.
	inRoot bool

	// kindDefined, kindAlias: the type expression on the right.
	underlying string
	consts     []enumConst

	// kindStruct
	fields []*field
	// extra is the type of properties the schema allows beyond the
	// declared ones (nil: the object is closed).
	extra *typeRef
	// members hands out the names of the type's fields and methods.
	members *namespace

	// kindOneOf
	discriminator string // JSON property name
	discGo        string // Go method name returning the discriminator
	// discOptional: some arm does not require the discriminator (it has
	// the constant as its default), so a value may lack it.
	discOptional bool
	variants     []variant

	// kindAnyOf
	arms []arm

	// kindTuple
	elems    []*field // jsonName unused; position is the index
	minItems int
	rest     *typeRef // type of the elements after the fixed ones; nil: none
}

// enumConst is one constant of an enum type.
type enumConst struct {
	name    string
	literal string // Go literal
}

// field is a struct field (or a tuple element).
type field struct {
	goName   string
	jsonName string
	doc      string
	base     typeRef
	// wrap says how the base type is held.
	wrap wrapKind
	// omit adds omitzero to the tag (optional fields).
	omit bool
	// nilFix: a required list or map field whose nil value is sent as
	// empty instead of null.
	nilFix bool
}

type wrapKind int

const (
	wrapNone     wrapKind = iota
	wrapPtr               // *T
	wrapNullable          // Nullable[T]
)

// expr returns the Go type of the field.
func (f *field) expr() string {
	switch f.wrap {
	case wrapPtr:
		return "*" + f.base.expr
	case wrapNullable:
		return "Nullable[" + f.base.expr + "]"
	}
	return f.base.expr
}

// variant is one arm of a discriminated union.
type variant struct {
	goName string // field name in the union struct
	value  string // discriminator value
	typ    typeRef
	// discField is the Go field of the variant struct holding the
	// discriminator ("" when the variant is not a generated struct).
	discField string
}

// arm is one arm of a non-discriminated union.
type arm struct {
	name string // accessor suffix: AsString, FromString
	typ  typeRef
}

// typeRef is a Go type expression with what the generator needs to know
// about it.
type typeRef struct {
	expr string
	// nilable: a slice, map or json.RawMessage, whose nil value can stand
	// for "absent" (optional) or null (nullable).
	nilable bool
	// raw: json.RawMessage (or an alias of it).
	raw bool
	// empty is the literal of an empty slice or map ("[]Tag{}").
	empty string
	// byValue names the generated struct-like declaration this type holds
	// by value ("" for basic, slice, map and pointer types): the edges of
	// the value-containment graph, which must stay acyclic.
	byValue string
}

var (
	rawType    = typeRef{expr: "json.RawMessage", nilable: true, raw: true}
	stringType = typeRef{expr: "string"}
	boolType   = typeRef{expr: "bool"}
	int64Type  = typeRef{expr: "int64"}
	uint64Type = typeRef{expr: "uint64"}
	floatType  = typeRef{expr: "float64"}
	numberType = typeRef{expr: "json.Number"}
)

// doc is one schema document of the graph.
type schemaDoc struct {
	digest graph.Digest
	root   map[string]any // nil for a boolean schema
	rootB  any            // the document as decoded
	defs   map[string]any
}

// naming says what a node's declaration is called: fixed is a name that
// must be used (a definition or a root); hint is a name to claim when the
// node needs a declaration of its own.
type naming struct {
	fixed string
	hint  string
	// where says what the node is, for the doc comment of a node without
	// a description ("the type of Invoice.Status"); path is the Go
	// expression that reaches it ("Invoice.Lines"), for its children's.
	where string
	path  string
}

// at is where the node is, for its children's doc comments.
func (n naming) at() string {
	if n.path != "" {
		return n.path
	}
	return n.base()
}

// docOf is the doc text of a declaration for node n: its description, else
// what it is ("is the definition #Invoice.").
func docOf(n any, nm naming) string {
	if d := nodeDoc(n); d != "" || nm.where == "" {
		return d
	}
	return "is " + nm.where + "."
}

func (n naming) base() string {
	if n.fixed != "" {
		return n.fixed
	}
	return n.hint
}

// model accumulates the declarations of one generated package.
type model struct {
	g    *graph.Graph
	ns   *namespace
	docs map[graph.Digest]*schemaDoc

	decls  []*decl
	byName map[string]*decl
	// declared maps a schema node, within the declaration being built
	// (scope), to the Go type declared for it: a node reached twice
	// inside one definition or one root (a JSON pointer $ref) is one type,
	// while equal nodes of different roots never share one, so a type's
	// name depends only on where it is (docs/gen.md, Names).
	declared map[nodeID]string
	// scope names the definition or root whose types are being built;
	// scopeRoot is the root's Go name and digest ("" inside a definition),
	// the target of a "#" reference.
	scope     string
	scopeRoot string
	scopeDoc  graph.Digest
	keep      []any
	// defByKey maps the structural key of each definition to its Go
	// name, and mirrored lists the roots equal to one (see mirrorRoots).
	defByKey map[string]string
	mirrored [][2]string
	// defName maps (document, definition) to the Go name of its type.
	defName map[defID]string
	// defNullable records definitions whose values may be null.
	defNullable map[string]bool
	// defBuilt records Go definition types already declared.
	defBuilt map[string]bool

	usesNullable bool
	// usesStrict: the decodeStrict helper is needed.
	usesStrict bool
	imports    map[string]bool
	// depth guards the recursion on hostile, deeply nested schemas.
	depth int
}

type defID struct {
	doc  graph.Digest
	name string
}

// nodeID identifies one schema node inside the declaration being built.
type nodeID struct {
	scope string
	node  uintptr
}

const maxDepth = 200

func newModel(g *graph.Graph, ns *namespace) (*model, error) {
	m := &model{
		g: g, ns: ns, docs: map[graph.Digest]*schemaDoc{},
		byName: map[string]*decl{}, declared: map[nodeID]string{}, defByKey: map[string]string{},
		defName: map[defID]string{}, defNullable: map[string]bool{}, defBuilt: map[string]bool{},
		imports: map[string]bool{},
	}
	keys := make([]string, 0, len(g.Schemas))
	for d := range g.Schemas {
		keys = append(keys, string(d))
	}
	slices.Sort(keys)
	for _, k := range keys {
		d := graph.Digest(k)
		dec := json.NewDecoder(bytes.NewReader(g.Schemas[d]))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("schema %s: %w", d, err)
		}
		sd := &schemaDoc{digest: d, rootB: v}
		if obj, ok := v.(map[string]any); ok {
			sd.root = obj
			sd.defs, _ = obj["$defs"].(map[string]any)
		}
		m.docs[d] = sd
	}
	return m, nil
}

// add appends a declaration (before its nested types are built, so a
// parent is printed before what it contains).
func (m *model) add(d *decl) *decl {
	d.inRoot = m.scopeRoot != ""
	m.decls = append(m.decls, d)
	m.byName[d.name] = d
	return d
}

// nameDefs gives every definition of every root document its Go name:
// the definition's own name, exported ($defs key "Task" → Task; a nested
// definition's key already carries its path, "W.T" → WT). The same CUE
// definition embedded in many documents is one Go type. Two different
// bodies under one $defs key (which the compiler does not produce for one
// contract) get Name and Name2 in graph order: the one documented case
// where a name depends on the rest of the contract. A definition whose
// name another generated identifier already holds is an error naming
// both, rather than a name that moves.
func (m *model) nameDefs(roots []rootSchema) error {
	type group struct{ name, key string }
	named := map[group]string{}
	byDef := map[string]string{}
	seen := map[graph.Digest]bool{}
	for _, r := range roots {
		if seen[r.digest] {
			continue
		}
		seen[r.digest] = true
		d := m.docs[r.digest]
		if d == nil {
			continue
		}
		names := m.reachableDefs(d)
		for _, n := range names {
			gk := group{n, m.key(d, d.defs[n])}
			goName, ok := named[gk]
			if !ok {
				if _, again := byDef[n]; again {
					goName = m.ns.claim(exportName(n))
				} else {
					var err error
					if goName, err = m.ns.claimFixed(exportName(n), "the definition #"+n); err != nil {
						return err
					}
					byDef[n] = goName
				}
				named[gk] = goName
				if _, ok := m.defByKey[gk.key]; !ok {
					m.defByKey[gk.key] = goName
				}
			}
			m.defName[defID{d.digest, n}] = goName
		}
	}
	return nil
}

// reachableDefs returns the names of the definitions of d its root reaches
// through $refs, sorted. A definition nothing refers to describes no value
// of the graph and gets no Go type.
func (m *model) reachableDefs(d *schemaDoc) []string {
	seen := map[string]bool{}
	followed := map[string]bool{}
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		if depth > maxDepth {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				if k == "$defs" {
					continue
				}
				if ref, ok := c.(string); ok && k == "$ref" {
					_, name, target, ok := m.resolve(d, ref)
					switch {
					case !ok:
					case name != "" && !seen[name]:
						seen[name] = true
						walk(target, depth+1)
					case name == "" && !followed[ref]:
						// A pointer into another node ("#/properties/a").
						followed[ref] = true
						walk(target, depth+1)
					}
					continue
				}
				walk(c, depth+1)
			}
		case []any:
			for _, c := range x {
				walk(c, depth+1)
			}
		}
	}
	walk(d.rootB, 0)
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	graph.SortUTF16(names)
	return names
}

// buildDefs declares the Go type of every named definition, in the order
// nameDefs named them.
func (m *model) buildDefs(roots []rootSchema) {
	seen := map[graph.Digest]bool{}
	for _, r := range roots {
		if seen[r.digest] {
			continue
		}
		seen[r.digest] = true
		d := m.docs[r.digest]
		if d == nil {
			continue
		}
		for _, n := range m.reachableDefs(d) {
			m.defType(d, n)
		}
	}
}

// defType returns the type of definition name of d, declaring it on first
// use.
func (m *model) defType(d *schemaDoc, name string) (typeRef, bool) {
	goName := m.defName[defID{d.digest, name}]
	if goName == "" {
		return rawType, false
	}
	if !m.defBuilt[goName] {
		m.defBuilt[goName] = true
		body := d.defs[name]
		defer m.enter(goName, "", "")()
		t, nullable := m.typeOf(d, body, naming{fixed: goName, where: "the definition #" + name})
		m.defNullable[goName] = nullable
		if dd, declared := m.byName[t.expr]; t.expr != goName && !declared && m.defBuilt[t.expr] || declared && dd.kind == kindAlias && m.aliasesTo(dd, goName) {
			// A definition that is only a reference to itself through
			// other references (A = B, B = A) accepts no particular
			// shape; a Go alias cycle would not compile.
			t = rawType
		}
		if t.expr != goName {
			m.declareNamed(goName, docOf(body, naming{where: "the definition #" + name}), t)
		}
	}
	return m.named(goName), m.defNullable[goName]
}

// declareNamed declares name as a type over t (a basic, slice, map or raw
// type that has no declaration of its own): a defined type, or an alias
// where a defined type would lose methods (json.RawMessage) or where t is
// already a generated type.
func (m *model) declareNamed(name, doc string, t typeRef) {
	d := &decl{name: name, doc: doc, kind: kindDefined, underlying: t.expr}
	if t.raw || t.byValue != "" || m.byName[t.expr] != nil || strings.HasPrefix(t.expr, "*") || t.expr == "json.Number" {
		d.kind = kindAlias
	}
	m.add(d)
}

// named returns the typeRef of a declared Go type.
func (m *model) named(name string) typeRef {
	d := m.byName[name]
	if d == nil {
		// Being declared (a recursive reference): only structs recurse.
		return typeRef{expr: name, byValue: name}
	}
	switch d.kind {
	case kindStruct, kindTuple, kindOneOf:
		return typeRef{expr: name, byValue: name}
	case kindAnyOf:
		return typeRef{expr: name, nilable: true}
	case kindAlias:
		t := m.aliasTarget(d)
		t.expr = name
		return t
	}
	t := typeRef{expr: name}
	switch {
	case strings.HasPrefix(d.underlying, "[]"):
		t.nilable, t.empty = true, name+"{}"
	case strings.HasPrefix(d.underlying, "map["):
		t.nilable, t.empty = true, name+"{}"
	}
	return t
}

// aliasesTo reports whether alias d leads to name through other aliases.
func (m *model) aliasesTo(d *decl, name string) bool {
	for range 64 {
		if d.underlying == name {
			return true
		}
		next := m.byName[d.underlying]
		if next == nil || next.kind != kindAlias {
			return false
		}
		d = next
	}
	return true
}

// aliasTarget describes what an alias stands for.
func (m *model) aliasTarget(d *decl) typeRef {
	m.depth++
	defer func() { m.depth-- }()
	if m.depth > maxDepth {
		return rawType
	}
	u := d.underlying
	switch {
	case u == "json.RawMessage":
		return rawType
	case strings.HasPrefix(u, "*"):
		return typeRef{expr: u}
	case m.byName[u] != nil && m.byName[u] != d:
		return m.named(u)
	}
	return typeRef{expr: u}
}

// rootSchema is one schema the graph refers to, with the name of its Go
// type.
type rootSchema struct {
	digest graph.Digest
	name   string // the Go name to claim
	goName string // the name claimed
	what   string // what it is, for an error ("the output tasks.get")
	doc    string
	key    string // see rootKey
}

// rootType declares the Go type of a root schema under its own name (claimed
// beforehand) and returns the name. Every root has its own declarations,
// even when another root has the same schema: an alias across operations
// would retype one when the other is edited.
func (m *model) rootType(r rootSchema) string {
	d := m.docs[r.digest]
	name := r.goName
	if d == nil {
		m.add(&decl{name: name, doc: r.doc, kind: kindAlias, underlying: "json.RawMessage"})
		return name
	}
	defer m.enter(name, name, r.digest)()
	doc := joinDoc(name+" "+r.doc, nodeDoc(d.rootB))
	if d.root != nil {
		if ref, ok := pureRef(d.root); ok {
			t, nullable := m.refType(d, ref, naming{hint: name})
			m.add(&decl{name: name, doc: doc, kind: kindAlias, underlying: ptrIf(nullable && !t.nilable, t.expr)})
			return name
		}
	}
	if m.isNullable(d, d.rootB) {
		t, _ := m.typeOf(d, d.rootB, naming{hint: name + "Value", where: name + "'s value when it is not null"})
		m.add(&decl{name: name, doc: doc + "\n\nIt may be null.", kind: kindAlias, underlying: ptrIf(!t.nilable, t.expr)})
		return name
	}
	t, _ := m.typeOf(d, d.rootB, naming{fixed: name})
	if t.expr != name {
		m.declareNamed(name, doc, t)
	} else if dd := m.byName[name]; dd != nil && dd.doc == "" {
		dd.doc = doc
	}
	if def, ok := m.defByKey[m.key(d, d.rootB)]; ok && d.root != nil {
		m.mirrored = append(m.mirrored, [2]string{name, def})
	}
	return name
}

// mirrorRoots turns a root whose schema is exactly a definition's into an
// alias of the definition's type (type TasksGetOutput = Task), so handlers
// return the definition's values. The compiler writes such a root inline
// (`#output: #Task` has no $ref), so this is recognised by structure.
// Every type the root declared for itself stays, as an alias of the
// definition's matching type: when a change of the contract makes a
// definition that was used once visible elsewhere, InvoicesCreateOutput
// and InvoicesCreateOutputStatus keep naming the same values (apidiff
// accepts a defined type becoming an alias of a corresponding one).
func (m *model) mirrorRoots() {
	for _, p := range m.mirrored {
		m.mirror(p[0], p[1], 0)
	}
}

// mirror makes the root-scoped declaration a an alias of b, and so its
// nested declarations, matched by position in the two type trees.
func (m *model) mirror(a, b string, depth int) {
	a, b = innerName(a), innerName(b)
	da, db := m.byName[a], m.byName[b]
	if depth > maxDepth || a == b || da == nil || db == nil || !da.inRoot || da.kind != db.kind && da.kind != kindAlias {
		return
	}
	switch da.kind {
	case kindStruct:
		for _, fa := range da.fields {
			for _, fb := range db.fields {
				if fa.jsonName == fb.jsonName {
					m.mirror(fa.base.expr, fb.base.expr, depth+1)
				}
			}
		}
		if da.extra != nil && db.extra != nil {
			m.mirror(da.extra.expr, db.extra.expr, depth+1)
		}
	case kindTuple:
		for i := range min(len(da.elems), len(db.elems)) {
			m.mirror(da.elems[i].base.expr, db.elems[i].base.expr, depth+1)
		}
		if da.rest != nil && db.rest != nil {
			m.mirror(da.rest.expr, db.rest.expr, depth+1)
		}
	case kindOneOf:
		for _, va := range da.variants {
			for _, vb := range db.variants {
				if va.value == vb.value {
					m.mirror(va.typ.expr, vb.typ.expr, depth+1)
				}
			}
		}
	case kindAnyOf:
		for i := range min(len(da.arms), len(db.arms)) {
			m.mirror(da.arms[i].typ.expr, db.arms[i].typ.expr, depth+1)
		}
	case kindDefined:
		m.mirror(da.underlying, db.underlying, depth+1)
	case kindAlias:
		return
	}
	da.kind, da.underlying = kindAlias, b
	da.fields, da.extra, da.variants, da.arms, da.elems, da.rest = nil, nil, nil, nil, nil, nil
	if !strings.Contains(da.doc, "definition") {
		da.doc = joinDoc(da.doc, "It is "+b+", the type of a definition with the same schema.")
	}
}

// innerName strips pointer, slice and map type constructors.
func innerName(expr string) string {
	for {
		switch {
		case strings.HasPrefix(expr, "*"):
			expr = expr[1:]
		case strings.HasPrefix(expr, "[]"):
			expr = expr[2:]
		case strings.HasPrefix(expr, "map[string]"):
			expr = expr[len("map[string]"):]
		default:
			return expr
		}
	}
}

// enter makes name the scope of the declarations built until the returned
// function restores the previous one.
func (m *model) enter(name, root string, doc graph.Digest) func() {
	prev, prevRoot, prevDoc := m.scope, m.scopeRoot, m.scopeDoc
	m.scope, m.scopeRoot, m.scopeDoc = name, root, doc
	return func() { m.scope, m.scopeRoot, m.scopeDoc = prev, prevRoot, prevDoc }
}

func ptrIf(cond bool, expr string) string {
	if cond {
		return "*" + expr
	}
	return expr
}

// pureRef reports whether n is {"$ref": ...} with nothing but annotations
// beside it.
func pureRef(n map[string]any) (string, bool) {
	ref, ok := n["$ref"].(string)
	if !ok {
		return "", false
	}
	for k := range n {
		switch k {
		case "$ref", "$schema", "$defs", "description", "title", "$comment", "examples":
		default:
			return "", false
		}
	}
	return ref, true
}

// typeOf returns the Go type of schema node n of document d, and whether
// the node also accepts null.
func (m *model) typeOf(d *schemaDoc, node any, nm naming) (typeRef, bool) {
	m.depth++
	defer func() { m.depth-- }()
	if m.depth > maxDepth {
		return rawType, false
	}
	n, ok := node.(map[string]any)
	if !ok {
		// true accepts anything, false nothing: neither has a Go shape.
		return rawType, false
	}
	if ref, ok := n["$ref"].(string); ok {
		return m.refType(d, ref, nm)
	}
	if arms, ok := unionArms(n); ok {
		return m.unionType(d, n, arms, nm)
	}
	if all, ok := n["allOf"].([]any); ok && len(all) > 0 {
		return m.allOfType(d, n, all, nm)
	}
	if vals, ok := n["enum"].([]any); ok {
		return m.enumType(d, n, vals, nm)
	}
	if c, ok := n["const"]; ok {
		if nm.fixed != "" {
			return m.enumType(d, n, []any{c}, nm)
		}
		return literalType(c), c == nil
	}
	types, nullable := typeSet(n)
	if len(types) == 0 {
		switch {
		case has(n, "properties", "additionalProperties", "patternProperties", "required"):
			types = []string{"object"}
		case has(n, "items", "prefixItems"):
			types = []string{"array"}
		default:
			return rawType, false
		}
	}
	if len(types) > 1 {
		if slices.Contains(types, "number") {
			types = slices.DeleteFunc(types, func(s string) bool { return s == "integer" })
		}
	}
	if len(types) > 1 {
		var arms []any
		for _, t := range types {
			c := shallowCopy(n)
			c["type"] = t
			arms = append(arms, c)
		}
		t := m.anyOfType(d, n, arms, nm)
		return t, nullable
	}
	switch types[0] {
	case "string":
		return stringType, nullable
	case "integer":
		return integerType(n), nullable
	case "number":
		return floatType, nullable
	case "boolean":
		return boolType, nullable
	case "object":
		return m.objectType(d, n, nm), nullable
	case "array":
		return m.arrayType(d, n, nm), nullable
	}
	// "null" alone.
	return rawType, true
}

func has(n map[string]any, keys ...string) bool {
	for _, k := range keys {
		if _, ok := n[k]; ok {
			return true
		}
	}
	return false
}

func shallowCopy(n map[string]any) map[string]any {
	c := make(map[string]any, len(n))
	for k, v := range n {
		c[k] = v
	}
	return c
}

// typeSet returns the JSON types a node names (without "null") and whether
// it names null.
func typeSet(n map[string]any) ([]string, bool) {
	switch t := n["type"].(type) {
	case string:
		if t == "null" {
			return nil, true
		}
		return []string{t}, false
	case []any:
		var out []string
		null := false
		for _, e := range t {
			s, _ := e.(string)
			if s == "null" {
				null = true
			} else if s != "" {
				out = append(out, s)
			}
		}
		slices.Sort(out)
		return slices.Compact(out), null
	}
	return nil, false
}

// isNullable reports whether node accepts null.
func (m *model) isNullable(d *schemaDoc, node any) bool {
	n, ok := node.(map[string]any)
	if !ok {
		return false
	}
	if ref, ok := pureRef(n); ok {
		rd, name, target, ok := m.resolve(d, ref)
		if !ok || m.depth > maxDepth {
			return false
		}
		if name != "" {
			if goName := m.defName[defID{rd.digest, name}]; goName != "" && m.defBuilt[goName] {
				return m.defNullable[goName]
			}
		}
		m.depth++
		defer func() { m.depth-- }()
		return m.isNullable(rd, target)
	}
	if arms, ok := unionArms(n); ok {
		for _, a := range arms {
			if isNullSchema(a) {
				return true
			}
		}
		return false
	}
	if vals, ok := n["enum"].([]any); ok {
		return slices.Contains(vals, nil)
	}
	if c, ok := n["const"]; ok {
		return c == nil
	}
	_, null := typeSet(n)
	return null
}

// unionArms returns the arms of anyOf or oneOf.
func unionArms(n map[string]any) ([]any, bool) {
	for _, k := range []string{"anyOf", "oneOf"} {
		if arms, ok := n[k].([]any); ok && len(arms) > 0 {
			return arms, true
		}
	}
	return nil, false
}

func isNullSchema(a any) bool {
	n, ok := a.(map[string]any)
	if !ok {
		return false
	}
	if types, null := typeSet(n); null && len(types) == 0 {
		if _, hasType := n["type"]; hasType {
			return true
		}
	}
	if c, ok := n["const"]; ok && c == nil {
		return true
	}
	if vals, ok := n["enum"].([]any); ok && len(vals) == 1 && vals[0] == nil {
		return true
	}
	return false
}

// resolve follows a local $ref: "#", "#/$defs/NAME" (percent- and
// pointer-escaped) or another JSON pointer into the document. name is the
// definition name when the target is a definition.
func (m *model) resolve(d *schemaDoc, ref string) (*schemaDoc, string, any, bool) {
	toks, ok := schematree.ParseRef(ref) // the one $ref reader
	switch {
	case !ok:
		return nil, "", nil, false
	case len(toks) == 0:
		return d, "", d.rootB, true
	case len(toks) == 2 && toks[0] == "$defs":
		if body, ok := d.defs[toks[1]]; ok {
			return d, toks[1], body, true
		}
		return nil, "", nil, false
	}
	cur, ok := schematree.Resolve(d.rootB, ref)
	if !ok {
		return nil, "", nil, false
	}
	return d, "", cur, true
}

// refType is the type a $ref stands for.
func (m *model) refType(d *schemaDoc, ref string, nm naming) (typeRef, bool) {
	rd, name, target, ok := m.resolve(d, ref)
	if !ok {
		return rawType, false
	}
	if name != "" {
		return m.defType(rd, name)
	}
	if frag, _ := url.PathUnescape(strings.TrimPrefix(ref, "#")); frag == "" {
		if m.scopeRoot != "" && m.scopeDoc == d.digest {
			return m.named(m.scopeRoot), m.isNullable(d, d.rootB)
		}
	}
	return m.typeOf(rd, target, nm)
}

// declName returns the name for a new declaration of node n: the fixed
// name, the type already declared for this very node in the current scope
// (a node reached again through a JSON pointer), or the hint claimed.
// reuse is true when an existing type was found.
func (m *model) declName(_ *schemaDoc, n any, nm naming) (name string, reuse bool) {
	id, ok := m.nodeID(n)
	if nm.fixed != "" {
		if ok {
			m.declared[id] = nm.fixed
		}
		return nm.fixed, false
	}
	if existing, found := m.declared[id]; ok && found {
		return existing, true
	}
	name = m.ns.claim(nm.hint)
	if ok {
		m.declared[id] = name
	}
	return name, false
}

// nodeID identifies n (a decoded JSON object, or a map built from one) in
// the current scope.
func (m *model) nodeID(n any) (nodeID, bool) {
	v := reflect.ValueOf(n)
	if v.Kind() != reflect.Map || v.IsNil() {
		return nodeID{}, false
	}
	// Held so that the address is not reused by a later temporary map
	// (allOf merges and enum arms are built on the fly).
	m.keep = append(m.keep, n)
	return nodeID{scope: m.scope, node: v.Pointer()}, true
}

// objectType maps an object schema: a struct when it declares properties,
// a map when it only constrains the values of arbitrary keys.
func (m *model) objectType(d *schemaDoc, n map[string]any, nm naming) typeRef {
	props, _ := n["properties"].(map[string]any)
	addl, hasAddl := n["additionalProperties"]
	patterns, _ := n["patternProperties"].(map[string]any)
	closed := hasAddl && addl == false
	// The type of the values of undeclared keys.
	var extra *typeRef
	switch {
	case closed && len(patterns) == 0:
	case len(patterns) == 0 && hasAddl && addl != true:
		t, nullable := m.typeOf(d, addl, naming{hint: nm.base() + "Value", where: "the type of the values of " + nm.at()})
		t = elemType(t, nullable)
		extra = &t
	case len(patterns) == 1 && closed:
		for _, p := range patterns {
			t, nullable := m.typeOf(d, p, naming{hint: nm.base() + "Value", where: "the type of the values of " + nm.at()})
			t = elemType(t, nullable)
			extra = &t
		}
	default:
		t := rawType
		extra = &t
	}
	if len(props) == 0 {
		if extra != nil {
			return typeRef{expr: "map[string]" + extra.expr, nilable: true, empty: "map[string]" + extra.expr + "{}"}
		}
		name, reuse := m.declName(d, n, nm)
		if !reuse {
			m.add(&decl{name: name, doc: docOf(n, nm), kind: kindStruct, members: newNamespace()})
		}
		return m.named(name)
	}
	names := make([]string, 0, len(props))
	for p := range props {
		if !validTagName(p) {
			// encoding/json cannot name this property through a tag.
			return typeRef{expr: "map[string]json.RawMessage", nilable: true, empty: "map[string]json.RawMessage{}"}
		}
		names = append(names, p)
	}
	graph.SortUTF16(names)
	name, reuse := m.declName(d, n, nm)
	if reuse {
		return m.named(name)
	}
	st := m.add(&decl{name: name, doc: docOf(n, nm), kind: kindStruct, extra: extra,
		members: newNamespace("MarshalJSON", "UnmarshalJSON")})
	if extra != nil {
		st.members.claim("Extra")
	}
	required := stringSet(n["required"])
	for _, p := range names {
		ps := props[p]
		t, nullable := m.typeOf(d, ps, naming{hint: name + exportName(p), where: "the type of " + name + "." + exportName(p), path: name + "." + exportName(p)})
		f := &field{goName: st.members.claim(exportName(p)), jsonName: p, base: t}
		dflt, hasDefault := defaultOf(ps)
		f.doc = joinDoc(nodeDoc(ps), fieldNote(dflt, hasDefault))
		req := required[p]
		switch {
		case req || hasDefault && !t.nilable:
			if nullable && !t.nilable {
				f.wrap = wrapPtr
			}
			f.nilFix = req && !nullable && t.empty != ""
		case nullable:
			f.wrap, f.omit = wrapNullable, true
			m.usesNullable = true
		case t.nilable && hasDefault && (dflt == "[]" || dflt == "{}") && t.empty != "":
			// CUE's [...T] defaults to []: write nil as that default, so
			// a reader that does not apply defaults sees it too.
			f.nilFix = true
		case t.nilable:
			f.omit = true
		default:
			f.wrap, f.omit = wrapPtr, true
		}
		st.fields = append(st.fields, f)
	}
	return m.named(name)
}

// elemType is the type of a list element or map value that may be null.
func elemType(t typeRef, nullable bool) typeRef {
	if nullable && !t.nilable {
		return typeRef{expr: "*" + t.expr}
	}
	return t
}

func stringSet(v any) map[string]bool {
	out := map[string]bool{}
	l, _ := v.([]any)
	for _, e := range l {
		if s, ok := e.(string); ok {
			out[s] = true
		}
	}
	return out
}

// defaultOf returns the canonical JSON of a node's default.
func defaultOf(node any) (string, bool) {
	n, ok := node.(map[string]any)
	if !ok {
		return "", false
	}
	v, ok := n["default"]
	if !ok {
		return "", false
	}
	b, err := graph.Canonical(v)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// fieldNote documents what the Go type of a field alone does not say.
func fieldNote(dflt string, hasDefault bool) string {
	var notes []string
	if hasDefault {
		notes = append(notes, "Default: "+dflt+" (applied before a handler sees the value).")
	}
	return strings.Join(notes, "\n")
}

// arrayType maps a list schema: a slice, or a tuple struct when the schema
// fixes element positions (prefixItems).
func (m *model) arrayType(d *schemaDoc, n map[string]any, nm naming) typeRef {
	if prefix, ok := n["prefixItems"].([]any); ok && len(prefix) > 0 {
		return m.tupleType(d, n, prefix, nm)
	}
	items, ok := n["items"]
	if !ok || items == true || items == false {
		return typeRef{expr: "[]json.RawMessage", nilable: true, empty: "[]json.RawMessage{}"}
	}
	t, nullable := m.typeOf(d, items, naming{hint: nm.base() + "Item", where: "the type of the elements of " + nm.at()})
	t = elemType(t, nullable)
	return typeRef{expr: "[]" + t.expr, nilable: true, empty: "[]" + t.expr + "{}"}
}

func (m *model) tupleType(d *schemaDoc, n map[string]any, prefix []any, nm naming) typeRef {
	name, reuse := m.declName(d, n, nm)
	if reuse {
		return m.named(name)
	}
	minItems := int(numberOf(n["minItems"], 0))
	minItems = max(0, min(minItems, len(prefix)))
	tu := m.add(&decl{name: name, doc: docOf(n, nm), kind: kindTuple, minItems: minItems,
		members: newNamespace("MarshalJSON", "UnmarshalJSON")})
	for i, p := range prefix {
		t, nullable := m.typeOf(d, p, naming{hint: name + "Item" + strconv.Itoa(i), where: fmt.Sprintf("the type of position %d of %s", i, name)})
		// An element that is a definition is named after it (Task);
		// another after its position (Item1): both depend on the element
		// alone.
		elem := "Item" + strconv.Itoa(i)
		if pm, ok := p.(map[string]any); ok {
			if ref, ok := pureRef(pm); ok {
				if _, def, _, ok := m.resolve(d, ref); ok && def != "" && m.defName[defID{d.digest, def}] == t.expr {
					elem = t.expr
				}
			}
		}
		f := &field{goName: tu.members.claim(elem), base: t, doc: nodeDoc(p)}
		// omit marks a trailing element that may be absent.
		f.omit = i >= minItems
		switch {
		case f.omit && nullable:
			f.wrap = wrapNullable
			m.usesNullable = true
		case f.omit && !t.nilable:
			f.wrap = wrapPtr
		case f.omit:
		case nullable && !t.nilable:
			f.wrap = wrapPtr
		case !nullable && t.empty != "":
			f.nilFix = true
		}
		tu.elems = append(tu.elems, f)
	}
	maxItems, hasMax := n["maxItems"]
	if !hasMax || numberOf(maxItems, 0) > float64(len(prefix)) {
		items, ok := n["items"]
		switch {
		case ok && items == false:
		case ok && items != true:
			t, nullable := m.typeOf(d, items, naming{hint: name + "Rest", where: "the type of the further elements of " + name})
			t = elemType(t, nullable)
			tu.rest = &typeRef{expr: "[]" + t.expr, nilable: true}
		default:
			tu.rest = &typeRef{expr: "[]json.RawMessage", nilable: true}
		}
		if tu.rest != nil {
			tu.members.claim("Rest")
		}
	}
	return m.named(name)
}

func numberOf(v any, dflt float64) float64 {
	if num, ok := v.(json.Number); ok {
		if f, err := num.Float64(); err == nil {
			return f
		}
	}
	return dflt
}

// integerType is int64, or uint64 when the bounds need it, or json.Number
// when they fit neither. Bounds are compared as doubles: canonical JSON
// writes every number in its shortest double form, so int64's maximum
// 9223372036854775807 is stored as 9223372036854776000 (2^63).
func integerType(n map[string]any) typeRef {
	lo, hasLo := bound(n, "minimum", "exclusiveMinimum")
	hi, hasHi := bound(n, "maximum", "exclusiveMaximum")
	const two63, two64 = 1 << 63, 1 << 64
	if (!hasLo || lo >= -two63) && (!hasHi || hi <= two63) {
		return int64Type
	}
	if hasLo && lo >= 0 && hasHi && hi <= two64 {
		return uint64Type
	}
	return numberType
}

func bound(n map[string]any, keys ...string) (float64, bool) {
	for _, k := range keys {
		if num, ok := n[k].(json.Number); ok {
			if f, err := strconv.ParseFloat(string(num), 64); err == nil {
				return f, true
			}
		}
	}
	return 0, false
}

// literalType is the Go type of a JSON value.
func literalType(v any) typeRef {
	switch x := v.(type) {
	case string:
		return stringType
	case bool:
		return boolType
	case json.Number:
		if isInteger(x) {
			return int64Type
		}
		return floatType
	}
	return rawType
}

func isInteger(n json.Number) bool {
	_, err := strconv.ParseInt(string(n), 10, 64)
	return err == nil
}

// enumType maps an enum (or a const in a named position): a defined type
// with one constant per value when every value has the same scalar type,
// else a union over the value kinds.
func (m *model) enumType(d *schemaDoc, n map[string]any, vals []any, nm naming) (typeRef, bool) {
	nullable := slices.Contains(vals, nil)
	vals = slices.DeleteFunc(slices.Clone(vals), func(v any) bool { return v == nil })
	if len(vals) == 0 {
		return rawType, nullable
	}
	kind := ""
	for _, v := range vals {
		k := literalType(v).expr
		if kind == "" {
			kind = k
		} else if kind != k {
			if (kind == "int64" && k == "float64") || (kind == "float64" && k == "int64") {
				kind = "float64"
				continue
			}
			kind = "mixed"
		}
	}
	switch kind {
	case "bool":
		return boolType, nullable
	case "json.RawMessage", "mixed":
		var arms []any
		seen := map[string]bool{}
		for _, v := range vals {
			t := literalType(v).expr
			if seen[t] {
				continue
			}
			seen[t] = true
			arms = append(arms, map[string]any{"type": jsonTypeOf(v)})
		}
		return m.anyOfType(d, n, arms, nm), nullable
	}
	name, reuse := m.declName(d, n, nm)
	if reuse {
		return m.named(name), nullable
	}
	e := m.add(&decl{name: name, doc: docOf(n, nm), kind: kindDefined, underlying: kind})
	for i, v := range vals {
		var lit, part string
		switch x := v.(type) {
		case string:
			lit, part = strconv.Quote(x), exportName(x)
			if part == "X" && !strings.ContainsAny(x, "xX") {
				part = "Value" + strconv.Itoa(i)
			}
		case json.Number:
			lit = string(x)
			if kind == "float64" && isInteger(x) {
				lit += ".0"
			}
			part = strings.NewReplacer("-", "Minus", ".", "_", "+", "", "e", "E").Replace(string(x))
		}
		e.consts = append(e.consts, enumConst{name: m.ns.claim(name + part), literal: lit})
	}
	return m.named(name), nullable
}

func jsonTypeOf(v any) string {
	switch x := v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		if isInteger(x) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "null"
}

// unionType maps anyOf/oneOf: null arms make the type nullable; one other
// arm is that arm's type; several are a discriminated union when one
// required property holds a distinct string constant in every arm, else a
// raw union with typed accessors.
func (m *model) unionType(d *schemaDoc, n map[string]any, arms []any, nm naming) (typeRef, bool) {
	nullable := false
	var rest []any
	for _, a := range arms {
		if isNullSchema(a) {
			nullable = true
			continue
		}
		rest = append(rest, a)
	}
	if len(rest) == 0 {
		return rawType, nullable
	}
	if len(rest) == 1 {
		t, null := m.typeOf(d, rest[0], nm)
		return t, nullable || null
	}
	if t, ok := m.oneOfType(d, n, rest, nm); ok {
		return t, nullable
	}
	return m.anyOfType(d, n, rest, nm), nullable
}

// objectOf follows $refs to the object schema an arm stands for.
func (m *model) objectOf(d *schemaDoc, a any) (*schemaDoc, map[string]any, bool) {
	for range 16 {
		n, ok := a.(map[string]any)
		if !ok {
			return nil, nil, false
		}
		ref, isRef := n["$ref"].(string)
		if !isRef {
			if _, ok := n["properties"].(map[string]any); ok {
				return d, n, true
			}
			return nil, nil, false
		}
		rd, _, target, ok := m.resolve(d, ref)
		if !ok {
			return nil, nil, false
		}
		d, a = rd, target
	}
	return nil, nil, false
}

// constString returns the string a property schema fixes (const, or an
// enum of one string).
func (m *model) constString(d *schemaDoc, p any) (string, bool) {
	for range 16 {
		n, ok := p.(map[string]any)
		if !ok {
			return "", false
		}
		if ref, ok := n["$ref"].(string); ok {
			rd, _, target, ok := m.resolve(d, ref)
			if !ok {
				return "", false
			}
			d, p = rd, target
			continue
		}
		if c, ok := n["const"].(string); ok {
			return c, true
		}
		if vals, ok := n["enum"].([]any); ok && len(vals) == 1 {
			s, ok := vals[0].(string)
			return s, ok
		}
		return "", false
	}
	return "", false
}

func (m *model) oneOfType(d *schemaDoc, n map[string]any, arms []any, nm naming) (typeRef, bool) {
	type armObj struct {
		d *schemaDoc
		n map[string]any
	}
	objs := make([]armObj, len(arms))
	for i, a := range arms {
		ad, an, ok := m.objectOf(d, a)
		if !ok {
			return typeRef{}, false
		}
		objs[i] = armObj{ad, an}
	}
	first, _ := objs[0].n["properties"].(map[string]any)
	cands := make([]string, 0, len(first))
	for p := range first {
		cands = append(cands, p)
	}
	graph.SortUTF16(cands)
	disc := ""
	optional := false
	var values []string
	for _, p := range cands {
		values = values[:0]
		ok, opt := true, false
		for _, o := range objs {
			props, _ := o.n["properties"].(map[string]any)
			v, isConst := m.constString(o.d, props[p])
			// Required, or defaulted to the constant (CUE's kind: "email"):
			// once the runner has applied defaults it is always there.
			req := stringSet(o.n["required"])[p]
			dflt, hasDefault := defaultOf(props[p])
			if !isConst || slices.Contains(values, v) || !req && (!hasDefault || dflt != strconv.Quote(v)) {
				ok = false
				break
			}
			opt = opt || !req
			values = append(values, v)
		}
		if ok {
			disc, optional = p, opt
			break
		}
	}
	if disc == "" || !validTagName(disc) {
		return typeRef{}, false
	}
	if merged, ok := m.mergeCases(d, n, arms, disc, values); ok {
		return m.objectType(d, merged, nm), true
	}
	name, reuse := m.declName(d, n, nm)
	if reuse {
		return m.named(name), true
	}
	u := m.add(&decl{name: name, doc: docOf(n, nm), kind: kindOneOf, discriminator: disc, discOptional: optional,
		members: newNamespace("MarshalJSON", "UnmarshalJSON")})
	if optional {
		m.usesStrict = true
	}
	u.discGo = u.members.claim(exportName(disc))
	for i, a := range arms {
		goName := u.members.claim(exportName(values[i]))
		t, _ := m.typeOf(d, a, naming{hint: name + goName, where: fmt.Sprintf("the %q variant of %s", values[i], name)})
		v := variant{goName: goName, value: values[i], typ: t}
		if st := m.byName[t.expr]; st != nil && st.kind == kindStruct {
			for _, f := range st.fields {
				if f.jsonName == disc && f.wrap == wrapNone && f.base.expr == "string" {
					v.discField = f.goName
				}
			}
		}
		u.variants = append(u.variants, v)
	}
	return m.named(name), true
}

// anyOfType declares a raw union: the JSON value kept as is, with one
// accessor and one constructor per arm.
func (m *model) anyOfType(d *schemaDoc, n map[string]any, arms []any, nm naming) typeRef {
	name, reuse := m.declName(d, n, nm)
	if reuse {
		return m.named(name)
	}
	u := m.add(&decl{name: name, doc: docOf(n, nm), kind: kindAnyOf,
		members: newNamespace("MarshalJSON", "UnmarshalJSON")})
	for i, a := range arms {
		t, nullable := m.typeOf(d, a, naming{hint: name + "Option" + strconv.Itoa(i+1), where: "one of the forms of " + name})
		t = elemType(t, nullable)
		label := armLabel(t)
		u.arms = append(u.arms, arm{name: u.members.claim("As" + label)[2:], typ: t})
	}
	return m.named(name)
}

func armLabel(t typeRef) string {
	switch {
	case t.raw:
		return "Raw"
	case strings.HasPrefix(t.expr, "[]"):
		return "List"
	case strings.HasPrefix(t.expr, "map["):
		return "Map"
	case t.expr == "json.Number":
		return "Number"
	}
	return exportName(strings.TrimPrefix(t.expr, "*"))
}

// allOfType maps a conjunction: when one arm (or the node itself) decides
// the type and the others only constrain it, that type; when every arm is
// an object, one struct with all their properties; otherwise raw.
func (m *model) allOfType(d *schemaDoc, n map[string]any, all []any, nm naming) (typeRef, bool) {
	self := shallowCopy(n)
	delete(self, "allOf")
	arms := append([]any{self}, all...)
	var deciding []any
	for _, a := range arms {
		if an, ok := a.(map[string]any); ok && has(an, "$ref", "type", "enum", "const", "anyOf", "oneOf", "allOf", "properties", "items", "prefixItems", "additionalProperties", "patternProperties") {
			deciding = append(deciding, a)
		}
	}
	if len(deciding) == 1 {
		return m.typeOf(d, deciding[0], nm)
	}
	// Every arm an object: merge.
	merged := map[string]any{"type": "object"}
	props := map[string]any{}
	var required []any
	closed := false
	nullable := true
	for _, a := range deciding {
		ad, an, ok := m.objectOf(d, a)
		if !ok || ad != d {
			return rawType, false
		}
		if !m.isNullable(ad, an) {
			nullable = false
		}
		ps, _ := an["properties"].(map[string]any)
		for p, s := range ps {
			if prev, ok := props[p]; ok {
				props[p] = map[string]any{"allOf": []any{prev, s}}
			} else {
				props[p] = s
			}
		}
		if r, ok := an["required"].([]any); ok {
			required = append(required, r...)
		}
		if an["additionalProperties"] == false {
			closed = true
		}
	}
	merged["properties"] = props
	if len(required) > 0 {
		merged["required"] = required
	}
	if closed {
		merged["additionalProperties"] = false
	}
	if desc, ok := n["description"]; ok {
		merged["description"] = desc
	}
	return m.objectType(d, merged, nm), nullable
}

// key is the structural identity of node n in document d: its body
// without annotations and the bodies of every definition it reaches. Two
// nodes with equal keys accept the same values and map to one Go type.
func (m *model) key(d *schemaDoc, n any) string {
	reach := map[string]any{}
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		if depth > maxDepth {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				if k == "$ref" {
					if ref, ok := c.(string); ok {
						if ref == "#" {
							if _, seen := reach["#"]; !seen {
								reach["#"] = stripRoot(d.rootB)
								walk(d.rootB, depth+1)
							}
							continue
						}
						if _, name, target, ok := m.resolve(d, ref); ok && name != "" {
							if _, seen := reach[name]; !seen {
								reach[name] = target
								walk(target, depth+1)
							}
						}
					}
					continue
				}
				if k == "$defs" {
					continue
				}
				walk(c, depth+1)
			}
		case []any:
			for _, c := range x {
				walk(c, depth+1)
			}
		}
	}
	body := stripAnnotations(n)
	walk(body, 0)
	b, err := graph.Canonical(map[string]any{"node": body, "defs": reach})
	if err != nil {
		return fmt.Sprintf("unkeyed:%p", n)
	}
	return string(b)
}

func stripRoot(v any) any {
	n, ok := v.(map[string]any)
	if !ok {
		return v
	}
	c := shallowCopy(n)
	delete(c, "$defs")
	delete(c, "$schema")
	return c
}

// stripAnnotations drops what does not change the values a node accepts at
// its top level ($schema, $defs, description, title, examples, $comment).
func stripAnnotations(v any) any {
	n, ok := v.(map[string]any)
	if !ok {
		return v
	}
	c := shallowCopy(n)
	for _, k := range []string{"$schema", "$defs", "description", "title", "examples", "$comment"} {
		delete(c, k)
	}
	return c
}

// nodeDoc is a node's description (and title), for doc comments.
func nodeDoc(v any) string {
	n, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	var parts []string
	if t, ok := n["title"].(string); ok {
		parts = append(parts, t)
	}
	if s, ok := n["description"].(string); ok {
		parts = append(parts, s)
	}
	var notes []string
	if c, ok := n["const"]; ok {
		if b, err := graph.Canonical(c); err == nil {
			notes = append(notes, "Always "+string(b)+".")
		}
	}
	if f, ok := n["format"].(string); ok {
		notes = append(notes, "Format: "+f+".")
	}
	if len(notes) > 0 {
		parts = append(parts, strings.Join(notes, " "))
	}
	return strings.Join(parts, "\n\n")
}

func joinDoc(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "\n\n")
}

// mergeCases turns the cases of one object into one object schema, when
// the union is what CUE writes for conditional fields (`if species ==
// "dog" {breed: string}`): inline object arms (no definitions) that share
// a property besides the discriminator, each property with one schema
// wherever it appears. The discriminator becomes an enum of every case's
// value; a property is required when every case requires it, else
// optional and documented with the cases that have it. That is the struct
// a Go developer writes by hand (Breed *string beside Species), instead
// of one near-identical struct per case; the runner still validates each
// value against the union. A union of definitions, or of cases with
// nothing in common (email {address} | sms {phone}), stays a
// discriminated union.
func (m *model) mergeCases(d *schemaDoc, n map[string]any, arms []any, disc string, values []string) (map[string]any, bool) {
	type prop struct {
		schema any
		key    string
		cases  []string
		req    int
	}
	props := map[string]*prop{}
	closed := 0
	for i, a := range arms {
		an, ok := a.(map[string]any)
		if !ok || has(an, "$ref", "allOf", "anyOf", "oneOf", "patternProperties") {
			return nil, false
		}
		if ap, ok := an["additionalProperties"]; ok {
			if ap != false {
				return nil, false
			}
			closed++
		}
		ps, _ := an["properties"].(map[string]any)
		req := stringSet(an["required"])
		for p, ps := range ps {
			if p == disc {
				continue
			}
			k := m.key(d, ps)
			cur := props[p]
			if cur == nil {
				cur = &prop{schema: ps, key: k}
				props[p] = cur
			} else if cur.key != k {
				return nil, false
			}
			cur.cases = append(cur.cases, values[i])
			if req[p] {
				cur.req++
			}
		}
	}
	shared := false
	for _, p := range props {
		shared = shared || len(p.cases) == len(arms)
	}
	if !shared {
		return nil, false
	}
	enum := make([]any, len(values))
	for i, v := range values {
		enum[i] = v
	}
	out := map[string]any{disc: map[string]any{"enum": enum}}
	required := []any{disc}
	for name, p := range props {
		if p.req == len(arms) {
			required = append(required, name)
		}
		if len(p.cases) == len(arms) {
			out[name] = p.schema
			continue
		}
		c := map[string]any{"allOf": []any{p.schema}}
		quoted := make([]string, len(p.cases))
		for i, v := range p.cases {
			quoted[i] = strconv.Quote(v)
		}
		c["description"] = joinDoc(nodeDoc(p.schema), fmt.Sprintf("Only when %s is %s.", disc, strings.Join(quoted, " or ")))
		out[name] = c
	}
	merged := map[string]any{"type": "object", "properties": out, "required": required}
	if closed == len(arms) {
		merged["additionalProperties"] = false
	}
	if desc, ok := n["description"]; ok {
		merged["description"] = desc
	}
	return merged, true
}
