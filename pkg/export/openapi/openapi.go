// Package openapi exports the HTTP projection of a stitchkit contract as an
// OpenAPI 3.1.0 document.
//
// Start with [Generate]:
//
//	g, err := check.Compile(ctx, "./contracts") // or graph.Load(graphJSON)
//	p, err := project.New(g, &project.Options{HTTPPrefix: "/api"})
//	doc, err := openapi.Generate(p, nil)
//	os.WriteFile("openapi.json", doc, 0o644)
//
// The paths are the projection's routes ([project.Projection.Routes]) —
// the value the HTTP mount and the surface manifest read, with the same
// HTTP prefix — so every path key and method in the document equals a
// manifest HTTP row, and runtime tools and operations not exposed on HTTP
// never appear.
//
// The bytes are deterministic: canonical JSON (keys in UTF-16 code-unit
// order) indented with two spaces and ending in a newline. They do not
// depend on map iteration order or on the order of services in the graph.
//
// # Document shape
//
//   - Path keys are exactly the projector's route paths, in Go net/http
//     pattern syntax. A final "{rest...}" segment is kept verbatim (OpenAPI
//     3.1 allows any character but braces in a template name), so discovery
//     compares OpenAPI path keys to manifest rows by plain string equality.
//     The matching path parameter is named "rest..." and the operation
//     carries "x-stitchkit-trailing-wildcard": "rest" to say the value spans
//     the remaining segments ("/" included).
//   - operationId is "service_action"; summary is the operation's desc; tags
//     hold the service name; "x-stitchkit-scope" holds the effective scope.
//   - Path parameters come from the #params schema's properties (required);
//     query parameters from #query (required per its "required" list; lists
//     use style form, explode true, i.e. repeated keys); #input is the JSON
//     request body, required unless it is an object schema without required
//     properties.
//   - Success is 200 with the #output schema, 204 "No content" without one,
//     and 200 "Headers only" for HEAD.
//   - Every error response carries the HTTP error envelope
//     {"error":{"code","message","details"?}} whose "code" is an enum of the
//     codes that can produce that status: 400 (BAD_REQUEST,
//     VALIDATION_ERROR) and 500 (INTERNAL_SERVER_ERROR) always; 401
//     (UNAUTHORIZED) and 403 (FORBIDDEN) unless the scope is "public"; plus
//     each declared error code under its registry status, codes sharing a
//     status grouped in one response.
//   - Scopes are security requirements on one HTTP bearer scheme named
//     "stitchkit": {"stitchkit": [scope]}. OpenAPI 3.1 allows role names in
//     the requirement of a non-OAuth scheme; stitchkit scopes are exactly
//     that — names the application's auth hook gives meaning to. Public
//     operations declare "security": [].
//   - Operation schemas are embedded as JSON Schema 2020-12 (the OpenAPI
//     3.1 dialect) without any loss. Their "$defs" are hoisted into
//     components.schemas: a definition keeps its name ("Task") unless two
//     different definitions share it, in which case each variant is named
//     after the first schema declaring it ("tasks_get_output_Task"). A
//     schema that is a named definition (`#output: #Task`, which the graph
//     holds inlined) is a "$ref" to the definition's component, so code
//     generators make one Task type. A definition used only that way,
//     never through a reference, has no name in the graph: when the graph
//     has sources it is recognised there (the slot is written as a bare
//     reference and its properties are exactly the definition's fields)
//     and becomes a component too; from a graph.json it stays inline.
//   - A member of a union or conjunction that is exactly a component's
//     body (the graph inlines #Reason | null and #ID & =~"…") is a "$ref"
//     to it, so generators neither make a second type for it nor name one
//     after the property that clashes with the component. A component no
//     operation reaches (a graph's $defs may hold the translator's partial
//     form of a definition that nothing refers to) is left out.
//   - Every enum and const states its "type" (the values imply it), which
//     code generators need to type them.
//   - The contract's examples are OpenAPI examples ("example1", …): the
//     input of each on the request body, the output on the 200 response,
//     params and query values on their parameters.
//   - "servers" lists [Options.Servers], or one server at "/" (the URL
//     OpenAPI assumes when none is given); each tag (service) has a
//     description; [Options.License] and [Options.Contact] fill info. With
//     a license the document passes Redocly's recommended ruleset
//     (TestRedoclyRecommended runs it).
package openapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"stitchkit.dev/stitchkit/pkg/export/internal/schemas"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/project"
)

// Version is the OpenAPI version of the documents this package writes.
const Version = "3.1.0"

// SecuritySchemeName is the name of the security scheme scoped operations
// require.
const SecuritySchemeName = "stitchkit"

// Options configures [Generate]. A nil *Options means defaults.
type Options struct {
	// Servers are listed in the document's "servers" array, in order.
	// None means one server at "/", the URL OpenAPI assumes when servers
	// are absent, stated so that linters and generators see it.
	Servers []Server
	// License is the API's license (info.license); nil leaves it out.
	License *License
	// Contact is who to ask about the API (info.contact); nil leaves it
	// out.
	Contact *Contact
}

// Server is one entry of the document's "servers" array.
type Server struct {
	URL         string
	Description string
}

// License is the document's info.license: a name, and an SPDX identifier
// or a URL (OpenAPI 3.1 allows one of the two).
type License struct {
	Name       string
	Identifier string
	URL        string
}

// Contact is the document's info.contact.
type Contact struct {
	Name, URL, Email string
}

// Generate returns the OpenAPI 3.1.0 JSON document of the HTTP routes of
// the projection p, with its HTTP prefix: the routes a mount built from p
// serves.
// It fails, rather than emit a lossy document, when a schema is missing
// from the graph, a declared error code is not in the error registry, or a
// #params/#query schema is not an object schema.
func Generate(p *project.Projection, opts *Options) ([]byte, error) {
	if p == nil {
		return nil, errors.New("openapi: nil projection")
	}
	if opts == nil {
		opts = &Options{}
	}
	doc, err := build(p, opts)
	if err != nil {
		return nil, err
	}
	out, err := graph.CanonicalIndent(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	return out, nil
}

// opSchemas are the hoisted schemas of one operation.
type opSchemas struct {
	params, query, input, output *schemas.Use
}

func build(p *project.Projection, opts *Options) (map[string]any, error) {
	g, routes := p.Graph(), p.Routes()

	// Register every schema first: component names depend on all of them.
	h := schemas.NewHoister("#/components/schemas/", "")
	uses := make([]opSchemas, len(routes))
	for i, r := range routes {
		op := r.Op
		label := op.Service + "_" + op.Action
		add := func(role string, d graph.Digest) (*schemas.Use, error) {
			if d == "" {
				return nil, nil
			}
			u, err := h.Add(label+"_"+role, g.Schema(d))
			if err != nil {
				return nil, fmt.Errorf("openapi: %s %s: %w", op.ID(), role, err)
			}
			return u, nil
		}
		var err error
		s := &uses[i]
		if s.params, err = add("params", op.Params); err != nil {
			return nil, err
		}
		if s.query, err = add("query", op.Query); err != nil {
			return nil, err
		}
		if s.input, err = add("input", op.Input); err != nil {
			return nil, err
		}
		if s.output, err = add("output", op.Output); err != nil {
			return nil, err
		}
	}
	if err := h.Resolve(); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	comps := map[string]any{}
	for k, v := range h.Components() {
		comps[k] = v
	}
	named := nameWholeDefinitions(g, routes, uses, comps)

	paths := map[string]any{}
	opIDs := map[string]string{}
	tags := map[string]bool{}
	scoped := false
	for i, r := range routes {
		op := r.Op
		operationID := op.Service + "_" + op.Action
		if prev, ok := opIDs[operationID]; ok {
			return nil, fmt.Errorf("openapi: operations %s and %s share operationId %q", prev, op.ID(), operationID)
		}
		opIDs[operationID] = op.ID()
		o, err := operation(p, op, r.Path, uses[i], named)
		if err != nil {
			return nil, err
		}
		o["operationId"] = operationID
		tags[op.Service] = true
		if op.Scope != "public" {
			scoped = true
		}
		item, _ := paths[r.Path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[r.Path] = item
		}
		item[strings.ToLower(r.Method)] = o
	}

	title := g.Info.Title
	if title == "" {
		title = g.Name
	}
	version := g.Version
	if version == "" {
		// info.version is required; a contract always declares one, a
		// hand-built graph may not.
		version = "0.0.0"
	}
	info := map[string]any{"title": title, "version": version}
	if g.Info.Description != "" {
		info["description"] = g.Info.Description
	}
	if l := opts.License; l != nil {
		lic := map[string]any{"name": l.Name}
		switch {
		case l.Identifier != "" && l.URL != "":
			return nil, fmt.Errorf("openapi: license %q: give an SPDX identifier or a URL, not both (OpenAPI 3.1 info.license)", l.Name)
		case l.Identifier != "":
			lic["identifier"] = l.Identifier
		case l.URL != "":
			lic["url"] = l.URL
		}
		if l.Name == "" {
			return nil, fmt.Errorf("openapi: a license needs a name")
		}
		info["license"] = lic
	}
	if c := opts.Contact; c != nil {
		contact := map[string]any{}
		for k, v := range map[string]string{"name": c.Name, "url": c.URL, "email": c.Email} {
			if v != "" {
				contact[k] = v
			}
		}
		info["contact"] = contact
	}
	doc := map[string]any{
		"openapi": Version,
		"info":    info,
		"paths":   paths,
	}
	servers := []any{map[string]any{"url": "/"}}
	if len(opts.Servers) > 0 {
		servers = nil
		for _, s := range opts.Servers {
			if s.URL == "" {
				return nil, fmt.Errorf("openapi: a server needs a URL")
			}
			srv := map[string]any{"url": s.URL}
			if s.Description != "" {
				srv["description"] = s.Description
			}
			servers = append(servers, srv)
		}
	}
	doc["servers"] = servers
	if len(tags) > 0 {
		names := make([]string, 0, len(tags))
		for t := range tags {
			names = append(names, t)
		}
		graph.SortUTF16(names)
		var list []any
		for _, n := range names {
			list = append(list, map[string]any{"name": n, "description": tagDescription(g, n)})
		}
		doc["tags"] = list
	}
	components := map[string]any{}
	refInlinedComponents(paths, comps)
	pruneComponents(paths, comps)
	if len(comps) > 0 {
		components["schemas"] = comps
	}
	if scoped {
		components["securitySchemes"] = map[string]any{
			SecuritySchemeName: map[string]any{
				"type":   "http",
				"scheme": "bearer",
				"description": "Credentials the application's auth hook resolves to an identity. " +
					"The names listed in an operation's requirement are stitchkit scopes " +
					"(roles), not OAuth scopes.",
			},
		}
	}
	if len(components) > 0 {
		doc["components"] = components
	}
	return doc, nil
}

func operation(p *project.Projection, op *graph.Operation, path string, s opSchemas, named map[*schemas.Use]string) (map[string]any, error) {
	embed := func(u *schemas.Use) any {
		if name, ok := named[u]; ok {
			return map[string]any{"$ref": "#/components/schemas/" + name}
		}
		return u.Schema()
	}
	ep := p.Endpoint(op.Service, op.Action)
	ex, err := opExamples(op)
	if err != nil {
		return nil, err
	}
	o := map[string]any{
		"tags":              []any{op.Service},
		"x-stitchkit-scope": op.Scope,
	}
	if op.Desc != "" {
		o["summary"] = op.Desc
	}
	if op.Scope == "public" {
		o["security"] = []any{}
	} else {
		o["security"] = []any{map[string]any{SecuritySchemeName: []any{op.Scope}}}
	}

	var params []any
	names := graph.PathNames(path)
	if len(names) > 0 {
		var props map[string]any
		if s.params != nil {
			list, isObj, _ := s.params.Object()
			if !isObj {
				return nil, fmt.Errorf("openapi: %s: #params is not an object schema", op.ID())
			}
			props = map[string]any{}
			for _, p := range list {
				props[p.Name] = p.Schema
			}
		}
		wildcard := ""
		if last := path[strings.LastIndexByte(path, '/')+1:]; strings.HasSuffix(last, "...}") {
			wildcard = names[len(names)-1]
		}
		for _, n := range names {
			schema, ok := props[n]
			if !ok {
				// A path name the #params schema does not describe: the
				// mount receives it as a string.
				schema = map[string]any{"type": "string"}
			}
			pname := n
			if n == wildcard {
				pname = n + "..."
			}
			pp := map[string]any{
				"name": pname, "in": "path", "required": true, "schema": schema,
			}
			if e := paramExamples(ex["params"], n); e != nil {
				pp["examples"] = e
			}
			params = append(params, pp)
		}
		if wildcard != "" {
			o["x-stitchkit-trailing-wildcard"] = wildcard
		}
	}
	if s.query != nil {
		list, isObj, _ := s.query.Object()
		if !isObj {
			return nil, fmt.Errorf("openapi: %s: #query is not an object schema", op.ID())
		}
		// Which query fields are lists (repeated keys) is the projector's
		// fact, the one the HTTP mount decodes query strings with.
		wire := ep.WireQuery
		for _, p := range list {
			qp := map[string]any{
				"name": p.Name, "in": "query", "required": p.Required, "schema": p.Schema,
			}
			if f := wire.Field(p.Name); f != nil && f.List {
				qp["style"] = "form"
				qp["explode"] = true
			}
			if e := paramExamples(ex["query"], p.Name); e != nil {
				qp["examples"] = e
			}
			params = append(params, qp)
		}
	}
	if len(params) > 0 {
		o["parameters"] = params
	}

	if s.input != nil {
		_, isObj, required := s.input.Object()
		media := map[string]any{"schema": embed(s.input)}
		if e := mediaExamples(ex["input"]); e != nil {
			media["examples"] = e
		}
		o["requestBody"] = map[string]any{
			"required": !isObj || len(required) > 0,
			"content":  map[string]any{"application/json": media},
		}
	}

	responses := map[string]any{}
	switch {
	case op.Method == http.MethodHead:
		responses["200"] = map[string]any{"description": "Headers only"}
	case s.output != nil:
		media := map[string]any{"schema": embed(s.output)}
		if e := mediaExamples(ex["output"]); e != nil {
			media["examples"] = e
		}
		responses["200"] = map[string]any{
			"description": "Success",
			"content":     map[string]any{"application/json": media},
		}
	default:
		responses["204"] = map[string]any{"description": "No content"}
	}
	// The codes a route can answer are the projector's fact, the one the
	// runner enforces on handlers.
	codes := map[int][]string{}
	for _, e := range ep.Errors {
		codes[e.Status] = append(codes[e.Status], e.Code)
	}
	for st, list := range codes {
		responses[strconv.Itoa(st)] = errorResponse(st, list)
	}
	o["responses"] = responses
	return o, nil
}

// nameWholeDefinitions makes a component of each definition the contract
// uses only whole (`#output: #Customer` in two operations, never through a
// reference, so the graph has no $defs name for it): when the graph has
// sources, a request body or response written as a bare reference (no
// fields of its own in the sources) whose properties are exactly the
// fields of one CUE definition is that definition. Every such use with
// the same body refers to one component named after it; a name already
// taken by another body, or a body two definitions could be, stays
// inline.
func nameWholeDefinitions(g *graph.Graph, routes []project.Route, uses []opSchemas, comps map[string]any) map[*schemas.Use]string {
	named := map[*schemas.Use]string{}
	if len(g.Sources) == 0 {
		return named
	}
	fields := map[string][]string{}
	for k := range g.Sources {
		if !strings.HasPrefix(k, "#") {
			continue
		}
		name, field, ok := strings.Cut(k[1:], ".")
		if _, seen := fields[name]; !seen {
			fields[name] = []string{}
		}
		if ok && !strings.Contains(field, ".") && !strings.HasPrefix(field, "#") {
			fields[name] = append(fields[name], field)
		}
	}
	for _, fs := range fields {
		slices.Sort(fs)
	}
	hasChildren := func(node string) bool {
		for k := range g.Sources {
			if strings.HasPrefix(k, node+".") {
				return true
			}
		}
		return false
	}
	for i, r := range routes {
		for _, slot := range []struct {
			u    *schemas.Use
			name string
		}{{uses[i].input, "#input"}, {uses[i].output, "#output"}} {
			u := slot.u
			if u == nil || u.Component() != "" {
				continue
			}
			node := "services." + r.Op.Service + ".operations." + r.Op.Action + "." + slot.name
			if !g.Source(node).IsValid() || hasChildren(node) {
				continue
			}
			body, ok := u.Schema().(map[string]any)
			if !ok {
				continue
			}
			props, _ := body["properties"].(map[string]any)
			if len(props) == 0 {
				continue
			}
			names := make([]string, 0, len(props))
			for k := range props {
				names = append(names, k)
			}
			slices.Sort(names)
			var defs []string
			for name, fs := range fields {
				if slices.Equal(fs, names) {
					defs = append(defs, name)
				}
			}
			if len(defs) != 1 {
				continue // none, or two definitions with these fields
			}
			def := schemas.Sanitize(defs[0])
			if prev, taken := comps[def]; taken {
				if !sameJSON(prev, body) {
					continue
				}
			} else {
				comps[def] = body
			}
			named[u] = def
		}
	}
	return named
}

// refInlinedComponents replaces each member of a union or conjunction
// (anyOf, oneOf, allOf) that is exactly one component's body with a
// reference to it. The graph inlines a definition into a disjunction or a
// conjunction (#RefundReason | null, #CustomerID & =~"…"); as a reference
// the definition is one type to a code generator — which would otherwise
// invent a type for the member, named after the property, and may clash
// with the component's own name. Bodies that only give a type
// ({"type": "string"}) are not matched: any string would be.
func refInlinedComponents(paths map[string]any, comps map[string]any) {
	byBody := map[string][]string{}
	for name, c := range comps {
		if k, ok := memberKey(c); ok {
			byBody[k] = append(byBody[k], name)
		}
	}
	var walk func(v any, self string) any
	walk = func(v any, self string) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if k == "anyOf" || k == "oneOf" || k == "allOf" {
					if list, ok := e.([]any); ok {
						for i, m := range list {
							if key, ok := memberKey(m); ok && len(byBody[key]) == 1 && byBody[key][0] != self {
								list[i] = map[string]any{"$ref": "#/components/schemas/" + byBody[key][0]}
								continue
							}
							list[i] = walk(m, self)
						}
						continue
					}
				}
				x[k] = walk(e, self)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e, self)
			}
		}
		return v
	}
	for _, p := range paths {
		walk(p, "")
	}
	for name, c := range comps {
		comps[name] = walk(c, name)
	}
}

// pruneComponents drops the components no operation reaches: a graph
// schema's $defs may hold forms nothing in it refers to (the translator's
// partial form of a definition, "CardID~partial"), which linters report
// as unused and generators turn into dead types.
func pruneComponents(paths map[string]any, comps map[string]any) {
	const prefix = "#/components/schemas/"
	reached := map[string]bool{}
	var queue []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok && strings.HasPrefix(ref, prefix) {
				name, _, _ := strings.Cut(strings.TrimPrefix(ref, prefix), "/")
				if !reached[name] {
					reached[name] = true
					queue = append(queue, name)
				}
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(paths)
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		walk(comps[name])
	}
	for name := range comps {
		if !reached[name] {
			delete(comps, name)
		}
	}
}

// memberKey is the canonical body of a schema worth a reference: one that
// says more than a type (an enum, a pattern, properties, …).
func memberKey(s any) (string, bool) {
	m, ok := s.(map[string]any)
	if !ok {
		return "", false
	}
	body := map[string]any{}
	for k, v := range m {
		switch k {
		case "title", "description", "$comment", "examples":
		default:
			body[k] = v
		}
	}
	if _, ref := body["$ref"]; ref {
		return "", false
	}
	if _, typed := body["type"]; typed && len(body) == 1 || len(body) == 0 {
		return "", false
	}
	b, err := graph.Canonical(body)
	return string(b), err == nil
}

func sameJSON(a, b any) bool {
	x, err1 := graph.Canonical(a)
	y, err2 := graph.Canonical(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// tagDescription describes a service's tag: its operations on HTTP.
func tagDescription(g *graph.Graph, service string) string {
	sv := g.Service(service)
	if sv == nil {
		return "Operations of the " + service + " service."
	}
	var ops []string
	for _, op := range sv.Operations {
		if op.Exposed(graph.HTTP) {
			ops = append(ops, op.Action)
		}
	}
	return fmt.Sprintf("Operations of the %s service under %s: %s.", service, sv.Prefix, strings.Join(ops, ", "))
}

// examples is the contract's examples of an operation, by slot: the
// "params", "query", "input" and "output" values of each example, keyed
// "example1", "example2", … in contract order.
type examples map[string]map[string]any

func opExamples(op *graph.Operation) (examples, error) {
	out := examples{}
	for i, raw := range op.Examples {
		var ex map[string]any
		if err := decodeInto(raw, &ex); err != nil {
			return nil, fmt.Errorf("openapi: %s: example %d: %w", op.ID(), i+1, err)
		}
		key := "example" + strconv.Itoa(i+1)
		for slot, v := range ex {
			if out[slot] == nil {
				out[slot] = map[string]any{}
			}
			out[slot][key] = v
		}
	}
	return out, nil
}

// mediaExamples turns the examples of one slot into an OpenAPI examples
// map ({"example1": {"summary", "value"}}), or nil.
func mediaExamples(vals map[string]any) map[string]any {
	if len(vals) == 0 {
		return nil
	}
	out := map[string]any{}
	for key, v := range vals {
		out[key] = map[string]any{"summary": "Example " + strings.TrimPrefix(key, "example") + " from the contract", "value": v}
	}
	return out
}

// paramExamples picks the value of one parameter out of the examples of a
// params or query slot.
func paramExamples(vals map[string]any, name string) map[string]any {
	picked := map[string]any{}
	for key, v := range vals {
		if obj, ok := v.(map[string]any); ok {
			if pv, ok := obj[name]; ok {
				picked[key] = pv
			}
		}
	}
	return mediaExamples(picked)
}

func decodeInto(raw []byte, v *map[string]any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}

// errorResponse documents the HTTP error envelope for codes sharing status.
func errorResponse(status int, codes []string) map[string]any {
	text := http.StatusText(status)
	if text == "" {
		text = "Error " + strconv.Itoa(status)
	}
	return map[string]any{
		"description": text + " (" + strings.Join(codes, ", ") + ")",
		"content":     map[string]any{"application/json": map[string]any{"schema": project.ErrorEnvelopeSchema(codes)}},
	}
}
