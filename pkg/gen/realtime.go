package gen

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// This file writes realtime.go: a typed emitter per serverToClient event
// and a typed handler binding per clientToServer event, over pkg/realtime.
// The argument tuple is a parameter list; the acknowledgement a typed
// result. Each is a function of its own (not a method of one interface),
// so a new event adds a function and changes none.

// rtEvent is one realtime event as the bindings see it.
type rtEvent struct {
	contract, event string
	desc            string
	fn              string // EmitBoardTaskChanged, HandleBoardWatch
	args, ack       string // Go types ("" when absent)
}

// claimRealtimeNames reserves the function names of the realtime
// bindings, from the contract and event names alone.
func claimRealtimeNames(g *graph.Graph, ns *namespace) (emit, handle []*rtEvent, err error) {
	for _, rc := range g.Realtime {
		for _, ev := range rc.ServerToClient {
			e := &rtEvent{contract: rc.Name, event: ev.Name, desc: ev.Desc}
			if e.fn, err = ns.claimFixed("Emit"+exportName(rc.Name)+exportName(ev.Name), "the realtime event "+rc.Name+"."+ev.Name); err != nil {
				return nil, nil, err
			}
			emit = append(emit, e)
		}
		for _, ev := range rc.ClientToServer {
			e := &rtEvent{contract: rc.Name, event: ev.Name, desc: ev.Desc}
			if e.fn, err = ns.claimFixed("Handle"+exportName(rc.Name)+exportName(ev.Name), "the realtime event "+rc.Name+"."+ev.Name); err != nil {
				return nil, nil, err
			}
			handle = append(handle, e)
		}
	}
	return emit, handle, nil
}

// rtParam is one parameter of a typed realtime function: an element of
// the argument tuple.
type rtParam struct {
	name, typ string
	field     string // the tuple struct's field
	optional  bool   // a trailing element that may be absent (nil when so)
}

// tupleParams lists the parameters for an argument tuple type, or false
// when the type is not a tuple (the function is then not generated).
func (m *model) tupleParams(typ string) ([]rtParam, bool) {
	d := m.structLike(typ)
	if d == nil || d.kind != kindTuple {
		return nil, false
	}
	names := newNamespace("ctx", "to", "conn", "h", "args", "a", "raw", "srv", "out", "realtime", "json", "context")
	var ps []rtParam
	for i, f := range d.elems {
		// A definition names its parameter (task Task); anything else is
		// its position.
		name := lowerFirst(innerName(f.base.expr))
		if dd := m.byName[innerName(f.base.expr)]; dd == nil || dd.inRoot || !tokenIdent(name) {
			name = "arg" + strconv.Itoa(i)
		}
		ps = append(ps, rtParam{name: names.claim(name), typ: f.expr(), field: f.goName, optional: f.omit && f.wrap == wrapPtr})
	}
	if d.rest != nil {
		ps = append(ps, rtParam{name: names.claim("rest"), typ: d.rest.expr, field: "Rest", optional: true})
	}
	return ps, true
}

// structLike follows aliases to a declaration.
func (m *model) structLike(name string) *decl {
	for range 16 {
		d := m.byName[name]
		if d == nil || d.kind != kindAlias {
			return d
		}
		name = d.underlying
	}
	return nil
}

func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return s
	}
	// A leading initialism is lowered whole: ID → id, URLPath → urlPath.
	i := n
	for i < len(s) {
		r2, n2 := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsUpper(r2) || i+n2 < len(s) && unicode.IsLower(rune(s[i+n2])) {
			break
		}
		i += n2
	}
	return strings.ToLower(s[:i]) + s[i:]
}

func tokenIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(unicode.IsLetter(r) || r == '_' || i > 0 && unicode.IsDigit(r)) {
			return false
		}
	}
	switch s {
	case "break", "case", "chan", "const", "continue", "default", "defer", "else", "fallthrough", "for", "func", "go", "goto", "if", "import", "interface", "map", "package", "range", "return", "select", "struct", "switch", "type", "var", "any", "error", "string", "bool", "int64", "uint64", "float64", "json":
		return false
	}
	return true
}

// emitRealtime writes realtime.go's body and reports its imports; nothing
// when the contract has no realtime events.
func (m *model) emitRealtime(p *printer, emit, handle []*rtEvent, names map[string]string) map[string]bool {
	if len(emit) == 0 && len(handle) == 0 {
		return nil
	}
	imports := map[string]bool{"context": true}
	p.s("// RealtimeEmitter is what sends serverToClient events: a *realtime.Server,\n")
	p.s("// a realtime.Room or a *realtime.Conn.\n")
	p.s("type RealtimeEmitter interface {\nEmit(ctx context.Context, event string, args ...any) error\n}\n\n")
	for _, e := range emit {
		e.args = names[rootKey("event", e.contract+"."+e.event, "args")]
		ps, ok := m.tupleParams(e.args)
		if !ok && e.args != "" {
			continue
		}
		doc := fmt.Sprintf("%s sends the serverToClient event %s.%s through to (a server, a room or one connection); the arguments are validated against the contract before they leave.", e.fn, e.contract, e.event)
		doc += descSentence(e.desc)
		p.s(goComment(doc))
		params := []string{"ctx context.Context", "to RealtimeEmitter"}
		for _, pr := range ps {
			params = append(params, pr.name+" "+pr.typ)
		}
		p.f("func %s(%s) error {\n", e.fn, strings.Join(params, ", "))
		var fixed []string
		var opt []rtParam
		for _, pr := range ps {
			if pr.optional {
				opt = append(opt, pr)
			} else {
				fixed = append(fixed, pr.name)
			}
		}
		if len(opt) == 0 {
			p.f("return to.Emit(%s)\n}\n\n", strings.Join(append([]string{"ctx", strconv.Quote(e.event)}, fixed...), ", "))
			continue
		}
		p.f("args := []any{%s}\n", strings.Join(fixed, ", "))
		for _, pr := range opt {
			if pr.field == "Rest" {
				p.f("for _, r := range %s {\nargs = append(args, r)\n}\n", pr.name)
				continue
			}
			// A trailing element is sent only when it and those before it are.
			p.f("if %s != nil && len(args) == %d {\nargs = append(args, *%s)\n}\n", pr.name, m.position(ps, pr), pr.name)
		}
		p.f("return to.Emit(ctx, %q, args...)\n}\n\n", e.event)
	}
	for _, e := range handle {
		e.args = names[rootKey("event", e.contract+"."+e.event, "args")]
		e.ack = names[rootKey("event", e.contract+"."+e.event, "ack")]
		ps, ok := m.tupleParams(e.args)
		imports["stitchkit.dev/stitchkit/pkg/realtime"] = true
		params := []string{"ctx context.Context", "conn *realtime.Conn[I]"}
		var call []string
		for _, pr := range ps {
			params = append(params, pr.name+" "+pr.typ)
			call = append(call, "a."+pr.field)
		}
		if !ok && e.args != "" {
			// Not a fixed tuple (a union of tuples, say): the whole
			// argument list is one value.
			params = append(params, "args "+e.args)
			call = append(call, "a")
		}
		res := "error"
		if e.ack != "" {
			res = "(" + e.ack + ", error)"
		}
		doc := fmt.Sprintf("%s binds h to the clientToServer event %s.%s of srv: h receives the validated arguments as parameters", e.fn, e.contract, e.event)
		if e.ack != "" {
			doc += " and returns the acknowledgement (validated before it is sent)."
		} else {
			doc += "; the event has no acknowledgement."
		}
		doc += descSentence(e.desc)
		p.s(goComment(doc))
		p.f("func %s[I any](srv *realtime.Server[I], h func(%s) %s) error {\n", e.fn, strings.Join(params, ", "), res)
		p.f("return srv.Handle(%q, func(ctx context.Context, conn *realtime.Conn[I], raw realtime.Args) (any, error) {\n", e.event)
		if e.args != "" {
			imports["encoding/json"] = true
			p.f("var a %s\nif err := json.Unmarshal(raw.JSON(), &a); err != nil {\nreturn nil, err\n}\n", e.args)
		}
		inv := fmt.Sprintf("h(%s)", strings.Join(append([]string{"ctx", "conn"}, call...), ", "))
		if e.ack != "" {
			p.f("return %s\n})\n}\n\n", inv)
		} else {
			p.f("return nil, %s\n})\n}\n\n", inv)
		}
	}
	return imports
}

// position is the number of fixed parameters before pr plus the optional
// ones before it: the length args has when pr's turn comes.
func (m *model) position(ps []rtParam, pr rtParam) int {
	for i, q := range ps {
		if q.name == pr.name {
			return i
		}
	}
	return len(ps)
}

// descSentence is a description as a sentence to append to a doc comment.
func descSentence(desc string) string {
	desc = strings.TrimSpace(desc)
	if desc == "" {
		return ""
	}
	if !strings.HasSuffix(desc, ".") {
		desc += "."
	}
	return "\n\n" + desc
}
