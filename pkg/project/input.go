package project

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"stitchkit.dev/stitchkit/internal/schematree"
	"stitchkit.dev/stitchkit/pkg/graph"
)

// Advertised input assembly (research contracts §2.4): the tool transports
// take one flat object, so an operation's #params, #query and #input are
// merged here and nowhere else, and SplitArgs is the exact inverse.

// part is one of the schemas merged into a tool's advertised input.
type part struct {
	name string // "params", "query" or "input": also the $defs namespace
	doc  any
}

// parts decodes the schemas a candidate's advertised input is built from, in
// merge order.
func parts(g *graph.Graph, c candidate) ([]part, error) {
	return cachedParts(g, c, nil)
}

// cachedParts is parts with the decoded schemas kept in cache (nil: no
// cache). The trees are shared: every consumer of a part reads it, or
// clones it before changing it (namespace, flattenUnions).
func cachedParts(g *graph.Graph, c candidate, cache map[graph.Digest]any) ([]part, error) {
	type ref struct {
		name string
		d    graph.Digest
	}
	var refs []ref
	if c.op != nil {
		refs = []ref{{"params", c.op.Params}, {"query", c.op.Query}, {"input", c.op.Input}}
	} else {
		refs = []ref{{"input", c.rt.Input}}
	}
	var out []part
	for _, r := range refs {
		if r.d == "" {
			continue
		}
		if doc, ok := cache[r.d]; ok {
			out = append(out, part{name: r.name, doc: doc})
			continue
		}
		raw := g.Schema(r.d)
		if raw == nil {
			return nil, fmt.Errorf("%s schema %s is not in the graph", r.name, r.d)
		}
		doc, err := decodeJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("%s schema %s: %w", r.name, r.d, err)
		}
		if cache != nil {
			cache[r.d] = doc
		}
		out = append(out, part{name: r.name, doc: doc})
	}
	return out, nil
}

// advertisedInput builds the flat advertised input document of a candidate
// (before transport-specific strictness) and the matching argument splitter.
func advertisedInput(g *graph.Graph, c candidate, flatten bool, cache map[graph.Digest]any) (any, argSplitter, error) {
	ps, err := cachedParts(g, c, cache)
	if err != nil {
		return nil, argSplitter{}, err
	}
	split := splitterFor(c, ps)
	if flatten {
		for i := range ps {
			ps[i].doc = flattenUnions(ps[i].doc)
		}
	}
	doc, err := mergeParts(ps)
	return doc, split, err
}

// mergeParts merges namespaced parts into one document: one object when
// every part is a plain object schema, allOf otherwise.
func mergeParts(ps []part) (any, error) {
	defs := map[string]any{}
	bodies := make([]any, len(ps))
	defsRoot := map[string]any{"$defs": defs}
	var inlined []string
	for i, p := range ps {
		bodies[i] = namespace(p.doc, p.name, defs)
		// A part whose root is a $ref (`#input: #T`) is its target:
		// inline it so an object target merges as an object. $defs stay,
		// for recursive targets.
		if m, ok := bodies[i].(map[string]any); ok {
			var names []string
			bodies[i], names = inlineRootRef(m, defsRoot)
			inlined = append(inlined, names...)
		}
	}
	var out map[string]any
	switch {
	case len(ps) == 0:
		out = map[string]any{"type": "object", "properties": map[string]any{}}
	case len(ps) == 1:
		if m, ok := bodies[0].(map[string]any); ok {
			out = m
		} else {
			out = map[string]any{"allOf": []any{bodies[0]}}
		}
	case allObjects(bodies):
		merged, err := mergeObjects(ps, bodies)
		if err != nil {
			return nil, err
		}
		out = merged
	default:
		if u, ok := distributeUnion(ps, bodies, defsRoot); ok {
			out = u
		} else {
			out = map[string]any{"allOf": bodies}
		}
	}
	if _, typed := out["type"]; !typed {
		// Tool arguments are always one JSON object (the runner refuses
		// anything else), and providers require a root "type": "object"
		// (OpenAI and Anthropic refuse a root allOf or anyOf without it):
		// say so beside the union or the allOf.
		out["type"] = "object"
	}
	pruneDefs(out, defs, inlined)
	if len(defs) > 0 {
		out["$defs"] = defs
	}
	out["$schema"] = schemaDialect
	return out, nil
}

// inlineRootRef replaces a root "$ref" of m by its target (resolved in
// root), merged with m's sibling keywords — in JSON Schema 2020-12 a $ref
// applies alongside its siblings, so `{"$ref": "#/$defs/P", "properties":
// {"id": {"pattern": "^x"}}}` is P with id also matching ^x. It follows up
// to 8 chained references and returns m unchanged when a target cannot be
// resolved or its keywords conflict with the siblings. It also returns the
// names of the $defs entries inlined (so unreferenced ones can be pruned).
func inlineRootRef(m map[string]any, root any) (map[string]any, []string) {
	var names []string
	for range 8 {
		ref, ok := m["$ref"].(string)
		if !ok {
			break
		}
		target, ok := schematree.Resolve(root, ref)
		tm, ok2 := target.(map[string]any)
		if !ok || !ok2 {
			break
		}
		siblings := make(map[string]any, len(m))
		for k, v := range m {
			if k != "$ref" {
				siblings[k] = v
			}
		}
		merged, ok := mergeKeywords(schematree.Clone(tm).(map[string]any), siblings)
		if !ok {
			break
		}
		if toks, ok := schematree.ParseRef(ref); ok && len(toks) == 2 && toks[0] == "$defs" {
			names = append(names, toks[1])
		}
		m = merged
	}
	return m, names
}

// mergeKeywords merges the keywords of b into a (both schemas apply):
// properties and required are unioned, a property in both is merged the
// same way (or becomes allOf of both), additionalProperties false wins,
// annotations come from b. It reports false when another keyword has
// different values on both sides.
func mergeKeywords(a, b map[string]any) (map[string]any, bool) {
	for _, k := range sortedKeys(b) {
		bv := b[k]
		av, ok := a[k]
		if !ok {
			a[k] = bv
			continue
		}
		if reflect.DeepEqual(av, bv) {
			continue
		}
		switch k {
		case "properties", "$defs", "definitions":
			am, ok1 := av.(map[string]any)
			bm, ok2 := bv.(map[string]any)
			if !ok1 || !ok2 {
				return nil, false
			}
			for _, name := range sortedKeys(bm) {
				pa, inA := am[name]
				switch {
				case !inA:
					am[name] = bm[name]
				case reflect.DeepEqual(pa, bm[name]):
				case k != "properties":
					return nil, false
				default:
					sa, ok1 := pa.(map[string]any)
					sb, ok2 := bm[name].(map[string]any)
					if ok1 && ok2 {
						if merged, ok := mergeKeywords(schematree.Clone(sa).(map[string]any), sb); ok {
							am[name] = merged
							continue
						}
					}
					am[name] = map[string]any{"allOf": []any{pa, bm[name]}}
				}
			}
		case "required":
			ar, ok1 := av.([]any)
			br, ok2 := bv.([]any)
			if !ok1 || !ok2 {
				return nil, false
			}
			for _, r := range br {
				if !slices.Contains(ar, r) {
					ar = append(ar, r)
				}
			}
			a[k] = ar
		case "additionalProperties", "unevaluatedProperties":
			switch {
			case av == false:
			case bv == false:
				a[k] = false
			default:
				return nil, false
			}
		case "$schema", "$id", "$comment", "title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly":
			a[k] = bv
		default:
			return nil, false
		}
	}
	return a, true
}

// pruneDefs deletes the $defs entries in candidates that nothing reachable
// from the document body references any more (a non-recursive target that
// was inlined).
func pruneDefs(body map[string]any, defs map[string]any, candidates []string) {
	if len(candidates) == 0 {
		return
	}
	reached := map[string]bool{}
	var visit func(s any)
	visit = func(s any) {
		schematree.Walk(s, func(_ string, c schematree.Child) bool {
			if c.Keyword == "$defs" {
				return false // reached only through a reference
			}
			ref, _ := schematree.Ref(c.Schema)
			if toks, ok := schematree.ParseRef(ref); ok && len(toks) >= 2 && toks[0] == "$defs" && !reached[toks[1]] {
				reached[toks[1]] = true
				visit(defs[toks[1]])
			}
			return true
		})
	}
	visit(body)
	for _, name := range candidates {
		if !reached[name] {
			delete(defs, name)
		}
	}
}

// objectFalse writes every bare false sub-schema of an advertised
// document as {"not": {}} (the same meaning), but under
// additionalProperties, where false is the form every client and
// provider knows: a client may not accept a boolean schema elsewhere (the
// MCP Inspector's --strict check refuses "year": false, the translation
// of a field that must be absent).
func objectFalse(doc any) any {
	found := false
	schematree.Walk(doc, func(_ string, c schematree.Child) bool {
		if c.Schema == false && c.Keyword != "additionalProperties" {
			found = true
		}
		return !found
	})
	if !found {
		return doc
	}
	doc = schematree.Clone(doc)
	var walk func(s any)
	walk = func(s any) {
		schematree.MapChildren(s, func(c schematree.Child) any {
			if c.Schema == false && c.Keyword != "additionalProperties" {
				return map[string]any{"not": map[string]any{}}
			}
			walk(c.Schema)
			return c.Schema
		})
	}
	walk(doc)
	return doc
}

// schemaDialect is stamped once on every advertised input.
const schemaDialect = "https://json-schema.org/draft/2020-12/schema"

// distributeUnion merges plain object parts into each variant of the one
// part that is a union of object variants (#params {id} beside an #input
// with a conditional field): anyOf of the merged objects. allOf of the
// parts would be unsatisfiable when they are closed — each part refuses
// the other's properties — although the arguments are one flat object
// holding both. ok is false for any other shape (or a merge conflict).
func distributeUnion(ps []part, bodies []any, defsRoot any) (map[string]any, bool) {
	at, key := -1, ""
	for i, b := range bodies {
		if isPlainObject(b) {
			continue
		}
		m, isMap := b.(map[string]any)
		if !isMap || at >= 0 {
			return nil, false
		}
		for _, k := range []string{"anyOf", "oneOf"} {
			if _, has := m[k]; has {
				key = k
			}
		}
		if key == "" {
			return nil, false
		}
		for k := range m {
			if k != key && k != "type" && k != "description" && k != "title" {
				return nil, false
			}
		}
		if t, typed := m["type"]; typed && t != "object" {
			return nil, false
		}
		at = i
	}
	if at < 0 {
		return nil, false
	}
	u := bodies[at].(map[string]any)
	variants, _ := u[key].([]any)
	if len(variants) == 0 {
		return nil, false
	}
	merged := make([]any, 0, len(variants))
	for _, v := range variants {
		vm, isMap := v.(map[string]any)
		if !isMap {
			return nil, false
		}
		vm, _ = inlineRootRef(schematree.Clone(vm).(map[string]any), defsRoot)
		if !isPlainObject(vm) {
			return nil, false
		}
		bs := slices.Clone(bodies)
		bs[at] = vm
		m, err := mergeObjects(ps, bs)
		if err != nil {
			return nil, false
		}
		merged = append(merged, m)
	}
	out := map[string]any{key: merged}
	for _, k := range []string{"title", "description"} {
		if v, ok := u[k]; ok {
			out[k] = v
		}
	}
	return out, true
}

func allObjects(bodies []any) bool {
	for _, b := range bodies {
		if !isPlainObject(b) {
			return false
		}
	}
	return true
}

// isPlainObject reports whether s is `type: object` without a combinator or
// reference at its root, i.e. whether its properties can be merged.
func isPlainObject(s any) bool {
	m, ok := s.(map[string]any)
	if !ok || m["type"] != "object" {
		return false
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf", "not", "$ref", "if", "$dynamicRef"} {
		if _, ok := m[k]; ok {
			return false
		}
	}
	if p, ok := m["properties"]; ok {
		if _, ok := p.(map[string]any); !ok {
			return false
		}
	}
	return true
}

// keyPolicy are the keywords that decide unknown keys; the merged object
// takes them from the input side, else query, else params.
var keyPolicy = []string{"additionalProperties", "patternProperties", "propertyNames", "unevaluatedProperties"}

func mergeObjects(ps []part, bodies []any) (map[string]any, error) {
	props := map[string]any{}
	owner := map[string]string{}
	var required []any
	seenReq := map[string]bool{}
	var conflicts []string
	conflictKeys := map[string][]string{} // "params and input" → keys
	var pairs []string
	for i, b := range bodies {
		m := b.(map[string]any)
		pp, _ := m["properties"].(map[string]any)
		for _, k := range sortedKeys(pp) {
			if prev, ok := owner[k]; ok {
				pair := prev + " and " + ps[i].name
				if _, ok := conflictKeys[pair]; !ok {
					pairs = append(pairs, pair)
				}
				conflictKeys[pair] = append(conflictKeys[pair], k)
				continue
			}
			owner[k] = ps[i].name
			props[k] = pp[k]
		}
		if req, ok := m["required"].([]any); ok {
			for _, r := range req {
				if s, ok := r.(string); ok && !seenReq[s] {
					seenReq[s] = true
					required = append(required, s)
				}
			}
		}
	}
	for _, pair := range pairs {
		conflicts = append(conflicts, fmt.Sprintf("%s declared in both %s", strings.Join(conflictKeys[pair], ", "), pair))
	}
	if len(conflicts) > 0 {
		return nil, fmt.Errorf("Schema merge conflict: %s; rename one of them: tool arguments are one flat object", strings.Join(conflicts, "; "))
	}
	out := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		out["required"] = required
	}
	// The policy side is the last part present: input, else query, else params.
	last := bodies[len(bodies)-1].(map[string]any)
	for _, k := range keyPolicy {
		if v, ok := last[k]; ok {
			out[k] = v
		}
	}
	return out, nil
}

// namespace strips a part's $schema, hoists its $defs (and definitions) into
// defs under "<ns>__<name>", and rewrites its local references. A reference
// into the part's own root (e.g. "#" for a recursive schema) points at a copy
// of the part stored as $defs[<ns>].
func namespace(doc any, ns string, defs map[string]any) any {
	m, ok := doc.(map[string]any)
	if !ok {
		return doc
	}
	m = schematree.Clone(m).(map[string]any)
	delete(m, "$schema")
	local := map[string]any{}
	for _, key := range []string{"$defs", "definitions"} {
		if d, ok := m[key].(map[string]any); ok {
			for name, s := range d {
				local[name] = s
			}
			delete(m, key)
		}
	}
	needRoot := false
	rewrite := func(ref string) string {
		for _, prefix := range []string{"#/$defs/", "#/definitions/"} {
			if strings.HasPrefix(ref, prefix) {
				return "#/$defs/" + ns + "__" + ref[len(prefix):]
			}
		}
		if ref == "#" || strings.HasPrefix(ref, "#/") {
			needRoot = true
			return "#/$defs/" + ns + ref[1:]
		}
		return ref
	}
	rewriteRefs(m, rewrite)
	for name, s := range local {
		rewriteRefs(s, rewrite)
		defs[ns+"__"+name] = s
	}
	if needRoot {
		defs[ns] = schematree.Clone(m)
	}
	return m
}

// rewriteRefs rewrites every "$ref" in a schema tree in place.
func rewriteRefs(s any, f func(string) string) {
	schematree.Walk(s, func(_ string, c schematree.Child) bool {
		if ref, ok := schematree.Ref(c.Schema); ok {
			c.Schema.(map[string]any)["$ref"] = f(ref)
		}
		return true
	})
}

// argSplitter splits flat tool arguments by key.
type argSplitter struct {
	runtime bool
	params  map[string]bool
	query   map[string]bool
}

func splitterFor(c candidate, ps []part) argSplitter {
	if c.op == nil {
		return argSplitter{runtime: true}
	}
	s := argSplitter{params: map[string]bool{}, query: map[string]bool{}}
	for _, n := range c.op.PathNames() {
		s.params[n] = true
	}
	for _, p := range ps {
		var into map[string]bool
		switch p.name {
		case "params":
			into = s.params
		case "query":
			into = s.query
		default:
			continue
		}
		doc := p.doc
		if m, ok := doc.(map[string]any); ok {
			doc, _ = inlineRootRef(m, m)
		}
		for _, k := range propertyNames(doc) {
			into[k] = true
		}
	}
	return s
}

// propertyNames lists the top-level property names a schema declares,
// looking through allOf/anyOf/oneOf branches.
func propertyNames(s any) []string {
	m, ok := s.(map[string]any)
	if !ok {
		return nil
	}
	var names []string
	if pp, ok := m["properties"].(map[string]any); ok {
		names = append(names, sortedKeys(pp)...)
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		if bs, ok := m[k].([]any); ok {
			for _, b := range bs {
				names = append(names, propertyNames(b)...)
			}
		}
	}
	return names
}

func (s argSplitter) split(args map[string]json.RawMessage) (params, query, input map[string]json.RawMessage) {
	put := func(m *map[string]json.RawMessage, k string, v json.RawMessage) {
		if *m == nil {
			*m = map[string]json.RawMessage{}
		}
		(*m)[k] = v
	}
	for k, v := range args {
		switch {
		case s.runtime:
			put(&input, k, v)
		case s.params[k]:
			put(&params, k, v)
		case s.query[k]:
			put(&query, k, v)
		default:
			put(&input, k, v)
		}
	}
	return params, query, input
}

// SplitArgs splits the flat tool arguments of op back into params, query and
// input by key, the inverse of the advertised-input merge: keys of #params
// (and path names) go to params, keys of #query to query, every other key to
// input, so a key the operation does not declare reaches input validation
// and fails there exactly as an unknown body field would over HTTP. Mounts
// holding a prepared [Tool] should call [Tool.SplitArgs], which does not
// re-read the schemas.
func SplitArgs(g *graph.Graph, op *graph.Operation, args map[string]json.RawMessage) (params, query, input map[string]json.RawMessage, err error) {
	c := candidate{key: op.ID(), op: op}
	ps, err := parts(g, c)
	if err != nil {
		return nil, nil, nil, err
	}
	params, query, input = splitterFor(c, ps).split(args)
	return params, query, input, nil
}

// decodeJSON decodes raw JSON into a tree of map[string]any, []any, string,
// bool, nil and json.Number.
func decodeJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, graph.CompareUTF16)
	return keys
}
