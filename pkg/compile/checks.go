package compile

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"cuelang.org/go/cue"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/project"
)

// checkOperation runs the per-operation graph checks and synthesises
// #params when the path has names and the operation declares none.
func (c *compiler) checkOperation(op *graph.Operation, ov cue.Value, np string) {
	if seg := uncleanSegment(op.Path); seg != "" {
		c.report(c.index.lookup(join(np, "path")), "path-clean", "%s: path %q has a %q segment; net/http serves only clean paths: remove it", np, op.Path, seg)
	}
	names := graph.PathNames(op.Path)
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			c.report(c.index.lookup(join(np, "path")), "path-duplicate-param", "%s: path %q names {%s} twice; each path parameter needs its own name", np, op.Path, n)
		}
		seen[n] = true
	}
	params := def(ov, "params")
	switch {
	case params.Exists():
		if params.IncompleteKind() != cue.StructKind {
			c.report(c.index.lookup(join(np, "#params")), "params-cover-path", "%s: #params must be a struct with one field per path parameter", np)
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
					c.report(c.index.lookup(fp), "params-not-in-path", "%s: #params field %q names no path parameter of %q; remove it, or add {%s} to the path", np, name, op.Path, name)
				case iter.Selector().ConstraintType() == cue.OptionalConstraint:
					c.report(c.index.lookup(fp), "params-cover-path", "%s: path parameter %s is always present: make it required (%s: string)", np, name, name)
				}
				if k := iter.Value().IncompleteKind(); !scalarKind(k) {
					c.report(c.index.lookup(fp), "params-scalar", "%s: #params field %q is %v; a path parameter is one path segment: use a scalar schema (string, number, bool)", np, name, k)
				}
			}
		}
		for _, n := range names {
			if !declared[n] {
				c.report(c.index.lookup(join(np, "#params")), "params-cover-path", "%s: #params has no field %q for the path parameter {%s} of %q; add %s: string (or a narrower schema)", np, n, n, op.Path, n)
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

	if q := def(ov, "query"); q.Exists() {
		c.checkQuery(q, join(np, "#query"), op.Query)
	}
	c.checkExampleParams(op, ov, np, names)
	if def(ov, "input").Exists() && (op.Method == "GET" || op.Method == "HEAD" || op.Method == "DELETE") {
		c.report(c.index.lookup(join(np, "#input")), "input-method", "%s: #input (a JSON body) is not allowed on %s; use #query", np, op.Method)
	}
	tools := op.Exposed(graph.MCP) || op.Exposed(graph.AGENT) || op.Exposed(graph.CLI)
	if op.Tool != nil && !tools {
		c.report(c.index.lookup(join(np, "tool")), "tool-without-transport", "%s: tool options need MCP, AGENT or CLI in expose (expose is %v)", np, op.Expose)
	}
	if op.Method == "HEAD" && tools {
		c.report(c.index.lookup(join(np, "expose")), "head-tool", "%s: HEAD operations are HTTP-only and never tools; set expose: [\"HTTP\"]", np)
	}
	for i, code := range strList(field(ov, "errors")) {
		if c.isBroken(join("errors", code)) {
			continue // reported by CUE
		}
		if c.root.LookupPath(cue.MakePath(cue.Str("errors"), cue.Str(code))).Exists() {
			continue
		}
		if _, ok := graph.FrameworkError(code); ok {
			continue
		}
		c.report(c.index.lookup(join(np, "errors", itoa(i))), "undeclared-error", "%s: error %q is neither declared in the contract's errors nor a framework code", np, code)
	}
}

// checkQuery reports #query fields that are not scalars or lists of
// scalars: query strings carry only those.
func (c *compiler) checkQuery(q cue.Value, node string, d graph.Digest) {
	if q.IncompleteKind() != cue.StructKind {
		c.report(c.index.lookup(node), "query-scalar", "%s: #query must be a struct of scalar or list-of-scalar fields", node)
		return
	}
	// The generated schema shows what CUE kinds do not: a union of
	// structs, and pattern fields ([string]: {...}).
	var root any
	if raw := c.g.Schemas[d]; raw != nil && json.Unmarshal(raw, &root) == nil {
		r := resolveRef(root, root)
		if r == nil || r["type"] != "object" {
			c.report(c.index.lookup(node), "query-scalar", "%s: #query must be one object schema (a struct of scalar or list-of-scalar fields), not a union or a non-struct: a query string is one flat set of keys", node)
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
				c.report(c.index.lookup(node), "query-scalar", "%s: the pattern fields of #query ([string]: ...) must be scalars or lists of scalars — move structured values to #input", node)
				break
			}
		}
	}
	iter, err := q.Fields(cue.Optional(true))
	if err != nil {
		return
	}
	for iter.Next() {
		if iter.Selector().LabelType() != cue.StringLabel {
			continue // a list index or pattern: no name
		}
		name := iter.Selector().Unquoted()
		fv := iter.Value()
		ok := scalarKind(fv.IncompleteKind())
		if !ok && fv.IncompleteKind() == cue.ListKind {
			ok = true
			if rest := fv.LookupPath(cue.MakePath(cue.AnyIndex)); rest.Exists() && !scalarKind(rest.IncompleteKind()) {
				ok = false
			}
			for i := 0; ; i++ {
				e := fv.LookupPath(cue.MakePath(cue.Index(i)))
				if !e.Exists() {
					break
				}
				if !scalarKind(e.IncompleteKind()) {
					ok = false
				}
			}
		}
		if !ok {
			c.report(c.index.lookup(join(node, name)), "query-scalar", "%s: query field %q is %v; query fields must be scalars (string, number, bool) or lists of scalars — move it to #input", node, name, fv.IncompleteKind())
		}
	}
}

// objectSchema reports whether the schema d admits only JSON objects (an
// object, or a union whose every branch is one).
func (c *compiler) objectSchema(d graph.Digest) bool {
	var root any
	if json.Unmarshal(c.g.Schemas[d], &root) != nil {
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

// resolveRef follows a local "#/$defs/NAME" reference of s within root.
func resolveRef(root, s any) map[string]any {
	for range 16 {
		m, ok := s.(map[string]any)
		if !ok {
			return nil
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		name, found := strings.CutPrefix(ref, "#/$defs/")
		defs, _ := root.(map[string]any)["$defs"].(map[string]any)
		if !found || defs == nil {
			return m
		}
		s = defs[name]
	}
	return nil
}

// queryValue reports whether schema s (within root) is a scalar or a list
// of scalars.
func queryValue(root, s any) bool {
	m := resolveRef(root, s)
	if m != nil && m["type"] == "array" {
		if items, ok := m["items"]; ok && !scalarSchema(root, items) {
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
	return scalarSchema(root, s)
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
func (c *compiler) checkExampleParams(op *graph.Operation, ov cue.Value, np string, names []string) {
	if def(ov, "params").Exists() {
		return // CUE checks examples against a declared #params
	}
	inPath := map[string]bool{}
	for _, n := range names {
		inPath[n] = true
	}
	iter, err := field(ov, "examples").List()
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
				c.report(c.index.lookup(join(ep, k)), "example", "%s: %q is not a path parameter of %q", ep, k, op.Path)
			}
		}
		for _, n := range slices.Compact(slices.Sorted(slices.Values(names))) {
			if !given[n] {
				c.report(c.index.lookup(ep), "example", "%s: the path parameter %q of %q is missing", ep, n, op.Path)
			}
		}
	}
}

func scalarKind(k cue.Kind) bool {
	return k != cue.BottomKind && k&^(cue.StringKind|cue.NumberKind|cue.BoolKind|cue.NullKind) == 0
}

// checks runs the whole-graph checks.
func (c *compiler) checks() {
	g := c.g
	// Routes.
	routes := map[string]*graph.Operation{}
	for _, op := range g.Operations() {
		if !op.Exposed(graph.HTTP) {
			continue
		}
		s := g.Service(op.Service)
		full := project.JoinPath(s.Prefix, op.Path)
		key := op.Method + " " + graph.PathShape(full)
		if first, ok := routes[key]; ok {
			np := join("services", op.Service, "operations", op.Action)
			c.report(c.index.lookup(join(np, "path")), "duplicate-route", "%s: route %s %s is also served by %s (%s %s); change the path or the method",
				op.ID(), op.Method, full, first.ID(), first.Method, project.JoinPath(g.Service(first.Service).Prefix, first.Path))
			continue
		}
		routes[key] = op
	}
	c.checkServeMux(routes)
	// Framework codes keep their status.
	for _, e := range g.Errors {
		if fw, ok := graph.FrameworkError(e.Code); ok && fw.Status != e.Status {
			c.report(c.index.lookup(join("errors", e.Code)), "framework-error-status", "errors.%s: %s is a framework code with status %d; redeclare it with status %d or choose another code", e.Code, e.Code, fw.Status, fw.Status)
		}
	}
	// Runtime tool identities.
	ids := map[string]string{}
	for _, op := range g.Operations() {
		ids[op.ID()] = "operation " + op.ID()
	}
	// Tool inputs every provider accepts: an object (or a union of
	// objects). MCP is governed by policy.mcp.schemaValidation.
	for _, op := range g.Operations() {
		if op.Input != "" && op.Exposed(graph.AGENT) && op.Method != "HEAD" && !c.objectSchema(op.Input) {
			np := join("services", op.Service, "operations", op.Action)
			c.report(c.index.lookup(join(np, "#input")), "tool-input-object", "%s: #input is not an object schema, but the operation is exposed to AGENT and agent tool arguments are one JSON object; make #input a struct or remove AGENT from expose", np)
		}
	}
	for _, rt := range g.RuntimeTools {
		np := join("runtimeTools", rt.Name)
		if rt.Input != "" && !c.objectSchema(rt.Input) {
			c.report(c.index.lookup(join(np, "#input")), "tool-input-object", "%s: #input is not an object schema; tool arguments are one JSON object: make #input a struct", np)
		}
		if rt.Identity.Method == "HEAD" {
			c.report(c.index.lookup(join(np, "identity", "method")), "runtime-identity", "%s: identity method HEAD is an HTTP-only method and never a tool; use GET for a read", np)
		}
	}
	for _, cmd := range g.CliCommands {
		if strings.TrimSpace(cmd.Name) == "" || strings.ContainsAny(cmd.Name, "/") || strings.IndexFunc(cmd.Name, unicode.IsSpace) >= 0 {
			c.report(c.index.lookup(join("cliCommands", cmd.Name)), "cli-command-name", "cliCommands.%q: a CLI command name must be non-blank, without whitespace or '/'", cmd.Name)
		}
	}
	for _, rt := range g.RuntimeTools {
		id := rt.Identity.Service + "." + rt.Identity.Action
		if other, ok := ids[id]; ok {
			c.report(c.index.lookup(join("runtimeTools", rt.Name, "identity")), "runtime-identity", "runtimeTools.%s: identity %s is already the identity of %s; identities must be unique", rt.Name, id, other)
			continue
		}
		ids[id] = "runtime tool " + rt.Name
	}
	c.checkSurfaces()
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

// headGetPair reports whether one of a and b is a HEAD and the other a
// GET operation.
func headGetPair(a, b *graph.Operation) bool {
	return a.Method == "HEAD" && b.Method == "GET" || a.Method == "GET" && b.Method == "HEAD"
}

// conflictRE finds the other pattern in a net/http.ServeMux conflict panic.
var (
	conflictRE = regexp.MustCompile(`conflicts with pattern ("(?:[^"\\]|\\.)*")`)
	likeRE     = regexp.MustCompile(`like ("(?:[^"\\]|\\.)*")`)
)

// checkServeMux registers every HTTP route of the graph (the projection
// the HTTP mount serves, project.HTTPRoutes) in a fresh net/http.ServeMux
// — the oracle for what the mount can serve — and reports each pattern the
// mux refuses: two routes that match some of the same requests with
// neither more specific (GET /{id}/b and GET /a/{id}), or an unclean path.
// Routes already reported as duplicates (in keep, by method and shape) are
// not registered twice.
func (c *compiler) checkServeMux(keep map[string]*graph.Operation) {
	mux := http.NewServeMux()
	byPattern := map[string]*graph.Operation{}
	noop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for _, r := range project.HTTPRoutes(c.g, project.HTTPOptions{}) {
		names := graph.PathNames(r.Path)
		if keep[r.Method+" "+graph.PathShape(r.Path)] != r.Op || uncleanSegment(r.Path) != "" ||
			len(slices.Compact(slices.Sorted(slices.Values(names)))) != len(names) {
			continue // a duplicate route or parameter, or an unclean path: reported already
		}
		pattern := r.Pattern()
		msg := func() (msg string) {
			defer func() {
				if p := recover(); p != nil {
					msg = fmt.Sprint(p)
				}
			}()
			mux.Handle(pattern, noop)
			return ""
		}()
		if msg == "" {
			byPattern[pattern] = r.Op
			continue
		}
		np := join("services", r.Op.Service, "operations", r.Op.Action)
		if m := conflictRE.FindStringSubmatch(msg); m != nil {
			other, _ := strconv.Unquote(m[1])
			if o := byPattern[other]; o != nil {
				why := ""
				if m := likeRE.FindStringSubmatch(msg); m != nil {
					why = " such as " + m[1]
				}
				if headGetPair(r.Op, o) {
					// HEAD /x/{id} next to GET /x/search: GET routes
					// also answer HEAD, so a HEAD request for /x/search
					// matches both and the mount would panic.
					why += " (GET routes also answer HEAD requests; give the HEAD operation a path no GET route can match, or drop it: the GET route already answers HEAD)"
				}
				// Report at the operation written last, naming both.
				this, that, thisPat, thatPat := r.Op, o, pattern, other
				onp := join("services", o.Service, "operations", o.Action)
				if posLess(c.index.lookup(join(np, "path")), c.index.lookup(join(onp, "path"))) {
					this, that, thisPat, thatPat, np = o, r.Op, other, pattern, onp
				}
				c.report(c.index.lookup(join(np, "path")), "route-conflict", "%s: route %s of %s conflicts with route %s of %s: both match some paths%s and neither is more specific, so net/http.ServeMux refuses them; change one path or method",
					np, thisPat, this.ID(), thatPat, that.ID(), why)
				continue
			}
		}
		c.report(c.index.lookup(join(np, "path")), "route-conflict", "%s: net/http.ServeMux refuses route %s of %s: %s", np, pattern, r.Op.ID(), strings.ReplaceAll(msg, "\n", " "))
	}
}

// checkSurfaces projects the tool surfaces with pkg/project — the one
// projector, which alone decides surface membership and tool names — and
// turns every problem it reports into a positioned diagnostic: selection
// patterns that name nothing or nothing exposed, invalid tool names, tool
// name collisions within a surface, unbuildable tool inputs. One problem
// found on several surfaces (a collision on MCP and AGENT) is reported
// once, listing them.
func (c *compiler) checkSurfaces() {
	if c.skipSurfaces {
		return // CUE reported errors in surfaces or policy
	}
	ts, err := project.ToolSurfaces(c.g)
	if err == nil {
		c.checkPolicyLists(ts)
		return
	}
	var es project.Errors
	if !errors.As(err, &es) {
		c.report(c.index.lookup("surfaces"), "tool-surfaces", "%v", err)
		return
	}
	type group struct {
		e     *project.Error
		where []string // surfaces, or transports for per-tool problems
	}
	groups := map[string]*group{}
	var order []string
	for _, e := range es {
		if (e.Kind == project.SelectionUnknown || e.Kind == project.SelectionNotExposed) && c.skippedPattern(e.Pattern) {
			continue // names a node CUE reported errors in
		}
		cause := ""
		if e.Err != nil {
			cause = e.Err.Error()
		}
		key := strings.Join(append([]string{string(e.Kind), e.Selection, e.Field, e.Pattern, e.Tool, cause}, e.Nodes...), "\x00")
		where := project.SurfaceLabel(e.Transport, e.Surface)
		if e.Kind == project.InvalidToolName || e.Kind == project.InvalidToolInput {
			where = string(e.Transport) // the name or input is per transport
		}
		gr := groups[key]
		if gr == nil {
			gr = &group{e: e}
			groups[key] = gr
			order = append(order, key)
		}
		if !slices.Contains(gr.where, where) {
			gr.where = append(gr.where, where)
		}
	}
	for _, key := range order {
		gr := groups[key]
		e, where := gr.e, strings.Join(gr.where, ", ")
		switch e.Kind {
		case project.SelectionUnknown, project.SelectionNotExposed:
			c.report(c.patternPos(e.Selection, e.Field, e.Pattern), string(e.Kind), "%s", e.Message)
		case project.ToolNameCollision:
			what, fix := "tool name", "set a distinct tool.name on one of them"
			if e.Transport == graph.CLI {
				what, fix = "CLI command name", "set a distinct tool.name or rename the CLI-only command"
			}
			c.report(c.latestPos(e.Nodes), string(e.Kind), "%s: %s both have the %s %q; %s",
				where, strings.Join(e.Labels, " and "), what, e.Tool, fix)
		case project.InvalidToolName, project.InvalidToolInput:
			c.report(c.latestPos(e.Nodes), string(e.Kind), "%s on %s: %v", strings.Join(e.Labels, " and "), where, e.Err)
		case project.MCPTopology:
			c.report(c.index.lookup("surfaces.mcp"), string(e.Kind), "%s", e.Message)
		default:
			c.report(c.latestPos(e.Nodes), string(e.Kind), "%s", e.Message)
		}
	}
}

// checkPolicyLists checks policy.mcp.allowUntyped (each entry a property
// path TOOL.prop[.sub] of some MCP tool's advertised input) and
// policy.mcp.allowFormats (non-blank format names).
func (c *compiler) checkPolicyLists(ts *project.Tools) {
	pol := c.g.Policy.MCP
	if len(pol.AllowUntyped) > 0 {
		paths := map[string]bool{}
		for _, s := range ts.Surfaces {
			if s.Transport != graph.MCP {
				continue
			}
			for _, t := range s.Tools {
				var doc any
				if json.Unmarshal(t.Input, &doc) == nil {
					propertyPaths(doc, t.Name, paths)
				}
			}
		}
		for i, p := range strList(c.at("policy.mcp.allowUntyped")) {
			if !paths[p] {
				c.report(c.index.lookup(join("policy", "mcp", "allowUntyped", itoa(i))), "policy", "policy.mcp.allowUntyped: %q names no property of an MCP tool's input; write TOOL.property (e.g. %q)", p, "create_task.title")
			}
		}
	}
	for i, f := range strList(c.at("policy.mcp.allowFormats")) {
		if strings.TrimSpace(f) == "" {
			c.report(c.index.lookup(join("policy", "mcp", "allowFormats", itoa(i))), "policy", "policy.mcp.allowFormats: entry %d is blank; list format names such as \"uuid\"", i)
		}
	}
}

// propertyPaths adds the property paths of a schema tree the way MCP
// preparation names them (requireTypedProperties): prefix.prop.sub, with
// pattern properties, items and combinators transparent and $defs as
// prefix.$defs.NAME.
func propertyPaths(s any, prefix string, out map[string]bool) {
	m, ok := s.(map[string]any)
	if !ok {
		return
	}
	if props, ok := m["properties"].(map[string]any); ok {
		for k, v := range props {
			out[prefix+"."+k] = true
			propertyPaths(v, prefix+"."+k, out)
		}
	}
	if pp, ok := m["patternProperties"].(map[string]any); ok {
		for _, v := range pp {
			propertyPaths(v, prefix, out)
		}
	}
	for _, k := range []string{"$defs", "definitions"} {
		if defs, ok := m[k].(map[string]any); ok {
			for name, v := range defs {
				propertyPaths(v, prefix+".$defs."+name, out)
			}
		}
	}
	for _, k := range []string{"items", "additionalProperties", "not", "if", "then", "else", "contains"} {
		propertyPaths(m[k], prefix, out)
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf", "prefixItems"} {
		if l, ok := m[k].([]any); ok {
			for _, b := range l {
				propertyPaths(b, prefix, out)
			}
		}
	}
}

// Warnings returns the non-fatal findings about a compiled graph, sorted,
// positioned from g.Sources when the node is known: the MCP preparation
// findings of pkg/project (untyped properties under
// requireTypedProperties, non-portable formats under
// requirePortableFormats, tools dropped under schemaValidation "warn").
// `stitch vet` prints them as "warning: ..." and still exits 0.
func Warnings(g *graph.Graph) []Diagnostic {
	var out []Diagnostic
	if ts, err := project.ToolSurfaces(g); err == nil {
		for _, w := range ts.Warnings {
			out = append(out, Diagnostic{Pos: warningPos(g, ts, w), Rule: "mcp-policy", Message: w.String()})
		}
	}
	slices.SortFunc(out, compareDiagnostics)
	return slices.CompactFunc(out, func(a, b Diagnostic) bool { return a == b })
}

// warningPos is the position of the tool a preparation warning is about:
// the tool of that name on the warning's transport, else on any surface
// (a tool dropped from MCP keeps its name on AGENT), else the policy.
func warningPos(g *graph.Graph, ts *project.Tools, w project.Warning) graph.Pos {
	var found *project.Tool
	for i := range ts.Surfaces {
		s := &ts.Surfaces[i]
		if t := s.Tool(w.Tool); t != nil && (found == nil || s.Transport == w.Transport) {
			found = t
		}
	}
	switch {
	case found != nil && found.Op != nil:
		return g.Source(join("services", found.Op.Service, "operations", found.Op.Action))
	case found != nil && found.Runtime != nil:
		return g.Source(join("runtimeTools", found.Runtime.Name))
	}
	for i := range g.RuntimeTools {
		if g.RuntimeTools[i].Name == w.Tool {
			return g.Source(join("runtimeTools", w.Tool))
		}
	}
	return g.Source("policy")
}

// skippedPattern reports whether a literal selection pattern names a node
// left out of the graph because of CUE errors.
func (c *compiler) skippedPattern(pat string) bool {
	svc, _, _ := strings.Cut(pat, ".")
	return c.skipped[pat] || c.skipped[svc+".*"]
}

// patternPos is the position of pattern in the field ("include" or
// "exclude") of the selection at node sel, as written (the graph keeps
// patterns sorted).
func (c *compiler) patternPos(sel, fieldName, pattern string) graph.Pos {
	for i, p := range strList(field(c.at(sel), fieldName)) {
		if p == pattern {
			return c.index.lookup(join(sel, fieldName, itoa(i)))
		}
	}
	return c.index.lookup(join(sel, fieldName))
}

// latestPos is the position, among the graph nodes given, written last in
// the source (for a collision: usually the one just added). An operation
// with an explicit tool.name is positioned at that name.
func (c *compiler) latestPos(nodes []string) graph.Pos {
	var best graph.Pos
	for _, n := range nodes {
		p := c.index.lookup(n)
		if tn := join(n, "tool", "name"); c.index.has(tn) {
			p = c.index.pos[tn]
		}
		if !best.IsValid() || posLess(best, p) {
			best = p
		}
	}
	if !best.IsValid() {
		best = c.index.lookup("surfaces")
	}
	return best
}
