package compile

import (
	"encoding/json"
	"slices"

	"cuelang.org/go/cue"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// Field accessors. The schema package has already checked kinds and
// shapes, so absent or mistyped values simply read as zero.

func (c *compiler) at(p string) cue.Value { return c.root.LookupPath(cue.ParsePath(p)) }

func str(v cue.Value, field string) string {
	s, _ := v.LookupPath(cue.MakePath(cue.Str(field))).String()
	return s
}

func boolField(v cue.Value, field string) bool {
	b, _ := v.LookupPath(cue.MakePath(cue.Str(field))).Bool()
	return b
}

func boolPtr(v cue.Value, field string) *bool {
	f := v.LookupPath(cue.MakePath(cue.Str(field)))
	if !f.Exists() {
		return nil
	}
	b, err := f.Bool()
	if err != nil {
		return nil
	}
	return &b
}

func strList(v cue.Value) []string {
	var out []string
	iter, err := v.List()
	if err != nil {
		return nil
	}
	for iter.Next() {
		if s, err := iter.Value().String(); err == nil {
			out = append(out, s)
		}
	}
	return out
}

// keys returns the regular field names of the struct at v, sorted by
// UTF-16 code units.
func keys(v cue.Value) []string {
	if !v.Exists() {
		return nil
	}
	iter, err := v.Fields()
	if err != nil {
		return nil
	}
	var out []string
	for iter.Next() {
		if iter.Selector().LabelType() != cue.StringLabel {
			continue // a list index or pattern: no name
		}
		out = append(out, iter.Selector().Unquoted())
	}
	graph.SortUTF16(out)
	return out
}

// nodeValues memoises the lookups of one node's fields: the builder and
// the checks read the same fields of a node several times, and each
// lookup costs (one of an absent field builds an error value).
type nodeValues struct {
	v    cue.Value
	memo map[nodeLabel]cue.Value
}

type nodeLabel struct {
	name  string
	isDef bool
}

func newNodeValues(v cue.Value) *nodeValues { return &nodeValues{v: v} }

// field is field(n.v, name), memoised.
func (n *nodeValues) field(name string) cue.Value { return n.get(nodeLabel{name, false}) }

// def is def(n.v, name), memoised.
func (n *nodeValues) def(name string) cue.Value { return n.get(nodeLabel{name, true}) }

func (n *nodeValues) get(l nodeLabel) cue.Value {
	if v, ok := n.memo[l]; ok {
		return v
	}
	var v cue.Value
	if l.isDef {
		v = def(n.v, l.name)
	} else {
		v = field(n.v, l.name)
	}
	if n.memo == nil {
		n.memo = map[nodeLabel]cue.Value{}
	}
	n.memo[l] = v
	return v
}

func def(v cue.Value, name string) cue.Value {
	return v.LookupPath(cue.MakePath(cue.Def(name)))
}

func field(v cue.Value, name string) cue.Value {
	return v.LookupPath(cue.MakePath(cue.Str(name)))
}

func join(parts ...string) string { return graph.NodePath(parts...) }

// build converts the validated CUE value into a graph and runs the graph
// checks.
func (c *compiler) build() *graph.Graph {
	g := &graph.Graph{
		GraphVersion:  graph.GraphVersion,
		DigestVersion: graph.DigestVersion,
		Generator:     graph.Generator{Stitchkit: GeneratorName, CUE: cueVersion()},
		Name:          str(c.root, "name"),
		Version:       str(c.root, "version"),
		Info: graph.Info{
			Title:       str(field(c.root, "info"), "title"),
			Description: str(field(c.root, "info"), "description"),
		},
		Errors:       []graph.ErrorCode{},
		Services:     []graph.Service{},
		RuntimeTools: []graph.RuntimeTool{},
		CliCommands:  []graph.CliCommand{},
		Realtime:     []graph.RealtimeContract{},
		Schemas:      map[graph.Digest]json.RawMessage{},
		Sources:      map[string]graph.Pos{},
	}
	c.g = g
	contractMeta := c.meta(field(c.root, "meta"))

	errs := field(c.root, "errors")
	for _, code := range keys(errs) {
		if c.isBroken(join("errors", code)) {
			continue
		}
		e := field(errs, code)
		status, _ := field(e, "status").Int64()
		g.Errors = append(g.Errors, graph.ErrorCode{Code: code, Status: int(status), Message: str(e, "message")})
		c.source(join("errors", code))
	}

	services := field(c.root, "services")
	for _, name := range keys(services) {
		sv := field(services, name)
		sp := join("services", name)
		if c.serviceBroken(sp) {
			c.skip(name + ".*")
			continue
		}
		c.source(sp)
		s := graph.Service{Name: name, Prefix: str(sv, "prefix"), Scope: str(sv, "scope"), Operations: []graph.Operation{}}
		if s.Prefix == "" {
			s.Prefix = "/" + name
		}
		if seg := uncleanSegment(s.Prefix); seg != "" {
			c.reportAt(join(sp, "prefix"), "path-clean", "%s: prefix %q has a %q segment; net/http serves only clean paths: remove it", sp, s.Prefix, seg)
		}
		if name == "runtime" {
			c.reportAt(sp, "service-name", "%s: the service name \"runtime\" is reserved (selection patterns name runtime tools as runtime.NAME): rename the service", sp)
		}
		if s.Scope == "" {
			s.Scope = "public"
		}
		serviceMeta := mergeMeta(contractMeta, c.meta(field(sv, "meta")))
		ops := field(sv, "operations")
		for _, action := range keys(ops) {
			if c.isBroken(join(sp, "operations", action)) {
				c.skip(name + "." + action)
				continue
			}
			s.Operations = append(s.Operations, c.operation(&s, action, field(ops, action), join(sp, "operations", action), serviceMeta))
		}
		g.Services = append(g.Services, s)
	}

	rts := field(c.root, "runtimeTools")
	for _, name := range keys(rts) {
		rv := field(rts, name)
		np := join("runtimeTools", name)
		if c.isBroken(np) {
			c.skip("runtime." + name)
			continue
		}
		c.source(np)
		rn := newNodeValues(rv)
		id := field(rv, "identity")
		rt := graph.RuntimeTool{
			Name: name,
			Desc: str(rv, "desc"),
			Identity: graph.Identity{
				Service: str(id, "service"), Action: str(id, "action"),
				Method: str(id, "method"), Scope: str(id, "scope"),
			},
			Meta:        rawMeta(mergeMeta(contractMeta, c.meta(field(rv, "meta")))),
			Transports:  transports(field(rv, "transports"), []graph.Transport{graph.MCP, graph.AGENT}),
			Annotations: annotations(field(rv, "annotations")),
			Examples:    c.examples(rn.field("examples"), join(np, "examples"), c.checkExampleSchemas(rn, np, "the runtime tool", "output")),
		}
		if rt.Identity.Scope == "" {
			rt.Identity.Scope = "public"
		}
		rt.Input = c.defSchema(rn, "input", np)
		rt.Output = c.defSchema(rn, "output", np)

		g.RuntimeTools = append(g.RuntimeTools, rt)
	}

	cmds := field(c.root, "cliCommands")
	for _, name := range keys(cmds) {
		cv := field(cmds, name)
		np := join("cliCommands", name)
		if c.isBroken(np) {
			continue
		}
		c.source(np)
		g.CliCommands = append(g.CliCommands, graph.CliCommand{
			Name: name, Desc: str(cv, "desc"),
			Input: c.defSchema(newNodeValues(cv), "input", np), Output: c.defSchema(newNodeValues(cv), "output", np),
		})
	}

	if c.isBroken("surfaces") || c.isBroken("policy") {
		c.skipSurfaces = true
	} else {
		c.surfaces()
		c.policy()
	}

	rt := field(c.root, "realtime")
	for _, name := range keys(rt) {
		rv := field(rt, name)
		np := join("realtime", name)
		if c.isBroken(np) {
			continue
		}
		c.source(np)
		rc := graph.RealtimeContract{Name: name, ServerToClient: []graph.Event{}, ClientToServer: []graph.Event{}}
		for _, dir := range []string{graph.ServerToClient, graph.ClientToServer} {
			evs := field(rv, dir)
			for _, ev := range keys(evs) {
				ep := join(np, dir, ev)
				c.source(ep)
				evv := field(evs, ev)
				en := newNodeValues(evv)
				e := graph.Event{
					Name:     ev,
					Desc:     str(evv, "desc"),
					Args:     c.defSchema(en, "args", ep),
					Ack:      c.defSchema(en, "ack", ep),
					Examples: c.examples(en.field("examples"), join(ep, "examples"), c.checkExampleSchemas(en, ep, "the event", "ack")),
				}
				if dir == graph.ServerToClient {
					rc.ServerToClient = append(rc.ServerToClient, e)
				} else {
					rc.ClientToServer = append(rc.ClientToServer, e)
				}
			}
		}
		g.Realtime = append(g.Realtime, rc)
	}

	// Every label the contract's own files declare, definitions and the
	// fields inside schemas included (#Task.priority,
	// services.tasks.operations.create.#input.title): stitch diff places a
	// finding on the line that changed, where GitHub shows annotations.
	for p, pos := range c.index.pos {
		if _, ok := g.Sources[p]; !ok && p != "" {
			g.Sources[p] = pos
		}
	}
	c.checks()
	return g
}

// serviceBroken reports whether CUE reported an error in the service at
// sp itself (its name, prefix, scope or meta) rather than only inside some
// of its operations.
func (c *compiler) serviceBroken(sp string) bool {
	if c.errAt[sp] || c.errAt[join(sp, "operations")] {
		return true
	}
	for _, f := range []string{"prefix", "scope", "meta"} {
		if c.isBroken(join(sp, f)) {
			return true
		}
	}
	return false
}

func (c *compiler) operation(s *graph.Service, action string, ov cue.Value, np string, serviceMeta map[string]json.RawMessage) graph.Operation {
	c.mark("compiling the operation", np)
	c.source(np)
	n := newNodeValues(ov)
	op := graph.Operation{
		Service:  s.Name,
		Action:   action,
		Method:   str(ov, "method"),
		Path:     str(ov, "path"),
		Desc:     str(ov, "desc"),
		Scope:    str(ov, "scope"),
		Expose:   transports(n.field("expose"), []graph.Transport{graph.HTTP, graph.MCP, graph.AGENT}),
		Meta:     rawMeta(mergeMeta(serviceMeta, c.meta(field(ov, "meta")))),
		Examples: c.examples(n.field("examples"), join(np, "examples"), c.checkExampleSchemas(n, np, "the operation", "input", "output")),
	}
	if op.Scope == "" {
		op.Scope = s.Scope
	}
	if op.Method == "HEAD" && !n.field("expose").Exists() {
		// HEAD is a raw HTTP route, never a tool: its default exposure
		// is HTTP alone.
		op.Expose = []graph.Transport{graph.HTTP}
	}
	if errs := strList(n.field("errors")); len(errs) > 0 {
		graph.SortUTF16(errs)
		op.Errors = slices.Compact(errs)
	}
	if tv := field(ov, "tool"); tv.Exists() {
		op.Tool = &graph.Tool{Name: str(tv, "name"), Annotations: annotations(field(tv, "annotations"))}
	}
	op.Params = c.defSchema(n, "params", np)
	op.Query = c.defSchema(n, "query", np)
	op.Input = c.defSchema(n, "input", np)
	op.Output = c.defSchema(n, "output", np)
	c.checkOperation(&op, n, np)
	return op
}

// defSchema returns the digest of the schema held by definition field
// #name of n, or "" when n has none.
func (c *compiler) defSchema(n *nodeValues, name, np string) graph.Digest {
	d := n.def(name)
	if !d.Exists() {
		return ""
	}
	node := join(np, "#"+name)
	c.source(node)
	return c.schemaFor(d, node)
}

func (c *compiler) source(node string) {
	if p := c.index.lookup(node); p.IsValid() {
		c.g.Sources[node] = p
	}
}

// transports reads an expose/transports list in canonical order, or def
// when absent.
func transports(v cue.Value, def []graph.Transport) []graph.Transport {
	if !v.Exists() {
		return slices.Clone(def)
	}
	set := map[graph.Transport]bool{}
	for _, s := range strList(v) {
		set[graph.Transport(s)] = true
	}
	out := []graph.Transport{}
	for _, t := range graph.Transports {
		if set[t] {
			out = append(out, t)
		}
	}
	return out
}

func annotations(v cue.Value) *graph.Annotations {
	if !v.Exists() {
		return nil
	}
	a := &graph.Annotations{
		Title:           str(v, "title"),
		ReadOnlyHint:    boolPtr(v, "readOnlyHint"),
		DestructiveHint: boolPtr(v, "destructiveHint"),
		IdempotentHint:  boolPtr(v, "idempotentHint"),
		OpenWorldHint:   boolPtr(v, "openWorldHint"),
	}
	if *a == (graph.Annotations{}) {
		return nil
	}
	return a
}

// meta returns the fields of a meta struct as canonical JSON values, or
// nil when the struct is absent.
func (c *compiler) meta(v cue.Value) map[string]json.RawMessage {
	if !v.Exists() {
		return nil
	}
	out := map[string]json.RawMessage{}
	iter, err := v.Fields()
	if err != nil {
		return out
	}
	for iter.Next() {
		b, err := iter.Value().MarshalJSON()
		if err != nil {
			continue
		}
		if cb, err := graph.Canonical(json.RawMessage(b)); err == nil {
			if iter.Selector().LabelType() != cue.StringLabel {
				continue // a list index or pattern: no name
			}
			out[iter.Selector().Unquoted()] = cb
		}
	}
	return out
}

// mergeMeta is the one-level shallow merge: inner keys override outer ones;
// nil when neither side declared meta.
func mergeMeta(outer, inner map[string]json.RawMessage) map[string]json.RawMessage {
	if outer == nil && inner == nil {
		return nil
	}
	out := map[string]json.RawMessage{}
	for k, v := range outer {
		out[k] = v
	}
	for k, v := range inner {
		out[k] = v
	}
	return out
}

func rawMeta(m map[string]json.RawMessage) json.RawMessage {
	if m == nil {
		return nil
	}
	b, err := graph.Canonical(m)
	if err != nil {
		return nil
	}
	return b
}

// examples returns each example as canonical JSON.
// examples reads the examples at v (np); skip holds the indexes of
// examples already reported for a part without a schema, which do not
// marshal (their part refers to an absent schema).
func (c *compiler) examples(v cue.Value, np string, skip map[int]bool) []json.RawMessage {
	if !v.Exists() {
		return nil
	}
	iter, err := v.List()
	if err != nil {
		return nil
	}
	var out []json.RawMessage
	for i := 0; iter.Next(); i++ {
		if skip[i] {
			continue
		}
		b, err := iter.Value().MarshalJSON()
		if err == nil {
			b, err = graph.Canonical(json.RawMessage(b))
		}
		if err != nil {
			c.reportAt(join(np, itoa(i)), "example", "%s.%d: example is not plain JSON data: %v", np, i, oneLine(err))
			continue
		}
		out = append(out, b)
	}
	return out
}

func selection(v cue.Value) *graph.Selection {
	if !v.Exists() {
		return nil
	}
	norm := func(l []string) []string {
		if len(l) == 0 {
			return nil
		}
		graph.SortUTF16(l)
		return slices.Compact(l)
	}
	sel := &graph.Selection{Include: norm(strList(field(v, "include"))), Exclude: norm(strList(field(v, "exclude")))}
	if sel.Include == nil && field(v, "include").Exists() {
		sel.Include = []string{} // include: [] selects nothing (absent: everything)
	}
	return sel
}

func (c *compiler) surfaces() {
	sv := field(c.root, "surfaces")
	if !sv.Exists() {
		return
	}
	c.source("surfaces")
	s := &c.g.Surfaces
	if mv := field(sv, "mcp"); mv.Exists() {
		s.MCP = &graph.MCPSurfaces{Default: selection(field(mv, "default"))}
		named := field(mv, "named")
		for _, name := range keys(named) {
			c.source(join("surfaces", "mcp", "named", name))
			s.MCP.Named = append(s.MCP.Named, graph.NamedSelection{Name: name, Selection: *selection(field(named, name))})
		}
		if s.MCP.Default != nil {
			c.source("surfaces.mcp.default")
		}
	}
	s.Agent = selection(field(sv, "agent"))
	s.CLI = selection(field(sv, "cli"))
}

func (c *compiler) policy() {
	pv := field(c.root, "policy")
	mv, av := field(pv, "mcp"), field(pv, "agent")
	p := &c.g.Policy
	p.MCP = graph.MCPPolicy{
		FlattenUnionInput:      boolField(mv, "flattenUnionInput"),
		SchemaValidation:       str(mv, "schemaValidation"),
		RequireTypedProperties: boolField(mv, "requireTypedProperties"),
		AllowUntyped:           sortedSet(strList(field(mv, "allowUntyped"))),
		RequirePortableFormats: boolField(mv, "requirePortableFormats"),
		AllowFormats:           sortedSet(strList(field(mv, "allowFormats"))),
	}
	if p.MCP.SchemaValidation == "" {
		p.MCP.SchemaValidation = graph.ValidationThrow
	}
	p.Agent = graph.AgentPolicy{FlattenUnionInput: boolField(av, "flattenUnionInput"), Strict: boolField(av, "strict")}
	if pv.Exists() {
		c.source("policy")
	}
}

func sortedSet(l []string) []string {
	if len(l) == 0 {
		return nil
	}
	graph.SortUTF16(l)
	return slices.Compact(l)
}
