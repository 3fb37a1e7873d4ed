package compile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/literal"
	"cuelang.org/go/cue/token"
	"cuelang.org/go/encoding/jsonschema"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// jsonSchemaDialect is the $schema every generated document carries at its
// root. It is kept (not stripped): a stored schema is a self-describing
// document, and the digest covers it like every other keyword.
const jsonSchemaDialect = "https://json-schema.org/draft/2020-12/schema"

// schemaFor generates, normalises and stores the JSON Schema of the CUE
// value at node (a graph.NodePath such as "services.tasks.operations.list.#input").
// It reports unrepresentable constraints and generation failures as
// diagnostics and returns "" when the schema cannot be produced.
//
// A schema node's value is the user's expression unified with the contract
// language's placeholder (`#input?: _`, `#args!: [...]`). Its expression is
// taken apart once (see [compiler.schemaParts]); a node whose expression,
// doc comments and references are the same as an earlier node's reuses that
// node's digest (see [compiler.schemaKey]).
func (c *compiler) schemaFor(v cue.Value, node string) graph.Digest {
	op, args := v.Expr()
	user, key := c.schemaParts(op, args)
	if key != "" {
		if d, ok := c.schemaCache()[key]; ok {
			return d
		}
	}
	before := len(c.diags)
	if c.checkRepresentable(v, op, args, node) {
		return ""
	}
	gen := v
	if user.Exists() && v.Kind() != cue.StructKind {
		// Generate passes closedness through a conjunction only when it is
		// a struct; for anything else (a disjunction of closed structs, a
		// list of closed structs) the placeholder conjunct would make it
		// generate open arms, accepting what CUE refuses. The user's own
		// expression, generated alone, keeps the definition's closedness.
		gen = user
	}
	doc, err := c.generate(gen)
	if err != nil {
		hint := ""
		if strings.Contains(err.Error(), "reference ") && strings.Contains(err.Error(), " not found") {
			hint = " (CUE's JSON Schema generator cannot follow a reference to an optional field: declare that schema as a definition, e.g. #Tags: [...string], and refer to it)"
		}
		pos := c.index.lookup(node)
		var fe *fixError
		if errors.As(err, &fe) {
			// The fix-up names the value it could not handle: point
			// at it when it is in the contract's own files.
			if p := c.relPos(fe.pos); p.File != "" && !strings.HasPrefix(p.File, "cue.mod/") && !strings.HasPrefix(p.File, "../") {
				pos = p
			}
		}
		c.report(pos, "json-schema", "%s: cannot generate JSON Schema: %v%s", node, oneLine(err), hint)
		return ""
	}
	var probs []string
	literalProblems(doc, &probs)
	if len(probs) > 0 {
		slices.Sort(probs)
		for _, p := range slices.Compact(probs) {
			c.report(c.index.lookup(node), "unrepresentable", "%s: %s", node, p)
		}
		return ""
	}
	d := c.store(doc, node)
	if key != "" && d != "" && len(c.diags) == before {
		c.schemaCache()[key] = d
	}
	return d
}

func (c *compiler) store(doc map[string]any, node string) graph.Digest {
	d, err := c.g.AddSchema(doc)
	if err != nil {
		c.report(c.index.lookup(node), "json-schema", "%s: cannot canonicalise the generated JSON Schema: %v", node, err)
		return ""
	}
	return d
}

// generate runs encoding/jsonschema.Generate, normalises its output and
// fixes it up (see schemaFixer).
func (c *compiler) generate(v cue.Value) (map[string]any, error) {
	g, err := c.generateRaw(v)
	if err != nil {
		return nil, err
	}
	if err := fixSchema(g, v, c.generateRaw); err != nil {
		return nil, err
	}
	n := normalizer{docs: c.schemaDocs}
	return n.document(g.doc), nil
}

// generated is the normalised output of Generate for one value, with the
// value each $defs entry was generated from (so the entry can be fixed up
// with it) and the builtin each entry stands for (time.Time).
type generated struct {
	doc      map[string]any
	defVals  map[string]cue.Value
	builtins map[string]string // $defs name → builtin
}

// generateRaw runs encoding/jsonschema.Generate and normalises its output,
// without the fix-ups.
func (c *compiler) generateRaw(v cue.Value) (generated, error) {
	g := generated{defVals: map[string]cue.Value{}, builtins: map[string]string{}}
	cfg := &jsonschema.GenerateConfig{
		Version: jsonschema.VersionDraft2020_12,
		NamesFunc: func(refs []*jsonschema.CUERef) {
			jsonschema.DefaultNamesFunc(refs)
			for _, r := range refs {
				g.defVals[r.Name] = r.Inst.LookupPath(r.Path)
				if ip := builtinPackage(r.Inst); ip != "" {
					g.builtins[r.Name] = ip + "." + r.Path.String()
				}
			}
		},
	}
	expr, err := jsonschema.Generate(v, cfg)
	if err != nil {
		return g, err
	}
	tree, ok := astJSON(expr)
	if !ok {
		b, err := c.cue.BuildExpr(expr).MarshalJSON()
		if err != nil {
			return g, err
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&tree); err != nil {
			return g, err
		}
	}
	doc, ok := tree.(map[string]any)
	if !ok {
		return g, fmt.Errorf("generator returned %T, not an object", tree)
	}
	n := normalizer{docs: c.schemaDocs}
	g.doc = n.schema(doc).(map[string]any)
	return g, nil
}

// astJSON converts the literal AST Generate returns into a JSON tree
// (json.Number for numbers). It reports false on any node it does not know,
// and the caller then lets CUE evaluate and marshal the expression.
func astJSON(e ast.Node) (any, bool) {
	switch e := e.(type) {
	case *ast.StructLit:
		m := make(map[string]any, len(e.Elts))
		for _, d := range e.Elts {
			f, ok := d.(*ast.Field)
			if !ok {
				return nil, false
			}
			name, ok := labelName(f.Label)
			if !ok {
				return nil, false
			}
			if id, isIdent := f.Label.(*ast.Ident); isIdent && strings.HasPrefix(id.Name, "#") {
				return nil, false
			}
			val, ok := astJSON(f.Value)
			if !ok {
				return nil, false
			}
			m[name] = val
		}
		return m, true
	case *ast.ListLit:
		l := make([]any, 0, len(e.Elts))
		for _, el := range e.Elts {
			val, ok := astJSON(el)
			if !ok {
				return nil, false
			}
			l = append(l, val)
		}
		return l, true
	case *ast.BasicLit:
		switch e.Kind {
		case token.STRING:
			if strings.HasPrefix(e.Value, "'") || strings.HasPrefix(e.Value, "#") {
				return nil, false
			}
			s, err := literal.Unquote(e.Value)
			return s, err == nil
		case token.INT, token.FLOAT:
			if !json.Valid([]byte(e.Value)) {
				return nil, false
			}
			return json.Number(e.Value), true
		case token.TRUE:
			return true, true
		case token.FALSE:
			return false, true
		case token.NULL:
			return nil, true
		}
	case *ast.Ident:
		switch e.Name {
		case "true":
			return true, true
		case "false":
			return false, true
		case "null":
			return nil, true
		}
	case *ast.UnaryExpr:
		if e.Op == token.SUB {
			if lit, ok := e.X.(*ast.BasicLit); ok && (lit.Kind == token.INT || lit.Kind == token.FLOAT) && json.Valid([]byte("-"+lit.Value)) {
				return json.Number("-" + lit.Value), true
			}
		}
	}
	return nil, false
}

// normalizer rewrites generated schemas into one canonical shape without
// changing what they accept:
//
//  1. descriptions copied from the contract language's own doc comments are
//     removed (a user's doc comment stays);
//  2. nested allOf are flattened and trivially true members ({}, true)
//     dropped;
//  3. each allOf member is merged into the enclosing schema when no keyword
//     clashes: equal keywords are kept once, "type" sets are intersected
//     (number ∩ integer = integer), lower bounds take the maximum, upper
//     bounds the minimum, "required" lists are united; keywords whose meaning
//     depends on their neighbours (properties/patternProperties/
//     additionalProperties, prefixItems/items, contains/minContains/
//     maxContains, if/then/else, unevaluated*) are merged only when one
//     side has none of the group; a member that cannot be merged stays in
//     allOf;
//  4. a root that is only a $ref to a $defs entry used nowhere else is
//     replaced by that entry (so an operation whose #output is #Task has an
//     object schema at its root).
//
// The rules only ever rewrite allOf conjunctions and single-use references,
// which JSON Schema defines as equivalent; const, enum, default and examples
// values are never touched.
type normalizer struct {
	docs map[string]bool
}

func (n normalizer) document(doc map[string]any) map[string]any {
	out := n.schema(doc).(map[string]any)
	n.inlineRootRef(out)
	return out
}

// subschemaMaps name keywords holding a map of schemas; subschemaLists a
// list; subschemaOne a single schema.
var (
	subschemaMaps  = []string{"properties", "patternProperties", "$defs", "dependentSchemas"}
	subschemaLists = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	subschemaOne   = []string{"additionalProperties", "items", "contains", "not", "if", "then", "else", "propertyNames", "unevaluatedProperties", "unevaluatedItems"}
)

func (n normalizer) schema(s any) any {
	m, ok := s.(map[string]any)
	if !ok {
		return s
	}
	for _, k := range subschemaMaps {
		if sub, ok := m[k].(map[string]any); ok {
			for name, v := range sub {
				sub[name] = n.schema(v)
			}
		}
	}
	for _, k := range subschemaLists {
		if sub, ok := m[k].([]any); ok {
			for i, v := range sub {
				sub[i] = n.schema(v)
			}
		}
	}
	for _, k := range subschemaOne {
		if v, ok := m[k]; ok {
			m[k] = n.schema(v)
		}
	}
	if d, ok := m["description"].(string); ok {
		if d = n.stripDocs(d); d == "" {
			delete(m, "description")
		} else {
			m["description"] = d
		}
	}
	n.mergeAllOf(m)
	sortUnordered(m)
	return m
}

// sortUnordered sorts the values of keywords whose order carries no
// meaning (enum values, anyOf/oneOf arms, a "type" list) by their canonical
// bytes, so that the order disjuncts are written in CUE never reaches the
// schema. allOf members are ordered by mergeAllOf.
func sortUnordered(m map[string]any) {
	for _, k := range []string{"enum", "anyOf", "oneOf", "type"} {
		if l, ok := m[k].([]any); ok {
			sortByCanonical(l)
		}
	}
}

func sortByCanonical(l []any) {
	keys := make(map[int]string, len(l))
	idx := make([]int, len(l))
	for i, e := range l {
		b, _ := graph.CanonicalSchema(e)
		keys[i] = string(b)
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return strings.Compare(keys[a], keys[b]) })
	sorted := make([]any, len(l))
	for i, j := range idx {
		sorted[i] = l[j]
	}
	copy(l, sorted)
}

// explode splits schema e into parts that apply independently (allOf of
// the parts accepts what e accepts): each keyword alone, except keywords
// of one neighbour group, which stay together. A schema holding a keyword
// that must not move is one part.
func explode(e map[string]any) []any {
	for k := range e {
		if neverMerged[k] {
			return []any{e}
		}
	}
	grouped := map[string]bool{}
	var parts []any
	for _, group := range neighbourGroups {
		part := map[string]any{}
		for _, k := range group {
			if v, ok := e[k]; ok {
				part[k] = v
				grouped[k] = true
			}
		}
		if len(part) > 0 {
			parts = append(parts, part)
		}
	}
	for k, v := range e {
		if !grouped[k] {
			parts = append(parts, map[string]any{k: v})
		}
	}
	return parts
}

// pinned keywords stay in the enclosing schema when its allOf is rebuilt.
var pinned = map[string]bool{"$schema": true, "$id": true, "$anchor": true, "$dynamicAnchor": true, "$defs": true, "$comment": true, "description": true, "title": true}

// stripDocs removes doc paragraphs of the contract language from d.
func (n normalizer) stripDocs(d string) string {
	if n.docs[d] {
		return ""
	}
	for changed := true; changed; {
		changed = false
		for doc := range n.docs {
			if doc == "" {
				continue
			}
			if t, ok := strings.CutPrefix(d, doc+"\n\n"); ok {
				d, changed = t, true
			} else if t, ok := strings.CutSuffix(d, "\n\n"+doc); ok {
				d, changed = t, true
			}
		}
	}
	if n.docs[d] {
		return ""
	}
	return d
}

func (n normalizer) mergeAllOf(m map[string]any) {
	list, ok := m["allOf"].([]any)
	if !ok {
		return
	}
	delete(m, "allOf")
	var flat []any
	var flatten func([]any)
	flatten = func(l []any) {
		for _, e := range l {
			em, isMap := e.(map[string]any)
			switch {
			case e == true || isMap && len(em) == 0:
				continue
			case isMap && len(em) == 1 && em["allOf"] != nil:
				if inner, ok := em["allOf"].([]any); ok {
					flatten(inner)
					continue
				}
			}
			flat = append(flat, e)
		}
	}
	flatten(list)
	// The result must not depend on the order of the members (nor on
	// which keywords Generate happened to put in the enclosing schema:
	// =~"a" & =~"b" and =~"b" & =~"a" differ there), so the enclosing
	// schema's own keywords and every member are split into independent
	// parts, sorted by their canonical bytes and merged back in that
	// order; parts that cannot be merged stay in allOf, sorted too.
	_, ue := m["unevaluatedProperties"]
	_, ui := m["unevaluatedItems"]
	var parts []any
	if !ue && !ui {
		own := map[string]any{}
		for k, v := range m {
			if !pinned[k] {
				own[k] = v
				delete(m, k)
			}
		}
		parts = explode(own)
	}
	for _, e := range flat {
		if em, ok := e.(map[string]any); ok {
			parts = append(parts, explode(em)...)
		} else {
			parts = append(parts, e)
		}
	}
	sortByCanonical(parts)
	var rest []any
	for _, e := range parts {
		em, ok := e.(map[string]any)
		if !ok || !mergeInto(m, em) {
			rest = append(rest, e)
		}
	}
	if len(rest) > 0 {
		m["allOf"] = rest
	}
}

// neighbourGroups are keyword sets whose meaning depends on each other
// within one schema object.
var neighbourGroups = [][]string{
	{"properties", "patternProperties", "additionalProperties", "unevaluatedProperties"},
	{"prefixItems", "items", "unevaluatedItems"},
	{"contains", "minContains", "maxContains"},
	{"if", "then", "else"},
}

// neverMerged keywords keep their member where it is.
var neverMerged = map[string]bool{
	"$schema": true, "$id": true, "$anchor": true, "$dynamicAnchor": true,
	"$dynamicRef": true, "$defs": true, "$comment": false,
	"unevaluatedProperties": true, "unevaluatedItems": true,
}

var lowerBounds = map[string]bool{"minimum": true, "exclusiveMinimum": true, "minLength": true, "minItems": true, "minProperties": true, "minContains": true}
var upperBounds = map[string]bool{"maximum": true, "exclusiveMaximum": true, "maxLength": true, "maxItems": true, "maxProperties": true, "maxContains": true}

// mergeInto merges member e of an allOf into m when the result accepts
// exactly what m ∧ e accepted. It reports false (leaving m unchanged) when
// it cannot prove that.
func mergeInto(m, e map[string]any) bool {
	for k := range e {
		if neverMerged[k] {
			return false
		}
	}
	for _, group := range neighbourGroups {
		inM, inE := false, false
		for _, k := range group {
			_, a := m[k]
			_, b := e[k]
			inM, inE = inM || a, inE || b
		}
		if inM && inE {
			return false
		}
	}
	merged := map[string]any{}
	for k, ev := range e {
		mv, exists := m[k]
		switch {
		case !exists:
			merged[k] = ev
		case reflect.DeepEqual(mv, ev):
		case k == "type":
			t, ok := intersectTypes(mv, ev)
			if !ok {
				return false
			}
			merged[k] = t
		case lowerBounds[k] || upperBounds[k]:
			a, errA := toFloat(mv)
			b, errB := toFloat(ev)
			if errA != nil || errB != nil {
				return false
			}
			if lowerBounds[k] == (b > a) {
				merged[k] = ev
			}
		case k == "required":
			merged[k] = unionStrings(mv, ev)
			if merged[k] == nil {
				return false
			}
		default:
			return false
		}
	}
	for k, v := range merged {
		m[k] = v
	}
	return true
}

func toFloat(v any) (float64, error) {
	num, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("not a number")
	}
	return num.Float64()
}

func typeSet(v any) ([]string, bool) {
	switch t := v.(type) {
	case string:
		return []string{t}, true
	case []any:
		var out []string
		for _, e := range t {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

// intersectTypes intersects two "type" values; integer is a subset of
// number. It reports false when the intersection is empty or a value is
// malformed (the allOf then stays as written).
func intersectTypes(a, b any) (any, bool) {
	as, ok1 := typeSet(a)
	bs, ok2 := typeSet(b)
	if !ok1 || !ok2 {
		return nil, false
	}
	has := func(l []string, s string) bool {
		for _, x := range l {
			if x == s {
				return true
			}
		}
		return false
	}
	var out []string
	for _, t := range as {
		switch {
		case has(bs, t):
		case t == "number" && has(bs, "integer"):
			t = "integer"
		case t == "integer" && has(bs, "number"):
		default:
			continue
		}
		if !has(out, t) {
			out = append(out, t)
		}
	}
	switch len(out) {
	case 0:
		return nil, false
	case 1:
		return out[0], true
	}
	l := make([]any, len(out))
	for i, s := range out {
		l[i] = s
	}
	return l, true
}

func unionStrings(a, b any) any {
	as, ok1 := typeSet(a)
	bs, ok2 := typeSet(b)
	if !ok1 || !ok2 {
		return nil
	}
	seen := map[string]bool{}
	var out []any
	for _, s := range append(as, bs...) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// inlineRootRef replaces a root {"$ref": "#/$defs/N"} by $defs.N when N is
// referenced nowhere else.
func (n normalizer) inlineRootRef(doc map[string]any) {
	ref, ok := doc["$ref"].(string)
	if !ok {
		return
	}
	name, ok := strings.CutPrefix(ref, "#/$defs/")
	if !ok || strings.ContainsAny(name, "/~") {
		return
	}
	defs, _ := doc["$defs"].(map[string]any)
	def, ok := defs[name].(map[string]any)
	if !ok {
		return
	}
	if countRefs(doc, ref) != 1 {
		return
	}
	delete(doc, "$ref")
	candidate := map[string]any{}
	for k, v := range def {
		candidate[k] = v
	}
	if _, has := candidate["$defs"]; has || !mergeInto(doc, candidate) {
		doc["$ref"] = ref
		return
	}
	delete(defs, name)
	if len(defs) == 0 {
		delete(doc, "$defs")
	}
}

func countRefs(v any, ref string) int {
	switch x := v.(type) {
	case map[string]any:
		total := 0
		for k, e := range x {
			if k == "$ref" && e == ref {
				total++
				continue
			}
			if k == "const" || k == "enum" || k == "default" || k == "examples" {
				continue
			}
			total += countRefs(e, ref)
		}
		return total
	case []any:
		total := 0
		for _, e := range x {
			total += countRefs(e, ref)
		}
		return total
	}
	return 0
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
}
