package cli

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"stitchkit.dev/stitchkit/internal/schematree"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
	"stitchkit.dev/stitchkit/pkg/validate"
)

// kind is how a flag's text becomes a JSON value.
type kind int

const (
	kindRaw     kind = iota // JSON if it parses as JSON, else a string
	kindString              // as typed
	kindInteger             // a whole number
	kindNumber              // any number
	kindBoolean             // presence, --no-x, or true|false|1|0|yes|no|on|off
	kindArray               // repeated flag (elements by elemKind) or one JSON array
	kindObject              // JSON object, or dotted flags --a.b
)

func (k kind) String() string {
	return [...]string{"value", "string", "integer", "number", "boolean", "list", "object"}[k]
}

// field is one flag of a command: a top-level property of the input
// schema, or (dotted) a property of an object property.
type field struct {
	path     []string // property names from the root: ["opts", "k"]
	kind     kind
	elem     kind // element kind of an array
	required bool
	enum     []string
	desc     string
	// notes are the constraints --help shows: default, bounds, format.
	notes []string
	// children are the dotted flags of an object field's properties.
	children []*field
	// open: an object field that takes keys it does not declare (a map,
	// or an open struct); --name.KEY flags for such keys are added when a
	// command line uses them ([addKeyFlags]), read as valueKind.
	open      bool
	valueKind kind
	// keys are the children added for undeclared keys, by key.
	keys map[string]*field
	// values are the texts given on the command line, in order.
	values []string
	// negated is set by --no-x.
	negated bool
}

func (f *field) name() string { return strings.Join(f.path, ".") }

// fieldsOf lists the flags of an input schema (nil: no input). The root's
// properties, looking through $ref, allOf, anyOf and oneOf, become flags;
// a property named in several branches with different kinds is raw.
func fieldsOf(schema json.RawMessage) ([]*field, error) {
	if len(schema) == 0 {
		return nil, nil
	}
	root, err := validate.DecodeJSON(schema, &validate.DecodeOptions{MaxDepth: 10000})
	if err != nil {
		return nil, err
	}
	return objectFields(root, root, nil, 0), nil
}

const maxDotted = 3 // depth of dotted flags: --a.b.c

func objectFields(root, s any, prefix []string, depth int) []*field {
	props := map[string][]any{}
	required := map[string]bool{}
	for _, m := range schematree.Applicable(root, s) {
		if ps, ok := m["properties"].(map[string]any); ok {
			for k, p := range ps {
				props[k] = append(props[k], p)
			}
		}
		if req, ok := m["required"].([]any); ok {
			for _, r := range req {
				if s, ok := r.(string); ok {
					required[s] = true
				}
			}
		}
	}
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	graph.SortUTF16(names)
	var out []*field
	for _, name := range names {
		f := &field{path: append(slices.Clone(prefix), name), required: required[name] && depth == 0}
		kinds := map[kind]bool{}
		for _, p := range props[name] {
			k, elem, enum := kindOf(root, p)
			kinds[k] = true
			f.elem = elem
			f.enum = append(f.enum, enum...)
			if d, ok := p.(map[string]any)["description"].(string); ok && f.desc == "" {
				f.desc = d
			}
			f.notes = append(f.notes, constraintsOf(root, p)...)
		}
		if len(kinds) == 1 {
			for k := range kinds {
				f.kind = k
			}
		} else if kinds[kindBoolean] {
			f.kind = kindBoolean
		}
		slices.Sort(f.enum)
		f.enum = slices.Compact(f.enum)
		f.notes = slices.Compact(f.notes)
		if f.kind == kindObject && depth+1 < maxDotted {
			for _, p := range props[name] {
				f.children = append(f.children, objectFields(root, p, f.path, depth+1)...)
			}
			f.open, f.valueKind = openKeys(root, props[name])
		}
		out = append(out, f)
	}
	return out
}

// openKeys reports whether an object property (its schemas, one per
// branch naming it) takes undeclared keys — additionalProperties absent or
// not false, or patternProperties — and how such a key's value reads.
func openKeys(root any, schemas []any) (open bool, k kind) {
	k = kindRaw
	kinds := map[kind]bool{}
	for _, s := range schemas {
		for _, m := range schematree.Applicable(root, s) {
			if _, ok := m["type"]; !ok && m["properties"] == nil && m["additionalProperties"] == nil && m["patternProperties"] == nil {
				continue // a $ref or union wrapper: its members say
			}
			switch ap := m["additionalProperties"].(type) {
			case nil:
				open = true
				kinds[kindRaw] = true
			case bool:
				if ap {
					open = true
					kinds[kindRaw] = true
				}
			case map[string]any:
				open = true
				vk, _, _ := kindOf(root, ap)
				kinds[vk] = true
			}
			if pp, ok := m["patternProperties"].(map[string]any); ok && len(pp) > 0 {
				open = true
				kinds[kindRaw] = true
			}
		}
	}
	if len(kinds) == 1 {
		for vk := range kinds {
			// A list or object value is given as JSON.
			if vk != kindArray && vk != kindObject {
				k = vk
			}
		}
	}
	return open, k
}

// kindOf says how a property's flag reads: its JSON type (null aside),
// enum or const strings listed for help.
func kindOf(root, s any) (k, elem kind, enum []string) {
	types := map[string]bool{}
	for _, m := range schematree.Applicable(root, s) {
		switch t := m["type"].(type) {
		case string:
			types[t] = true
		case []any:
			for _, e := range t {
				if s, ok := e.(string); ok {
					types[s] = true
				}
			}
		}
		if e, ok := m["enum"].([]any); ok {
			for _, v := range e {
				if s, ok := v.(string); ok {
					enum = append(enum, s)
					types["string"] = true
				}
			}
		}
		if c, ok := m["const"].(string); ok {
			enum = append(enum, c)
			types["string"] = true
		}
		if it, ok := m["items"]; ok && types["array"] {
			var items []string
			elem, _, items = kindOf(root, it)
			enum = append(enum, items...) // the values an element may take
		}
	}
	delete(types, "null")
	if types["integer"] && types["number"] {
		delete(types, "integer")
	}
	if len(types) != 1 {
		return kindRaw, kindRaw, enum
	}
	for t := range types {
		switch t {
		case "string":
			k = kindString
		case "integer":
			k = kindInteger
		case "number":
			k = kindNumber
		case "boolean":
			k = kindBoolean
		case "array":
			k = kindArray
		case "object":
			k = kindObject
		}
	}
	return k, elem, enum
}

// fieldValue is the pflag.Value of a field: it only collects texts; they
// are converted when the command runs, with errors naming the flag.
type fieldValue struct{ f *field }

func (v fieldValue) String() string { return "" }
func (v fieldValue) Set(s string) error {
	v.f.values = append(v.f.values, s)
	return nil
}
func (v fieldValue) Type() string {
	switch v.f.kind {
	case kindBoolean:
		return "bool"
	case kindArray:
		return v.f.elem.String() + "..."
	case kindObject:
		return "json"
	}
	return v.f.kind.String()
}

// IsBoolFlag lets `--x` stand alone for a boolean field.
func (v fieldValue) IsBoolFlag() bool { return v.f.kind == kindBoolean }

type negation struct{ f *field }

func (n negation) String() string     { return "" }
func (n negation) Type() string       { return "bool" }
func (n negation) IsBoolFlag() bool   { return true }
func (n negation) Set(s string) error { n.f.negated = true; return nil }

// register adds a field's flags (and its dotted children's) to fs.
func register(fs *pflag.FlagSet, f *field) {
	usage := f.desc
	if f.required {
		usage = strings.TrimSpace(usage + " (required)")
	}
	if len(f.enum) > 0 {
		usage = strings.TrimSpace(usage + " one of: " + strings.Join(f.enum, ", "))
	}
	if len(f.notes) > 0 {
		usage = strings.TrimSpace(usage + " [" + strings.Join(f.notes, "; ") + "]")
	}
	switch {
	case f.kind == kindArray:
		usage = strings.TrimSpace(usage + " (repeat the flag, or give one JSON array)")
	case f.kind == kindObject && f.open:
		usage = strings.TrimSpace(usage + " (a JSON object, or --" + f.name() + ".KEY VALUE)")
	case f.kind == kindObject && len(f.children) > 0:
		usage = strings.TrimSpace(usage + " (a JSON object, or its dotted flags)")
	case f.kind == kindObject:
		usage = strings.TrimSpace(usage + " (a JSON object)")
	}
	fl := fs.VarPF(fieldValue{f}, f.name(), "", usage)
	if f.kind == kindBoolean {
		fl.NoOptDefVal = "true"
		fs.VarPF(negation{f}, "no-"+f.name(), "", "set --"+f.name()+" to false").NoOptDefVal = "true"
	}
	for _, c := range f.children {
		register(fs, c)
	}
}

var wholeNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)

// value converts the texts of a field; ok is false when the flag was not
// given.
func (f *field) value() (v any, ok bool, err error) {
	if f.negated {
		if len(f.values) > 0 {
			return nil, false, flagError(f, "", "--%s and --no-%s both given", f.name(), f.name())
		}
		return false, true, nil
	}
	if len(f.values) == 0 {
		return nil, false, nil
	}
	if f.kind == kindArray {
		if len(f.values) == 1 && strings.HasPrefix(strings.TrimSpace(f.values[0]), "[") {
			return f.parseJSON(f.values[0], "a JSON array")
		}
		list := make([]any, len(f.values))
		for i, s := range f.values {
			e, err := convert(f, f.elem, s)
			if err != nil {
				return nil, false, err
			}
			list[i] = e
		}
		return list, true, nil
	}
	if len(f.values) > 1 {
		return nil, false, flagError(f, f.values[1], "--%s is given %d times; it takes one value", f.name(), len(f.values))
	}
	v, err = convert(f, f.kind, f.values[0])
	return v, err == nil, err
}

func convert(f *field, k kind, s string) (any, error) {
	switch k {
	case kindString:
		return s, nil
	case kindInteger:
		if !wholeNumber.MatchString(s) {
			return nil, flagError(f, s, "--%s expects a whole number, got %q", f.name(), s)
		}
		return json.Number(s), nil
	case kindNumber:
		if _, err := strconv.ParseFloat(s, 64); err != nil || !json.Valid([]byte(s)) {
			return nil, flagError(f, s, "--%s expects a number, got %q", f.name(), s)
		}
		return json.Number(s), nil
	case kindBoolean:
		switch strings.ToLower(s) {
		case "true", "1", "yes", "on":
			return true, nil
		case "false", "0", "no", "off":
			return false, nil
		}
		return nil, flagError(f, s, "--%s expects true or false, got %q", f.name(), s)
	case kindObject:
		v, _, err := f.parseJSON(s, "a JSON object")
		if _, ok := v.(map[string]any); err == nil && !ok {
			return nil, flagError(f, s, "--%s expects a JSON object, got %q", f.name(), s)
		}
		return v, err
	default:
		if v, err := validate.DecodeJSON([]byte(s), nil); err == nil {
			return v, nil
		}
		return s, nil
	}
}

func (f *field) parseJSON(s, what string) (any, bool, error) {
	v, err := validate.DecodeJSON([]byte(s), nil)
	if err != nil {
		return nil, false, flagError(f, s, "--%s expects %s: %v", f.name(), what, err)
	}
	return v, true, nil
}

// flagError is the VALIDATION_ERROR of a flag the command cannot read.
func flagError(f *field, value, format string, args ...any) *mount.Error {
	e := mount.Errorf(mount.CodeValidation, format, args...)
	e.Details = map[string]any{"message": e.Message, "flag": "--" + f.name()}
	if value != "" {
		e.Details["value"] = value
	}
	return e
}

// collect builds the flat arguments from the flags given: dotted flags
// merge into their object (a JSON value for the object itself comes
// first; a dotted key then overrides it).
func collect(fields []*field) (map[string]any, error) {
	args := map[string]any{}
	var put func(dst map[string]any, f *field) error
	put = func(dst map[string]any, f *field) error {
		key := f.path[len(f.path)-1]
		v, ok, err := f.value()
		if err != nil {
			return err
		}
		if ok {
			dst[key] = v
		}
		for _, c := range f.children {
			if !c.given() {
				continue
			}
			obj, isObj := dst[key].(map[string]any)
			if !isObj {
				if dst[key] != nil {
					return flagError(c, "", "--%s cannot be combined with a non-object --%s", c.name(), f.name())
				}
				obj = map[string]any{}
				dst[key] = obj
			}
			if err := put(obj, c); err != nil {
				return err
			}
		}
		return nil
	}
	for _, f := range fields {
		if err := put(args, f); err != nil {
			return nil, err
		}
	}
	return args, nil
}

// given reports whether f or one of its dotted children was set.
func (f *field) given() bool {
	if len(f.values) > 0 || f.negated {
		return true
	}
	for _, c := range f.children {
		if c.given() {
			return true
		}
	}
	return false
}

// addKeyFlags registers, on fs, a hidden flag for every --NAME.KEY of args
// whose NAME is an open object field and whose KEY it does not declare
// (--labels.env prod for a map of strings): KEY is taken whole, dots and
// all, and its value read as the map's value kind. A key once added stays
// (its flag cannot be removed from fs) and is reused by later runs.
func addKeyFlags(fs *pflag.FlagSet, fields []*field, args []string) {
	for _, tok := range args {
		if tok == "--" {
			return
		}
		if !strings.HasPrefix(tok, "--") {
			continue
		}
		name, _, _ := strings.Cut(tok[2:], "=")
		if fs.Lookup(name) != nil {
			continue
		}
		f := openParent(fields, name)
		if f == nil {
			continue
		}
		key := name[len(f.name())+1:]
		if f.keys == nil {
			f.keys = map[string]*field{}
		}
		c := &field{path: append(slices.Clone(f.path), key), kind: f.valueKind}
		f.keys[key] = c
		f.children = append(f.children, c)
		fs.VarPF(fieldValue{c}, c.name(), "", "").Hidden = true
	}
}

// openParent returns the open object field (at any dotted depth) whose
// name, followed by ".", starts name with a non-empty rest.
func openParent(fields []*field, name string) *field {
	for _, f := range fields {
		n := f.name()
		if !strings.HasPrefix(name, n+".") || len(name) == len(n)+1 {
			continue
		}
		if c := openParent(f.children, name); c != nil {
			return c
		}
		if f.open {
			return f
		}
	}
	return nil
}

// reset forgets the texts of a previous run (a command tree can run
// several times, as in tests).
func reset(fields []*field) {
	for _, f := range fields {
		f.values, f.negated = nil, false
		reset(f.children)
	}
}

// allNames lists every flag name fields register.
func allNames(fields []*field) []string {
	var out []string
	for _, f := range fields {
		out = append(out, f.name())
		if f.kind == kindBoolean {
			out = append(out, "no-"+f.name())
		}
		out = append(out, allNames(f.children)...)
	}
	return out
}

func describe(fields []*field) string {
	var req []string
	for _, f := range fields {
		if f.required {
			req = append(req, "--"+f.name())
		}
	}
	if len(req) == 0 {
		return ""
	}
	return fmt.Sprintf("Required: %s.", strings.Join(req, ", "))
}

// constraintsOf lists what --help says about a property beyond its type,
// from the schema the runner validates with (through $ref and allOf):
// its default, numeric bounds, length and item bounds, pattern and
// format, in that order.
func constraintsOf(root, s any) []string {
	var out []string
	num := func(m map[string]any, k string) (string, bool) {
		v, ok := m[k]
		if !ok {
			return "", false
		}
		b, err := json.Marshal(v)
		return string(b), err == nil
	}
	for _, m := range schematree.Applicable(root, s) {
		if d, ok := num(m, "default"); ok {
			out = append(out, "default "+d)
		}
		var bounds []string
		for _, b := range []struct{ key, op string }{
			{"minimum", ">="}, {"exclusiveMinimum", ">"}, {"maximum", "<="}, {"exclusiveMaximum", "<"},
		} {
			if v, ok := num(m, b.key); ok {
				bounds = append(bounds, b.op+v)
			}
		}
		if len(bounds) > 0 {
			out = append(out, strings.Join(bounds, " "))
		}
		for _, b := range []struct{ key, label string }{
			{"minLength", "min length"}, {"maxLength", "max length"}, {"minItems", "min items"}, {"maxItems", "max items"},
		} {
			if v, ok := num(m, b.key); ok {
				out = append(out, b.label+" "+v)
			}
		}
		if p, ok := m["pattern"].(string); ok {
			out = append(out, "pattern "+p)
		}
		if f, ok := m["format"].(string); ok {
			out = append(out, "format "+f)
		}
	}
	return out
}
