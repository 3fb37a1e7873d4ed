package gen

import (
	"fmt"
	"strings"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/project"
)

// This file writes bindings.go: one typed interface per service (and one
// for the runtime tools), a Services struct holding implementations, and
// Register, which wraps each typed method in a mount.Handler. A wrapper
// reads params and query straight from the validated values (small maps
// of scalars), decodes the input with Call.DecodeInput (which reuses the
// request bytes when defaults changed nothing) and marshals the output
// once: encoding/json's reflection is the only one on the call path.

// endpoint is one operation or runtime tool as the bindings see it.
type endpoint struct {
	service, action string
	method          string // Go method name
	doc             string
	params, query   string // Go types ("" when absent)
	input, output   string
	bind            string // name of the binding function
}

// svcBinding is one interface of the bindings.
type svcBinding struct {
	iface string // interface name
	unimp string // the embeddable default implementation
	field string // field of Services
	doc   string
	eps   []*endpoint
}

// rootKey names a root schema: "op:service.action:role" or
// "rt:name:role".
func rootKey(kind, id, role string) string { return kind + ":" + id + ":" + role }

// claimBindingNames reserves the identifiers of the bindings before any
// schema type is named, so a service interface never moves when the
// contract gains a definition. Each comes from its service or code alone.
func claimBindingNames(g *graph.Graph, ns *namespace) ([]*svcBinding, map[string]string, error) {
	fields := newNamespace("Runtime")
	var svcs []*svcBinding
	for _, s := range g.Services {
		what := "the service " + s.Name
		iface, err := ns.claimFixed(exportName(s.Name)+"Service", what)
		if err != nil {
			return nil, nil, err
		}
		unimp, err := ns.claimFixed("Unimplemented"+iface, what)
		if err != nil {
			return nil, nil, err
		}
		field, err := fields.claimFixed(exportName(s.Name), what)
		if err != nil {
			return nil, nil, err
		}
		svcs = append(svcs, &svcBinding{iface: iface, unimp: unimp, field: field,
			doc: fmt.Sprintf("the operations of the %s service (prefix %s, default scope %s)", s.Name, s.Prefix, s.Scope),
		})
	}
	if len(g.RuntimeTools) > 0 {
		svcs = append(svcs, &svcBinding{iface: "RuntimeTools", unimp: "UnimplementedRuntimeTools", field: "Runtime", doc: "the runtime tools of the contract: operations with an identity but no route"})
	}
	codes := map[string]string{}
	for _, e := range g.Errors {
		name, err := ns.claimFixed("Code"+exportName(strings.ToLower(e.Code)), "the error code "+e.Code)
		if err != nil {
			return nil, nil, err
		}
		codes[e.Code] = name
	}
	return svcs, codes, nil
}

// bindingEndpoints fills each binding with its endpoints.
func bindingEndpoints(g *graph.Graph, svcs []*svcBinding, names map[string]string, ns *namespace) {
	for i, s := range g.Services {
		b := svcs[i]
		methods := newNamespace()
		for j := range s.Operations {
			op := &s.Operations[j]
			id := op.ID()
			ep := &endpoint{service: op.Service, action: op.Action, method: methods.claim(exportName(op.Action)),
				params: names[rootKey("op", id, "params")], query: names[rootKey("op", id, "query")],
				input: names[rootKey("op", id, "input")], output: names[rootKey("op", id, "output")]}
			ep.doc = fmt.Sprintf("%s is %s (%s %s): %s", ep.method, id, op.Method, project.JoinPath(s.Prefix, op.Path), op.Desc)
			if !strings.HasSuffix(ep.doc, ".") {
				ep.doc += "."
			}
			if len(op.Errors) > 0 {
				ep.doc += "\nBesides the framework's codes it may answer " + strings.Join(op.Errors, ", ") + "."
			}
			ep.bind = ns.claim("bind" + exportName(op.Service) + ep.method)
			b.eps = append(b.eps, ep)
		}
	}
	if len(g.RuntimeTools) > 0 {
		b := svcs[len(svcs)-1]
		methods := newNamespace()
		for _, rt := range g.RuntimeTools {
			ep := &endpoint{service: rt.Identity.Service, action: rt.Identity.Action, method: methods.claim(exportName(rt.Name)),
				input: names[rootKey("rt", rt.Name, "input")], output: names[rootKey("rt", rt.Name, "output")]}
			ep.doc = fmt.Sprintf("%s is the runtime tool %s (identity %s.%s, %s): %s", ep.method, rt.Name, rt.Identity.Service, rt.Identity.Action, rt.Identity.Method, rt.Desc)
			if !strings.HasSuffix(ep.doc, ".") {
				ep.doc += "."
			}
			ep.bind = ns.claim("bindRuntime" + ep.method)
			b.eps = append(b.eps, ep)
		}
	}
}

// signature returns the Go parameters and results of a typed method.
func (ep *endpoint) signature() string {
	args := []string{"ctx context.Context"}
	if ep.params != "" {
		args = append(args, "params "+ep.params)
	}
	if ep.query != "" {
		args = append(args, "query "+ep.query)
	}
	if ep.input != "" {
		args = append(args, "in "+ep.input)
	}
	res := "error"
	if ep.output != "" {
		res = "(" + ep.output + ", error)"
	}
	return "(" + strings.Join(args, ", ") + ") " + res
}

// emitBindings writes bindings.go's body and reports the imports it uses.
func (m *model) emitBindings(p *printer, svcs []*svcBinding, codes map[string]string) map[string]bool {
	imports := map[string]bool{"stitchkit.dev/stitchkit/pkg/mount": true}
	for _, b := range svcs {
		if len(b.eps) > 0 {
			imports["context"], imports["encoding/json"] = true, true
		}
	}
	if len(m.g.Errors) > 0 {
		p.s("// The application error codes the contract declares. A method answers one\n")
		p.s("// its operation declares by returning mount.NewError(code, message); an\n")
		p.s("// empty message sends the contract's.\nconst (\n")
		for _, e := range m.g.Errors {
			msg := strings.TrimSpace(e.Message)
			if msg != "" && !strings.HasSuffix(msg, ".") {
				msg += "."
			}
			p.f("// %s is %s (HTTP %d): %s\n%s = %q\n", codes[e.Code], e.Code, e.Status, msg, codes[e.Code], e.Code)
		}
		p.s(")\n\n")
	}
	for _, b := range svcs {
		p.s(goComment(fmt.Sprintf("%s holds %s. Each method is one operation; the runner has validated its arguments (defaults applied) before the call and validates its result after. Return a *mount.Error to answer with a code the operation can answer; any other error is INTERNAL_SERVER_ERROR.", b.iface, b.doc)))
		p.s("//\n")
		p.s(goComment(fmt.Sprintf("An implementation embeds %s, so that an operation added to the contract later keeps it compiling (and answers NOT_IMPLEMENTED until it is written).", b.unimp)))
		p.f("type %s interface {\n", b.iface)
		for _, ep := range b.eps {
			p.s(goComment(ep.doc))
			p.f("%s%s\n\n", ep.method, ep.signature())
		}
		p.f("mustEmbed%s()\n}\n\n", b.unimp)

		p.s(goComment(fmt.Sprintf("%s answers NOT_IMPLEMENTED for every method of %s. Embed it (by value) in an implementation and write the methods you serve.", b.unimp, b.iface)))
		p.f("type %s struct{}\n\n", b.unimp)
		for _, ep := range b.eps {
			p.f("// %s answers NOT_IMPLEMENTED.\n", ep.method)
			if ep.output != "" {
				p.f("func (%s) %s%s {\nvar out %s\nreturn out, mount.NewError(\"NOT_IMPLEMENTED\", \"\")\n}\n\n", b.unimp, ep.method, ep.signature(), ep.output)
			} else {
				p.f("func (%s) %s%s {\nreturn mount.NewError(\"NOT_IMPLEMENTED\", \"\")\n}\n\n", b.unimp, ep.method, ep.signature())
			}
		}
		p.f("func (%s) mustEmbed%s() {}\n\n", b.unimp, b.unimp)
	}

	p.s("// Services holds the implementation of each service. A nil field leaves its\n")
	p.s("// operations unbound: the runner answers them NOT_IMPLEMENTED.\n")
	p.s("type Services struct {\n")
	for _, b := range svcs {
		p.f("%s %s\n", b.field, b.iface)
	}
	p.s("}\n\n")

	p.s("// Register binds the implementations in s to the contract's operations and\n")
	p.s("// runtime tools and returns the Implementation a mount.Runner is built from:\n")
	p.s("//\n//\timpl, err := Register(Services{...})\n//\trunner, err := mount.New(impl, nil)\n")
	p.s("func Register(s Services) (*mount.Implementation, error) {\nimpl := mount.NewImplementation(loaded)\n")
	for _, b := range svcs {
		if len(b.eps) == 0 {
			continue
		}
		p.f("if s.%s != nil {\n", b.field)
		for _, ep := range b.eps {
			p.f("if err := impl.Handle(%q, %q, %s(s.%s)); err != nil {\nreturn nil, err\n}\n", ep.service, ep.action, ep.bind, b.field)
		}
		p.s("}\n")
	}
	p.s("return impl, nil\n}\n\n")

	needHelpers := map[string]bool{}
	for _, b := range svcs {
		for _, ep := range b.eps {
			m.emitBind(p, b, ep, needHelpers)
		}
	}
	for _, h := range helperOrder {
		if !needHelpers[h] {
			continue
		}
		p.s(helperSource[h])
		if strings.HasPrefix(h, "as") {
			imports["fmt"] = true
		}
		if h == "asUint64" || h == "asNumber" {
			imports["strconv"] = true
		}
	}
	return imports
}

func (m *model) emitBind(p *printer, b *svcBinding, ep *endpoint, helpers map[string]bool) {
	p.f("// %s wraps %s.%s as a mount.Handler.\n", ep.bind, b.iface, ep.method)
	p.f("func %s(svc %s) mount.Handler {\nreturn func(ctx context.Context, c *mount.Call) (json.RawMessage, error) {\n", ep.bind, b.iface)
	var args []string
	part := func(name, typ, field, decode string) {
		if typ == "" {
			return
		}
		p.f("var %s %s\n", name, typ)
		if m.emitDirectRead(p, name, typ, field, helpers) {
			args = append(args, name)
			return
		}
		helpers["decodeError"] = true
		p.f("if err := c.%s(&%s); err != nil {\nreturn nil, decodeError(%q, err)\n}\n", decode, name, name)
		args = append(args, name)
	}
	part("params", ep.params, "c.Params", "DecodeParams")
	part("query", ep.query, "c.Query", "DecodeQuery")
	if ep.input != "" {
		helpers["decodeError"] = true
		p.f("var in %s\nif err := c.DecodeInput(&in); err != nil {\nreturn nil, decodeError(\"input\", err)\n}\n", ep.input)
		args = append(args, "in")
	}
	call := fmt.Sprintf("svc.%s(ctx, %s)", ep.method, strings.Join(args, ", "))
	call = strings.Replace(call, "(ctx, )", "(ctx)", 1)
	if ep.output == "" {
		p.f("return nil, %s\n}\n}\n\n", call)
		return
	}
	p.f("out, err := %s\nif err != nil {\nreturn nil, err\n}\nreturn json.Marshal(out)\n}\n}\n\n", call)
}

// scalarRead describes how a validated scalar value becomes a Go value.
type scalarRead struct {
	helper string // asString, asInt64, ...
	conv   string // the Go type to convert the helper's result to ("" when it is that type)
}

// scalarOf reports how to read a value of Go type expr directly, when expr
// is a scalar (or a defined type over one).
func (m *model) scalarOf(expr string) (scalarRead, bool) {
	base := map[string]string{"string": "asString", "bool": "asBool", "int64": "asInt64", "uint64": "asUint64", "float64": "asFloat64", "json.Number": "asNumber"}
	if h, ok := base[expr]; ok {
		return scalarRead{helper: h}, true
	}
	for range 16 {
		d := m.byName[expr]
		if d == nil {
			return scalarRead{}, false
		}
		switch d.kind {
		case kindDefined:
			if h, ok := base[d.underlying]; ok {
				return scalarRead{helper: h, conv: d.name}, true
			}
			return scalarRead{}, false
		case kindAlias:
			if h, ok := base[d.underlying]; ok {
				return scalarRead{helper: h}, true
			}
			expr = d.underlying
			continue
		}
		return scalarRead{}, false
	}
	return scalarRead{}, false
}

// structDecl follows aliases to the struct a root type names.
func (m *model) structDecl(name string) *decl {
	for range 16 {
		d := m.byName[name]
		if d == nil {
			return nil
		}
		switch d.kind {
		case kindStruct:
			return d
		case kindAlias:
			name = d.underlying
			continue
		}
		return nil
	}
	return nil
}

// emitDirectRead writes code reading a params or query struct field by
// field from the validated map, when every field is a scalar, a pointer to
// one or a list of them. It reports false (writing nothing) otherwise.
func (m *model) emitDirectRead(p *printer, name, typ, src string, helpers map[string]bool) bool {
	st := m.structDecl(typ)
	if st == nil || st.extra != nil {
		return false
	}
	type plan struct {
		f    *field
		read scalarRead
		list bool
	}
	var plans []plan
	for _, f := range st.fields {
		expr := f.base.expr
		list := false
		if e, ok := strings.CutPrefix(expr, "[]"); ok && f.wrap == wrapNone {
			expr, list = e, true
		} else if d := m.byName[expr]; d != nil && d.kind == kindDefined && strings.HasPrefix(d.underlying, "[]") && f.wrap == wrapNone {
			// A named list type (Tags []Tag): read the elements, convert the list.
			if _, ok := m.scalarOf(strings.TrimPrefix(d.underlying, "[]")); !ok {
				return false
			}
			expr, list = strings.TrimPrefix(d.underlying, "[]"), true
		}
		if f.wrap == wrapNullable || strings.HasPrefix(expr, "*") {
			return false
		}
		r, ok := m.scalarOf(expr)
		if !ok {
			return false
		}
		plans = append(plans, plan{f: f, read: r, list: list})
	}
	for _, pl := range plans {
		f := pl.f
		helpers[pl.read.helper] = true
		helpers["readError"] = true
		conv := func(v string) string {
			if pl.read.conv != "" {
				return pl.read.conv + "(" + v + ")"
			}
			return v
		}
		p.f("if v, ok := %s[%q]; ok {\n", src, f.jsonName)
		if pl.list {
			helpers["asList"] = true
			elem := strings.TrimPrefix(f.base.expr, "[]")
			if d := m.byName[f.base.expr]; d != nil && d.kind == kindDefined {
				elem = strings.TrimPrefix(d.underlying, "[]")
			}
			p.f("l, err := asList(v)\nif err != nil {\nreturn nil, readError(%q, %q, err)\n}\n", name, f.jsonName)
			p.f("%s.%s = make(%s, len(l))\nfor i, e := range l {\nx, err := %s(e)\nif err != nil {\nreturn nil, readError(%q, %q, err)\n}\n%s.%s[i] = %s\n}\n",
				name, f.goName, f.base.expr, pl.read.helper, name, f.jsonName, name, f.goName, convElem(elem, pl.read))
		} else {
			p.f("x, err := %s(v)\nif err != nil {\nreturn nil, readError(%q, %q, err)\n}\n", pl.read.helper, name, f.jsonName)
			switch {
			case f.wrap == wrapPtr && pl.read.conv == "":
				p.f("%s.%s = &x\n", name, f.goName)
			case f.wrap == wrapPtr:
				p.f("y := %s\n%s.%s = &y\n", conv("x"), name, f.goName)
			default:
				p.f("%s.%s = %s\n", name, f.goName, conv("x"))
			}
		}
		p.s("}\n")
	}
	return true
}

func convElem(_ string, r scalarRead) string {
	if r.conv != "" {
		return r.conv + "(x)"
	}
	return "x"
}

var helperOrder = []string{"readError", "decodeError", "asString", "asBool", "asInt64", "asUint64", "asFloat64", "asNumber", "asList"}

// helperSource holds the unexported helpers bindings.go may need. The
// values they read were validated against the schema, so a failure means
// the value does not fit the Go type (an integer beyond int64, say): the
// caller gets VALIDATION_ERROR naming the field, not a server error.
var helperSource = map[string]string{
	"readError": `// readError refuses a validated value that does not fit its Go type.
func readError(part, name string, err error) error {
	return mount.Errorf("VALIDATION_ERROR", "%s %q does not fit this server's Go type: %v", part, name, err)
}

`,
	"decodeError": `// decodeError refuses a validated value that does not decode into its Go
// type.
func decodeError(part string, err error) error {
	return mount.Errorf("VALIDATION_ERROR", "the %s does not fit this server's Go types: %v", part, err)
}

`,
	"asString": `func asString(v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	return "", fmt.Errorf("got %T, want a string", v)
}

`,
	"asBool": `func asBool(v any) (bool, error) {
	if b, ok := v.(bool); ok {
		return b, nil
	}
	return false, fmt.Errorf("got %T, want a boolean", v)
}

`,
	"asInt64": `func asInt64(v any) (int64, error) {
	switch n := v.(type) {
	case json.Number:
		return n.Int64()
	case float64:
		if i := int64(n); float64(i) == n {
			return i, nil
		}
	}
	return 0, fmt.Errorf("got %v, want an int64", v)
}

`,
	"asUint64": `func asUint64(v any) (uint64, error) {
	switch n := v.(type) {
	case json.Number:
		return strconv.ParseUint(string(n), 10, 64)
	case float64:
		if i := uint64(n); n >= 0 && float64(i) == n {
			return i, nil
		}
	}
	return 0, fmt.Errorf("got %v, want a uint64", v)
}

`,
	"asFloat64": `func asFloat64(v any) (float64, error) {
	switch n := v.(type) {
	case json.Number:
		return n.Float64()
	case float64:
		return n, nil
	}
	return 0, fmt.Errorf("got %T, want a number", v)
}

`,
	"asNumber": `func asNumber(v any) (json.Number, error) {
	switch n := v.(type) {
	case json.Number:
		return n, nil
	case float64:
		return json.Number(strconv.FormatFloat(n, 'g', -1, 64)), nil
	}
	return "", fmt.Errorf("got %T, want a number", v)
}

`,
	"asList": `func asList(v any) ([]any, error) {
	if l, ok := v.([]any); ok {
		return l, nil
	}
	return nil, fmt.Errorf("got %T, want a list", v)
}

`,
}
