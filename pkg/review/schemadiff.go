package review

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"stitchkit.dev/stitchkit/internal/schematree"
	"stitchkit.dev/stitchkit/pkg/graph"
)

// Direction says which way a schema's values travel relative to the server.
// Narrowing what the server accepts (Request) or widening what it returns
// (Response) breaks callers.
type Direction int

const (
	// Request schemas describe values the server receives: path
	// parameters, query, request bodies, tool arguments, clientToServer
	// event arguments and the acks of serverToClient events.
	Request Direction = iota
	// Response schemas describe values the server sends: outputs,
	// serverToClient event arguments and the acks of clientToServer events.
	Response
)

// String returns "request" or "response", the prefix of schema rule ids.
func (d Direction) String() string {
	if d == Response {
		return "response"
	}
	return "request"
}

// effect is how a change moves the set of valid values.
type effect int

const (
	narrowed effect = iota // fewer values are valid
	widened                // more values are valid
	changed                // some values left, others arrived
)

func (e effect) String() string {
	switch e {
	case narrowed:
		return "narrowed"
	case widened:
		return "widened"
	}
	return "changed"
}

// severityOf is the one direction rule: narrowing a request or widening a
// response breaks callers; the opposite moves are compatible; a change that
// does both is breaking either way.
func severityOf(d Direction, e effect) Severity {
	switch {
	case e == changed:
		return Breaking
	case d == Request && e == narrowed, d == Response && e == widened:
		return Breaking
	}
	return Info
}

// schemaFinding is one schema-level change before it is placed on a surface.
type schemaFinding struct {
	rule     string
	severity Severity
	// pointer is the JSON pointer of the change relative to the unit's
	// root, $refs resolved (/properties/task/properties/title, never
	// /$defs/Task/…).
	pointer string
	message string
	// def is the $defs name of the definition the change was made in,
	// and defPtr the pointer relative to it; "" when the change is at the
	// place that uses a schema.
	def, defPtr string
}

// defCtx is the innermost definition the walk is inside: name, and the
// pointer at which it was entered.
type defCtx struct {
	name, base string
}

// diffOptions configures one comparison.
type diffOptions struct {
	// unit names the schema slot ("params", "query", "input", "output",
	// "args", "ack", "advertisedInput"); it names values in messages.
	unit string
	// queryWire compares an HTTP query: a parameter that became a list of
	// its old type accepts every request it accepted (?status=a is a list
	// of one).
	queryWire bool
	// rootDef is the definition both roots are (a contract schema that is
	// a definition, e.g. #output: #Task, is its body inlined).
	rootDef string
	// toolRows reports that the operation also has tool rows (for
	// messages both views share).
	toolRows bool
	// validated reports that the receivers validate response values
	// against the old contract (realtime clients): a property or an
	// undeclared field appearing in an object the old contract closed
	// is refused by them.
	validated bool
	vals      *valueChecker
	// defs index both sides' named definitions by body, to recognise a
	// definition the translator inlined into a union or conjunction
	// (#RefundReason | null, #PaymentID & =~"…"); nil: not recognised.
	defs *defBodies
}

// schemaDiff compares two JSON Schema documents in one direction. $refs are
// resolved against each document's own root, so the pointers it reports
// walk the resolved (inlined) schema.
type schemaDiff struct {
	dir              Direction
	opts             diffOptions
	vals             *valueChecker
	oldRoot, newRoot any
	active           map[string]bool // ref pairs on the current walk (cycle guard)
	out              []schemaFinding
	inlinedAt        string // the pointer of the inlined definition being compared (see inlinedChange)
	wholeSetAt       string // the pointer of the union decided on whole sets being compared (see wholeSet)
	inclusionBudget  int    // schema pairs includes may still visit (see setEffect)
	visits           int    // node pairs compared (bounded by maxCompareNodes)
	truncated        bool   // the bound was hit
}

func newSchemaDiff(dir Direction, oldRoot, newRoot any, opts diffOptions) *schemaDiff {
	if opts.vals == nil {
		opts.vals = newValueChecker()
	}
	return &schemaDiff{dir: dir, opts: opts, vals: opts.vals, oldRoot: oldRoot, newRoot: newRoot, active: map[string]bool{}, inclusionBudget: maxInclusionVisits}
}

// diffSchemas compares the canonical schema documents old and new (either
// may be nil: absent) travelling in direction dir.
func diffSchemas(dir Direction, old, new json.RawMessage, opts diffOptions) ([]schemaFinding, error) {
	o, n, err := decodePair(old, new)
	if err != nil {
		return nil, err
	}
	d := newSchemaDiff(dir, o, n, opts)
	ctx := defCtx{}
	if opts.rootDef != "" {
		ctx = defCtx{name: opts.rootDef}
	}
	d.compare("", ctx, o, n)
	return d.out, nil
}

func decodePair(old, new json.RawMessage) (o, n any, err error) {
	if old != nil {
		if err := decodeJSON(old, &o); err != nil {
			return nil, nil, fmt.Errorf("old schema: %w", err)
		}
	}
	if new != nil {
		if err := decodeJSON(new, &n); err != nil {
			return nil, nil, fmt.Errorf("new schema: %w", err)
		}
	}
	return o, n, nil
}

func decodeJSON(b []byte, v *any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

// add records a finding at ptr; the message starts with the name of the
// value it concerns.
func (d *schemaDiff) add(rule string, sev Severity, ptr string, ctx defCtx, format string, a ...any) {
	f := schemaFinding{rule: d.dir.String() + "-" + rule, severity: sev, pointer: ptr}
	rel := ptr
	if ctx.name != "" {
		rel = strings.TrimPrefix(ptr, ctx.base)
		f.def, f.defPtr = ctx.name, rel
	}
	f.message = fieldLabel(d.opts.unit, ctx.name, rel) + ": " + fmt.Sprintf(format, a...)
	d.out = append(d.out, f)
}

// addEffect reports a change of the set of valid values.
func (d *schemaDiff) addEffect(kind string, e effect, ptr string, ctx defCtx, format string, a ...any) {
	sev := severityOf(d.dir, e)
	msg := fmt.Sprintf(format, a...)
	if sev == Breaking {
		if d.dir == Request {
			msg += "; requests that were valid may now be rejected"
		} else {
			msg += "; callers may now receive values they were not promised"
		}
	}
	d.add(kind+"-"+e.String(), sev, ptr, ctx, "%s", msg)
}

// handled lists the keywords compare understands; any other keyword that
// differs is reported by the fallback rule.
var handled = map[string]bool{
	"$ref": true, "$defs": true, "definitions": true, "$schema": true, "$id": true, "$comment": true,
	"title": true, "description": true, "examples": true, "default": true, "deprecated": true,
	"readOnly": true, "writeOnly": true,
	"type": true, "enum": true, "const": true,
	"minimum": true, "exclusiveMinimum": true, "maximum": true, "exclusiveMaximum": true, "multipleOf": true,
	"minLength": true, "maxLength": true, "minItems": true, "maxItems": true,
	"minProperties": true, "maxProperties": true,
	"pattern": true, "format": true, "uniqueItems": true,
	"properties": true, "required": true, "additionalProperties": true,
	"items": true, "prefixItems": true,
	"oneOf": true, "anyOf": true, "allOf": true,
}

// maxCompareNodes bounds the node pairs one comparison visits (a schema
// whose definitions refer to one another twice over is a tree of
// exponential size); past it the comparison stops with one warning.
const maxCompareNodes = 50000

// compare walks old and new (raw, unresolved schemas; nil means absent).
func (d *schemaDiff) compare(ptr string, ctx defCtx, oldS, newS any) {
	if d.visits++; d.visits > maxCompareNodes {
		if !d.truncated {
			d.truncated = true
			d.add("schema-keyword-changed", Warning, "", defCtx{}, "the schemas are too large to compare fully (more than %d nodes): review the change by hand", maxCompareNodes)
		}
		return
	}
	switch {
	case oldS == nil && newS == nil:
		return
	case oldS == nil:
		d.schemaAdded(ptr, ctx, newS)
		return
	case newS == nil:
		if d.dir == Request {
			var names []string
			if m := resolve(d.oldRoot, oldS).m; m != nil && ptr == "" {
				props, _ := m["properties"].(map[string]any)
				for k := range props {
					names = append(names, k)
				}
			}
			d.add("schema-removed", Breaking, ptr, ctx, "%s", schemaRemoved(d.opts.unit, names, d.opts.toolRows))
		} else {
			d.add("schema-removed", Breaking, ptr, ctx, "no longer declared; callers reading the value break")
		}
		return
	}
	if d.inlinedAt != ptr {
		if name, om, nm := d.inlinedDef(oldS, newS); name != "" {
			d.inlinedChange(ptr, defCtx{name: name, base: ptr}, oldS, newS, om, nm)
			return
		}
	}
	or, nr := resolve(d.oldRoot, oldS), resolve(d.newRoot, newS)
	if or.m != nil && nr.m != nil && (hasUnion(or.m) || hasUnion(nr.m)) && d.wholeSetAt != "@"+ptr {
		// A union on either side: the sets decide (see wholeSet).
		if e, equal, ok := d.setEffect(oldS, newS); ok {
			wctx := ctx
			if or.def != "" && or.def == nr.def {
				wctx = defCtx{name: or.def, base: ptr}
			}
			inlinedDocs := (or.def == "") != (nr.def == "") && !refDocs(oldS) && !refDocs(newS)
			d.wholeSet(ptr, ctx, wctx, oldS, newS, or.m, nr.m, e, equal, inlinedDocs)
			return
		}
	}
	if or.chain != "" || nr.chain != "" {
		key := or.chain + "|" + nr.chain
		if d.active[key] {
			return // cycle: this pair is already being compared further up
		}
		d.active[key] = true
		defer delete(d.active, key)
	}
	o, n := or.m, nr.m
	if o == nil || n == nil {
		return
	}
	if or.def != "" && or.def == nr.def {
		// Both sides are the same definition: whatever differs below was
		// changed in the definition.
		ctx = defCtx{name: or.def, base: ptr}
	}

	// A lone schema replaced by a union of alternatives (or the reverse)
	// compares as a one-branch union, so the branch that stayed matches.
	for _, k := range []string{"anyOf", "oneOf"} {
		ou, oIs := o[k].([]any)
		nu, nIs := n[k].([]any)
		switch {
		case oIs && !nIs && loneUnion(d.oldRoot, o, k) && !hasUnion(n):
			d.branches(ptr+"/"+k, ctx, k, ou, []any{newS})
			return
		case nIs && !oIs && loneUnion(d.newRoot, n, k) && !hasUnion(o):
			d.branches(ptr+"/"+k, ctx, k, []any{oldS}, nu)
			return
		}
	}

	// A definition's doc comment travels with references to it, not with
	// its body inlined: when only one side goes through the definition, a
	// description present on one side only is that artefact, not an edit.
	// A description written next to a $ref (a doc comment on the field
	// using the definition) is the use site's own, never that artefact.
	inlinedDocs := (or.def == "") != (nr.def == "") && !refDocs(oldS) && !refDocs(newS)
	d.annotations(ptr, ctx, o, n, inlinedDocs)
	if d.values(ptr, ctx, oldS, newS, o, n) {
		return
	}
	d.types(ptr, ctx, o, n)
	// Type-specific keywords matter only when both sides admit the type:
	// a string that became an integer is one type change, not also a
	// dropped maxLength.
	ot, nt := typeSet(o), typeSet(n)
	both := func(t string) bool { return typeContains(ot, t) && typeContains(nt, t) }
	if both("number") || both("integer") {
		intOnly := isIntegerOnly(o) && isIntegerOnly(n)
		d.bound(ptr, ctx, o, n, "minimum", "exclusiveMinimum", true, intOnly)
		d.bound(ptr, ctx, o, n, "maximum", "exclusiveMaximum", false, intOnly)
		d.multipleOf(ptr, ctx, o, n)
	}
	tuple := hasPrefix(o) || hasPrefix(n)
	for _, c := range []struct{ key, kind, typ, unit string }{
		{"minLength", "min-length", "string", "characters"}, {"minItems", "min-items", "array", "items"}, {"minProperties", "min-properties", "object", "properties"},
		{"maxLength", "max-length", "string", "characters"}, {"maxItems", "max-items", "array", "items"}, {"maxProperties", "max-properties", "object", "properties"},
	} {
		if both(c.typ) && !(tuple && c.typ == "array") {
			d.count(ptr, ctx, o, n, c.key, c.kind, c.unit, strings.HasPrefix(c.key, "min"))
		}
	}
	if both("string") {
		po, pn := formatsAsPatterns(o, n)
		d.patterns(ptr, ctx, po, pn)
		d.formats(ptr, ctx, po, pn)
	}
	if both("array") {
		if ob, nb := o["uniqueItems"] == true, n["uniqueItems"] == true; ob != nb {
			if nb {
				d.addEffect("unique-items", narrowed, ptr+"/uniqueItems", ctx, "items must now be unique")
			} else {
				d.addEffect("unique-items", widened, ptr+"/uniqueItems", ctx, "items no longer have to be unique")
			}
		}
		d.array(ptr, ctx, o, n)
	}
	if both("object") {
		d.object(ptr, ctx, o, n)
	}
	d.union(ptr, ctx, o, n, "oneOf")
	d.union(ptr, ctx, o, n, "anyOf")
	d.allOf(ptr, ctx, o, n)
	d.exclusions(ptr, ctx, oldS, newS, o, n)
	d.fallback(ptr, ctx, o, n)
}

// inlinedDef returns the definition a union or conjunction changed in, when
// the translator inlined it there: old and new combine the same members
// (anyOf, oneOf or allOf) but one, and that one is, on each side, the body
// of the same named definition (#RefundReason | null with a value added to
// #RefundReason). "" otherwise.
func (d *schemaDiff) inlinedDef(oldS, newS any) (name string, oldBody, newBody any) {
	if d.opts.defs == nil {
		return "", nil, nil
	}
	om, ok1 := oldS.(map[string]any)
	nm, ok2 := newS.(map[string]any)
	if !ok1 || !ok2 {
		return "", nil, nil
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		ob, oIs := om[k].([]any)
		nb, nIs := nm[k].([]any)
		if !oIs || !nIs || len(ob) != len(nb) {
			continue
		}
		gone, came := valuesMinus(ob, nb), valuesMinus(nb, ob)
		if len(gone) != 1 || len(came) != 1 {
			return "", nil, nil
		}
		on, nn := d.opts.defs.old[bodyKey(d.oldRoot, gone[0])], d.opts.defs.new[bodyKey(d.newRoot, came[0])]
		var common []string
		for _, name := range on {
			if slices.Contains(nn, name) {
				common = append(common, name)
			}
		}
		if len(common) == 1 {
			return common[0], gone[0], came[0]
		}
		return "", nil, nil
	}
	return "", nil, nil
}

// inlinedChange reports a change made in a definition the translator
// inlined into the union or conjunction at ptr. The node as a whole decides
// whether anything changed for callers (a sibling pattern stricter than the
// definition's hides its widening); when it did, and the definition's own
// change has the same effect, that change is reported — in the words every
// other place using the definition gets, so the findings group into one.
func (d *schemaDiff) inlinedChange(ptr string, ctx defCtx, oldS, newS, oldBody, newBody any) {
	prev := d.inlinedAt
	d.inlinedAt = ptr
	defer func() { d.inlinedAt = prev }()
	start := len(d.out)
	d.compare(ptr, ctx, oldS, newS)
	whole := slices.Clone(d.out[start:])
	if len(whole) == 0 {
		return
	}
	d.out = d.out[:start]
	d.compare(ptr, ctx, oldBody, newBody)
	own := d.out[start:]
	rules := func(fs []schemaFinding) []string {
		out := make([]string, len(fs))
		for i, f := range fs {
			out[i] = f.rule
		}
		slices.Sort(out)
		return out
	}
	if !slices.Equal(rules(whole), rules(own)) {
		d.out = append(d.out[:start], whole...)
	}
}

// bodyKey is a subschema's expanded body without its documentation,
// comparable with defIndex keys.
func bodyKey(root, s any) string {
	e, err := expand(root, s, 0)
	if err != nil {
		return ""
	}
	b, err := graph.Canonical(withoutDocs(e))
	if err != nil {
		return ""
	}
	return string(b)
}

// refDocs reports whether s is a $ref with a title or description of its
// own next to it.
func refDocs(s any) bool {
	m, ok := s.(map[string]any)
	if !ok {
		return false
	}
	_, ref := m["$ref"]
	_, title := m["title"]
	_, desc := m["description"]
	return ref && (title || desc)
}

// excluded returns what a "not" refuses when it is a set of values (CUE's
// != 5 is {"not": {"const": 5}}) or of types (float is {"type": "number",
// "not": {"type": "integer"}}), and whether s's "not" is one of those (or
// absent).
func excluded(s map[string]any) (values []any, types []string, ok bool) {
	not, has := s["not"]
	if !has {
		return nil, nil, true
	}
	m, isMap := not.(map[string]any)
	if !isMap || len(m) == 0 {
		return nil, nil, false
	}
	if t, ok := m["type"]; ok && len(m) == 1 {
		return nil, schematree.TypeNames(t), true
	}
	for k := range m {
		if k != "const" && k != "enum" {
			return nil, nil, false
		}
	}
	vs, ok := valueSet(m)
	return vs, nil, ok
}

// excludedTypes compares the types each side's "not" refuses, among the
// types it otherwise admits: float (a number but not an integer) becoming
// number now accepts whole numbers.
func (d *schemaDiff) excludedTypes(p string, ctx defCtx, o, n map[string]any, ot, nt []string) {
	words := func(ts []string, one bool) string {
		switch {
		case slices.Equal(ts, []string{"integer"}) && one:
			return "a whole number"
		case slices.Equal(ts, []string{"integer"}):
			return "whole numbers"
		case one:
			return typeString(ts)
		}
		return typeString(ts) + " values"
	}
	admitted := func(s map[string]any, ts []string) []string {
		var out []string
		for _, t := range ts {
			if typeContains(typeSet(s), t) {
				out = append(out, t)
			}
		}
		return out
	}
	req := d.dir == Request
	if added := admitted(o, stringsMinus(nt, ot)); len(added) > 0 {
		if req {
			d.addEffect("type", narrowed, p, ctx, "no longer accepts %s", words(added, false))
		} else {
			d.addEffect("type", narrowed, p, ctx, "is never %s any more", words(added, true))
		}
	}
	if removed := admitted(n, stringsMinus(ot, nt)); len(removed) > 0 {
		if req {
			d.addEffect("type", widened, p, ctx, "now also accepts %s", words(removed, false))
		} else {
			d.addEffect("type", widened, p, ctx, "may now be %s", words(removed, true))
		}
	}
}

// exclusions compares the values each side refuses by "not": a value newly
// refused narrows, one no longer refused widens — counted only when the
// rest of the schema admits it (!= 0 next to >= 1 excludes nothing).
func (d *schemaDiff) exclusions(ptr string, ctx defCtx, oRaw, nRaw any, o, n map[string]any) {
	oe, ot, ok1 := excluded(o)
	ne, nt, ok2 := excluded(n)
	if !ok1 || !ok2 {
		return // fallback reports it
	}
	d.excludedTypes(ptr+"/not", ctx, o, n, ot, nt)
	without := func(raw any) any {
		m, ok := raw.(map[string]any)
		if !ok {
			return raw
		}
		cp := clone(m)
		delete(cp, "not")
		return cp
	}
	relevant := func(root, raw any, vs []any) []any {
		var out []any
		for _, v := range vs {
			if ok, known := d.vals.accepts(root, without(raw), v); ok || !known {
				out = append(out, v)
			}
		}
		return out
	}
	p := ptr + "/not"
	req := d.dir == Request
	if added := relevant(d.oldRoot, oRaw, valuesMinus(ne, oe)); len(added) > 0 {
		if req {
			d.addEffect("enum", narrowed, p, ctx, "no longer accepts %s", valuesString(added))
		} else {
			d.addEffect("enum", narrowed, p, ctx, "is never %s any more", valuesOr(added))
		}
	}
	if removed := relevant(d.newRoot, nRaw, valuesMinus(oe, ne)); len(removed) > 0 {
		if req {
			d.addEffect("enum", widened, p, ctx, "now also accepts %s", valuesString(removed))
		} else {
			d.addEffect("enum", widened, p, ctx, "may now be %s", valuesOr(removed))
		}
	}
}

// schemaRemoved says what callers notice when an operation loses its
// #query or #input (names: its properties): the HTTP mount refuses a query
// the operation does not declare, and the tool transports arguments they
// cannot place; a body is no longer read, so what HTTP callers send in it
// silently stops having an effect. tools reports that the operation has
// tool rows too, so the message is the same in both views.
func schemaRemoved(unit string, names []string, tools bool) string {
	graph.SortUTF16(names)
	what := "its values"
	if len(names) > 0 {
		what = strings.Join(names, ", ")
	}
	switch {
	case unit == "input" && tools:
		return fmt.Sprintf("no longer declared: %s sent in an HTTP body are ignored (they no longer have any effect), and tool calls that still pass them are rejected", what)
	case unit == "input":
		return fmt.Sprintf("no longer declared: %s sent in the body are ignored, so they no longer have any effect", what)
	}
	return fmt.Sprintf("no longer declared; requests that still pass %s are rejected", what)
}

// schemaAdded classifies a schema slot that appears (an operation gains
// #input, #query or #output). A new request schema breaks callers only when
// it requires something; a new response schema is information callers did
// not have before.
func (d *schemaDiff) schemaAdded(ptr string, ctx defCtx, newS any) {
	if d.dir == Response {
		d.add("schema-added", Info, ptr, ctx, "now declared")
		return
	}
	n := resolve(d.newRoot, newS).m
	if req := stringSet(n["required"]); len(req) > 0 {
		graph.SortUTF16(req)
		d.add("schema-added", Breaking, ptr, ctx, "now declared, requiring %s; requests without %s are now rejected",
			strings.Join(req, ", "), map[bool]string{true: "it", false: "them"}[len(req) == 1])
		return
	}
	props, _ := n["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	graph.SortUTF16(names)
	if len(names) > 0 {
		d.add("schema-added", Info, ptr, ctx, "now declared (%s, all optional)", strings.Join(names, ", "))
		return
	}
	d.add("schema-added", Info, ptr, ctx, "now declared; nothing in it is required")
}

func (d *schemaDiff) annotations(ptr string, ctx defCtx, o, n map[string]any, inlinedDocs bool) {
	for _, k := range []string{"title", "description"} {
		ov, oHas := o[k]
		nv, nHas := n[k]
		switch {
		case jsonEqual(ov, nv), inlinedDocs && oHas != nHas:
		case !oHas:
			d.add("description-changed", Info, ptr+"/"+k, ctx, "%s added: %s", k, short(nv))
		case !nHas:
			d.add("description-changed", Info, ptr+"/"+k, ctx, "%s removed (it was %s)", k, short(ov))
		default:
			d.add("description-changed", Info, ptr+"/"+k, ctx, "%s changed from %s to %s", k, short(ov), short(nv))
		}
	}
	if !jsonEqual(o["examples"], n["examples"]) {
		d.add("examples-changed", Info, ptr+"/examples", ctx, "examples changed")
	}
	od, oHas := o["default"]
	nd, nHas := n["default"]
	if oHas && nHas && soleValue(o, od) && soleValue(n, nd) {
		// A concrete CUE field (kind: "email") is its one value and its
		// default: the value's change says it all.
		oHas, nHas = false, false
	}
	req := d.dir == Request
	p := ptr + "/default"
	switch {
	case oHas && nHas && !jsonEqual(od, nd):
		if req {
			// The server fills the default in for callers that omit the
			// value: they get a different behaviour, and nothing fails.
			d.add("default-changed", Breaking, p, ctx, "default changed from %s to %s; callers that omit it now get %s, silently", short(od), short(nd), short(nd))
		} else {
			d.add("default-changed", Info, p, ctx, "default changed from %s to %s", short(od), short(nd))
		}
	case !oHas && nHas:
		if req {
			d.add("default-added", Warning, p, ctx, "default %s added; callers that omit it now get %s", short(nd), short(nd))
		} else {
			d.add("default-added", Info, p, ctx, "default %s added", short(nd))
		}
	case oHas && !nHas:
		if req {
			d.add("default-removed", Warning, p, ctx, "default %s removed; callers that omit it no longer get %s", short(od), short(od))
		} else {
			d.add("default-removed", Info, p, ctx, "default %s removed", short(od))
		}
	}
	if ob, nb := o["deprecated"] == true, n["deprecated"] == true; ob != nb {
		if nb {
			d.add("deprecated", Warning, ptr+"/deprecated", ctx, "now deprecated")
		} else {
			d.add("undeprecated", Info, ptr+"/deprecated", ctx, "no longer deprecated")
		}
	}
	for _, k := range []string{"readOnly", "writeOnly"} {
		if !jsonEqual(o[k], n[k]) {
			d.add("annotation-changed", Info, ptr+"/"+k, ctx, "%s changed from %s to %s", k, short(o[k]), short(n[k]))
		}
	}
}

// soleValue reports whether s admits exactly one value, v.
func soleValue(s map[string]any, v any) bool {
	vs, ok := valueSet(s)
	return ok && len(vs) == 1 && jsonEqual(vs[0], v)
}

// allTypes is every JSON Schema type; "number" includes "integer".
var allTypes = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

// typeSet returns the JSON types s admits.
func typeSet(s map[string]any) []string {
	if not, ok := s["not"].(map[string]any); ok && len(not) == 0 {
		return nil // false schema
	}
	if t, ok := s["type"]; ok {
		out := schematree.TypeNames(t)
		slices.Sort(out)
		return out
	}
	if vals, ok := valueSet(s); ok {
		return valueTypes(vals)
	}
	return allTypes
}

func typeContains(set []string, t string) bool {
	return slices.Contains(set, t) || (t == "integer" && slices.Contains(set, "number"))
}

func typeSubset(a, b []string) bool {
	for _, t := range a {
		if !typeContains(b, t) {
			return false
		}
	}
	return true
}

// typeMinus returns the types of a that b does not admit.
func typeMinus(a, b []string) []string {
	var out []string
	for _, t := range a {
		if !typeContains(b, t) {
			out = append(out, t)
		}
	}
	return out
}

func isIntegerOnly(s map[string]any) bool {
	ts := typeSet(s)
	return len(ts) == 1 && ts[0] == "integer"
}

// isScalar reports whether every type of ts is a single JSON value kind
// other than array and object (and ts is not every type).
func isScalar(ts []string) bool {
	if len(ts) == 0 || len(ts) == len(allTypes) {
		return false
	}
	for _, t := range ts {
		if t == "array" || t == "object" {
			return false
		}
	}
	return true
}

func (d *schemaDiff) types(ptr string, ctx defCtx, o, n map[string]any) {
	ot, nt := typeSet(o), typeSet(n)
	sub, super := typeSubset(nt, ot), typeSubset(ot, nt)
	if sub && super {
		return
	}
	p := ptr + "/type"
	req := d.dir == Request
	added, removed := typeMinus(nt, ot), typeMinus(ot, nt)
	switch {
	case super && slices.Equal(added, []string{"null"}):
		if req {
			d.addEffect("type", widened, p, ctx, "now accepts null")
		} else {
			d.addEffect("type", widened, p, ctx, "may now be null")
		}
	case sub && slices.Equal(removed, []string{"null"}):
		if req {
			d.addEffect("type", narrowed, p, ctx, "no longer accepts null")
		} else {
			d.addEffect("type", narrowed, p, ctx, "is never null any more")
		}
	case isScalar(ot) && slices.Equal(nt, []string{"array"}):
		d.addEffect("type", changed, p, ctx, "is now a list of values (it was a single %s)", typeString(ot))
	case slices.Equal(ot, []string{"array"}) && isScalar(nt):
		d.addEffect("type", changed, p, ctx, "is now a single %s (it was a list of values)", typeString(nt))
	case super && slices.Equal(ot, []string{"integer"}) && slices.Equal(added, []string{"number"}):
		if req {
			d.addEffect("type", widened, p, ctx, "now accepts fractional numbers (it accepted whole numbers only)")
		} else {
			d.addEffect("type", widened, p, ctx, "may now be a fractional number (it was always a whole number)")
		}
	case sub && slices.Equal(nt, []string{"integer"}) && slices.Contains(ot, "number"):
		if req {
			d.addEffect("type", narrowed, p, ctx, "now accepts whole numbers only")
		} else {
			d.addEffect("type", narrowed, p, ctx, "is now always a whole number")
		}
	case sub && req:
		d.addEffect("type", narrowed, p, ctx, "now accepts only %s (it also accepted %s)", typeWords(nt, true), typeWords(removed, true))
	case sub:
		d.addEffect("type", narrowed, p, ctx, "is now always %s (it could also be %s)", typeWords(nt, false), typeWords(removed, false))
	case super && req:
		d.addEffect("type", widened, p, ctx, "now also accepts %s", typeWords(added, true))
	case super:
		d.addEffect("type", widened, p, ctx, "may now also be %s", typeWords(added, false))
	default:
		d.addEffect("type", changed, p, ctx, "is now %s (it was %s)", typeWords(nt, false), typeWords(ot, false))
	}
}

// typeWords names JSON types for a message: "a string or an integer"
// (plural: "strings or whole numbers").
func typeWords(ts []string, plural bool) string {
	switch {
	case len(ts) == 0:
		return "nothing"
	case len(ts) == len(allTypes):
		return "any value"
	}
	one := map[string]string{"array": "a list", "boolean": "a boolean", "integer": "a whole number", "null": "null",
		"number": "a number", "object": "an object", "string": "a string"}
	many := map[string]string{"array": "lists", "boolean": "booleans", "integer": "whole numbers", "null": "null",
		"number": "numbers", "object": "objects", "string": "strings"}
	words := make([]string, len(ts))
	for i, t := range ts {
		words[i] = one[t]
		if plural {
			words[i] = many[t]
		}
		if words[i] == "" {
			words[i] = t
		}
	}
	if len(words) == 1 {
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// num renders a bound or a count as written in a contract: 99999999, not
// 9.9999999e+07.
func num(v float64) string {
	if math.Abs(v) < 1e21 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// counted renders "1 item", "3 items", "1 property", "2 characters".
func counted(v float64, unit string) string {
	if v == 1 {
		switch {
		case strings.HasSuffix(unit, "ies"):
			unit = strings.TrimSuffix(unit, "ies") + "y"
		case strings.HasSuffix(unit, "s"):
			unit = strings.TrimSuffix(unit, "s")
		}
	}
	return num(v) + " " + unit
}

func typeString(ts []string) string {
	switch {
	case len(ts) == 0:
		return "nothing"
	case len(ts) == len(allTypes):
		return "any value"
	case len(ts) == 1:
		return ts[0]
	}
	return strings.Join(ts[:len(ts)-1], ", ") + " or " + ts[len(ts)-1]
}

// boundOf returns the effective lower (or upper) bound of s as a value and
// whether it is exclusive. For integer-only schemas exclusive bounds are
// turned into inclusive ones, so >0 and >=1 compare equal.
func boundOf(s map[string]any, incl, excl string, lower, intOnly bool) (v float64, exclusive, ok bool) {
	if x, isNum := number(s[incl]); isNum {
		v, ok = x, true
	}
	if x, isNum := number(s[excl]); isNum {
		if !ok || (lower && x >= v) || (!lower && x <= v) {
			v, exclusive, ok = x, true, true
		}
	}
	if ok && intOnly {
		switch {
		case lower && exclusive:
			v, exclusive = math.Floor(v)+1, false
		case lower:
			v = math.Ceil(v)
		case exclusive:
			v, exclusive = math.Ceil(v)-1, false
		default:
			v = math.Floor(v)
		}
	}
	return v, exclusive, ok
}

func number(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

func (d *schemaDiff) bound(ptr string, ctx defCtx, o, n map[string]any, incl, excl string, lower, intOnly bool) {
	ov, oe, oOK := boundOf(o, incl, excl, lower, intOnly)
	nv, ne, nOK := boundOf(n, incl, excl, lower, intOnly)
	key := incl
	if _, ok := n[excl]; ok {
		key = excl
	} else if _, ok := n[incl]; !ok {
		if _, ok := o[excl]; ok {
			key = excl
		}
	}
	p := ptr + "/" + key
	name, side := "maximum", "upper"
	if lower {
		name, side = "minimum", "lower"
	}
	switch {
	case !oOK && !nOK:
		return
	case !oOK:
		d.addEffect(name, narrowed, p, ctx, "now %s (no %s bound before)", boundString(nv, ne, lower), side)
		return
	case !nOK:
		d.addEffect(name, widened, p, ctx, "no %s bound any more (it was %s)", side, boundString(ov, oe, lower))
		return
	}
	if ov == nv && oe == ne {
		return
	}
	tighter := nv > ov || (nv == ov && ne && !oe)
	if !lower {
		tighter = nv < ov || (nv == ov && ne && !oe)
	}
	e := widened
	if tighter {
		e = narrowed
	}
	d.addEffect(name, e, p, ctx, "now %s (it was %s)", boundString(nv, ne, lower), boundString(ov, oe, lower))
}

func boundString(v float64, exclusive, lower bool) string {
	op := ">="
	switch {
	case lower && exclusive:
		op = ">"
	case !lower && exclusive:
		op = "<"
	case !lower:
		op = "<="
	}
	return op + " " + num(v)
}

func (d *schemaDiff) multipleOf(ptr string, ctx defCtx, o, n map[string]any) {
	ov, oOK := number(o["multipleOf"])
	nv, nOK := number(n["multipleOf"])
	p := ptr + "/multipleOf"
	switch {
	case !oOK && !nOK:
	case !oOK:
		d.addEffect("multiple-of", narrowed, p, ctx, "must now be a multiple of %s", num(nv))
	case !nOK:
		d.addEffect("multiple-of", widened, p, ctx, "no longer has to be a multiple of %s", num(ov))
	case ov == nv:
	case isMultiple(nv, ov):
		d.addEffect("multiple-of", narrowed, p, ctx, "must now be a multiple of %s (it was %s)", num(nv), num(ov))
	case isMultiple(ov, nv):
		d.addEffect("multiple-of", widened, p, ctx, "must now be a multiple of %s (it was %s)", num(nv), num(ov))
	default:
		d.addEffect("multiple-of", changed, p, ctx, "must now be a multiple of %s (it was %s)", num(nv), num(ov))
	}
}

func isMultiple(a, b float64) bool {
	if b == 0 {
		return false
	}
	q := a / b
	return math.Abs(q-math.Round(q)) < 1e-9
}

// count compares a non-negative integer bound (minLength, maxItems, ...).
// An absent lower bound is 0; an absent upper bound is unbounded.
func (d *schemaDiff) count(ptr string, ctx defCtx, o, n map[string]any, key, kind, unit string, lower bool) {
	ov, oOK := number(o[key])
	nv, nOK := number(n[key])
	p := ptr + "/" + key
	if lower {
		if !oOK {
			ov = 0
		}
		if !nOK {
			nv = 0
		}
		switch {
		case ov == nv:
		case nv == 0:
			d.addEffect(kind, widened, p, ctx, "no minimum number of %s any more (it was %s)", unit, num(ov))
		case nv > ov:
			d.addEffect(kind, narrowed, p, ctx, "now at least %s (it was %s)", counted(nv, unit), num(ov))
		default:
			d.addEffect(kind, widened, p, ctx, "now at least %s (it was %s)", counted(nv, unit), num(ov))
		}
		return
	}
	switch {
	case !oOK && !nOK:
	case !oOK:
		d.addEffect(kind, narrowed, p, ctx, "now at most %s (no limit before)", counted(nv, unit))
	case !nOK:
		d.addEffect(kind, widened, p, ctx, "no longer limited to %s", counted(ov, unit))
	case nv < ov:
		d.addEffect(kind, narrowed, p, ctx, "now at most %s (it was %s)", counted(nv, unit), num(ov))
	case nv > ov:
		d.addEffect(kind, widened, p, ctx, "now at most %s (it was %s)", counted(nv, unit), num(ov))
	}
}

// patterns compares the patterns a string must match (a $ref with a
// pattern sibling must match both: a set).
func (d *schemaDiff) patterns(ptr string, ctx defCtx, o, n map[string]any) {
	op, np := stringList(o["pattern"]), stringList(n["pattern"])
	slices.Sort(op)
	slices.Sort(np)
	if slices.Equal(op, np) {
		return
	}
	p := ptr + "/pattern"
	added, removed := stringsMinus(np, op), stringsMinus(op, np)
	// A pattern both sides keep (a definition's, next to the sibling that
	// changed) is named apart: it is not what changed.
	replaced := fmt.Sprintf("pattern changed from %s to %s", quoteAll(op), quoteAll(np))
	if kept := stringsMinus(op, removed); len(kept) > 0 {
		replaced = fmt.Sprintf("pattern %s became %s (%s still applies)", quoteAll(removed), quoteAll(added), quoteAll(kept))
	}
	// Patterns are regular languages: decide inclusion where we can.
	sub, k1 := patternsSubset(np, op)
	super, k2 := patternsSubset(op, np)
	if k1 && k2 {
		switch {
		case sub && super:
			return // the same strings
		case sub && len(op) == 0:
			d.addEffect("pattern", narrowed, p, ctx, "must now match %s", quoteAll(added))
		case sub && len(removed) == 0:
			d.addEffect("pattern", narrowed, p, ctx, "must now also match %s", quoteAll(added))
		case sub:
			d.addEffect("pattern", narrowed, p, ctx, "%s, which admits fewer values", replaced)
		case super && len(added) == 0:
			d.addEffect("pattern", widened, p, ctx, "no longer has to match %s", quoteAll(removed))
		case super:
			d.addEffect("pattern", widened, p, ctx, "%s, which admits every value it did and more", replaced)
		default:
			d.addEffect("pattern", changed, p, ctx, "%s; each admits values the other refuses", replaced)
		}
		return
	}
	switch {
	case len(removed) == 0 && len(op) == 0:
		d.addEffect("pattern", narrowed, p, ctx, "must now match %s", quoteAll(added))
	case len(removed) == 0:
		d.addEffect("pattern", narrowed, p, ctx, "must now also match %s", quoteAll(added))
	case len(added) == 0:
		d.addEffect("pattern", widened, p, ctx, "no longer has to match %s", quoteAll(removed))
	default:
		d.addEffect("pattern", changed, p, ctx, "%s", replaced)
	}
}

// formatLanguages are the formats whose strings are a regular language,
// written as the pattern that admits exactly the strings pkg/validate (and
// CUE) accept. "date" is Go's time.Parse(time.DateOnly): four digits, a
// month 01–12, a day that exists in that month of that (proleptic
// Gregorian) year — 29 February only in leap years.
var formatLanguages = map[string]string{
	"date": `^(?:[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))|(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29)$`,
}

// formatsAsPatterns returns o and n with each format only one side asserts
// replaced by its pattern, when it has one (formatLanguages): a format
// traded for an equivalent pattern (time.Format("2006-01-02") for a date
// regular expression) is then one comparison of two languages — nothing
// when they are equal — instead of a format widened and a pattern
// narrowed on one value.
func formatsAsPatterns(o, n map[string]any) (map[string]any, map[string]any) {
	of, nf := stringList(o["format"]), stringList(n["format"])
	convert := func(m map[string]any, fs, other []string) map[string]any {
		var keep, pats []string
		for _, f := range fs {
			if re, ok := formatLanguages[f]; ok && !slices.Contains(other, f) {
				pats = append(pats, re)
			} else {
				keep = append(keep, f)
			}
		}
		if len(pats) == 0 {
			return m
		}
		out := clone(m)
		delete(out, "format")
		if len(keep) > 0 {
			out["format"] = typeValue(keep)
		}
		var all []any
		for _, p := range append(stringList(m["pattern"]), pats...) {
			all = append(all, p)
		}
		out["pattern"] = all
		return out
	}
	return convert(o, of, nf), convert(n, nf, of)
}

func (d *schemaDiff) formats(ptr string, ctx defCtx, o, n map[string]any) {
	of, nf := stringList(o["format"]), stringList(n["format"])
	slices.Sort(of)
	slices.Sort(nf)
	if slices.Equal(of, nf) {
		return
	}
	p := ptr + "/format"
	added, removed := stringsMinus(nf, of), stringsMinus(of, nf)
	switch {
	case len(removed) == 0:
		d.addEffect("format", narrowed, p, ctx, "must now be a valid %s", strings.Join(added, " and "))
	case len(added) == 0:
		d.addEffect("format", widened, p, ctx, "no longer has to be a valid %s", strings.Join(removed, " and "))
	default:
		d.addEffect("format", changed, p, ctx, "format changed from %s to %s", strings.Join(of, " and "), strings.Join(nf, " and "))
	}
}

func stringsMinus(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
		for name, re := range formatLanguages {
			if s == re {
				q[i] = "format " + name
			}
		}
	}
	return strings.Join(q, " and ")
}

func stringSet(v any) []string {
	arr, _ := v.([]any)
	var out []string
	for _, e := range arr {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func (d *schemaDiff) object(ptr string, ctx defCtx, o, n map[string]any) {
	op, _ := o["properties"].(map[string]any)
	np, _ := n["properties"].(map[string]any)
	oreq, nreq := stringSet(o["required"]), stringSet(n["required"])
	names := map[string]bool{}
	for k := range op {
		names[k] = true
	}
	for k := range np {
		names[k] = true
	}
	for _, k := range oreq {
		names[k] = true
	}
	for _, k := range nreq {
		names[k] = true
	}
	sorted := make([]string, 0, len(names))
	for k := range names {
		sorted = append(sorted, k)
	}
	graph.SortUTF16(sorted)
	nClosed := openness(n) == closed
	for _, k := range sorted {
		p := ptr + "/properties/" + schematree.Escape(k)
		os, inOld := op[k]
		ns, inNew := np[k]
		wasReq, isReq := slices.Contains(oreq, k), slices.Contains(nreq, k)
		inOld = inOld || wasReq
		inNew = inNew || isReq
		switch {
		case !inOld:
			d.propertyAdded(p, ctx, isReq, openness(o) == closed)
			continue
		case !inNew:
			d.propertyRemoved(p, ctx, wasReq, nClosed)
			continue
		}
		if os == nil {
			os = true
		}
		if ns == nil {
			ns = true
		}
		d.property(p, ctx, os, ns, wasReq, isReq, d.opts.queryWire && ptr == "")
	}

	oa, na := openness(o), openness(n)
	p := ptr + "/additionalProperties"
	switch {
	case oa == na && oa != schemaProps:
	case oa == schemaProps && na == schemaProps:
		d.compare(p, ctx, o["additionalProperties"], n["additionalProperties"])
	case na == closed || (oa == open && na == schemaProps):
		if na != closed {
			d.addEffect("additional-properties", narrowed, p, ctx, "undeclared fields are now constrained")
		} else if d.dir == Request {
			d.addEffect("additional-properties", narrowed, p, ctx, "unknown fields are now rejected")
		} else {
			d.addEffect("additional-properties", narrowed, p, ctx, "no longer carries undeclared fields")
		}
	default:
		if d.dir == Response && d.opts.validated && oa == closed {
			d.add("closed-object-opened", Breaking, p, ctx, "may now carry undeclared fields; clients validating frames against the old contract (stitchkit's clients do) refuse them")
		} else if d.dir == Response {
			// Most JSON decoders ignore unknown fields; strict or
			// generated clients do not. Adding a response property is
			// info, so opening the whole object is a warning.
			d.add("additional-properties-widened", Warning, p, ctx, "may now carry undeclared fields; strict clients may reject unknown fields")
		} else {
			d.addEffect("additional-properties", widened, p, ctx, "unknown fields are now accepted")
		}
	}
}

// propertyAdded classifies a property only the new side declares;
// wasClosed reports that the old object refused undeclared fields.
func (d *schemaDiff) propertyAdded(p string, ctx defCtx, required, wasClosed bool) {
	switch {
	case d.dir == Response && d.opts.validated && wasClosed:
		// Realtime clients validate each event against the contract
		// they were built from: a closed object with a field it does not
		// know is invalid there, as an appended argument is.
		d.add("closed-object-property-added", Breaking, p, ctx, "added to a closed object; clients validating frames against the old contract (stitchkit's clients do) refuse it")
	case d.dir == Response:
		d.add("property-added", Info, p, ctx, "added")
	case required:
		d.add("required-property-added", Breaking, p, ctx, "added as a required field; requests without it are now rejected")
	default:
		d.add("optional-property-added", Info, p, ctx, "added as an optional field")
	}
}

func (d *schemaDiff) propertyRemoved(p string, ctx defCtx, wasRequired, closedNow bool) {
	switch {
	case d.dir == Request && closedNow:
		d.add("property-removed", Breaking, p, ctx, "removed, and unknown fields are rejected; requests that still send it are now rejected")
	case d.dir == Request:
		d.add("property-removed", Warning, p, ctx, "removed; requests that still send it are accepted but the value is ignored")
	case wasRequired:
		d.add("required-property-removed", Breaking, p, ctx, "removed; callers reading it break")
	default:
		d.add("optional-property-removed", Warning, p, ctx, "removed (it was optional); callers reading it no longer get it")
	}
}

// property compares a property both sides declare: its requiredness, then
// its schema (as an HTTP query parameter when query is set). A default
// that appears with the property becoming optional, or disappears with it
// becoming required, is part of that one change: nobody omitted a required
// value, so its new default surprises no one, and a value that must now be
// sent has no use for a default.
func (d *schemaDiff) property(p string, ctx defCtx, os, ns any, wasReq, isReq, query bool) {
	var oldDefault any
	hadDefault, hasDefault := false, false
	if m := resolve(d.oldRoot, os).m; m != nil {
		oldDefault, hadDefault = m["default"]
	}
	if m := resolve(d.newRoot, ns).m; m != nil {
		_, hasDefault = m["default"]
	}
	if !wasReq && isReq && hadDefault && d.dir == Request {
		d.add("property-became-required", Breaking, p, ctx, "now required (it defaulted to %s); requests without it are now rejected", short(oldDefault))
	} else {
		d.requiredChanged(p, ctx, wasReq, isReq, hasDefault)
	}
	start := len(d.out)
	if query {
		d.queryParam(p, ctx, os, ns)
	} else {
		d.compare(p, ctx, os, ns)
	}
	if wasReq == isReq {
		return
	}
	implied := d.dir.String() + "-default-removed"
	if !isReq {
		implied = d.dir.String() + "-default-added"
	}
	kept := d.out[:start]
	for _, f := range d.out[start:] {
		if f.rule != implied || f.pointer != p+"/default" {
			kept = append(kept, f)
		}
	}
	d.out = kept
}

func (d *schemaDiff) requiredChanged(p string, ctx defCtx, wasReq, isReq, defaulted bool) {
	switch {
	case wasReq && !isReq:
		switch {
		case d.dir == Request && defaulted:
			d.add("property-became-optional", Info, p, ctx, "no longer required (callers that omit it get its default)")
		case d.dir == Request:
			d.add("property-became-optional", Info, p, ctx, "no longer required")
		case defaulted:
			// Responses are validated, not completed: a handler may
			// leave a value with a default out.
			d.add("property-became-optional", Breaking, p, ctx, "no longer always returned: it has a default now, and a response may leave out a value with a default; callers reading it may find it missing")
		default:
			d.add("property-became-optional", Breaking, p, ctx, "no longer always returned; callers reading it may find it missing")
		}
	case !wasReq && isReq:
		if d.dir == Request {
			d.add("property-became-required", Breaking, p, ctx, "now required; requests without it are now rejected")
		} else {
			d.add("property-became-required", Info, p, ctx, "now always returned")
		}
	}
}

// queryParam compares one HTTP query parameter. On the wire a list
// parameter is the key repeated (style form, explode), so ?status=a is a
// list of one: a scalar that became a list of its type accepts every
// request it accepted, and the reverse refuses requests repeating the key.
func (d *schemaDiff) queryParam(p string, ctx defCtx, os, ns any) {
	o, n := resolve(d.oldRoot, os).m, resolve(d.newRoot, ns).m
	if o == nil || n == nil {
		d.compare(p, ctx, os, ns)
		return
	}
	ot, nt := typeSet(o), typeSet(n)
	list := []string{"array"}
	items := func(s map[string]any) any {
		if v, ok := s["items"]; ok {
			return v
		}
		return true
	}
	switch {
	case isScalar(ot) && slices.Equal(nt, list):
		d.addEffect("type", widened, p+"/type", ctx, "now accepts several values (the parameter repeated); one value is still accepted")
		d.compare(p+"/items", ctx, os, items(n))
	case slices.Equal(ot, list) && isScalar(nt):
		d.addEffect("type", narrowed, p+"/type", ctx, "now accepts one value only (it accepted the parameter repeated)")
		d.compare(p+"/items", ctx, items(o), ns)
	default:
		d.compare(p, ctx, os, ns)
	}
}

func hasPrefix(s map[string]any) bool {
	_, ok := s["prefixItems"].([]any)
	return ok
}

func (d *schemaDiff) array(ptr string, ctx defCtx, o, n map[string]any) {
	if hasPrefix(o) || hasPrefix(n) {
		d.tuple(ptr, ctx, o, n)
		return
	}
	_, oi := o["items"]
	_, ni := n["items"]
	if oi || ni {
		d.compare(ptr+"/items", ctx, rest(o), rest(n))
	}
}

// rest is the schema of the items after the prefix.
func rest(s map[string]any) any {
	if v, ok := s["items"]; ok {
		return v
	}
	return true
}

// arity returns how many items a tuple schema admits: at least min, at
// most max (-1: unbounded).
func arity(s map[string]any) (lo, hi int) {
	hi = -1
	if v, ok := number(s["minItems"]); ok {
		lo = int(v)
	}
	if v, ok := number(s["maxItems"]); ok {
		hi = int(v)
	}
	if b, ok := s["items"].(bool); ok && !b {
		pi, _ := s["prefixItems"].([]any)
		if hi < 0 || hi > len(pi) {
			hi = len(pi)
		}
	}
	return lo, hi
}

// tuple compares positional items (realtime event arguments are tuples):
// the positions both sides admit are compared item by item; positions
// only one side admits change the arity, reported once.
func (d *schemaDiff) tuple(ptr string, ctx defCtx, o, n map[string]any) {
	opi, _ := o["prefixItems"].([]any)
	npi, _ := n["prefixItems"].([]any)
	oLo, oHi := arity(o)
	nLo, nHi := arity(n)
	reach := func(i, hi int) bool { return hi < 0 || i < hi }
	elem := func(s map[string]any, pi []any, i int) any {
		if i < len(pi) {
			return pi[i]
		}
		return rest(s)
	}
	limit := max(len(opi), len(npi))
	for i := range limit {
		if reach(i, oHi) && reach(i, nHi) {
			d.compare(ptr+"/prefixItems/"+strconv.Itoa(i), ctx, elem(o, opi, i), elem(n, npi, i))
		}
	}
	if reach(limit, oHi) && reach(limit, nHi) {
		_, oi := o["items"]
		_, ni := n["items"]
		if oi || ni {
			d.compare(ptr+"/items", ctx, rest(o), rest(n))
		}
	}
	if oLo == nLo && oHi == nHi {
		return
	}
	inf := func(hi int) int {
		if hi < 0 {
			return math.MaxInt
		}
		return hi
	}
	sub := nLo >= oLo && inf(nHi) <= inf(oHi)
	super := nLo <= oLo && inf(nHi) >= inf(oHi)
	e := changed
	switch {
	case sub:
		e = narrowed
	case super:
		e = widened
	}
	noun, kind := "item", "tuple-length"
	if d.opts.unit == "args" && ptr == "" {
		noun, kind = "argument", "arguments"
	}
	what := fmt.Sprintf("now %s (it was %s)", countRange(nLo, nHi, noun), countRange(oLo, oHi, noun))
	// Name the positions only the new side has.
	var added []string
	for i := inf(oHi); i < inf(nHi) && i < len(npi); i++ {
		opt := ""
		if i >= nLo {
			opt = "optional "
		}
		added = append(added, fmt.Sprintf("the %s%s %s is %s", opt, ordinal(i+1), noun, describe(d.newRoot, npi[i])))
	}
	if len(added) > 0 {
		what += ": " + strings.Join(added, ", ")
	}
	if noun == "argument" && d.dir == Response && e != narrowed {
		what += "; clients that validate frames against the old contract (stitchkit's clients do) reject events carrying it"
	}
	d.addEffect(kind, e, ptr+"/prefixItems", ctx, "%s", what)
}

func countRange(lo, hi int, noun string) string {
	plural := func(n int) string {
		if n == 1 {
			return noun
		}
		return noun + "s"
	}
	switch {
	case hi < 0:
		return fmt.Sprintf("at least %d %s", lo, plural(lo))
	case lo == hi:
		return fmt.Sprintf("exactly %d %s", lo, plural(lo))
	case hi == lo+1:
		return fmt.Sprintf("%d or %d %s", lo, hi, plural(hi))
	}
	return fmt.Sprintf("%d to %d %s", lo, hi, plural(hi))
}

// describe names a schema for a message: its definition, null, its
// discriminator, its values or its type.
func describe(root, s any) string {
	r := resolve(root, s)
	m := r.m
	switch {
	case r.def != "":
		return "#" + r.def
	case m == nil:
		return "absent"
	case isNullSchema(m):
		return "null"
	}
	if sig := discriminator(root, s); sig != "" {
		return "the variant " + sig
	}
	if vs, ok := valueSet(m); ok {
		return valuesOr(vs)
	}
	ts := typeSet(m)
	if len(ts) == len(allTypes) {
		return "any value"
	}
	if slices.Equal(ts, []string{"object"}) {
		names := stringSet(m["required"])
		if len(names) == 0 {
			props, _ := m["properties"].(map[string]any)
			for k := range props {
				names = append(names, k)
			}
		}
		graph.SortUTF16(names)
		switch {
		case len(names) == 0:
		case len(names) > 3:
			return "an object with " + strings.Join(names[:3], ", ") + ", …"
		default:
			return "an object with " + strings.Join(names, ", ")
		}
	}
	words := make([]string, len(ts))
	for i, t := range ts {
		switch t {
		case "array":
			words[i] = "a list"
		case "object", "integer":
			words[i] = "an " + t
		default:
			words[i] = "a " + t
		}
	}
	return strings.Join(words, " or ")
}

// discriminator returns a signature of a union branch: its properties fixed
// by const (e.g. kind="a"), so branches are matched by tag, not position.
func discriminator(root any, s any) string {
	m := resolve(root, s).m
	props, _ := m["properties"].(map[string]any)
	var parts []string
	for k, v := range props {
		pm := resolve(root, v).m
		if vals, ok := valueSet(pm); ok && len(vals) == 1 {
			parts = append(parts, k+"="+short(vals[0]))
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

func (d *schemaDiff) union(ptr string, ctx defCtx, o, n map[string]any, key string) {
	ob, oOK := o[key].([]any)
	nb, nOK := n[key].([]any)
	if !oOK && !nOK {
		return
	}
	p := ptr + "/" + key
	if !oOK || !nOK {
		// A union appeared or disappeared next to other keywords: comparing
		// the lone schema with each branch would guess; report it for a
		// human instead.
		d.add(kebab(key)+"-changed", Warning, p, ctx, "a union (%s) was %s: review the change by hand", key, map[bool]string{true: "added", false: "removed"}[nOK])
		return
	}
	d.branches(p, ctx, key, ob, nb)
}

// branches matches union branches old → new and compares the pairs;
// unmatched old branches narrow, unmatched new branches widen.
func (d *schemaDiff) branches(p string, ctx defCtx, key string, ob, nb []any) {
	oldUsed := make([]bool, len(ob))
	newMatch := make([]int, len(nb))
	for i := range newMatch {
		newMatch[i] = -1
	}
	// 1. identical branches.
	for j, nbr := range nb {
		for i, obr := range ob {
			if !oldUsed[i] && d.sameSchema(obr, nbr) {
				oldUsed[i], newMatch[j] = true, i
				break
			}
		}
	}
	// 2. branches with the same discriminator.
	for j, nbr := range nb {
		if newMatch[j] >= 0 {
			continue
		}
		sig := discriminator(d.newRoot, nbr)
		if sig == "" {
			continue
		}
		for i, obr := range ob {
			if !oldUsed[i] && discriminator(d.oldRoot, obr) == sig {
				oldUsed[i], newMatch[j] = true, i
				break
			}
		}
	}
	// 3. leftovers paired by position when they are as many on each side.
	var lo, ln []int
	for i := range ob {
		if !oldUsed[i] {
			lo = append(lo, i)
		}
	}
	for j := range nb {
		if newMatch[j] < 0 {
			ln = append(ln, j)
		}
	}
	if len(lo) == len(ln) {
		for k := range lo {
			oldUsed[lo[k]], newMatch[ln[k]] = true, lo[k]
		}
	} else {
		// 4. An old branch that a new one takes in whole (a lone schema
		// that became one variant of a union, the others added): compared
		// together, they break nobody. Pair each with the candidate
		// differing least.
		for _, i := range lo {
			best, bestN := -1, 0
			for _, j := range ln {
				if newMatch[j] >= 0 {
					continue
				}
				start := len(d.out)
				d.compare(p+"/"+strconv.Itoa(j), ctx, ob[i], nb[j])
				found := d.out[start:]
				compatible := !slices.ContainsFunc(found, func(f schemaFinding) bool { return f.severity == Breaking })
				n := len(found)
				d.out = d.out[:start]
				if compatible && (best < 0 || n < bestN) {
					best, bestN = j, n
				}
			}
			if best >= 0 {
				oldUsed[i], newMatch[best] = true, i
			}
		}
	}
	req := d.dir == Request
	for j, i := range newMatch {
		bp := p + "/" + strconv.Itoa(j)
		if i < 0 {
			if req {
				d.addEffect(kebab(key), widened, bp, ctx, "now also accepts %s", describe(d.newRoot, nb[j]))
			} else {
				d.addEffect(kebab(key), widened, bp, ctx, "may now also be %s", describe(d.newRoot, nb[j]))
			}
			continue
		}
		d.compare(bp, ctx, ob[i], nb[j])
	}
	for i, used := range oldUsed {
		if !used {
			if req {
				d.addEffect(kebab(key), narrowed, p+"/"+strconv.Itoa(i), ctx, "no longer accepts %s", describe(d.oldRoot, ob[i]))
			} else {
				d.addEffect(kebab(key), narrowed, p+"/"+strconv.Itoa(i), ctx, "is never %s any more", describe(d.oldRoot, ob[i]))
			}
		}
	}
}

// allOf compares the conjunction members that could not be folded into
// one schema, by position.
func (d *schemaDiff) allOf(ptr string, ctx defCtx, o, n map[string]any) {
	ob, _ := o["allOf"].([]any)
	nb, _ := n["allOf"].([]any)
	for i := range max(len(ob), len(nb)) {
		p := ptr + "/allOf/" + strconv.Itoa(i)
		switch {
		case i >= len(ob):
			d.addEffect("all-of", narrowed, p, ctx, "must now also match %s", describe(d.newRoot, nb[i]))
		case i >= len(nb):
			d.addEffect("all-of", widened, p, ctx, "no longer has to match %s", describe(d.oldRoot, ob[i]))
		default:
			d.compare(p, ctx, ob[i], nb[i])
		}
	}
}

// fallback reports every keyword compare does not model.
func (d *schemaDiff) fallback(ptr string, ctx defCtx, o, n map[string]any) {
	keys := map[string]bool{}
	for k := range o {
		keys[k] = true
	}
	for k := range n {
		keys[k] = true
	}
	var sorted []string
	for k := range keys {
		if !handled[k] {
			sorted = append(sorted, k)
		}
	}
	graph.SortUTF16(sorted)
	_, _, oNot := excluded(o)
	_, _, nNot := excluded(n)
	for _, k := range sorted {
		if k == "not" && oNot && nNot {
			continue // refused values: compared by exclusions
		}
		if d.sameSchema(o[k], n[k]) {
			continue
		}
		ov, oHas := o[k]
		nv, nHas := n[k]
		switch {
		case !oHas:
			d.add("schema-keyword-changed", Warning, ptr+"/"+schematree.Escape(k), ctx, "keyword %s added (%s); its effect is not classified, review it by hand", k, short(nv))
		case !nHas:
			d.add("schema-keyword-changed", Warning, ptr+"/"+schematree.Escape(k), ctx, "keyword %s removed (it was %s); its effect is not classified, review it by hand", k, short(ov))
		default:
			d.add("schema-keyword-changed", Warning, ptr+"/"+schematree.Escape(k), ctx, "keyword %s changed from %s to %s; its effect is not classified, review it by hand", k, short(ov), short(nv))
		}
	}
}

// sameSchema reports whether two subschemas are equal once their $refs are
// expanded (so a schema moved into $defs compares equal to itself inline).
func (d *schemaDiff) sameSchema(a, b any) bool {
	ea, erra := expand(d.oldRoot, a, 0)
	eb, errb := expand(d.newRoot, b, 0)
	if erra != nil || errb != nil {
		return jsonEqual(a, b)
	}
	return jsonEqual(ea, eb)
}

// maxExpandNodes bounds the schema nodes one expansion builds: a schema
// whose definitions refer to one another twice over would otherwise
// expand exponentially.
const maxExpandNodes = 20000

// expand inlines local $refs (a reference to a definition already being
// expanded stays a reference, so recursive schemas compare by reference
// text). Only schema positions are expanded; data (const, enum, default)
// is kept as written. It fails past maxExpandNodes.
func expand(root, v any, _ int) (any, error) {
	budget := maxExpandNodes
	return expandBudget(root, v, map[string]bool{}, &budget)
}

func expandBudget(root, v any, active map[string]bool, budget *int) (any, error) {
	if *budget--; *budget < 0 {
		return nil, fmt.Errorf("schema too large to expand")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return v, nil
	}
	if ref, ok := schematree.Ref(m); ok && !active[ref] {
		if t, found := schematree.Resolve(root, ref); found {
			active[ref] = true
			defer delete(active, ref)
			tm, isMap := t.(map[string]any)
			if !isMap {
				return expandBudget(root, t, active, budget)
			}
			merged := clone(tm)
			for k, v := range m {
				if k != "$ref" {
					merged[k] = v
				}
			}
			return expandBudget(root, merged, active, budget)
		}
	}
	out := shallowSchemaCopy(m)
	delete(out, "$defs")
	delete(out, "definitions")
	var err error
	schematree.MapChildren(out, func(c schematree.Child) any {
		if err != nil {
			return c.Schema
		}
		e, cerr := expandBudget(root, c.Schema, active, budget)
		if cerr != nil {
			err = cerr
		}
		return e
	})
	return out, err
}

// shallowSchemaCopy copies a schema object and the containers of its
// sub-schemas (so schematree.MapChildren may replace them), sharing
// everything else.
func shallowSchemaCopy(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		switch x := v.(type) {
		case map[string]any:
			if schematree.KeywordKind(k) == schematree.Map {
				v = clone(x)
			}
		case []any:
			if schematree.KeywordKind(k) != schematree.Data {
				v = slices.Clone(x)
			}
		}
		out[k] = v
	}
	return out
}

func jsonEqual(a, b any) bool {
	ca, err1 := graph.Canonical(a)
	cb, err2 := graph.Canonical(b)
	if err1 != nil || err2 != nil {
		return false
	}
	return bytes.Equal(ca, cb)
}

// short renders a JSON value for a message, truncated.
func short(v any) string {
	if v == nil {
		return "null"
	}
	b, err := graph.Canonical(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

func kebab(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('-')
			b.WriteRune(r - 'A' + 'a')
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
