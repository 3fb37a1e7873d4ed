package check

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"stitchkit.dev/stitchkit/internal/schematree"
	"stitchkit.dev/stitchkit/pkg/compile"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/project"
	"stitchkit.dev/stitchkit/pkg/validate"
)

// An advertised tool input (MCP, Agent, CLI) is what a client builds its
// call from, and what clients that pre-validate check it against. It is
// derived from the contract's schemas by the projector (flattening,
// strictness, merging #params, #query and #input into one object), and a
// derivation that goes wrong can advertise a schema nothing satisfies —
// allOf of two closed objects each refusing the other's properties — so a
// valid call is refused. advertisedSchemas holds every advertised input to
// the contract: it must accept the operation's own examples (merged into
// the flat arguments the tool takes), and it must be satisfiable at all.

// advertisedSchemas checks the advertised input of every tool of every
// surface. One problem of one schema is reported once, naming every
// surface that advertises it.
func (k *checker) advertisedSchemas(ts *project.Tools) {
	type problem struct {
		pos     graph.Pos
		path    string
		rule    string
		message string
		where   []string
	}
	var order []string
	problems := map[string]*problem{}
	report := func(key, node, rule, msg, where string) {
		p := problems[key]
		if p == nil {
			p = &problem{pos: k.r.Pos(node), path: node, rule: rule, message: msg}
			problems[key] = p
			order = append(order, key)
		}
		if !slices.Contains(p.where, where) {
			p.where = append(p.where, where)
		}
	}
	compiled := map[graph.Digest]*validate.Validator{}
	for si := range ts.Surfaces {
		s := &ts.Surfaces[si]
		for ti := range s.Tools {
			t := &s.Tools[ti]
			if t.Op == nil || len(t.Input) == 0 {
				continue // runtime tools carry no examples of their arguments
			}
			v, seen := compiled[t.InputDigest]
			if !seen {
				v, _ = validate.Compile(t.Input) // nil: not ours to judge here
				compiled[t.InputDigest] = v
			}
			if v == nil {
				continue
			}
			node := opNode(t.Op)
			what := " tool "
			if s.Transport == graph.CLI {
				what = " command "
			}
			where := project.SurfaceLabel(s.Transport, s.Name) + what + t.Name
			var doc any
			if json.Unmarshal(t.Input, &doc) != nil {
				continue
			}
			strict := s.Transport == graph.AGENT && k.g.Policy.Agent.Strict
			accepted := false
			for i, raw := range t.Op.Examples {
				args, ok := exampleArgs(raw)
				if !ok || k.reported(node+".examples."+strconv.Itoa(i)) {
					continue
				}
				if strict {
					args = strictArgs(doc, doc, args, 0)
				}
				err := v.Validate(args)
				if err == nil {
					accepted = true
					continue
				}
				exNode := node + ".examples." + strconv.Itoa(i)
				if k.reported(exNode) {
					continue // the example breaks the contract itself: said already
				}
				if !k.r.Pos(exNode).IsValid() {
					exNode = node
				}
				report(string(t.InputDigest)+"\x00ex"+strconv.Itoa(i), exNode, "advertised-input-refuses-example",
					fmt.Sprintf("the advertised input of %s refuses example %d of the contract (%v): a call the contract accepts is refused by clients that check it", t.Op.ID(), i, err), where)
			}
			if accepted {
				continue
			}
			if w, ok := witness(doc, doc, 0); ok && v.Validate(w) == nil {
				continue
			}
			if why := unsatisfiable(doc, doc, 0); why != "" {
				report(string(t.InputDigest)+"\x00unsat", node, "advertised-input-unsatisfiable",
					fmt.Sprintf("the advertised input of %s admits no value (%s): every call is refused", t.Op.ID(), why), where)
			}
		}
	}
	for _, key := range order {
		p := problems[key]
		k.add(compile.Diagnostic{Pos: p.pos, Rule: p.rule, Path: p.path,
			Message: strings.Join(p.where, ", ") + ": " + p.message})
	}
}

// reported reports whether the compiler already found a mistake at node
// or below it.
func (k *checker) reported(node string) bool {
	for _, d := range k.r.Diagnostics {
		if d.Path == node || strings.HasPrefix(d.Path, node+".") {
			return true
		}
	}
	return false
}

// exampleArgs merges an example's params, query and input into the flat
// object of arguments a tool takes; ok is false when the example gives no
// arguments or its input is not an object.
func exampleArgs(raw json.RawMessage) (any, bool) {
	ex, err := validate.DecodeJSON(raw, nil)
	if err != nil {
		return nil, false
	}
	m, _ := ex.(map[string]any)
	args := map[string]any{}
	given := false
	for _, part := range []string{"params", "query", "input"} {
		v, has := m[part]
		if !has {
			continue
		}
		obj, isObj := v.(map[string]any)
		if !isObj {
			return nil, false
		}
		given = true
		for name, x := range obj {
			args[name] = x
		}
	}
	return args, given
}

// strictArgs fills in null for every property an object schema of s
// declares and the value omits: OpenAI strict mode advertises optional
// properties as required and nullable, and its callers send null for
// them.
func strictArgs(root, s, v any, depth int) any {
	obj, ok := v.(map[string]any)
	if !ok || depth > 32 {
		return v
	}
	props := map[string]any{}
	for _, m := range objectBranches(root, s, 0) {
		p, _ := m["properties"].(map[string]any)
		for name, ps := range p {
			if _, seen := props[name]; !seen {
				props[name] = ps
			}
		}
	}
	out := make(map[string]any, len(props))
	for name, x := range obj {
		out[name] = x
	}
	for name, ps := range props {
		if x, has := out[name]; has {
			out[name] = strictArgs(root, ps, x, depth+1)
		} else {
			out[name] = nil
		}
	}
	return out
}

// objectBranches returns the object schemas s stands for: itself, its
// $ref target, and those of its allOf, anyOf and oneOf members.
func objectBranches(root, s any, depth int) []map[string]any {
	t, _ := schematree.Deref(root, s)
	m, ok := t.(map[string]any)
	if !ok || depth > 16 {
		return nil
	}
	out := []map[string]any{m}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		l, _ := m[k].([]any)
		for _, b := range l {
			out = append(out, objectBranches(root, b, depth+1)...)
		}
	}
	return out
}

// witness builds a value s is likely to accept (the caller validates it):
// each required property given a value of its schema, the first variant
// of a union that yields one, bounds and lengths met. ok is false when no
// candidate could be built.
func witness(root, s any, depth int) (any, bool) {
	if depth > 32 {
		return nil, false
	}
	t, _ := schematree.Deref(root, s)
	switch x := t.(type) {
	case bool:
		return map[string]any{}, x
	case map[string]any:
		if c, ok := x["const"]; ok {
			return c, true
		}
		if e, ok := x["enum"].([]any); ok {
			if len(e) == 0 {
				return nil, false
			}
			return e[0], true
		}
		if all, ok := x["allOf"].([]any); ok {
			merged := map[string]any{}
			for k, v := range x {
				if k != "allOf" {
					merged[k] = v
				}
			}
			for _, member := range all {
				if m := firstObject(root, member); m != nil {
					mergeInto(merged, m)
				}
			}
			return witness(root, merged, depth+1)
		}
		for _, k := range []string{"anyOf", "oneOf"} {
			if l, ok := x[k].([]any); ok {
				for _, b := range l {
					bm, _ := schematree.Deref(root, b)
					branch, isMap := bm.(map[string]any)
					if !isMap {
						continue
					}
					with := map[string]any{}
					for k2, v := range x {
						if k2 != k {
							with[k2] = v
						}
					}
					mergeInto(with, branch)
					if w, ok := witness(root, with, depth+1); ok {
						return w, true
					}
				}
				return nil, false
			}
		}
		types := schematree.TypeNames(x["type"])
		if len(types) == 0 {
			types = []string{"object"} // tool arguments are one object
		}
		switch types[0] {
		case "object":
			obj := map[string]any{}
			props, _ := x["properties"].(map[string]any)
			req, _ := x["required"].([]any)
			for _, r := range req {
				name, _ := r.(string)
				ps, has := props[name]
				if !has {
					if ap, isMap := x["additionalProperties"].(map[string]any); isMap {
						ps = ap
					} else if x["additionalProperties"] == false {
						return nil, false
					} else {
						ps = true
					}
				}
				v, ok := witness(root, ps, depth+1)
				if !ok {
					return nil, false
				}
				obj[name] = v
			}
			return obj, true
		case "array":
			var out []any
			n := 0
			if f, ok := x["minItems"].(float64); ok {
				n = int(f)
			}
			pre, _ := x["prefixItems"].([]any)
			for i := 0; i < n; i++ {
				var item any = x["items"]
				if i < len(pre) {
					item = pre[i]
				}
				if item == nil {
					item = true
				}
				v, ok := witness(root, item, depth+1)
				if !ok {
					return nil, false
				}
				out = append(out, v)
			}
			if out == nil {
				out = []any{}
			}
			return out, true
		case "string":
			if f, ok := x["format"].(string); ok {
				switch f {
				case "date":
					return "2024-01-01", true
				case "date-time":
					return "2024-01-01T00:00:00Z", true
				}
			}
			n := 0
			if f, ok := x["minLength"].(float64); ok {
				n = int(f)
			}
			return strings.Repeat("a", n), true
		case "integer", "number":
			n := func(f float64) (any, bool) { return json.Number(strconv.FormatFloat(f, 'f', -1, 64)), true }
			if f, ok := x["minimum"].(float64); ok {
				return n(f)
			}
			if f, ok := x["exclusiveMinimum"].(float64); ok {
				return n(f + 1)
			}
			if f, ok := x["maximum"].(float64); ok {
				return n(f)
			}
			if f, ok := x["exclusiveMaximum"].(float64); ok {
				return n(f - 1)
			}
			return json.Number("0"), true
		case "boolean":
			return false, true
		case "null":
			return nil, true
		}
	}
	return nil, false
}

// mergeInto adds b's properties, required names and other keywords to a
// (a's own win), for building a witness of a conjunction.
func mergeInto(a, b map[string]any) {
	for k, v := range b {
		switch k {
		case "properties":
			ap, _ := a[k].(map[string]any)
			if ap == nil {
				ap = map[string]any{}
			} else {
				ap = maps(ap)
			}
			bp, _ := v.(map[string]any)
			for name, ps := range bp {
				if _, has := ap[name]; !has {
					ap[name] = ps
				}
			}
			a[k] = ap
		case "required":
			ar, _ := a[k].([]any)
			ar = slices.Clone(ar)
			br, _ := v.([]any)
			for _, r := range br {
				if !slices.Contains(ar, r) {
					ar = append(ar, r)
				}
			}
			a[k] = ar
		default:
			if _, has := a[k]; !has {
				a[k] = v
			}
		}
	}
}

// refusedRequirement returns a property s requires (in every variant,
// when s is a union) that declared does not hold, quoted; "" when some
// value of s may carry only declared properties.
func refusedRequirement(root any, declared map[string]any, s any, depth int) string {
	m := firstObject(root, s)
	if m == nil || depth > 16 {
		return ""
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		l, ok := m[k].([]any)
		if !ok {
			continue
		}
		var names []string
		for _, b := range l {
			name := refusedRequirement(root, declared, b, depth+1)
			if name == "" {
				return ""
			}
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
		if len(names) == 0 {
			return ""
		}
		return strings.Join(names, " or ")
	}
	req, _ := m["required"].([]any)
	for _, r := range req {
		name, _ := r.(string)
		if _, ok := declared[name]; !ok {
			return strconv.Quote(name)
		}
	}
	return ""
}

// firstObject returns s (its $ref target) as an object schema, or nil.
func firstObject(root, s any) map[string]any {
	if bs := objectBranches(root, s, 0); len(bs) > 0 {
		return bs[0]
	}
	return nil
}

func maps(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// unsatisfiable returns why no value satisfies s, when that follows from
// its structure: false, an empty enum, a conjunction of a closed object
// and a member requiring a property it refuses, disjoint types in a
// conjunction, a union of unsatisfiable variants, a required property
// that admits nothing. "" when it does not follow (s may still be
// unsatisfiable).
func unsatisfiable(root, s any, depth int) string {
	if depth > 32 {
		return ""
	}
	t, _ := schematree.Deref(root, s)
	switch x := t.(type) {
	case bool:
		if !x {
			return "false admits nothing"
		}
		return ""
	case map[string]any:
		if not, ok := x["not"].(map[string]any); ok && len(not) == 0 {
			return "not {} admits nothing"
		}
		if e, ok := x["enum"].([]any); ok && len(e) == 0 {
			return "an empty enum"
		}
		if all, ok := x["allOf"].([]any); ok {
			for _, m := range all {
				if why := unsatisfiable(root, m, depth+1); why != "" {
					return why
				}
			}
			for i, a := range all {
				am, _ := schematree.Deref(root, a)
				closed, _ := am.(map[string]any)
				if closed == nil || closed["additionalProperties"] != false {
					continue
				}
				declared, _ := closed["properties"].(map[string]any)
				for j, b := range all {
					if i == j {
						continue
					}
					if name := refusedRequirement(root, declared, b, 0); name != "" {
						return fmt.Sprintf("allOf member %d is a closed object without %s, which member %d requires", i, name, j)
					}
				}
			}
			var types []string
			for _, m := range all {
				mm, _ := schematree.Deref(root, m)
				mt, _ := mm.(map[string]any)
				ts := schematree.TypeNames(mt["type"])
				if len(ts) == 0 {
					continue
				}
				if types == nil {
					types = ts
					continue
				}
				types = slices.DeleteFunc(slices.Clone(types), func(t string) bool {
					return !slices.Contains(ts, t) && !(t == "integer" && slices.Contains(ts, "number")) && !(t == "number" && slices.Contains(ts, "integer"))
				})
				if len(types) == 0 {
					return "the allOf members admit no common JSON type"
				}
			}
		}
		for _, k := range []string{"anyOf", "oneOf"} {
			if l, ok := x[k].([]any); ok {
				var whys []string
				for _, b := range l {
					why := unsatisfiable(root, b, depth+1)
					if why == "" {
						whys = nil
						break
					}
					whys = append(whys, why)
				}
				if len(whys) > 0 {
					return "every variant admits nothing: " + strings.Join(whys, "; ")
				}
			}
		}
		props, _ := x["properties"].(map[string]any)
		req, _ := x["required"].([]any)
		for _, r := range req {
			name, _ := r.(string)
			ps, has := props[name]
			if !has && x["additionalProperties"] == false {
				return fmt.Sprintf("%q is required but the closed object does not declare it", name)
			}
			if has {
				if why := unsatisfiable(root, ps, depth+1); why != "" {
					return fmt.Sprintf("required property %q admits nothing (%s)", name, why)
				}
			}
		}
	}
	return ""
}
