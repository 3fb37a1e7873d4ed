package compile

import (
	"slices"
	"strings"

	"cuelang.org/go/cue"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/project"
)

// checkOperation runs the per-operation graph checks and synthesises
// #params when the path has names and the operation declares none.
func (c *compiler) checkOperation(op *graph.Operation, ov cue.Value, np string) {
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
		for _, n := range names {
			if !params.LookupPath(cue.MakePath(cue.Str(n))).Exists() {
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
		c.checkQuery(q, join(np, "#query"))
	}
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
func (c *compiler) checkQuery(q cue.Value, node string) {
	if q.IncompleteKind() != cue.StructKind {
		c.report(c.index.lookup(node), "query-scalar", "%s: #query must be a struct of scalar or list-of-scalar fields", node)
		return
	}
	iter, err := q.Fields(cue.Optional(true))
	if err != nil {
		return
	}
	for iter.Next() {
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

func scalarKind(k cue.Kind) bool {
	return k != cue.BottomKind && k&^(cue.StringKind|cue.NumberKind|cue.BoolKind|cue.NullKind) == 0
}

// routeShape replaces parameter names so {a} and {b} in the same position
// compare equal.
func routeShape(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			if strings.HasSuffix(s, "...}") {
				segs[i] = "{...}"
			} else {
				segs[i] = "{}"
			}
		}
	}
	return strings.Join(segs, "/")
}

// member is one entry of a tool surface.
type member struct {
	id      string // "service.action" or "runtime.NAME" or "cli.NAME"
	name    string
	node    string
	err     error
	runtime bool
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
		key := op.Method + " " + routeShape(full)
		if first, ok := routes[key]; ok {
			np := join("services", op.Service, "operations", op.Action)
			c.report(c.index.lookup(join(np, "path")), "duplicate-route", "%s: route %s %s is also served by %s (%s %s); change the path or the method",
				op.ID(), op.Method, full, first.ID(), first.Method, project.JoinPath(g.Service(first.Service).Prefix, first.Path))
			continue
		}
		routes[key] = op
	}
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
	for _, rt := range g.RuntimeTools {
		id := rt.Identity.Service + "." + rt.Identity.Action
		if other, ok := ids[id]; ok {
			c.report(c.index.lookup(join("runtimeTools", rt.Name, "identity")), "runtime-identity", "runtimeTools.%s: identity %s is already the identity of %s; identities must be unique", rt.Name, id, other)
			continue
		}
		ids[id] = "runtime tool " + rt.Name
	}
	c.checkSelections()
	c.checkToolNames()
}

// exposedTo reports whether the pattern target is on transport t.
func (c *compiler) checkSelections() {
	sv := field(c.root, "surfaces")
	if !sv.Exists() {
		return
	}
	type sel struct {
		node string
		t    graph.Transport
	}
	var sels []sel
	mv := field(sv, "mcp")
	if field(mv, "default").Exists() {
		sels = append(sels, sel{"surfaces.mcp.default", graph.MCP})
	}
	for _, name := range keys(field(mv, "named")) {
		sels = append(sels, sel{join("surfaces", "mcp", "named", name), graph.MCP})
	}
	if field(sv, "agent").Exists() {
		sels = append(sels, sel{"surfaces.agent", graph.AGENT})
	}
	if field(sv, "cli").Exists() {
		sels = append(sels, sel{"surfaces.cli", graph.CLI})
	}
	for _, s := range sels {
		v := c.at(s.node)
		for _, kind := range []string{"include", "exclude"} {
			for i, pat := range strList(field(v, kind)) {
				if strings.Contains(pat, "*") {
					continue
				}
				where := c.index.lookup(join(s.node, kind, itoa(i)))
				svc, act, _ := strings.Cut(pat, ".")
				if svc == "runtime" {
					rt := c.runtimeTool(act)
					switch {
					case rt == nil:
						c.report(where, "selection-unknown", "%s.%s: %q names no runtime tool", s.node, kind, pat)
					case !slices.Contains(rt.Transports, s.t):
						c.report(where, "selection-not-exposed", "%s.%s: runtime tool %s is not on %s (transports %v); add %q to its transports or drop the pattern", s.node, kind, act, s.t, rt.Transports, s.t)
					}
					continue
				}
				op := c.g.Operation(svc, act)
				switch {
				case op == nil:
					c.report(where, "selection-unknown", "%s.%s: %q names no operation", s.node, kind, pat)
				case !op.Exposed(s.t) || op.Method == "HEAD":
					c.report(where, "selection-not-exposed", "%s.%s: operation %s is not exposed to %s (expose %v); add %q to its expose or drop the pattern", s.node, kind, pat, s.t, op.Expose, s.t)
				}
			}
		}
	}
}

func (c *compiler) runtimeTool(name string) *graph.RuntimeTool {
	for i := range c.g.RuntimeTools {
		if c.g.RuntimeTools[i].Name == name {
			return &c.g.RuntimeTools[i]
		}
	}
	return nil
}

// globMatch matches name against a pattern whose only metacharacter is '*'.
func globMatch(pattern, name string) bool {
	if !strings.Contains(pattern, "*") {
		return pattern == name
	}
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(name, parts[0]) {
		return false
	}
	name = name[len(parts[0]):]
	for i, p := range parts[1:] {
		if i == len(parts)-2 {
			return strings.HasSuffix(name, p) && len(name) >= len(p)
		}
		j := strings.Index(name, p)
		if j < 0 {
			return false
		}
		name = name[j+len(p):]
	}
	return true
}

func patternMatches(pattern, svc, act string, runtime bool) bool {
	ps, pa, _ := strings.Cut(pattern, ".")
	if runtime {
		return ps == "runtime" && globMatch(pa, act)
	}
	return ps != "runtime" && globMatch(ps, svc) && globMatch(pa, act)
}

func selected(sel *graph.Selection, svc, act string, runtime bool) bool {
	if sel == nil {
		return true
	}
	in := sel.Include == nil
	for _, p := range sel.Include {
		if patternMatches(p, svc, act, runtime) {
			in = true
			break
		}
	}
	if !in {
		return false
	}
	for _, p := range sel.Exclude {
		if patternMatches(p, svc, act, runtime) {
			return false
		}
	}
	return true
}

// checkToolNames checks tool names per surface: validity on MCP and AGENT,
// and uniqueness within each surface (default or named MCP surface, AGENT,
// CLI including native CLI commands).
func (c *compiler) checkToolNames() {
	g := c.g
	type surface struct {
		label string
		t     graph.Transport
		sel   *graph.Selection
	}
	var surfaces []surface
	switch m := g.Surfaces.MCP; {
	case m == nil:
		surfaces = append(surfaces, surface{"MCP", graph.MCP, nil})
	case len(m.Named) > 0:
		for _, n := range m.Named {
			surfaces = append(surfaces, surface{"MCP surface " + n.Name, graph.MCP, &n.Selection})
		}
	default:
		surfaces = append(surfaces, surface{"MCP", graph.MCP, m.Default})
	}
	surfaces = append(surfaces, surface{"AGENT", graph.AGENT, g.Surfaces.Agent}, surface{"CLI", graph.CLI, g.Surfaces.CLI})
	for _, s := range surfaces {
		var members []member
		for _, op := range g.Operations() {
			if !op.Exposed(s.t) || op.Method == "HEAD" || !selected(s.sel, op.Service, op.Action, false) {
				continue
			}
			explicit := ""
			node := join("services", op.Service, "operations", op.Action)
			if op.Tool != nil && op.Tool.Name != "" {
				explicit = op.Tool.Name
				node = join(node, "tool", "name")
			}
			name, err := project.ResolveToolName(op.Service, op.Action, explicit, s.t)
			members = append(members, member{id: "operation " + op.ID(), name: name, node: node, err: err})
		}
		for _, rt := range g.RuntimeTools {
			if !slices.Contains(rt.Transports, s.t) || !selected(s.sel, "runtime", rt.Name, true) {
				continue
			}
			var err error
			if s.t != graph.CLI {
				err = project.ValidToolName(rt.Name)
			}
			members = append(members, member{id: "runtime tool " + rt.Name, name: rt.Name, node: join("runtimeTools", rt.Name), err: err, runtime: true})
		}
		if s.t == graph.CLI {
			for _, cmd := range g.CliCommands {
				members = append(members, member{id: "CLI command " + cmd.Name, name: cmd.Name, node: join("cliCommands", cmd.Name)})
			}
		}
		byName := map[string]member{}
		for _, m := range members {
			if m.err != nil {
				c.report(c.index.lookup(m.node), "tool-name", "%s on %s: %v", m.id, s.t, m.err)
			}
			if first, ok := byName[m.name]; ok {
				c.report(c.index.lookup(m.node), "tool-name-collision", "%s: %s and %s both have the tool name %q; set a distinct tool.name on one of them", s.label, first.id, m.id, m.name)
				continue
			}
			byName[m.name] = m
		}
	}
}
