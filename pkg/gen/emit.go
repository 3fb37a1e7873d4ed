package gen

import (
	"fmt"
	"strconv"
	"strings"
)

// printer accumulates Go source. Formatting is left to go/format.
type printer struct {
	b strings.Builder
	// pkg prefixes error messages of generated code ("tasksapi.Task: ...").
	pkg string
}

func (p *printer) f(format string, args ...any) { fmt.Fprintf(&p.b, format, args...) }
func (p *printer) s(s string)                   { p.b.WriteString(s) }

// doc writes a doc comment whose first sentence starts with name, as Go
// doc comments do.
func (p *printer) doc(name, text, fallback string) {
	text = strings.TrimSpace(text)
	switch {
	case text == "":
		text = name + " " + fallback
	case strings.HasPrefix(text, "is "):
		text = name + " " + text
	case !strings.HasPrefix(text, name+" "):
		text = name + ": " + text
	}
	p.s(goComment(text))
}

// article is "a" or "an" before a Go type name.
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiouAEIOU", rune(word[0])) {
		return "an"
	}
	return "a"
}

// breakCycles makes a field a pointer where holding its type by value
// would make a Go type contain itself (recursive definitions such as a
// tree node with a required child).
func (m *model) breakCycles() {
	const (
		unseen = iota
		active
		done
	)
	state := map[string]int{}
	var visit func(name string)
	visit = func(name string) {
		d := m.byName[name]
		if d == nil {
			return
		}
		state[name] = active
		for _, f := range append(append([]*field(nil), d.fields...), d.elems...) {
			next := f.base.byValue
			if next == "" || f.wrap == wrapPtr {
				continue
			}
			switch state[next] {
			case active:
				if f.wrap == wrapNullable {
					f.base = typeRef{expr: "*" + f.base.expr}
				} else {
					f.wrap = wrapPtr
				}
			case unseen:
				visit(next)
			}
		}
		state[name] = done
	}
	for _, d := range m.decls {
		if state[d.name] == unseen {
			visit(d.name)
		}
	}
}

// emitTypes writes every declaration of the model.
func (m *model) emitTypes(p *printer) {
	if m.usesNullable {
		m.imports["encoding/json"] = true
		p.s(nullableSource)
	}
	if m.usesStrict {
		m.imports["bytes"], m.imports["encoding/json"] = true, true
		p.s(strictSource)
	}
	for _, d := range m.decls {
		switch d.kind {
		case kindAlias:
			p.doc(d.name, d.doc, "is "+d.underlying+".")
			p.f("type %s = %s\n\n", d.name, d.underlying)
			if len(d.consts) > 0 {
				// A mirrored enum keeps its constants.
				p.f("// The values of %s.\nconst (\n", d.name)
				for _, c := range d.consts {
					p.f("%s %s = %s\n", c.name, d.name, c.literal)
				}
				p.s(")\n\n")
			}
			if strings.Contains(d.underlying, "json.") {
				m.imports["encoding/json"] = true
			}
		case kindDefined:
			m.emitDefined(p, d)
		case kindStruct:
			m.emitStruct(p, d)
		case kindTuple:
			m.emitTuple(p, d)
		case kindOneOf:
			m.emitOneOf(p, d)
		case kindAnyOf:
			m.emitAnyOf(p, d)
		}
	}
}

func (m *model) uses(expr string) {
	if strings.Contains(expr, "json.") {
		m.imports["encoding/json"] = true
	}
}

func (m *model) emitDefined(p *printer, d *decl) {
	m.uses(d.underlying)
	p.doc(d.name, d.doc, "is "+article(d.underlying)+" "+d.underlying+".")
	p.f("type %s %s\n\n", d.name, d.underlying)
	if len(d.consts) == 0 {
		return
	}
	p.f("// The values of %s.\nconst (\n", d.name)
	for _, c := range d.consts {
		p.f("%s %s = %s\n", c.name, d.name, c.literal)
	}
	p.s(")\n\n")
}

// noCompare opens every generated struct: it makes the struct not
// comparable from the start, so a field added later (a list, a map) never
// takes == away from code that used it (apidiff counts that as a breaking
// change), and unkeyed literals, which a new field would break, do not
// compile. protobuf-go's DoNotCompare does the same. It has no size.
const noCompare = "_ [0]func() // not comparable: fields may be added (docs/gen.md)\n\n"

// tag returns the json struct tag of f.
func tag(f *field) string {
	name := f.jsonName
	if name == "-" {
		name = "-,"
	}
	opts := ""
	if f.omit {
		opts = ",omitzero"
		if name == "-," {
			name = "-"
		}
	}
	return "`json:" + strconv.Quote(name+opts) + "`"
}

func (m *model) emitStruct(p *printer, d *decl) {
	p.doc(d.name, d.doc, "is an object.")
	p.f("type %s struct {\n", d.name)
	p.s(noCompare)
	for i, f := range d.fields {
		if i > 0 && f.doc != "" {
			p.s("\n")
		}
		m.uses(f.expr())
		p.s(goComment(f.doc))
		p.f("%s %s %s\n", f.goName, f.expr(), tag(f))
	}
	if d.extra != nil {
		m.uses(d.extra.expr)
		if len(d.fields) > 0 {
			p.s("\n")
		}
		p.s("// Extra holds the properties beyond the declared ones (the schema allows them).\n")
		p.f("Extra map[string]%s `json:\"-\"`\n", d.extra.expr)
	}
	p.s("}\n\n")
	var fixes []*field
	for _, f := range d.fields {
		if f.nilFix {
			fixes = append(fixes, f)
		}
	}
	if len(fixes) == 0 && d.extra == nil {
		return
	}
	m.imports["encoding/json"] = true
	if d.extra == nil {
		p.f("// MarshalJSON sends a nil list or map in a required (or empty-defaulted) field as an empty one.\n")
	} else {
		p.f("// MarshalJSON writes the declared fields, then Extra.\n")
	}
	p.f("func (v %s) MarshalJSON() ([]byte, error) {\ntype plain %s\n", d.name, d.name)
	for _, f := range fixes {
		p.f("if v.%s == nil {\nv.%s = %s\n}\n", f.goName, f.goName, f.base.empty)
	}
	if d.extra == nil {
		p.s("return json.Marshal(plain(v))\n}\n\n")
		return
	}
	m.imports["fmt"] = true
	p.s("b, err := json.Marshal(plain(v))\nif err != nil || len(v.Extra) == 0 {\nreturn b, err\n}\n")
	if len(d.fields) > 0 {
		p.s("for k := range v.Extra {\nswitch k {\ncase ")
		for i, f := range d.fields {
			if i > 0 {
				p.s(", ")
			}
			p.s(strconv.Quote(f.jsonName))
		}
		p.f(":\nreturn nil, fmt.Errorf(\"%s.%s: Extra[%%q] repeats a declared property\", k)\n}\n}\n", p.pkg, d.name)
	}
	p.s("e, err := json.Marshal(v.Extra)\nif err != nil {\nreturn nil, err\n}\nif len(b) == 2 {\nreturn e, nil\n}\n")
	p.s("b[len(b)-1] = ','\nreturn append(b, e[1:]...), nil\n}\n\n")

	p.f("// UnmarshalJSON reads the declared properties by their exact names and keeps the others in Extra.\n")
	p.f("func (v *%s) UnmarshalJSON(b []byte) error {\nvar m map[string]json.RawMessage\nif err := json.Unmarshal(b, &m); err != nil {\nreturn err\n}\n*v = %s{}\n", d.name, d.name)
	for _, f := range d.fields {
		q := strconv.Quote(f.jsonName)
		p.f("if raw, ok := m[%s]; ok {\nif err := json.Unmarshal(raw, &v.%s); err != nil {\nreturn fmt.Errorf(\"%s.%s.%s: %%w\", err)\n}\ndelete(m, %s)\n}\n",
			q, f.goName, p.pkg, d.name, f.goName, q)
	}
	if d.extra.raw {
		p.s("if len(m) > 0 {\nv.Extra = m\n}\nreturn nil\n}\n\n")
		return
	}
	p.f("if len(m) > 0 {\nv.Extra = make(map[string]%s, len(m))\nfor k, raw := range m {\nvar x %s\nif err := json.Unmarshal(raw, &x); err != nil {\nreturn fmt.Errorf(\"%s.%s[%%q]: %%w\", k, err)\n}\nv.Extra[k] = x\n}\n}\nreturn nil\n}\n\n",
		d.extra.expr, d.extra.expr, p.pkg, d.name)
}

func (m *model) emitTuple(p *printer, d *decl) {
	m.imports["encoding/json"] = true
	m.imports["fmt"] = true
	n := len(d.elems)
	p.doc(d.name, d.doc, fmt.Sprintf("is a JSON array of %d positions.", n))
	p.f("//\n// It is written and read as a JSON array, one field per position in order.\n")
	p.f("type %s struct {\n", d.name)
	p.s(noCompare)
	for _, f := range d.elems {
		m.uses(f.expr())
		p.s(goComment(f.doc))
		p.f("%s %s\n", f.goName, f.expr())
	}
	if d.rest != nil {
		m.uses(d.rest.expr)
		p.f("// Rest holds the elements after position %d.\nRest %s\n", n-1, d.rest.expr)
	}
	p.s("}\n\n")

	absent := func(f *field) string {
		switch f.wrap {
		case wrapNullable:
			return "!t." + f.goName + ".Set"
		}
		return "t." + f.goName + " == nil"
	}
	p.f("// MarshalJSON writes t as a JSON array.\nfunc (t %s) MarshalJSON() ([]byte, error) {\n", d.name)
	p.f("a := make([]any, 0, %d", n)
	if d.rest != nil {
		p.s("+len(t.Rest)")
	}
	p.s(")\n")
	for i, f := range d.elems {
		switch {
		case f.omit:
			p.f("if %s {\n", absent(f))
			var later []string
			for _, g := range d.elems[i+1:] {
				later = append(later, "!("+absent(g)+")")
			}
			if d.rest != nil {
				later = append(later, "len(t.Rest) > 0")
			}
			if len(later) > 0 {
				m.imports["errors"] = true
				p.f("if %s {\nreturn nil, errors.New(\"%s.%s: position %d is absent but a later one is set\")\n}\n", strings.Join(later, " || "), p.pkg, d.name, i)
			}
			p.s("return json.Marshal(a)\n}\n")
			p.f("a = append(a, t.%s)\n", f.goName)
		case f.nilFix:
			p.f("if t.%s == nil {\na = append(a, %s)\n} else {\na = append(a, t.%s)\n}\n", f.goName, f.base.empty, f.goName)
		default:
			p.f("a = append(a, t.%s)\n", f.goName)
		}
	}
	if d.rest != nil {
		p.s("for _, e := range t.Rest {\na = append(a, e)\n}\n")
	}
	p.s("return json.Marshal(a)\n}\n\n")

	p.f("// UnmarshalJSON reads a JSON array into t.\nfunc (t *%s) UnmarshalJSON(b []byte) error {\nvar a []json.RawMessage\nif err := json.Unmarshal(b, &a); err != nil {\nreturn err\n}\n*t = %s{}\n", d.name, d.name)
	if d.minItems > 0 {
		p.f("if len(a) < %d {\nreturn fmt.Errorf(\"%s.%s: %%d elements, want at least %d\", len(a))\n}\n", d.minItems, p.pkg, d.name, d.minItems)
	}
	if d.rest == nil {
		p.f("if len(a) > %d {\nreturn fmt.Errorf(\"%s.%s: %%d elements, want at most %d\", len(a))\n}\n", n, p.pkg, d.name, n)
	}
	for i, f := range d.elems {
		if i >= d.minItems {
			p.f("if len(a) <= %d {\nreturn nil\n}\n", i)
		}
		p.f("if err := json.Unmarshal(a[%d], &t.%s); err != nil {\nreturn fmt.Errorf(\"%s.%s[%d]: %%w\", err)\n}\n", i, f.goName, p.pkg, d.name, i)
	}
	if d.rest != nil {
		p.f("if len(a) > %d {\nt.Rest = make(%s, len(a)-%d)\nfor i, raw := range a[%d:] {\nif err := json.Unmarshal(raw, &t.Rest[i]); err != nil {\nreturn fmt.Errorf(\"%s.%s[%%d]: %%w\", %d+i, err)\n}\n}\n}\n",
			n, d.rest.expr, n, n, p.pkg, d.name, n)
	}
	p.s("return nil\n}\n\n")
}

func (m *model) emitOneOf(p *printer, d *decl) {
	m.imports["encoding/json"] = true
	m.imports["errors"] = true
	m.imports["fmt"] = true
	var list []string
	for _, v := range d.variants {
		list = append(list, fmt.Sprintf("%s (%s %q)", v.typ.expr, d.discriminator, v.value))
	}
	p.doc(d.name, d.doc, "is a union.")
	p.f("//\n// %s is one of %s, told apart by %q. Set exactly one field.\n", d.name, strings.Join(list, ", "), d.discriminator)
	p.f("type %s struct {\n", d.name)
	for _, v := range d.variants {
		m.uses(v.typ.expr)
		p.f("%s *%s\n", v.goName, v.typ.expr)
	}
	p.s("}\n\n")

	p.f("// %s returns the %q of the variant that is set, or \"\" when none is.\n", d.discGo, d.discriminator)
	p.f("func (u %s) %s() string {\nswitch {\n", d.name, d.discGo)
	for _, v := range d.variants {
		p.f("case u.%s != nil:\nreturn %q\n", v.goName, v.value)
	}
	p.s("}\nreturn \"\"\n}\n\n")

	p.f("// MarshalJSON writes the variant that is set, with its %q filled in.\n", d.discriminator)
	p.f("func (u %s) MarshalJSON() ([]byte, error) {\nswitch {\n", d.name)
	for _, v := range d.variants {
		p.f("case u.%s != nil:\n", v.goName)
		switch {
		case v.discField != "" && v.value == "":
			// The value is "" itself: nothing to fill in.
			p.f("v := *u.%s\nif v.%s != \"\" {\nreturn nil, fmt.Errorf(\"%s.%s: %s.%s is %%q, want %%q\", v.%s, \"\")\n}\nreturn json.Marshal(v)\n",
				v.goName, v.discField, p.pkg, d.name, v.goName, v.discField, v.discField)
		case v.discField != "":
			p.f("v := *u.%s\nswitch v.%s {\ncase \"\":\nv.%s = %q\ncase %q:\ndefault:\nreturn nil, fmt.Errorf(\"%s.%s: %s.%s is %%q, want %%q\", v.%s, %q)\n}\nreturn json.Marshal(v)\n",
				v.goName, v.discField, v.discField, v.value, v.value, p.pkg, d.name, v.goName, v.discField, v.discField, v.value)
		default:
			p.f("return json.Marshal(u.%s)\n", v.goName)
		}
	}
	p.f("}\nreturn nil, errors.New(\"%s.%s: no variant is set\")\n}\n\n", p.pkg, d.name)

	p.f("// UnmarshalJSON reads %q and decodes the matching variant.\n", d.discriminator)
	p.f("func (u *%s) UnmarshalJSON(b []byte) error {\nvar probe map[string]json.RawMessage\nif err := json.Unmarshal(b, &probe); err != nil {\nreturn err\n}\nvar d string\n", d.name)
	where := p.pkg + "." + d.name + ": " + strconv.Quote(d.discriminator)
	if d.discOptional {
		// The discriminator has a default: a value without it is the one
		// variant it decodes into strictly.
		// (Counted, not judged by d: "" may be a variant's value.)
		p.f("if raw, ok := probe[%q]; ok {\nif err := json.Unmarshal(raw, &d); err != nil {\nreturn fmt.Errorf(%s, err)\n}\n} else {\nfits := 0\n", d.discriminator, strconv.Quote(where+": %w"))
		for _, v := range d.variants {
			p.f("if decodeStrict(b, new(%s)) == nil {\nif fits++; fits > 1 {\nreturn errors.New(%s)\n}\nd = %q\n}\n",
				v.typ.expr, strconv.Quote(where+" is missing and the value fits several variants"), v.value)
		}
		p.f("if fits == 0 {\nreturn errors.New(%s)\n}\n}\n", strconv.Quote(where+" is missing and the value fits no variant"))
	} else {
		p.f("if raw, ok := probe[%q]; !ok {\nreturn errors.New(%s)\n} else if err := json.Unmarshal(raw, &d); err != nil {\nreturn fmt.Errorf(%s, err)\n}\n",
			d.discriminator, strconv.Quote(where+" is missing"), strconv.Quote(where+": %w"))
	}
	p.f("*u = %s{}\nswitch d {\n", d.name)
	for _, v := range d.variants {
		p.f("case %q:\nu.%s = new(%s)\nreturn json.Unmarshal(b, u.%s)\n", v.value, v.goName, v.typ.expr, v.goName)
	}
	p.f("}\nreturn fmt.Errorf(%s, d)\n}\n\n", strconv.Quote(p.pkg+"."+d.name+": unknown "+d.discriminator+" %q"))
}

func (m *model) emitAnyOf(p *printer, d *decl) {
	m.imports["encoding/json"] = true
	var list []string
	for _, a := range d.arms {
		list = append(list, a.typ.expr)
	}
	p.doc(d.name, d.doc, "is a union.")
	p.f("//\n// %s is one of %s. It keeps the JSON value as received; the As methods decode it as one of them.\n", d.name, strings.Join(list, ", "))
	p.f("type %s json.RawMessage\n\n", d.name)
	p.f("// MarshalJSON writes the value (null when it is empty).\nfunc (u %s) MarshalJSON() ([]byte, error) {\nif len(u) == 0 {\nreturn []byte(\"null\"), nil\n}\nreturn []byte(u), nil\n}\n\n", d.name)
	p.f("// UnmarshalJSON keeps a copy of b.\nfunc (u *%s) UnmarshalJSON(b []byte) error {\n*u = append((*u)[:0], b...)\nreturn nil\n}\n\n", d.name)
	for _, a := range d.arms {
		m.uses(a.typ.expr)
		ctor := m.ns.claim(d.name + "From" + a.name)
		p.f("// As%s decodes the value as %s.\nfunc (u %s) As%s() (%s, error) {\nvar v %s\nerr := json.Unmarshal(u, &v)\nreturn v, err\n}\n\n",
			a.name, a.typ.expr, d.name, a.name, a.typ.expr, a.typ.expr)
		p.f("// %s encodes v as a %s.\nfunc %s(v %s) (%s, error) {\nb, err := json.Marshal(v)\nreturn %s(b), err\n}\n\n",
			ctor, d.name, ctor, a.typ.expr, d.name, d.name)
	}
}

// strictSource is the helper that tells the variants of a union apart when
// its discriminator is absent.
const strictSource = `// decodeStrict decodes b into v, refusing properties v does not declare.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

`

// nullableSource is the helper type of optional fields that may be null.
const nullableSource = `// Nullable is an optional field that may also be null. The zero value is
// absent (omitted when written); Set reports that the field was present and
// Null that it was JSON null.
type Nullable[T any] struct {
	Value T
	Set   bool
	Null  bool
}

// NullableOf returns a present, non-null value.
func NullableOf[T any](v T) Nullable[T] { return Nullable[T]{Value: v, Set: true} }

// NullValue returns a present null.
func NullValue[T any]() Nullable[T] { return Nullable[T]{Set: true, Null: true} }

// IsZero reports whether the field is absent (so omitzero omits it).
func (n Nullable[T]) IsZero() bool { return !n.Set }

// MarshalJSON writes null or the value.
func (n Nullable[T]) MarshalJSON() ([]byte, error) {
	if n.Null || !n.Set {
		return []byte("null"), nil
	}
	return json.Marshal(n.Value)
}

// UnmarshalJSON records presence, and null or the value.
func (n *Nullable[T]) UnmarshalJSON(b []byte) error {
	*n = Nullable[T]{Set: true}
	if string(b) == "null" {
		n.Null = true
		return nil
	}
	return json.Unmarshal(b, &n.Value)
}

`
