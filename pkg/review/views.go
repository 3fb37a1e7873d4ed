package review

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"stitchkit.dev/stitchkit/internal/schematree"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/project"
)

// Callers meet an operation's schemas in different shapes. HTTP callers
// send path parameters, a query and a body, each where it is on the wire;
// tool callers (MCP, Agent, CLI) send one flat object of arguments, which
// the runner splits back into params, query and input. A change is
// classified in each view that has callers on both sides, and the findings
// of the views are merged: the same change seen by HTTP and tool callers is
// one finding naming both, and a change only one view sees (a field moved
// from #input to #query) names only that view's surfaces.

// viewUnit is one schema slot compared in one direction.
type viewUnit struct {
	name     string // "params", "query", "input", "output", "args", "ack"
	dir      Direction
	old, new graph.Digest
	// queryWire compares with HTTP query semantics.
	queryWire bool
	// toolRows: the operation also has tool rows (see diffOptions).
	toolRows bool
	// validated: the receivers of these values validate them against
	// the contract they were built from (realtime clients do, for what
	// the server sends), so a closed object is held closed.
	validated bool
	// oldDoc, when set, replaces the old schema bytes (path parameters
	// renamed positionally, so HTTP callers see the same values).
	oldDoc json.RawMessage
}

// diffUnits compares each unit and records its findings on surfaces.
func (c *comparer) diffUnits(surfaces []string, subject, nodeBase string, units []viewUnit) error {
	for _, u := range units {
		oldRaw := c.old.Schema(u.old)
		if u.oldDoc != nil {
			oldRaw = u.oldDoc
		}
		newRaw := c.new.Schema(u.new)
		same := u.old == u.new && u.oldDoc == nil || bytes.Equal(oldRaw, newRaw) && (oldRaw == nil) == (newRaw == nil)
		docs := c.changedDefDocs()
		if same && len(docs) == 0 {
			continue
		}
		def := c.rootDef(oldRaw, newRaw, nodeBase+".#"+u.name)
		defDoc, docChanged := docs[def]
		if same && !docChanged {
			continue
		}
		var fs []schemaFinding
		if !same {
			var err error
			fs, err = diffSchemas(u.dir, oldRaw, newRaw, diffOptions{unit: u.name, queryWire: u.queryWire, toolRows: u.toolRows, validated: u.validated, rootDef: def, vals: c.vals, defs: c.defIndexes()})
			if err != nil {
				return fmt.Errorf("%s %s: %w", subject, u.name, err)
			}
		}
		if docChanged && !hasDocs(oldRaw) && !hasDocs(newRaw) {
			// The slot is the definition inlined, without the doc
			// comment its $defs entry carries: callers reading it
			// (in OpenAPI, a component) see that documentation change.
			sd := newSchemaDiff(u.dir, nil, nil, diffOptions{unit: u.name})
			sd.annotations("", defCtx{name: def}, defDoc[0], defDoc[1], false)
			fs = append(fs, sd.out...)
		}
		c.addSchemaFindings(surfaces, subject, nodeBase, u.name, sharedKey(u.name, u.old, u.new, u.oldDoc), fs)
	}
	return nil
}

// changedDefDocs maps the named definitions whose title or description
// differs between the sides to those docs (old, new); built on first use.
func (c *comparer) changedDefDocs() map[string][2]map[string]any {
	if c.defDocs != nil {
		return c.defDocs
	}
	od, nd := defDocs(c.old), defDocs(c.new)
	c.defDocs = map[string][2]map[string]any{}
	for name, o := range od {
		if n, ok := nd[name]; ok && !jsonEqual(o, n) {
			c.defDocs[name] = [2]map[string]any{o, n}
		}
	}
	return c.defDocs
}

// defDocs maps each named definition of g's schemas to its title and
// description.
func defDocs(g *graph.Graph) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, d := range sortedDigests(g) {
		var doc any
		if decodeJSON(g.Schemas[d], &doc) != nil {
			continue
		}
		m, _ := doc.(map[string]any)
		defs, _ := m["$defs"].(map[string]any)
		for name, body := range defs {
			if _, seen := out[name]; seen {
				continue
			}
			bm, _ := body.(map[string]any)
			docs := map[string]any{}
			for _, k := range []string{"title", "description"} {
				if v, ok := bm[k]; ok {
					docs[k] = v
				}
			}
			out[name] = docs
		}
	}
	return out
}

// hasDocs reports whether the root of a schema document has a title or a
// description.
func hasDocs(raw json.RawMessage) bool {
	var doc map[string]any
	if raw == nil || json.Unmarshal(raw, &doc) != nil {
		return false
	}
	_, t := doc["title"]
	_, d := doc["description"]
	return t || d
}

// sharedKey identifies one schema change by the digests on both sides:
// subjects whose slots held the same schema and hold the same new one
// changed together (a definition used only as a whole schema, #output:
// #Refund, is inlined, so no $defs name tells it).
func sharedKey(unit string, old, new graph.Digest, oldDoc json.RawMessage) string {
	if old == "" || new == "" || oldDoc != nil {
		return ""
	}
	return unit + "\x00" + string(old) + "\x00" + string(new)
}

// addSchemaFindings records schema findings of one unit of subject.
func (c *comparer) addSchemaFindings(surfaces []string, subject, nodeBase, unit, shared string, fs []schemaFinding) {
	for _, f := range fs {
		c.findings = append(c.findings, Finding{
			Rule: f.rule, Severity: f.severity, Location: subject + "#/" + unit + f.pointer, Message: f.message,
			Pos: c.posEither(nodeBase+".#"+unit, f.pointer), Operations: []string{subject},
			groupable: true, def: f.def, defPtr: f.defPtr, surfaces: slices.Clone(surfaces),
			shared: shared, sharedPtr: "/" + unit + f.pointer,
		})
	}
}

// operationSchemas compares an operation's schemas in the HTTP view (when
// it has a route on both sides) and the tool view (when it has tool rows
// on both sides).
func (c *comparer) operationSchemas(oldID, id string, o, n *graph.Operation, or, nr project.Route, http bool) error {
	node := opNode(n)
	rows := c.sharedToolRows(oldID, id)
	if http {
		params := viewUnit{name: "params", dir: Request, old: o.Params, new: n.Params}
		if or.Path != nr.Path && graph.PathShape(or.Path) == graph.PathShape(nr.Path) {
			// Same URLs with renamed path parameters: HTTP callers send
			// the same values. (Tool callers name them; the tool view
			// sees the rename.)
			params.oldDoc = renameParams(c.old.Schema(o.Params), graph.PathNames(or.Path), graph.PathNames(nr.Path))
		}
		err := c.diffUnits([]string{"HTTP " + nr.Pattern()}, id, node, []viewUnit{
			params,
			{name: "query", dir: Request, old: o.Query, new: n.Query, queryWire: true},
			{name: "input", dir: Request, old: o.Input, new: n.Input, toolRows: len(rows) > 0},
			{name: "output", dir: Response, old: o.Output, new: n.Output},
		})
		if err != nil {
			return err
		}
	}
	if len(rows) == 0 {
		return nil
	}
	if err := c.toolArgs(rows, id, node, o, n); err != nil {
		return err
	}
	return c.diffUnits(rows, id, node, []viewUnit{{name: "output", dir: Response, old: o.Output, new: n.Output}})
}

// argProp is one property of a tool's flat arguments and the unit it
// comes from.
type argProp struct {
	unit     string
	doc      any // the unit's schema document (root of its $refs)
	schema   any
	required bool
	ctx      defCtx
}

// plainObject reports whether the effective schema m is an object schema
// whose properties merge into flat tool arguments (no union or conjunction
// at its root).
func plainObject(m map[string]any) bool {
	for _, k := range []string{"anyOf", "oneOf", "allOf", "not", "if", "$ref"} {
		if _, ok := m[k]; ok {
			return false
		}
	}
	_, props := m["properties"].(map[string]any)
	return props || slices.Equal(typeSet(m), []string{"object"})
}

// toolArgs compares an operation's tool arguments: #params, #query and
// #input merged into one flat object, exactly as the tool transports
// advertise and split them (project.Tool.SplitArgs). A property that moved
// between the slots is the same argument; a unit that is not a plain
// object (a union body) is compared as a whole.
func (c *comparer) toolArgs(rows []string, id, node string, o, n *graph.Operation) error {
	units := []struct {
		name   string
		od, nd graph.Digest
	}{{"params", o.Params, n.Params}, {"query", o.Query, n.Query}, {"input", o.Input, n.Input}}
	if !slices.ContainsFunc(units, func(u struct {
		name   string
		od, nd graph.Digest
	}) bool {
		return u.od != u.nd
	}) {
		return nil
	}
	oldProps, newProps := map[string]argProp{}, map[string]argProp{}
	inputClosed := true // with no #input, an argument outside params and query has nowhere to go
	for _, u := range units {
		oldRaw, newRaw := c.old.Schema(u.od), c.new.Schema(u.nd)
		odoc, ndoc, err := decodePair(oldRaw, newRaw)
		if err != nil {
			return fmt.Errorf("%s %s: %w", id, u.name, err)
		}
		var om, nm map[string]any
		if odoc != nil {
			om = resolve(odoc, odoc).m
		}
		if ndoc != nil {
			nm = resolve(ndoc, ndoc).m
		}
		if u.name == "input" && nm != nil {
			inputClosed = openness(nm) == closed
		}
		if (om != nil && !plainObject(om)) || (nm != nil && !plainObject(nm)) {
			if u.od != u.nd {
				if err := c.diffUnits(rows, id, node, []viewUnit{{name: u.name, dir: Request, old: u.od, new: u.nd}}); err != nil {
					return err
				}
			}
			continue
		}
		ctx := defCtx{name: c.rootDef(oldRaw, newRaw, node+".#"+u.name)}
		collect := func(into map[string]argProp, doc any, m map[string]any) {
			props, _ := m["properties"].(map[string]any)
			req := stringSet(m["required"])
			for name, s := range props {
				into[name] = argProp{unit: u.name, doc: doc, schema: s, required: slices.Contains(req, name), ctx: ctx}
			}
		}
		if om != nil {
			collect(oldProps, odoc, om)
		}
		if nm != nil {
			collect(newProps, ndoc, nm)
		}
		if om != nil && nm != nil && u.od != u.nd {
			// The unit's own keywords (closedness, descriptions).
			d := newSchemaDiff(Request, odoc, ndoc, diffOptions{unit: u.name, vals: c.vals, defs: c.defIndexes()})
			d.compare("", ctx, withoutProperties(om), withoutProperties(nm))
			c.addSchemaFindings(rows, id, node, u.name, sharedKey(u.name, u.od, u.nd, nil), d.out)
		}
	}
	// A unit removed whole, none of its arguments living on in another
	// one, is one finding: those arguments are refused.
	for _, u := range units {
		if u.od == "" || u.nd != "" {
			continue
		}
		var gone []string
		moved := false
		for name, p := range oldProps {
			if p.unit != u.name {
				continue
			}
			if _, ok := newProps[name]; ok {
				moved = true
			}
			gone = append(gone, name)
		}
		if moved || len(gone) == 0 {
			continue
		}
		graph.SortUTF16(gone)
		d := newSchemaDiff(Request, nil, nil, diffOptions{unit: u.name})
		d.add("schema-removed", Breaking, "", defCtx{}, "%s", schemaRemoved(u.name, gone, true))
		c.addSchemaFindings(rows, id, node, u.name, "", d.out)
		for _, name := range gone {
			delete(oldProps, name)
		}
	}
	for _, name := range unionKeys(oldProps, newProps) {
		op, inOld := oldProps[name]
		np, inNew := newProps[name]
		unit, ctx := np.unit, np.ctx
		if !inNew {
			unit, ctx = op.unit, op.ctx
		}
		ptr := "/properties/" + schematree.Escape(name)
		if ctx.name != "" && inOld && inNew && op.ctx.name != np.ctx.name {
			ctx = defCtx{}
		}
		d := newSchemaDiff(Request, op.doc, np.doc, diffOptions{unit: unit, vals: c.vals, defs: c.defIndexes()})
		switch {
		case !inOld:
			d.propertyAdded(ptr, ctx, np.required, false)
		case !inNew:
			d.propertyRemoved(ptr, ctx, op.required, inputClosed)
		case scalarListChange(op.doc, op.schema, np.doc, np.schema) && slices.ContainsFunc(rows, isCLIRow):
			// A CLI flag of a list is the flag repeated: --vet dr_lee
			// is a list of one, as ?vet=dr_lee is on HTTP. CLI callers
			// see the change as the query string does; MCP and Agent
			// callers send JSON, where a string is not a list.
			cli := slices.DeleteFunc(slices.Clone(rows), func(r string) bool { return !isCLIRow(r) })
			json := slices.DeleteFunc(slices.Clone(rows), isCLIRow)
			d.property(ptr, ctx, op.schema, np.schema, op.required, np.required, true)
			c.addSchemaFindings(cli, id, node, unit, "", d.out)
			if len(json) > 0 {
				d = newSchemaDiff(Request, op.doc, np.doc, diffOptions{unit: unit, vals: c.vals, defs: c.defIndexes()})
				d.property(ptr, ctx, op.schema, np.schema, op.required, np.required, false)
				c.addSchemaFindings(json, id, node, unit, "", d.out)
			}
			continue
		default:
			d.property(ptr, ctx, op.schema, np.schema, op.required, np.required, false)
		}
		c.addSchemaFindings(rows, id, node, unit, "", d.out)
	}
	return nil
}

// isCLIRow reports whether a surface label is a CLI command.
func isCLIRow(label string) bool { return strings.HasPrefix(label, "CLI ") }

// scalarListChange reports whether a property went from a scalar to a
// list or back (the types queryParam compares as repeated keys).
func scalarListChange(oldRoot, oldS, newRoot, newS any) bool {
	o, n := resolve(oldRoot, oldS).m, resolve(newRoot, newS).m
	if o == nil || n == nil {
		return false
	}
	ot, nt := typeSet(o), typeSet(n)
	list := []string{"array"}
	return isScalar(ot) && slices.Equal(nt, list) || slices.Equal(ot, list) && isScalar(nt)
}

func withoutProperties(m map[string]any) map[string]any {
	out := clone(m)
	delete(out, "properties")
	delete(out, "required")
	return out
}

// rootDef returns the definition both schema documents are when each is
// the body of the same named definition, inlined (a contract schema such
// as `#output: #Task` is the definition's body, not a $ref to it): the
// name under which that body appears in the $defs of some schema of its
// graph. "" when either is absent, no name fits both, or several do.
//
// A definition that no schema refers to by $ref (one only ever used whole,
// #output: #Customer) has no $defs entry; it is then recognised in the
// contract's sources, when both sides have them: the schema slot written
// as a bare reference (node has no fields of its own in the sources) whose
// properties are exactly the fields of one CUE definition.
func (c *comparer) rootDef(oldRaw, newRaw json.RawMessage, node string) string {
	if oldRaw == nil || newRaw == nil {
		return ""
	}
	defs := c.defIndexes()
	on, nn := defs.old[rootKey(oldRaw)], defs.new[rootKey(newRaw)]
	var common []string
	for _, name := range on {
		if slices.Contains(nn, name) {
			common = append(common, name)
		}
	}
	if len(common) == 1 {
		return common[0]
	}
	if len(common) > 1 {
		return ""
	}
	if c.oldFields == nil {
		c.oldFields, c.newFields = defFields(c.old), defFields(c.new)
	}
	o, n := sourceDef(c.old, c.oldFields, oldRaw, node), sourceDef(c.new, c.newFields, newRaw, node)
	if o == "" || o != n {
		return ""
	}
	return o
}

// defFields maps each CUE definition of g's sources (#Name) to its field
// names, sorted.
func defFields(g *graph.Graph) map[string][]string {
	out := map[string][]string{}
	for k := range g.Sources {
		name, field, ok := strings.Cut(strings.TrimPrefix(k, "#"), ".")
		if !strings.HasPrefix(k, "#") {
			continue
		}
		if _, seen := out[name]; !seen {
			out[name] = []string{}
		}
		if ok && !strings.Contains(field, ".") && !strings.HasPrefix(field, "#") {
			out[name] = append(out[name], field)
		}
	}
	for k := range out {
		slices.Sort(out[k])
	}
	return out
}

// sourceDef returns the one definition whose fields are exactly the
// properties of the schema raw, written at node as a bare reference.
func sourceDef(g *graph.Graph, fields map[string][]string, raw json.RawMessage, node string) string {
	if len(g.Sources) == 0 || !g.Source(node).IsValid() {
		return ""
	}
	for k := range g.Sources {
		if strings.HasPrefix(k, node+".") {
			return "" // fields of its own: a struct written in place
		}
	}
	var doc map[string]any
	if json.Unmarshal(raw, &doc) != nil {
		return ""
	}
	props, _ := doc["properties"].(map[string]any)
	if len(props) == 0 {
		return ""
	}
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	slices.Sort(names)
	found := ""
	for name, fs := range fields {
		if slices.Equal(fs, names) {
			if found != "" {
				return "" // two definitions with these fields
			}
			found = name
		}
	}
	return found
}

// defIndexes are both sides' defIndex, built on first use.
func (c *comparer) defIndexes() *defBodies {
	if c.defs == nil {
		c.defs = &defBodies{old: defIndex(c.old), new: defIndex(c.new)}
	}
	return c.defs
}

// defBodies index each side's named definitions by their expanded body.
type defBodies struct{ old, new map[string][]string }

// defIndex maps the expanded body of every named definition in g's
// schemas to its names.
func defIndex(g *graph.Graph) map[string][]string {
	idx := map[string][]string{}
	for _, d := range sortedDigests(g) {
		var doc any
		if decodeJSON(g.Schemas[d], &doc) != nil {
			continue
		}
		m, _ := doc.(map[string]any)
		defs, _ := m["$defs"].(map[string]any)
		for name, body := range defs {
			e, err := expand(doc, body, 0)
			if err != nil {
				continue
			}
			b, err := graph.Canonical(withoutDocs(e))
			if err != nil {
				continue
			}
			if k := string(b); !slices.Contains(idx[k], name) {
				idx[k] = append(idx[k], name)
			}
		}
	}
	for k := range idx {
		slices.Sort(idx[k])
	}
	return idx
}

func sortedDigests(g *graph.Graph) []graph.Digest {
	out := make([]graph.Digest, 0, len(g.Schemas))
	for d := range g.Schemas {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

// rootKey is the expanded root of a schema document, comparable with
// defIndex keys.
func rootKey(raw json.RawMessage) string {
	var doc any
	if decodeJSON(raw, &doc) != nil {
		return ""
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return ""
	}
	root := clone(m)
	delete(root, "$defs")
	delete(root, "$schema")
	return bodyKey(doc, root)
}

// withoutDocs drops the top-level documentation of an expanded schema: the
// inlined root of `#output: #Payment` does not carry #Payment's doc comment
// (its description), the $defs entry does.
func withoutDocs(s any) any {
	m, ok := s.(map[string]any)
	if !ok {
		return s
	}
	out := clone(m)
	for _, k := range []string{"title", "description", "$comment", "examples"} {
		delete(out, k)
	}
	return out
}

// group merges the schema findings one change causes: the same finding seen
// in several views of a subject is one finding on all their surfaces; a
// change made inside a definition — or to a schema several subjects share —
// is one finding, located in the definition (or at its first subject),
// listing every subject and surface it reaches.
func (c *comparer) group() {
	head := func(f *Finding) string { return f.Rule + "\x00" + string(f.Severity) + "\x00" + f.Message + "\x00" }
	// 1. The views of one subject.
	c.findings = mergeFindings(c.findings, func(f *Finding) string { return "L\x00" + head(f) + f.Location })
	// 2. The subjects of one definition or one shared schema.
	c.findings = mergeFindings(c.findings, func(f *Finding) string {
		switch {
		case f.def != "":
			return "D\x00" + head(f) + f.def + "\x00" + f.defPtr
		case f.shared != "":
			return "S\x00" + head(f) + f.shared + "\x00" + f.sharedPtr
		}
		return ""
	})
	for i := range c.findings {
		f := &c.findings[i]
		if !f.groupable {
			continue
		}
		if f.def != "" {
			f.Location = "#" + f.def
			if f.defPtr != "" {
				f.Location += "#" + f.defPtr
			}
			if p := c.defPos(f.def, f.defPtr); p.IsValid() {
				f.Pos = p
			}
		}
		slices.SortStableFunc(f.surfaces, compareSurfaces)
		graph.SortUTF16(f.Operations)
		f.Surface = f.surfaces[0]
		f.AlsoAffects = nil
		if len(f.surfaces) > 1 {
			f.AlsoAffects = slices.Clone(f.surfaces[1:])
		}
	}
}

// mergeFindings merges the groupable findings with equal keys ("" keeps a
// finding alone), keeping the first one's place.
func mergeFindings(fs []Finding, key func(*Finding) string) []Finding {
	var out []Finding
	index := map[string]int{}
	for _, f := range fs {
		k := ""
		if f.groupable {
			k = key(&f)
		}
		if k == "" {
			out = append(out, f)
			continue
		}
		i, ok := index[k]
		if !ok {
			index[k] = len(out)
			out = append(out, f)
			continue
		}
		g := &out[i]
		for _, s := range f.surfaces {
			if !slices.Contains(g.surfaces, s) {
				g.surfaces = append(g.surfaces, s)
			}
		}
		for _, s := range f.Operations {
			if !slices.Contains(g.Operations, s) {
				g.Operations = append(g.Operations, s)
			}
		}
		if g.shared == "" {
			g.shared, g.sharedPtr = f.shared, f.sharedPtr
		}
		switch {
		case graph.CompareUTF16(f.Location, g.Location) < 0:
			// Locate a shared change at its first subject, whatever order
			// the subjects were compared in.
			g.Location, g.Pos = f.Location, f.Pos
		case !g.Pos.IsValid():
			g.Pos = f.Pos
		}
	}
	return out
}

// compareSurfaces orders surface labels: HTTP routes, then AGENT, CLI and
// MCP tool rows, realtime events, runtime tools, error codes.
func compareSurfaces(a, b string) int {
	rank := func(s string) int {
		for i, p := range []string{"HTTP ", "AGENT ", "CLI ", "MCP ", "REALTIME ", "runtime tool ", "error "} {
			if strings.HasPrefix(s, p) {
				return i
			}
		}
		return 99
	}
	return cmp.Or(cmp.Compare(rank(a), rank(b)), graph.CompareUTF16(a, b))
}

// defPos is the position of the changed field of definition name, in the
// new contract (the old one for a field the new contract no longer has).
func (c *comparer) defPos(name, ptr string) graph.Pos {
	if len(c.new.Sources) == 0 {
		return graph.Pos{}
	}
	nb, ob := defSourcePath(c.new, name), defSourcePath(c.old, name)
	if nb != "" && nb == ob {
		if path := nodePath(nb, ptr); !c.new.Source(path).IsValid() && c.old.Source(path).IsValid() {
			return c.neighbourPos(path) // a field removed from the definition
		}
	}
	if nb != "" {
		if p := pos(c.new, nb, ptr); p.IsValid() {
			return p
		}
	}
	if ob != "" {
		return c.neighbourPos(ob)
	}
	return graph.Pos{}
}

// defSourcePath returns the Sources key of the CUE definition a $defs
// name stands for: "#Name", or the one definition path ending in the name
// (a reference to a field of a definition, #Task.title, is hoisted as
// "title").
func defSourcePath(g *graph.Graph, name string) string {
	if g.Source("#" + name).IsValid() {
		return "#" + name
	}
	found := ""
	for k := range g.Sources {
		if strings.HasPrefix(k, "#") && (strings.HasSuffix(k, "."+name) || strings.HasSuffix(k, ".#"+name)) {
			if found != "" {
				return "" // ambiguous
			}
			found = k
		}
	}
	return found
}
