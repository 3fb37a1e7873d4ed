package review

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"stitchkit.dev/stitchkit/internal/schematree"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/project"
)

// comparer holds both sides while the steps run.
type comparer struct {
	old, new             *graph.Graph
	oldTools, newTools   *project.Tools
	oldRoutes, newRoutes map[string]project.Route
	// renamedTo maps the id of an old operation to the new id it was
	// renamed to (see renames).
	renamedTo map[string]string
	// errorRenamedTo maps an error code that left the registry to the code
	// that replaced it (see errorRenames).
	errorRenamedTo map[string]string
	findings       []Finding
	vals           *valueChecker
	// defs index each side's named definitions by body (see rootDef);
	// built on first use.
	defs *defBodies
	// defDocs holds the definitions whose docs changed (see
	// changedDefDocs); built on first use.
	defDocs map[string][2]map[string]any
	// oldFields and newFields map each side's CUE definitions to their
	// field names (see sourceDef); built on first use.
	oldFields, newFields map[string][]string
}

func routesByOp(g *graph.Graph) map[string]project.Route {
	m := map[string]project.Route{}
	for _, r := range project.HTTPRoutes(g, project.HTTPOptions{}) {
		m[r.Op.ID()] = r
	}
	return m
}

// emit records a finding on one surface and returns it, so the caller can
// add what else it reaches.
func (c *comparer) emit(rule string, sev Severity, surface, surfaceKey, location string, pos graph.Pos, format string, a ...any) *Finding {
	c.findings = append(c.findings, Finding{Rule: rule, Severity: sev, Surface: surface, Location: location,
		Message: fmt.Sprintf(format, a...), Pos: pos, surfaceKey: surfaceKey})
	return &c.findings[len(c.findings)-1]
}

// on sets what a finding reaches: subjects and the other surfaces.
func (f *Finding) on(subjects []string, also []string) *Finding {
	f.Operations = subjects
	for _, s := range also {
		if s != f.Surface && !slices.Contains(f.AlsoAffects, s) {
			f.AlsoAffects = append(f.AlsoAffects, s)
		}
	}
	return f
}

// nodePath extends node path base by the property names and tuple
// positions in pointer: the CUE path of the value the pointer names.
func nodePath(base, pointer string) string {
	parts := []string{base}
	toks := strings.Split(strings.TrimPrefix(pointer, "/"), "/")
	for i := 0; i+1 < len(toks); i++ {
		// CUE labels are the names of "properties" and the positions of
		// "prefixItems" (list elements); other keywords name no label.
		switch k := schematree.Unescape(toks[i]); {
		case k == "properties", k == "prefixItems":
			parts = append(parts, schematree.Unescape(toks[i+1]))
			i++
		case schematree.KeywordKind(k) == schematree.Map, schematree.KeywordKind(k) == schematree.List:
			i++
		}
	}
	return strings.Join(parts, ".")
}

// pos returns the most specific recorded source position of node path base
// (extended by the property names and tuple positions in pointer) in g,
// trying shorter paths until one is known.
func pos(g *graph.Graph, base string, pointer string) graph.Pos {
	if g == nil || g.Sources == nil {
		return graph.Pos{}
	}
	for path := nodePath(base, pointer); path != ""; path = parentPath(path) {
		if p := g.Source(path); p.IsValid() {
			return p
		}
	}
	return graph.Pos{}
}

// parentPath drops the last label of a node path ("" at the top).
func parentPath(path string) string {
	i := strings.LastIndexByte(path, '.')
	if i < 0 {
		return ""
	}
	return path[:i]
}

// posEither prefers the new contract. For a node the new contract no
// longer has (a removed field) it is the line next to where the node was —
// a line the diff shows — else the old position. When the new side carries
// no positions at all (read from graph.json) it returns the zero Pos: an
// old file's line would point at the wrong place in the file under review.
func (c *comparer) posEither(base, pointer string) graph.Pos {
	if len(c.new.Sources) == 0 {
		return graph.Pos{}
	}
	path := nodePath(base, pointer)
	if !c.new.Source(path).IsValid() && c.old.Source(path).IsValid() {
		return c.neighbourPos(path)
	}
	if p := pos(c.new, base, pointer); p.IsValid() {
		return p
	}
	return pos(c.old, base, pointer)
}

// neighbourPos places a node the new contract no longer has: at the first
// of its old siblings after it that the new contract still has (the line
// that now stands where it stood), else the last one before it, else its
// parent — for a removed parent, the parent's neighbour. GitHub shows an
// annotation only on a line of the diff; a deleted line is not one, its
// neighbours are. With no positions on the new side it is the old
// position.
func (c *comparer) neighbourPos(path string) graph.Pos {
	if len(c.new.Sources) == 0 {
		return c.old.Source(path)
	}
	at := c.old.Source(path)
	parent := parentPath(path)
	type sib struct {
		key string
		p   graph.Pos
	}
	var before, after []sib
	for k, p := range c.old.Sources {
		if k == path || parentPath(k) != parent || (parent == "" && strings.Contains(k, ".")) || p.File != at.File {
			continue
		}
		if p.Line < at.Line || p.Line == at.Line && p.Col < at.Col {
			before = append(before, sib{k, p})
		} else {
			after = append(after, sib{k, p})
		}
	}
	order := func(a, b sib) int { return cmp.Or(cmp.Compare(a.p.Line, b.p.Line), cmp.Compare(a.p.Col, b.p.Col)) }
	slices.SortFunc(after, order)
	slices.SortFunc(before, func(a, b sib) int { return order(b, a) })
	for _, s := range append(after, before...) {
		if p := c.new.Source(s.key); p.IsValid() {
			return p
		}
	}
	switch {
	case parent == "":
		return at
	case c.new.Source(parent).IsValid():
		return c.new.Source(parent)
	}
	return c.neighbourPos(parent)
}

func opNode(op *graph.Operation) string {
	return graph.NodePath("services", op.Service, "operations", op.Action)
}

func (c *comparer) contract() error {
	if c.old.Name != c.new.Name {
		c.emit("contract-renamed", Warning, "contract", "", "contract", pos(c.new, "name", ""),
			"contract renamed from %q to %q: manifests, generated packages and documents are keyed by the name", c.old.Name, c.new.Name)
	}
	if c.old.Version != c.new.Version {
		c.emit("contract-version-changed", Info, "contract", "", "contract", pos(c.new, "version", ""),
			"version changed from %q to %q", c.old.Version, c.new.Version)
	}
	if c.old.Info != c.new.Info {
		c.emit("contract-info-changed", Info, "contract", "", "contract", pos(c.new, "info", ""), "title or description changed")
	}
	return nil
}

// declaring lists the operations of g that declare error code, and their
// HTTP routes (where the status travels) from routes.
func declaring(g *graph.Graph, routes map[string]project.Route, code string) (ops, surfaces []string) {
	if g == nil {
		return nil, nil
	}
	for _, op := range g.Operations() {
		if !slices.Contains(op.Errors, code) {
			continue
		}
		ops = append(ops, op.ID())
		if r, ok := routes[op.ID()]; ok {
			surfaces = append(surfaces, "HTTP "+r.Pattern())
		}
	}
	return ops, surfaces
}

func (c *comparer) errors() error {
	oldE := map[string]graph.ErrorCode{}
	for _, e := range c.old.Errors {
		oldE[e.Code] = e
	}
	newE := map[string]graph.ErrorCode{}
	for _, e := range c.new.Errors {
		newE[e.Code] = e
	}
	c.errorRenames(oldE, newE)
	for _, code := range unionKeys(oldE, newE) {
		o, inOld := oldE[code]
		n, inNew := newE[code]
		surface := "error " + code
		node := graph.NodePath("errors", code)
		if to, ok := c.errorRenamedTo[code]; ok {
			ops, _ := declaring(c.new, c.newRoutes, to)
			var also []string
			for _, op := range ops {
				also = append(also, c.visibleOn(op)...)
			}
			slices.SortStableFunc(also, compareSurfaces)
			c.emit("error-renamed", Breaking, "error "+to, "", code, c.posEither(graph.NodePath("errors", to), ""),
				"error code %s renamed to %s (status %d, declared by %s): callers branching on %s never see it again, and get a code they do not know",
				code, to, o.Status, strings.Join(ops, ", "), code).on(ops, slices.Compact(also))
			continue
		}
		if c.renamedError(code) {
			continue // reported with the code it replaced
		}
		switch {
		case !inOld:
			c.emit("error-added", Info, surface, "", code, pos(c.new, node, ""), "error code %s (status %d) added", code, n.Status)
		case !inNew:
			if fw, ok := graph.FrameworkError(code); ok && fw.Status == o.Status {
				continue // still served by the framework registry with the same status
			}
			c.emit("error-removed", Info, surface, "", code, c.removalPos(node, false), "error code %s removed from the contract", code)
		default:
			if o.Status != n.Status {
				// The status travels on HTTP only: tool results carry the
				// code. Name the operations (and routes) that can answer
				// with it.
				ops, routes := declaring(c.new, c.newRoutes, code)
				slices.SortStableFunc(routes, compareSurfaces)
				where := "no operation declares it"
				if len(ops) > 0 {
					where = "returned by " + strings.Join(ops, ", ")
				}
				c.emit("error-status-changed", Breaking, surface, "", code, c.posField(node, "status"),
					"status of %s changed from %d to %d (%s): HTTP callers branching on the status break", code, o.Status, n.Status, where).on(ops, routes)
			}
			if o.Message != n.Message {
				ops, _ := declaring(c.new, c.newRoutes, code)
				c.emit("error-message-changed", Info, surface, "", code, c.posField(node, "message"),
					"message of %s changed from %q to %q", code, o.Message, n.Message).on(ops, nil)
			}
		}
	}
	return nil
}

// errorRenames pairs application error codes that left the registry with
// codes that arrived, when nothing but the name changed for callers: the
// same status, declared by exactly the same operations. A pair must be
// unambiguous both ways.
func (c *comparer) errorRenames(oldE, newE map[string]graph.ErrorCode) {
	c.errorRenamedTo = map[string]string{}
	declares := func(g *graph.Graph, code string) string {
		ops, _ := declaring(g, nil, code)
		return strings.Join(ops, ",")
	}
	var gone, arrived []string
	for _, code := range unionKeys(oldE, newE) {
		_, inOld := oldE[code]
		_, inNew := newE[code]
		switch {
		case inOld && !inNew:
			gone = append(gone, code)
		case inNew && !inOld:
			arrived = append(arrived, code)
		}
	}
	same := func(from, to string) bool {
		d := declares(c.old, from)
		return oldE[from].Status == newE[to].Status && d != "" && d == declares(c.new, to)
	}
	for _, from := range gone {
		var cands []string
		for _, to := range arrived {
			if same(from, to) {
				cands = append(cands, to)
			}
		}
		if len(cands) != 1 {
			continue
		}
		back := 0
		for _, other := range gone {
			if same(other, cands[0]) {
				back++
			}
		}
		if back == 1 {
			c.errorRenamedTo[from] = cands[0]
		}
	}
}

// renamedError reports whether code is the new name of a renamed code.
func (c *comparer) renamedError(code string) bool {
	for _, to := range c.errorRenamedTo {
		if to == code {
			return true
		}
	}
	return false
}

// primarySurface names where callers meet an operation first: its HTTP
// route, else its first tool row, else the operation itself.
func (c *comparer) primarySurface(id string) string {
	if r, ok := c.newRoutes[id]; ok {
		return "HTTP " + r.Pattern()
	}
	if r, ok := c.oldRoutes[id]; ok {
		return "HTTP " + r.Pattern()
	}
	for _, ts := range []*project.Tools{c.newTools, c.oldTools} {
		for i := range ts.Surfaces {
			s := &ts.Surfaces[i]
			for j := range s.Tools {
				if toolKey(&s.Tools[j]) == id {
					return toolSurface(s, &s.Tools[j])
				}
			}
		}
	}
	return "operation " + id
}

// sortedSurfaces returns the surfaces of s in transport order, so every
// surface pointing at the same change is listed the same way.
func sortedSurfaces(s *project.Tools) []*project.Surface {
	surfaces := make([]*project.Surface, 0, len(s.Surfaces))
	for i := range s.Surfaces {
		surfaces = append(surfaces, &s.Surfaces[i])
	}
	slices.SortStableFunc(surfaces, func(a, b *project.Surface) int {
		return cmp.Or(graph.CompareUTF16(string(a.Transport), string(b.Transport)), graph.CompareUTF16(a.Name, b.Name))
	})
	return surfaces
}

// visibleOn labels every surface where the operation or runtime tool id is
// visible, like Finding.Surface: its HTTP route first, then its tool rows by
// transport (AGENT, CLI, MCP) and surface name. It reads the new contract's
// projection, or the old one when id is visible nowhere in the new contract
// (a removal).
func (c *comparer) visibleOn(id string) []string {
	sides := []struct {
		routes map[string]project.Route
		tools  *project.Tools
	}{{c.newRoutes, c.newTools}, {c.oldRoutes, c.oldTools}}
	for _, side := range sides {
		var out []string
		if r, ok := side.routes[id]; ok {
			out = append(out, "HTTP "+r.Pattern())
		}
		for _, s := range sortedSurfaces(side.tools) {
			for j := range s.Tools {
				if toolKey(&s.Tools[j]) == id {
					out = append(out, toolSurface(s, &s.Tools[j]))
				}
			}
		}
		if len(out) > 0 {
			return slices.Compact(out)
		}
	}
	return nil
}

// sharedToolRows labels the tool rows (MCP, AGENT, CLI) of the operation or
// runtime tool that are on the same surface in both contracts (oldID in
// the old one, id in the new one), by their new names: the tool callers
// who see a change of its schemas.
func (c *comparer) sharedToolRows(oldID, id string) []string {
	var out []string
	for _, ns := range sortedSurfaces(c.newTools) {
		os := c.oldTools.Surface(ns.Transport, ns.Name)
		if os == nil {
			continue
		}
		var had bool
		for j := range os.Tools {
			if toolKey(&os.Tools[j]) == oldID {
				had = true
			}
		}
		if !had {
			continue
		}
		for j := range ns.Tools {
			if toolKey(&ns.Tools[j]) == id {
				out = append(out, toolSurface(ns, &ns.Tools[j]))
			}
		}
	}
	return out
}

// exposedAsTool reports whether op is exposed to any tool transport.
func exposedAsTool(op *graph.Operation) bool {
	return op.Exposed(graph.MCP) || op.Exposed(graph.AGENT) || op.Exposed(graph.CLI)
}

func (c *comparer) operations() error {
	oldOps := map[string]*graph.Operation{}
	for _, op := range c.old.Operations() {
		oldOps[op.ID()] = op
	}
	newOps := map[string]*graph.Operation{}
	for _, op := range c.new.Operations() {
		newOps[op.ID()] = op
	}
	renamedFrom := c.renames(oldOps, newOps)
	for _, id := range unionKeys(oldOps, newOps) {
		o, n := oldOps[id], newOps[id]
		if n == nil && c.renamedTo[id] != "" {
			continue // compared with the operation it was renamed to
		}
		oldID := id
		if from, ok := renamedFrom[id]; ok {
			oldID, o = from, oldOps[from]
		}
		if err := c.operation(oldID, id, o, n); err != nil {
			return err
		}
	}
	return nil
}

// renames pairs operations removed from the old contract with operations
// added to the new one that no caller can tell apart from them: the same
// HTTP method and route shape (graph.PathShape), or — for operations on no
// HTTP route — the same tool names on the same surfaces. A pair must be
// unambiguous both ways. It sets c.renamedTo and returns new id → old id.
func (c *comparer) renames(oldOps, newOps map[string]*graph.Operation) map[string]string {
	c.renamedTo = map[string]string{}
	var removed, added []string
	for _, id := range unionKeys(oldOps, newOps) {
		switch {
		case newOps[id] == nil:
			removed = append(removed, id)
		case oldOps[id] == nil:
			added = append(added, id)
		}
	}
	if len(removed) == 0 || len(added) == 0 {
		return nil
	}
	same := func(oldID, newID string) bool {
		or, oHTTP := c.oldRoutes[oldID]
		nr, nHTTP := c.newRoutes[newID]
		if oHTTP != nHTTP {
			return false
		}
		if oHTTP {
			return or.Method == nr.Method && graph.PathShape(or.Path) == graph.PathShape(nr.Path)
		}
		ot, nt := toolRows(c.oldTools, oldID), toolRows(c.newTools, newID)
		return len(ot) > 0 && slices.Equal(ot, nt)
	}
	matches := func(among []string, f func(string) bool) []string {
		var out []string
		for _, other := range among {
			if f(other) {
				out = append(out, other)
			}
		}
		return out
	}
	from := map[string]string{}
	for _, oldID := range removed {
		cands := matches(added, func(newID string) bool { return same(oldID, newID) })
		if len(cands) != 1 {
			continue
		}
		newID := cands[0]
		if back := matches(removed, func(o string) bool { return same(o, newID) }); len(back) != 1 {
			continue
		}
		from[newID] = oldID
		c.renamedTo[oldID] = newID
	}
	return from
}

// toolRows lists the tool rows of operation id as "surface\x00name",
// sorted.
func toolRows(ts *project.Tools, id string) []string {
	var out []string
	for i := range ts.Surfaces {
		s := &ts.Surfaces[i]
		for j := range s.Tools {
			if toolKey(&s.Tools[j]) == id {
				out = append(out, surfaceKeyOf(s)+"\x00"+s.Tools[j].Name)
			}
		}
	}
	slices.Sort(out)
	return out
}

// operation compares operation o (oldID in the old contract) with n (id in
// the new one); the ids differ when the operation was renamed.
func (c *comparer) operation(oldID, id string, o, n *graph.Operation) error {
	or, oHTTP := c.oldRoutes[oldID]
	nr, nHTTP := c.newRoutes[id]
	subject := []string{id}
	switch {
	case oHTTP && !nHTTP:
		why := "operation removed"
		if n != nil {
			why = "operation no longer exposed on HTTP"
		}
		c.emit("http-operation-removed", Breaking, "HTTP "+or.Pattern(), "", id, c.membershipPos(id, nil),
			"%s: callers of %s break", why, or.Pattern()).on(subject, nil)
	case !oHTTP && nHTTP:
		c.emit("http-operation-added", Info, "HTTP "+nr.Pattern(), "", id, c.membershipPos(id, nil), "route %s added", nr.Pattern()).on(subject, nil)
	case oHTTP && nHTTP:
		surface := "HTTP " + nr.Pattern()
		if or.Method != nr.Method {
			c.emit("http-method-changed", Breaking, surface, "", id, c.posField(opNode(n), "method"),
				"method changed from %s to %s: callers using %s get 405", or.Method, nr.Method, or.Method).on(subject, nil)
		}
		if os, ns := successStatus(or.Op), successStatus(nr.Op); os == 204 && ns == 200 {
			// The body is new information (response-schema-added); the
			// status HTTP callers check is another one.
			c.emit("http-success-status-changed", Breaking, surface, "", id, c.posFirst(opNode(n)+".#output", opNode(n)),
				"success status changed from 204 No Content to 200 with a body: callers checking for 204 see a status they do not expect").on(subject, nil)
		}
		if or.Path != nr.Path {
			if graph.PathShape(or.Path) == graph.PathShape(nr.Path) {
				c.emit("http-path-parameter-renamed", Info, surface, "", id, c.posField(opNode(n), "path"),
					"path parameters renamed: %s became %s (same URLs)", or.Path, nr.Path).on(subject, nil)
			} else {
				at := c.posField(opNode(n), "path")
				prefixed := or.Op.Path == nr.Op.Path && or.Op.Service == nr.Op.Service
				if prefixed {
					// The operation's own path is unchanged: the service
					// prefix moved, on that line.
					at = c.posField(graph.NodePath("services", n.Service), "prefix")
				}
				f := c.emit("http-path-changed", Breaking, surface, "", id, at,
					"path changed from %s to %s: callers of the old URL get 404", or.Path, nr.Path).on(subject, nil)
				if prefixed {
					f.serviceEdit = &serviceEdit{service: n.Service, field: "prefix",
						from: strings.TrimSuffix(or.Path, or.Op.Path), to: strings.TrimSuffix(nr.Path, nr.Op.Path),
						routes: []string{or.Method + " " + or.Path + " → " + nr.Method + " " + nr.Path}}
				}
			}
		}
	}
	if o == nil || n == nil {
		return nil
	}
	// Everything below concerns the operation on every surface it is
	// visible on; the findings above each concern one route.
	node := opNode(n)
	opSurface := "operation " + id
	visible := c.visibleOn(id)
	whole := func(f *Finding) { f.on(subject, visible) }
	if oldID != id {
		whole(c.emit("operation-renamed", Warning, opSurface, "", id, pos(c.new, node, ""),
			"operation %s renamed to %s: callers see the same %s, but audit rows, hooks, authorization rules and generated handler names keyed on service.action change",
			oldID, id, map[bool]string{true: "route " + nr.Pattern(), false: "tool names"}[nHTTP]))
	}
	if o.Scope != n.Scope {
		// An inherited scope changed on the service's line.
		f := c.scopeChanged(opSurface, id, c.posFirst(node+".scope", graph.NodePath("services", n.Service, "scope"), node), o.Scope, n.Scope)
		whole(f)
		if c.inherits(oldID, id, "scope") {
			f.serviceEdit = &serviceEdit{service: n.Service, field: "scope", from: o.Scope, to: n.Scope}
		}
	}
	if o.Desc != n.Desc {
		whole(c.emit("operation-description-changed", Info, opSurface, "", id, c.posField(node, "desc"),
			"%s (HTTP summary, tool description and CLI help)", descChange(o.Desc, n.Desc)))
	}
	if !jsonRawEqual(o.Meta, n.Meta) {
		whole(c.emit("operation-meta-changed", Info, opSurface, "", id, c.posField(node, "meta"), "meta changed"))
	}
	if !jsonRawEqual(rawOf(annotationsOf(o)), rawOf(annotationsOf(n))) {
		whole(c.emit("tool-annotations-changed", Info, opSurface, "", id, c.posField(node, "tool"),
			"tool annotations changed from %s to %s (hints only)", string(rawOf(annotationsOf(o))), string(rawOf(annotationsOf(n)))))
	}
	if !slices.EqualFunc(o.Examples, n.Examples, func(a, b json.RawMessage) bool { return jsonRawEqual(a, b) }) {
		whole(c.emit("operation-examples-changed", Info, opSurface, "", id, c.posField(node, "examples"), "examples changed"))
	}
	primary := c.primarySurface(id)
	for _, code := range diffStrings(o.Errors, n.Errors) {
		if to, ok := c.errorRenamedTo[code]; ok && slices.Contains(n.Errors, to) {
			continue // the code was renamed: one error-renamed finding says it
		}
		whole(c.emit("operation-error-removed", Info, primary, "", id+"#/errors/"+code, c.posField(node, "errors"),
			"error %s is no longer declared by the operation", code))
	}
	for _, code := range diffStrings(n.Errors, o.Errors) {
		if c.renamedError(code) {
			continue
		}
		whole(c.emit("operation-error-added", Warning, primary, "", id+"#/errors/"+code, c.posField(node, "errors"),
			"error %s is now declared by the operation: callers may receive a code they do not handle", code))
	}
	return c.operationSchemas(oldID, id, o, n, or, nr, oHTTP && nHTTP)
}

// inherits reports whether operation id (oldID in the old contract) takes
// field from its service on both sides: no field of its own in either
// contract's sources (false when a side has no sources).
func (c *comparer) inherits(oldID, id, field string) bool {
	if len(c.old.Sources) == 0 || len(c.new.Sources) == 0 {
		return false
	}
	osvc, oact, _ := strings.Cut(oldID, ".")
	svc, act, _ := strings.Cut(id, ".")
	own := func(g *graph.Graph, svc, act string) bool {
		return g.Source(graph.NodePath("services", svc, "operations", act, field)).IsValid()
	}
	return !own(c.old, osvc, oact) && !own(c.new, svc, act) && c.new.Source(graph.NodePath("services", svc, field)).IsValid()
}

// serviceEdit marks a finding one edit of a service caused in each of its
// operations (a scope they inherit, the prefix of their routes): such
// findings are one finding (see groupServiceEdits).
type serviceEdit struct {
	service, field, from, to string
	routes                   []string // "METHOD old → METHOD new", for a prefix
}

// groupServiceEdits merges the findings of one service edit into one: the
// first operation's (by location), naming every operation and surface.
func (c *comparer) groupServiceEdits() {
	var out []Finding
	groups := map[string][]Finding{}
	for _, f := range c.findings {
		e := f.serviceEdit
		if e == nil {
			out = append(out, f)
			continue
		}
		key := f.Rule + "\x00" + e.service + "\x00" + e.field + "\x00" + e.from + "\x00" + e.to
		if groups[key] == nil {
			out = append(out, Finding{serviceEdit: &serviceEdit{service: key}}) // placeholder
		}
		groups[key] = append(groups[key], f)
	}
	for i := range out {
		e := out[i].serviceEdit
		if e == nil || out[i].Rule != "" {
			continue
		}
		members := groups[e.service]
		slices.SortStableFunc(members, func(a, b Finding) int { return graph.CompareUTF16(a.Location, b.Location) })
		f := members[0]
		if len(members) > 1 {
			var routes []string
			for _, m := range members {
				routes = append(routes, m.serviceEdit.routes...)
				if m.Surface != f.Surface && !slices.Contains(f.AlsoAffects, m.Surface) {
					f.AlsoAffects = append(f.AlsoAffects, m.Surface)
				}
				for _, s := range m.AlsoAffects {
					if s != f.Surface && !slices.Contains(f.AlsoAffects, s) {
						f.AlsoAffects = append(f.AlsoAffects, s)
					}
				}
				for _, s := range m.Operations {
					if !slices.Contains(f.Operations, s) {
						f.Operations = append(f.Operations, s)
					}
				}
			}
			graph.SortUTF16(f.Operations)
			graph.SortUTF16(routes)
			slices.SortStableFunc(f.AlsoAffects, compareSurfaces)
			me := f.serviceEdit
			switch me.field {
			case "scope":
				if me.to == "public" {
					f.Message = fmt.Sprintf("scope of service %s changed from %q to %q for its operations %s, which inherit it: access widened, review who can now call them",
						me.service, me.from, me.to, strings.Join(f.Operations, ", "))
				} else {
					f.Message = fmt.Sprintf("scope of service %s changed from %q to %q for its operations %s, which inherit it: callers authorised for %q may be refused",
						me.service, me.from, me.to, strings.Join(f.Operations, ", "), me.from)
				}
			case "prefix":
				f.Message = fmt.Sprintf("prefix of service %s changed from %s to %s, moving its routes (%s): callers of the old URLs get 404",
					me.service, me.from, me.to, strings.Join(routes, ", "))
			}
		}
		out[i] = f
	}
	c.findings = out
}

// groupToolRows merges the tool rows one edit added, removed or renamed:
// the same subject, rule and source line on several surfaces (an explicit
// tool.name on the Agent and every MCP surface, an expose list losing MCP)
// is one finding naming every row.
func (c *comparer) groupToolRows() {
	var out []Finding
	index := map[string]int{}
	for _, f := range c.findings {
		switch f.Rule {
		case "tool-added", "tool-removed", "tool-renamed":
		default:
			out = append(out, f)
			continue
		}
		key := f.Rule + "\x00" + f.Location + "\x00" + f.Pos.String()
		i, ok := index[key]
		if !ok {
			index[key] = len(out)
			out = append(out, f)
			continue
		}
		g := &out[i]
		if !slices.Contains(g.AlsoAffects, f.Surface) && f.Surface != g.Surface {
			g.AlsoAffects = append(g.AlsoAffects, f.Surface)
		}
		slices.SortStableFunc(g.AlsoAffects, compareSurfaces)
		if g.Message != f.Message {
			g.Message = strings.Replace(g.Message, "no longer on this surface", "no longer on these surfaces", 1)
			g.Message = strings.Replace(g.Message, "command ", "tool (and command) ", 1)
		}
	}
	c.findings = out
}

// successStatus is the status a route answers on success (as the HTTP
// mount and the OpenAPI export have it): 200 with a body or for HEAD, 204
// without one.
func successStatus(op *graph.Operation) int {
	if op.Output == "" && op.Method != http.MethodHead {
		return 204
	}
	return 200
}

// posFirst is the first of the node paths recorded in the new contract.
func (c *comparer) posFirst(paths ...string) graph.Pos {
	for _, p := range paths {
		if at := c.new.Source(p); at.IsValid() {
			return at
		}
	}
	return graph.Pos{}
}

// posField is the position of a field of node in the new contract, else of
// the node.
func (c *comparer) posField(node, field string) graph.Pos {
	if p := c.new.Source(node + "." + field); p.IsValid() {
		return p
	}
	return pos(c.new, node, "")
}

// scopeChanged classifies a scope change. Opening an operation to "public"
// is a warning (no caller breaks, but access widened and deserves review);
// any other change may lock out callers holding the old scope: breaking.
func (c *comparer) scopeChanged(surface, id string, p graph.Pos, from, to string) *Finding {
	if to == "public" {
		return c.emit("scope-changed", Warning, surface, "", id, p,
			"scope changed from %q to %q: access widened, review who can now call it", from, to)
	}
	return c.emit("scope-changed", Breaking, surface, "", id, p,
		"scope changed from %q to %q: callers authorised for %q may be refused", from, to, from)
}

// membershipPos is the line that put subject id (an operation or
// runtime.NAME) on a surface or took it off: its expose (an operation's) or
// transports (a runtime tool's) when they changed, else the selection of
// surface s (nil for the HTTP route) when it changed, else the subject
// itself — in the old contract when the subject was removed.
func (c *comparer) membershipPos(id string, s *project.Surface) graph.Pos {
	node, field := "", ""
	if name, ok := strings.CutPrefix(id, "runtime."); ok {
		o, n := runtimeTool(c.old, name), runtimeTool(c.new, name)
		if o == nil || n == nil {
			return c.removalPos(graph.NodePath("runtimeTools", name), n != nil)
		}
		node = graph.NodePath("runtimeTools", name)
		if !slices.Equal(o.Transports, n.Transports) {
			field = "transports"
		}
	} else {
		svc, act, _ := strings.Cut(id, ".")
		oldID := id
		for from, to := range c.renamedTo {
			if to == id {
				oldID = from
			}
		}
		osvc, oact, _ := strings.Cut(oldID, ".")
		o, n := c.old.Operation(osvc, oact), c.new.Operation(svc, act)
		if o == nil || n == nil {
			return c.removalPos(graph.NodePath("services", svc, "operations", act), n != nil)
		}
		node = opNode(n)
		if !slices.Equal(o.Expose, n.Expose) {
			field = "expose"
		}
	}
	if field != "" {
		if f := node + "." + field; !c.new.Source(f).IsValid() && c.old.Source(f).IsValid() {
			return c.neighbourPos(f) // the field was deleted: back to the default
		}
		return c.posFirst(node+"."+field, node)
	}
	if s != nil {
		os, on := selectionOf(c.old, s)
		ns, nn := selectionOf(c.new, s)
		switch {
		case nn == "" && on != "":
			return c.removalPos(on, false)
		case nn != "" && !slices.Equal(os.Include, ns.Include):
			return c.posFirst(nn+".include", nn)
		case nn != "" && !slices.Equal(os.Exclude, ns.Exclude):
			return c.posFirst(nn+".exclude", nn)
		}
	}
	return c.posFirst(node)
}

func runtimeTool(g *graph.Graph, name string) *graph.RuntimeTool {
	for i := range g.RuntimeTools {
		if g.RuntimeTools[i].Name == name {
			return &g.RuntimeTools[i]
		}
	}
	return nil
}

// selectionOf returns the selection of the tool surface s in g and its
// source node; a zero selection and "" when g does not configure one.
func selectionOf(g *graph.Graph, s *project.Surface) (graph.Selection, string) {
	var sel *graph.Selection
	var node string
	switch {
	case s.Transport == graph.MCP && g.Surfaces.MCP != nil && s.Name != "":
		for i := range g.Surfaces.MCP.Named {
			if g.Surfaces.MCP.Named[i].Name == s.Name {
				sel, node = &g.Surfaces.MCP.Named[i].Selection, graph.NodePath("surfaces", "mcp", "named", s.Name)
			}
		}
	case s.Transport == graph.MCP && g.Surfaces.MCP != nil:
		sel, node = g.Surfaces.MCP.Default, graph.NodePath("surfaces", "mcp", "default")
	case s.Transport == graph.AGENT:
		sel, node = g.Surfaces.Agent, graph.NodePath("surfaces", "agent")
	case s.Transport == graph.CLI:
		sel, node = g.Surfaces.CLI, graph.NodePath("surfaces", "cli")
	}
	if sel == nil {
		return graph.Selection{}, ""
	}
	return *sel, node
}

func (c *comparer) removalPos(node string, stillExists bool) graph.Pos {
	if stillExists {
		if p := pos(c.new, node, ""); p.IsValid() {
			return p
		}
	}
	if c.old.Source(node).IsValid() && !c.new.Source(node).IsValid() {
		return c.neighbourPos(node)
	}
	return pos(c.old, node, "")
}

// renameParams renames the properties of a params schema positionally.
func renameParams(doc json.RawMessage, from, to []string) json.RawMessage {
	var s map[string]any
	if doc == nil || json.Unmarshal(doc, &s) != nil || len(from) != len(to) {
		return doc
	}
	props, _ := s["properties"].(map[string]any)
	req, _ := s["required"].([]any)
	np := map[string]any{}
	for k, v := range props {
		np[k] = v
	}
	for i := range from {
		if v, ok := props[from[i]]; ok {
			delete(np, from[i])
			np[to[i]] = v
		}
	}
	for i, r := range req {
		if j := slices.Index(from, fmt.Sprint(r)); j >= 0 {
			req[i] = to[j]
		}
	}
	if props != nil {
		s["properties"] = np
	}
	b, err := graph.CanonicalSchema(s)
	if err != nil {
		return doc
	}
	return b
}

// toolKey identifies a tool row across versions: its operation id, or
// "runtime.NAME" for runtime tools (whose name is their identity).
func toolKey(t *project.Tool) string {
	if t.Kind == project.KindRuntime {
		return "runtime." + t.Runtime.Name
	}
	return t.ID()
}

func surfaceKeyOf(s *project.Surface) string {
	if s.Name == "" {
		return string(s.Transport)
	}
	return string(s.Transport) + ":" + s.Name
}

func surfaceLabel(s *project.Surface) string {
	if s.Transport == graph.MCP && s.Name != "" {
		return "MCP surface " + s.Name
	}
	return string(s.Transport) + " surface"
}

// toolSurface renders a tool row as a surface string.
func toolSurface(s *project.Surface, t *project.Tool) string {
	switch {
	case s.Transport == graph.CLI:
		return "CLI command " + t.Name
	case s.Name != "":
		return fmt.Sprintf("%s tool %s (surface %s)", s.Transport, t.Name, s.Name)
	}
	return fmt.Sprintf("%s tool %s", s.Transport, t.Name)
}

func toolNode(t *project.Tool) string {
	if t.Kind == project.KindRuntime {
		return graph.NodePath("runtimeTools", t.Runtime.Name)
	}
	return opNode(t.Op)
}

func surfaceNode(s *project.Surface) string {
	switch {
	case s.Transport == graph.MCP && s.Name != "":
		return graph.NodePath("surfaces", "mcp", "named", s.Name)
	case s.Transport == graph.MCP:
		return graph.NodePath("surfaces", "mcp")
	}
	return graph.NodePath("surfaces", strings.ToLower(string(s.Transport)))
}

// toolSurfaces compares the prepared tool surfaces row by row: membership,
// names, and advertised inputs that changed without a contract schema change
// (a presentation-policy change).
func (c *comparer) toolSurfaces() error {
	type key struct {
		t    graph.Transport
		name string
	}
	oldS := map[key]*project.Surface{}
	newS := map[key]*project.Surface{}
	var keys []key
	for i := range c.oldTools.Surfaces {
		s := &c.oldTools.Surfaces[i]
		oldS[key{s.Transport, s.Name}] = s
		keys = append(keys, key{s.Transport, s.Name})
	}
	for i := range c.newTools.Surfaces {
		s := &c.newTools.Surfaces[i]
		if _, ok := oldS[key{s.Transport, s.Name}]; !ok {
			keys = append(keys, key{s.Transport, s.Name})
		}
		newS[key{s.Transport, s.Name}] = s
	}
	for _, k := range keys {
		o, n := oldS[k], newS[k]
		switch {
		case n == nil:
			label := surfaceLabel(o)
			if o.Name == "" {
				label = "MCP surface (default)"
			}
			c.emit("mcp-surface-removed", Breaking, label, surfaceKeyOf(o), surfaceKeyOf(o), c.removalPos(surfaceNode(o), false),
				"%s removed: clients connected to it lose its %d tools", label, len(o.Tools))
			continue
		case o == nil:
			label := surfaceLabel(n)
			if n.Name == "" {
				label = "MCP surface (default)"
			}
			c.emit("mcp-surface-added", Info, label, surfaceKeyOf(n), surfaceKeyOf(n), pos(c.new, surfaceNode(n), ""),
				"%s added with %d tools", label, len(n.Tools))
			continue
		}
		if err := c.surfaceRows(o, n); err != nil {
			return err
		}
	}
	return nil
}

func (c *comparer) surfaceRows(o, n *project.Surface) error {
	sk := surfaceKeyOf(n)
	oldT := map[string]*project.Tool{}
	for i := range o.Tools {
		k := toolKey(&o.Tools[i])
		if to, ok := c.renamedTo[k]; ok {
			k = to // a renamed operation's rows pair with the new id's
		}
		oldT[k] = &o.Tools[i]
	}
	newT := map[string]*project.Tool{}
	for i := range n.Tools {
		newT[toolKey(&n.Tools[i])] = &n.Tools[i]
	}
	what := "tool"
	if n.Transport == graph.CLI {
		what = "command"
	}
	for _, id := range unionKeys(oldT, newT) {
		ot, nt := oldT[id], newT[id]
		subject := []string{id}
		switch {
		case nt == nil:
			why := "removed"
			if c.subjectExists(c.new, id) {
				why = "no longer on this surface"
			}
			c.emit("tool-removed", Breaking, toolSurface(o, ot), sk, id, c.membershipPos(id, o),
				"%s %s %s: clients calling it break", what, ot.Name, why).on(subject, nil)
			continue
		case ot == nil:
			c.emit("tool-added", Info, toolSurface(n, nt), sk, id, c.membershipPos(id, n), "%s %s added", what, nt.Name).on(subject, nil)
			continue
		}
		if ot.Name != nt.Name {
			c.emit("tool-renamed", Breaking, toolSurface(n, nt), sk, id, c.posFirst(toolNode(nt)+".tool.name", toolNode(nt)+".tool", toolNode(nt)),
				"%s renamed from %s to %s: clients calling %s break", what, ot.Name, nt.Name, ot.Name).on(subject, nil)
		}
		if ot.InputDigest != nt.InputDigest && !c.contractInputChanged(ot, nt) {
			// Same contract schemas, different advertised input: the
			// presentation policy changed what this surface shows. The
			// runner still validates with the unchanged contract schemas,
			// so no call that used to succeed fails now; what changes is
			// the shape models and SDKs are shown.
			if err := c.presentationChanged(n, nt, sk, id, ot.Input, nt.Input); err != nil {
				return err
			}
		}
	}
	return nil
}

// presentationChanged reports one finding for a tool whose advertised input
// changed while its contract schemas did not: a warning when the advertised
// schema now shows fewer values as valid (clients that validate arguments
// against a cached catalog may refuse calls the server still accepts), info
// otherwise.
func (c *comparer) presentationChanged(n *project.Surface, nt *project.Tool, sk, id string, oldDoc, newDoc json.RawMessage) error {
	fs, err := diffSchemas(Request, oldDoc, newDoc, diffOptions{unit: "advertisedInput", vals: c.vals})
	if err != nil {
		return fmt.Errorf("%s advertised input: %w", id, err)
	}
	var narrowed []string
	for _, f := range fs {
		if f.severity == Breaking {
			narrowed = append(narrowed, f.pointer)
		}
	}
	rule, sev := "tool-presentation-changed", Info
	msg := "advertised input changed by the presentation policy; the contract schemas and what the server accepts are unchanged"
	if len(narrowed) > 0 {
		rule, sev = "tool-presentation-narrowed", Warning
		slices.Sort(narrowed)
		narrowed = slices.Compact(narrowed)
		if len(narrowed) > 3 {
			narrowed = append(narrowed[:3], "…")
		}
		msg = "advertised input now shows fewer values as valid (at " + strings.Join(narrowed, ", ") +
			"); the server still accepts them, but clients validating against a cached catalog may refuse calls"
	}
	c.emit(rule, sev, toolSurface(n, nt), sk, id+"#/advertisedInput", pos(c.new, toolNode(nt), ""), "%s", msg).on([]string{id}, nil)
	return nil
}

// contractInputChanged reports whether a tool's contract input schemas
// changed (then the operation's own findings already describe it).
func (c *comparer) contractInputChanged(o, n *project.Tool) bool {
	switch {
	case o.Op != nil && n.Op != nil:
		return o.Op.Params != n.Op.Params || o.Op.Query != n.Op.Query || o.Op.Input != n.Op.Input
	case o.Runtime != nil && n.Runtime != nil:
		return o.Runtime.Input != n.Runtime.Input
	}
	return true
}

func (c *comparer) subjectExists(g *graph.Graph, id string) bool {
	if name, ok := strings.CutPrefix(id, "runtime."); ok {
		return slices.ContainsFunc(g.RuntimeTools, func(rt graph.RuntimeTool) bool { return rt.Name == name })
	}
	svc, act, _ := strings.Cut(id, ".")
	return g.Operation(svc, act) != nil
}

func (c *comparer) runtimeTools() error {
	oldR := map[string]*graph.RuntimeTool{}
	for i := range c.old.RuntimeTools {
		oldR[c.old.RuntimeTools[i].Name] = &c.old.RuntimeTools[i]
	}
	newR := map[string]*graph.RuntimeTool{}
	for i := range c.new.RuntimeTools {
		newR[c.new.RuntimeTools[i].Name] = &c.new.RuntimeTools[i]
	}
	for _, name := range unionKeys(oldR, newR) {
		o, n := oldR[name], newR[name]
		if o == nil || n == nil {
			continue // membership is reported per surface by toolSurfaces
		}
		id := "runtime." + name
		node := graph.NodePath("runtimeTools", name)
		surface := "runtime tool " + name
		visible := c.visibleOn(id)
		subject := []string{id}
		oScope, nScope := cmp.Or(o.Identity.Scope, "public"), cmp.Or(n.Identity.Scope, "public")
		if oScope != nScope {
			c.scopeChanged(surface, id, c.posField(node, "identity"), oScope, nScope).on(subject, visible)
		}
		if o.Identity.Service != n.Identity.Service || o.Identity.Action != n.Identity.Action || o.Identity.Method != n.Identity.Method {
			c.emit("runtime-tool-identity-changed", Warning, surface, "", id, c.posField(node, "identity"),
				"identity changed from %s.%s (%s) to %s.%s (%s): hooks, audit and authorization keyed on it see a different operation",
				o.Identity.Service, o.Identity.Action, o.Identity.Method, n.Identity.Service, n.Identity.Action, n.Identity.Method).on(subject, visible)
		}
		if o.Desc != n.Desc {
			c.emit("runtime-tool-description-changed", Info, surface, "", id, c.posField(node, "desc"), "%s", descChange(o.Desc, n.Desc)).on(subject, visible)
		}
		if !jsonRawEqual(rawOf(o.Annotations), rawOf(n.Annotations)) {
			c.emit("tool-annotations-changed", Info, surface, "", id, c.posField(node, "annotations"), "tool annotations changed (hints only)").on(subject, visible)
		}
		if !jsonRawEqual(o.Meta, n.Meta) {
			c.emit("runtime-tool-meta-changed", Info, surface, "", id, c.posField(node, "meta"), "meta changed").on(subject, visible)
		}
		rows := c.sharedToolRows(id, id)
		if len(rows) == 0 {
			continue
		}
		err := c.diffUnits(rows, id, node, []viewUnit{
			{name: "input", dir: Request, old: o.Input, new: n.Input},
			{name: "output", dir: Response, old: o.Output, new: n.Output},
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *comparer) cliCommands() error {
	oldC := map[string]*graph.CliCommand{}
	for i := range c.old.CliCommands {
		oldC[c.old.CliCommands[i].Name] = &c.old.CliCommands[i]
	}
	newC := map[string]*graph.CliCommand{}
	for i := range c.new.CliCommands {
		newC[c.new.CliCommands[i].Name] = &c.new.CliCommands[i]
	}
	for _, name := range unionKeys(oldC, newC) {
		o, n := oldC[name], newC[name]
		id := "cli." + name
		node := graph.NodePath("cliCommands", name)
		surface := "CLI command " + name
		subject := []string{id}
		switch {
		case n == nil:
			c.emit("cli-command-removed", Breaking, surface, "CLI", id, c.removalPos(node, false), "CLI-only command %s removed: scripts calling it break", name).on(subject, nil)
			continue
		case o == nil:
			c.emit("cli-command-added", Info, surface, "CLI", id, pos(c.new, node, ""), "CLI-only command %s added", name).on(subject, nil)
			continue
		}
		if o.Desc != n.Desc {
			c.emit("cli-command-description-changed", Info, surface, "CLI", id, c.posField(node, "desc"), "help line changed from %q to %q", o.Desc, n.Desc).on(subject, nil)
		}
		err := c.diffUnits([]string{surface}, id, node, []viewUnit{
			{name: "input", dir: Request, old: o.Input, new: n.Input},
			{name: "output", dir: Response, old: o.Output, new: n.Output},
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *comparer) realtime() error {
	oldC := map[string]*graph.RealtimeContract{}
	for i := range c.old.Realtime {
		oldC[c.old.Realtime[i].Name] = &c.old.Realtime[i]
	}
	newC := map[string]*graph.RealtimeContract{}
	for i := range c.new.Realtime {
		newC[c.new.Realtime[i].Name] = &c.new.Realtime[i]
	}
	for _, name := range unionKeys(oldC, newC) {
		o, n := oldC[name], newC[name]
		node := graph.NodePath("realtime", name)
		switch {
		case n == nil:
			c.emit("realtime-contract-removed", Breaking, "REALTIME "+name, "", name, c.removalPos(node, false),
				"realtime contract %s removed: connected clients lose all its events", name)
			continue
		case o == nil:
			c.emit("realtime-contract-added", Info, "REALTIME "+name, "", name, pos(c.new, node, ""), "realtime contract %s added", name)
			continue
		}
		for _, dir := range []string{graph.ServerToClient, graph.ClientToServer} {
			oe, ne := o.ServerToClient, n.ServerToClient
			argsDir, ackDir := Response, Request
			if dir == graph.ClientToServer {
				oe, ne = o.ClientToServer, n.ClientToServer
				argsDir, ackDir = Request, Response
			}
			if err := c.events(name, dir, oe, ne, argsDir, ackDir); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *comparer) events(contract, dir string, oldEv, newEv []graph.Event, argsDir, ackDir Direction) error {
	om := map[string]*graph.Event{}
	for i := range oldEv {
		om[oldEv[i].Name] = &oldEv[i]
	}
	nm := map[string]*graph.Event{}
	for i := range newEv {
		nm[newEv[i].Name] = &newEv[i]
	}
	for _, name := range unionKeys(om, nm) {
		o, n := om[name], nm[name]
		id := contract + "." + dir + "." + name
		surface := "REALTIME " + id
		node := graph.NodePath("realtime", contract, dir, name)
		subject := []string{id}
		switch {
		case n == nil:
			c.emit("realtime-event-removed", Breaking, surface, "", id, c.removalPos(node, false), "event removed: %s", map[bool]string{
				true:  "clients listening for it never receive it again",
				false: "clients emitting it are rejected",
			}[dir == graph.ServerToClient]).on(subject, nil)
			continue
		case o == nil:
			c.emit("realtime-event-added", Info, surface, "", id, pos(c.new, node, ""), "event added").on(subject, nil)
			continue
		}
		if o.Desc != n.Desc {
			c.emit("realtime-event-description-changed", Info, surface, "", id, c.posField(node, "desc"), "%s", descChange(o.Desc, n.Desc)).on(subject, nil)
		}
		// Both sides check the id against the contract on every event
		// (Conn.inbound, Bound.inbound, the JS client): an event whose
		// contract gains or loses its #ack is refused by every peer still
		// built from the other version, whichever way it travels.
		switch {
		case o.Ack == "" && n.Ack != "":
			if ackDir == Request {
				c.emit("realtime-ack-added", Breaking, surface, "", id+"#/ack", pos(c.new, node+".#ack", ""),
					"the server now asks for an acknowledgement: clients built from the old contract refuse the event (unexpected-acknowledgement), so their handlers never see it").on(subject, nil)
			} else {
				c.emit("realtime-ack-added", Breaking, surface, "", id+"#/ack", pos(c.new, node+".#ack", ""),
					"the server now requires an acknowledgement id: it refuses the event from clients built from the old contract, which send none (missing-acknowledgement), and no rejection can travel back to them").on(subject, nil)
			}
		case o.Ack != "" && n.Ack == "":
			if ackDir == Response {
				c.emit("realtime-ack-removed", Breaking, surface, "", id+"#/ack", pos(c.new, node, ""),
					"the server no longer acknowledges the event: it refuses the event from clients built from the old contract, which ask for an acknowledgement (unexpected-acknowledgement), and their requests fail").on(subject, nil)
			} else {
				c.emit("realtime-ack-removed", Breaking, surface, "", id+"#/ack", pos(c.new, node, ""),
					"the server no longer asks for an acknowledgement: clients built from the old contract refuse the event without the id they expect (missing-acknowledgement), so their handlers never see it").on(subject, nil)
			}
		}
		// Clients validate every frame they receive against the contract
		// they were built from: what the server sends is held to it
		// exactly (validated).
		units := []viewUnit{{name: "args", dir: argsDir, old: o.Args, new: n.Args, validated: argsDir == Response}}
		if o.Ack != "" && n.Ack != "" {
			units = append(units, viewUnit{name: "ack", dir: ackDir, old: o.Ack, new: n.Ack, validated: ackDir == Response})
		}
		if err := c.diffUnits([]string{surface}, id, node, units); err != nil {
			return err
		}
	}
	return nil
}

func (c *comparer) policy() error {
	if !jsonRawEqual(rawOf(c.old.Policy.MCP), rawOf(c.new.Policy.MCP)) {
		c.emit("mcp-policy-changed", Info, "policy mcp", "", "policy.mcp", pos(c.new, "policy.mcp", ""),
			"MCP preparation policy changed from %s to %s (changed advertised schemas are reported per tool)", rawOf(c.old.Policy.MCP), rawOf(c.new.Policy.MCP))
	}
	if !jsonRawEqual(rawOf(c.old.Policy.Agent), rawOf(c.new.Policy.Agent)) {
		c.emit("agent-policy-changed", Info, "policy agent", "", "policy.agent", pos(c.new, "policy.agent", ""),
			"Agent presentation policy changed from %s to %s (changed advertised schemas are reported per tool)", rawOf(c.old.Policy.Agent), rawOf(c.new.Policy.Agent))
	}
	return nil
}

func annotationsOf(op *graph.Operation) *graph.Annotations {
	if op.Tool == nil {
		return nil
	}
	return op.Tool.Annotations
}

func rawOf(v any) json.RawMessage {
	b, err := graph.Canonical(v)
	if err != nil {
		return nil
	}
	return b
}

func jsonRawEqual(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	ca, err1 := graph.Canonical(a)
	cb, err2 := graph.Canonical(b)
	return err1 == nil && err2 == nil && string(ca) == string(cb)
}

// descChange says how a description changed: added, removed or reworded.
func descChange(from, to string) string {
	switch {
	case from == "":
		return fmt.Sprintf("description added: %q", to)
	case to == "":
		return fmt.Sprintf("description removed (it was %q)", from)
	}
	return fmt.Sprintf("description changed from %q to %q", from, to)
}

// diffStrings returns the elements of a missing from b, sorted.
func diffStrings(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	graph.SortUTF16(out)
	return out
}

// unionKeys returns the keys of both maps in UTF-16 order.
func unionKeys[V any](a, b map[string]V) []string {
	seen := map[string]bool{}
	var out []string
	for k := range a {
		seen[k] = true
		out = append(out, k)
	}
	for k := range b {
		if !seen[k] {
			out = append(out, k)
		}
	}
	graph.SortUTF16(out)
	return out
}
