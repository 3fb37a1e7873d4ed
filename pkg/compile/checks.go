package compile

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	"cuelang.org/go/cue"

	"stitchkit.dev/stitchkit/internal/schematree"
	"stitchkit.dev/stitchkit/pkg/graph"
)

// checkOperation runs the per-operation graph checks and synthesises
// #params when the path has names and the operation declares none.
func (c *compiler) checkOperation(op *graph.Operation, n *nodeValues, np string) {
	if seg := uncleanSegment(op.Path); seg != "" {
		c.reportAt(join(np, "path"), "path-clean", "%s: path %q has a %q segment; net/http serves only clean paths: remove it", np, op.Path, seg)
	}
	names := graph.PathNames(op.Path)
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			c.reportAt(join(np, "path"), "path-duplicate-param", "%s: path %q names {%s} twice; each path parameter needs its own name", np, op.Path, n)
		}
		seen[n] = true
	}
	params := n.def("params")
	switch {
	case params.Exists():
		if params.IncompleteKind() != cue.StructKind {
			c.reportAt(join(np, "#params"), "params-cover-path", "%s: #params must be a struct with one field per path parameter", np)
			break
		}
		inPath := map[string]bool{}
		for _, n := range names {
			inPath[n] = true
		}
		declared := map[string]bool{}
		if iter, err := params.Fields(cue.Optional(true)); err == nil {
			for iter.Next() {
				if iter.Selector().LabelType() != cue.StringLabel {
					continue // a list index or pattern: no name
				}
				name := iter.Selector().Unquoted()
				fp := join(np, "#params", name)
				declared[name] = true
				switch {
				case !inPath[name]:
					c.reportAt(fp, "params-not-in-path", "%s: #params field %q names no path parameter of %q; remove it, or add {%s} to the path", np, name, op.Path, name)
				case iter.Selector().ConstraintType() == cue.OptionalConstraint:
					c.reportAt(fp, "params-cover-path", "%s: path parameter %s is always present: make it required (%s: string)", np, name, name)
				}
				if k := iter.Value().IncompleteKind(); !scalarKind(k) {
					c.reportAt(fp, "params-scalar", "%s: #params field %q is %v; a path parameter is one path segment: use a scalar schema (string, number, bool)", np, name, k)
				}
			}
		}
		for _, n := range names {
			if !declared[n] {
				c.reportAt(join(np, "#params"), "params-cover-path", "%s: #params has no field %q for the path parameter {%s} of %q; add %s: string (or a narrower schema)", np, n, n, op.Path, n)
			}
		}
	case len(names) > 0:
		props := map[string]any{}
		req := []any{}
		for _, n := range slices.Compact(slices.Sorted(slices.Values(names))) {
			props[n] = map[string]any{"type": "string"}
			req = append(req, n)
		}
		op.Params = c.store(map[string]any{
			"$schema":              jsonSchemaDialect,
			"type":                 "object",
			"properties":           props,
			"required":             req,
			"additionalProperties": false,
		}, join(np, "#params"))
		op.ParamsSynthesized = true
	}

	if q := n.def("query"); q.Exists() {
		c.checkQuery(q, join(np, "#query"), op.Query)
	}
	c.checkExampleParams(op, n, np, names)
	if n.def("input").Exists() && (op.Method == "GET" || op.Method == "HEAD" || op.Method == "DELETE") {
		c.reportAt(join(np, "#input"), "input-method", "%s: #input (a JSON body) is not allowed on %s; use #query", np, op.Method)
	}
	tools := op.Exposed(graph.MCP) || op.Exposed(graph.AGENT) || op.Exposed(graph.CLI)
	if op.Tool != nil && !tools {
		c.reportAt(join(np, "tool"), "tool-without-transport", "%s: tool options need MCP, AGENT or CLI in expose (expose is %v)", np, op.Expose)
	}
	if op.Method == "HEAD" && tools {
		c.reportAt(join(np, "expose"), "head-tool", "%s: HEAD operations are HTTP-only and never tools; set expose: [\"HTTP\"]", np)
	}
	for i, code := range strList(n.field("errors")) {
		if c.isBroken(join("errors", code)) {
			continue // reported by CUE
		}
		if c.root.LookupPath(cue.MakePath(cue.Str("errors"), cue.Str(code))).Exists() {
			continue
		}
		if _, ok := graph.FrameworkError(code); ok {
			continue
		}
		c.reportAt(join(np, "errors", itoa(i)), "undeclared-error", "%s: error %q is neither declared in the contract's errors nor a framework code", np, code)
	}
}

// checkQuery reports #query fields that are not scalars or lists of
// scalars: query strings carry only those.
func (c *compiler) checkQuery(q cue.Value, node string, d graph.Digest) {
	if q.IncompleteKind() != cue.StructKind {
		c.reportAt(node, "query-scalar", "%s: #query must be a struct of scalar or list-of-scalar fields", node)
		return
	}
	// The schema is what the runner coerces query strings by, and it
	// shows what CUE kinds do not: a union of structs, and pattern fields
	// ([string]: {...}).
	root := c.schemaTree(d)
	if root == nil {
		return
	}
	r := resolveRef(root, root)
	if r == nil || r["type"] != "object" {
		c.reportAt(node, "query-scalar", "%s: #query must be one object schema (a struct of scalar or list-of-scalar fields), not a union or a non-struct: a query string is one flat set of keys", node)
		return
	}
	extra := []any{r["additionalProperties"]}
	if pp, ok := r["patternProperties"].(map[string]any); ok {
		for _, v := range pp {
			extra = append(extra, v)
		}
	}
	for _, v := range extra {
		if _, isSchema := v.(map[string]any); isSchema && !queryValue(root, v) {
			c.reportAt(node, "query-scalar", "%s: the pattern fields of #query ([string]: ...) must be scalars or lists of scalars — move structured values to #input", node)
			break
		}
	}
	props, _ := r["properties"].(map[string]any)
	for _, name := range slices.Sorted(maps.Keys(props)) {
		if queryValue(root, props[name]) {
			continue
		}
		if props[name] == false {
			// CUE refuses every value of the field (a reference to an
			// optional field, a field a closed definition does not
			// allow, conflicting constraints): it is no structured
			// value, only one that can never be given. Say that, once.
			fp := join(node, name)
			if !c.warnedAt(fp) {
				c.warnings = append(c.warnings, Diagnostic{Pos: c.index.lookup(fp), Rule: "never-valid", Path: fp,
					Message: fmt.Sprintf("%s: CUE refuses every value of query field %q, so a request can never give it (is it added to a closed definition with &? embed the definition instead: {#Page, %s?: …})", node, name, name)})
			}
			continue
		}
		kind := q.LookupPath(cue.MakePath(cue.Str(name).Optional())).IncompleteKind()
		c.reportAt(join(node, name), "query-scalar", "%s: query field %q is %v; query fields must be scalars (string, number, bool) or lists of scalars — move it to #input", node, name, kind)
	}
}

// warnedAt reports whether a warning is already recorded at node path p
// or below it.
func (c *compiler) warnedAt(p string) bool {
	for _, w := range c.warnings {
		if w.Path == p || strings.HasPrefix(w.Path, p+".") || strings.HasPrefix(w.Path, p+"?") {
			return true
		}
	}
	return false
}

// schemaTree returns the schema d as a tree: the compiler's own
// translation when it made it, else decoded from the graph; nil when d is
// in neither.
func (c *compiler) schemaTree(d graph.Digest) any {
	if t, ok := c.trees[d]; ok {
		return t
	}
	var root any
	if raw := c.g.Schemas[d]; raw == nil || json.Unmarshal(raw, &root) != nil {
		return nil
	}
	return root
}

// objectSchema reports whether the schema d admits only JSON objects (an
// object, or a union whose every branch is one).
func (c *compiler) objectSchema(d graph.Digest) bool {
	root := c.schemaTree(d)
	if root == nil {
		return true // not ours to judge
	}
	var obj func(s any, depth int) bool
	obj = func(s any, depth int) bool {
		m := resolveRef(root, s)
		if m == nil || depth > 8 {
			return false
		}
		if m["type"] == "object" {
			return true
		}
		for _, k := range []string{"anyOf", "oneOf"} {
			if l, ok := m[k].([]any); ok && len(l) > 0 {
				for _, b := range l {
					if !obj(b, depth+1) {
						return false
					}
				}
				return true
			}
		}
		if l, ok := m["allOf"].([]any); ok {
			for _, b := range l {
				if obj(b, depth+1) {
					return true
				}
			}
		}
		return false
	}
	return obj(root, 0)
}

// resolveRef follows the "$ref" chain of s within root to an object
// schema; nil when it ends elsewhere (unresolvable, a cycle, a bool).
func resolveRef(root, s any) map[string]any {
	t, _ := schematree.Deref(root, s)
	m, _ := t.(map[string]any)
	return m
}

// queryValue reports whether schema s (within root) is a scalar or a list
// of scalars.
func queryValue(root, s any) bool {
	return scalarSchema(root, s) || scalarList(root, s, 0)
}

// scalarList reports whether schema s (within root) admits only lists of
// scalars: an array of scalar items, a literal list of scalars (the
// default arm of *["a","b"] | [...#S]), or a union of those. On the wire
// every one is the key repeated, so a default on a list filter changes
// nothing a caller sends.
func scalarList(root, s any, depth int) bool {
	m := resolveRef(root, s)
	if m == nil || depth > 8 {
		return false
	}
	listOfScalars := func(v any) bool {
		l, ok := v.([]any)
		if !ok {
			return false
		}
		for _, x := range l {
			if !scalarValue(x) {
				return false
			}
		}
		return true
	}
	if c, ok := m["const"]; ok {
		return listOfScalars(c)
	}
	if e, ok := m["enum"].([]any); ok {
		for _, v := range e {
			if !listOfScalars(v) {
				return false
			}
		}
		return len(e) > 0
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if l, ok := m[k].([]any); ok && len(l) > 0 {
			for _, b := range l {
				if !scalarList(root, b, depth+1) {
					return false
				}
			}
			return true
		}
	}
	if m["type"] == "array" {
		// items: false closes a tuple (a literal list), it adds no item.
		if items, ok := m["items"]; ok && items != false && !scalarSchema(root, items) {
			return false
		}
		if pre, ok := m["prefixItems"].([]any); ok {
			for _, it := range pre {
				if !scalarSchema(root, it) {
					return false
				}
			}
		}
		return true
	}
	return false
}

// scalarSchema reports whether schema s only admits strings, numbers,
// booleans or null.
func scalarSchema(root, s any) bool {
	m := resolveRef(root, s)
	if m == nil {
		return false
	}
	scalarType := func(t any) bool {
		switch t {
		case "string", "number", "integer", "boolean", "null":
			return true
		}
		return false
	}
	switch t := m["type"].(type) {
	case string:
		return scalarType(t)
	case []any:
		for _, x := range t {
			if !scalarType(x) {
				return false
			}
		}
		return len(t) > 0
	}
	if v, ok := m["const"]; ok {
		return scalarValue(v)
	}
	if e, ok := m["enum"].([]any); ok {
		for _, v := range e {
			if !scalarValue(v) {
				return false
			}
		}
		return len(e) > 0
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if l, ok := m[k].([]any); ok && len(l) > 0 {
			for _, b := range l {
				if !scalarSchema(root, b) {
					return false
				}
			}
			return true
		}
	}
	if l, ok := m["allOf"].([]any); ok {
		for _, b := range l {
			if scalarSchema(root, b) {
				return true
			}
		}
	}
	return false
}

func scalarValue(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return false
	}
	return true
}

// checkExampleParams checks the params of every example against the path
// parameters: each path name present, no other key (CUE checks declared
// #params itself; synthesised ones only as a map of strings).
func (c *compiler) checkExampleParams(op *graph.Operation, n *nodeValues, np string, names []string) {
	if n.def("params").Exists() {
		return // CUE checks examples against a declared #params
	}
	inPath := map[string]bool{}
	for _, n := range names {
		inPath[n] = true
	}
	iter, err := n.field("examples").List()
	if err != nil {
		return
	}
	for i := 0; iter.Next(); i++ {
		pv := field(iter.Value(), "params")
		if !pv.Exists() {
			continue
		}
		ep := join(np, "examples", itoa(i), "params")
		given := map[string]bool{}
		for _, k := range keys(pv) {
			given[k] = true
			if !inPath[k] {
				c.reportAt(join(ep, k), "example", "%s: %q is not a path parameter of %q", ep, k, op.Path)
			}
		}
		for _, n := range slices.Compact(slices.Sorted(slices.Values(names))) {
			if !given[n] {
				c.reportAt(ep, "example", "%s: the path parameter %q of %q is missing", ep, n, op.Path)
			}
		}
	}
}

// checkExampleSchemas reports every example part (input, output, ack)
// given for a node (operation, runtime tool or event at np) that declares
// no schema for it, and returns the indexes of those examples. The
// contract language cannot refuse such parts itself: a schema may be an
// incomplete scalar (#output: string), which CUE cannot tell from an
// absent one, so examples refer to the schemas directly, and an example
// part without a schema is checked against nothing.
func (c *compiler) checkExampleSchemas(node *nodeValues, np, what string, parts ...string) map[int]bool {
	iter, err := node.field("examples").List()
	if err != nil {
		return nil
	}
	var bad map[int]bool
	for i := 0; iter.Next(); i++ {
		for _, part := range parts {
			if !field(iter.Value(), part).Exists() || node.def(part).Exists() {
				continue
			}
			ep := join(np, "examples", itoa(i), part)
			c.reportAt(ep, "example", "%s: the example gives %s, but %s declares no #%s, so nothing checks it; declare #%s or remove the example's %s", ep, part, what, part, part, part)
			if bad == nil {
				bad = map[int]bool{}
			}
			bad[i] = true
		}
	}
	return bad
}

func scalarKind(k cue.Kind) bool {
	return k != cue.BottomKind && k&^(cue.StringKind|cue.NumberKind|cue.BoolKind|cue.NullKind) == 0
}

// checks runs the whole-graph checks.
func (c *compiler) checks() {
	g := c.g
	c.checkDefinitionFields()
	// Framework codes keep their status.
	for _, e := range g.Errors {
		if fw, ok := graph.FrameworkError(e.Code); ok && fw.Status != e.Status {
			c.reportAt(join("errors", e.Code), "framework-error-status", "errors.%s: %s is a framework code with status %d; redeclare it with status %d or choose another code", e.Code, e.Code, fw.Status, fw.Status)
		}
	}
	// Runtime tool identities.
	type holder struct{ label, node string }
	ids := map[string]holder{}
	for _, op := range g.Operations() {
		ids[op.ID()] = holder{"operation " + op.ID(), join("services", op.Service, "operations", op.Action)}
	}
	// Tool inputs every provider accepts: an object (or a union of
	// objects). MCP is governed by policy.mcp.schemaValidation.
	for _, op := range g.Operations() {
		if op.Input != "" && op.Exposed(graph.AGENT) && op.Method != "HEAD" && !c.objectSchema(op.Input) {
			np := join("services", op.Service, "operations", op.Action)
			c.reportAt(join(np, "#input"), "tool-input-object", "%s: #input is not an object schema, but the operation is exposed to AGENT and agent tool arguments are one JSON object; make #input a struct or remove AGENT from expose", np)
		}
	}
	for _, rt := range g.RuntimeTools {
		np := join("runtimeTools", rt.Name)
		if rt.Input != "" && !c.objectSchema(rt.Input) {
			c.reportAt(join(np, "#input"), "tool-input-object", "%s: #input is not an object schema; tool arguments are one JSON object: make #input a struct", np)
		}
		if rt.Identity.Method == "HEAD" {
			c.reportAt(join(np, "identity", "method"), "runtime-identity", "%s: identity method HEAD is an HTTP-only method and never a tool; use GET for a read", np)
		}
	}
	for _, cmd := range g.CliCommands {
		if strings.TrimSpace(cmd.Name) == "" || strings.ContainsAny(cmd.Name, "/") || strings.IndexFunc(cmd.Name, unicode.IsSpace) >= 0 {
			c.reportAt(join("cliCommands", cmd.Name), "cli-command-name", "cliCommands.%q: a CLI command name must be non-blank, without whitespace or '/'", cmd.Name)
		}
	}
	for _, rt := range g.RuntimeTools {
		id := rt.Identity.Service + "." + rt.Identity.Action
		node := join("runtimeTools", rt.Name, "identity")
		if other, ok := ids[id]; ok {
			c.reportAt(node, "runtime-identity", "runtimeTools.%s: identity %s is already the identity of %s; identities must be unique", rt.Name, id, other.label)
			d := &c.diags[len(c.diags)-1]
			d.Related = []Related{{Pos: c.index.lookup(other.node), Path: other.node, Message: fmt.Sprintf("%s has the identity %s", other.label, id)}}
			continue
		}
		ids[id] = holder{"runtime tool " + rt.Name, node}
	}
	for i, f := range strList(c.at("policy.mcp.allowFormats")) {
		if strings.TrimSpace(f) == "" {
			c.reportAt(join("policy", "mcp", "allowFormats", itoa(i)), "policy", "policy.mcp.allowFormats: entry %d is blank; list format names such as \"uuid\"", i)
		}
	}
}

// uncleanSegment returns the first "." or ".." segment of p, or "".
func uncleanSegment(p string) string {
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." {
			return seg
		}
	}
	return ""
}
