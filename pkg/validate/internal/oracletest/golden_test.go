package oracletest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"stitchkit.dev/stitchkit/pkg/validate/internal/engine"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"stitchkit.dev/stitchkit/internal/schematree"
)

// dateTime is the format pkg/validate registers (CUE's time.Time), used
// here so both validators assert it alike.
var testFormats = map[string]engine.Format{
	"date-time": func(v any) error {
		s, ok := v.(string)
		if !ok {
			return nil
		}
		_, err := time.Parse(time.RFC3339Nano, s)
		return err
	},
}

// handSchemas cover what the goldens do not (yet) exercise: exact number
// bounds, combinators, recursion, maps and tuples, as the translator
// emits them.
var handSchemas = []string{
	`{"type":"integer","minimum":-3,"maximum":9007199254740993}`,
	`{"type":"number","exclusiveMinimum":0.1,"exclusiveMaximum":1e3,"multipleOf":0.01}`,
	`{"type":"number","multipleOf":0.5,"not":{"type":"integer"}}`,
	`{"type":"integer","multipleOf":7,"minimum":-1e2}`,
	`{"enum":[1,"a",null,true,{"a":[1]},[1,2]]}`,
	`{"const":{"a":1.0,"b":[true,null]}}`,
	`{"type":"string","minLength":2,"maxLength":3,"pattern":"^[a-zé]+$"}`,
	`{"type":"array","prefixItems":[{"type":"integer"},{"type":"string"}],"items":false,"minItems":1}`,
	`{"type":"array","items":{"type":["integer","null"]},"uniqueItems":true,"maxItems":40}`,
	`{"type":"array","contains":{"const":2},"minContains":2,"maxContains":3}`,
	`{"type":"object","patternProperties":{"^x-":{"type":"string"},"^[a-z]+$":{"type":"integer"}},"additionalProperties":false,"minProperties":1,"maxProperties":3}`,
	`{"type":"object","additionalProperties":{"type":"integer","minimum":0},"propertyNames":{"pattern":"^[a-z]+$","maxLength":4}}`,
	`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"}},"dependentRequired":{"a":["b"]},"dependentSchemas":{"b":{"required":["c"]}}}`,
	`{"anyOf":[{"type":"object","properties":{"kind":{"const":"a"},"n":{"type":"integer"}},"required":["kind"],"additionalProperties":false},{"type":"object","properties":{"kind":{"const":"b"},"s":{"type":"string"}},"required":["kind","s"],"additionalProperties":false}]}`,
	`{"oneOf":[{"type":"integer"},{"type":"number","minimum":2}]}`,
	`{"if":{"type":"integer"},"then":{"minimum":0},"else":{"type":"string"}}`,
	`{"allOf":[{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]},{"properties":{"a":{"maximum":5}}}]}`,
	`{"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},"next":{"$ref":"#/$defs/node"}},"required":["v"],"additionalProperties":false}},"$ref":"#/$defs/node"}`,
	`{"$defs":{"a~b/c":{"type":"string","format":"date-time"}},"type":"object","properties":{"at":{"$ref":"#/$defs/a~0b~1c"}}}`,
	`{"type":["string","null"],"not":{"const":""}}`,
}

// goldenSchemas returns every schema of the repository's compiled graph
// goldens (and of the translator's corpus, where it stores expected
// schemas), plus handSchemas, by name.
func goldenSchemas(t testing.TB) map[string][]byte {
	out := map[string][]byte{}
	clear(corpusInstances)
	files, _ := filepath.Glob("../../../compile/testdata/*.graph.json")
	if len(files) == 0 {
		t.Fatal("no graph goldens found under pkg/compile/testdata")
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var g struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		}
		if err := json.Unmarshal(raw, &g); err != nil {
			t.Fatal(err)
		}
		for d, s := range g.Schemas {
			out[filepath.Base(f)+"#"+d] = s
		}
	}
	// The translator's corpus: each case's expected schema.
	corpus, _ := filepath.Glob("../../../compile/internal/cueschema/testdata/corpus/*.txtar")
	for _, f := range corpus {
		a, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range a.Files {
			if file.Name != "schema.json" {
				continue
			}
			// Formats other than date-time are CUE's (int64, go-time:…):
			// the CUE differential in cueschema judges those.
			if bytes.Contains(file.Data, []byte(`"format"`)) && !bytes.Contains(file.Data, []byte(`"format":"date-time"`)) {
				continue
			}
			out["corpus/"+filepath.Base(f)] = file.Data
		}
		for _, file := range a.Files {
			if file.Name == "ok" || file.Name == "bad" {
				for _, line := range bytes.Split(file.Data, []byte("\n")) {
					if len(bytes.TrimSpace(line)) > 0 {
						corpusInstances["corpus/"+filepath.Base(f)] = append(corpusInstances["corpus/"+filepath.Base(f)], string(line))
					}
				}
			}
		}
	}
	for i, s := range handSchemas {
		out[fmt.Sprintf("hand#%02d", i)] = []byte(s)
	}
	return out
}

// corpusInstances are the ok and bad instances of the corpus cases
// (filled by goldenSchemas).
var corpusInstances = map[string][]string{}

// TestGoldenDifferential judges generated boundary instances of every
// golden schema with the engine and with santhosh-tekuri, and fails on any
// verdict they disagree on.
func TestGoldenDifferential(t *testing.T) {
	schemas := goldenSchemas(t)
	names := slices.Sorted(mapsKeys(schemas))
	total := 0
	for _, name := range names {
		doc := decode(t, schemas[name])
		s, err := engine.Compile(doc, formatOptions(testFormats))
		if err != nil {
			t.Errorf("%s: engine refuses a golden schema: %v", name, err)
			continue
		}
		o := oracle(doc, testFormats)
		if o == nil {
			t.Errorf("%s: santhosh-tekuri refuses it", name)
			continue
		}
		g := newGen(doc, uint64(len(name)))
		seen := map[string]bool{}
		valid := 0
		var instances []string
		instances = append(instances, corpusInstances[name]...)
		for range 400 {
			instances = append(instances, string(mustJSON(g.instance(doc, 0))))
		}
		for _, key := range instances {
			if !json.Valid([]byte(key)) {
				continue
			}
			if seen[key] {
				continue
			}
			seen[key] = true
			// Round-trip through JSON text, so numbers are json.Number as
			// a request body's would be.
			v := decode(t, []byte(key))
			total++
			got, want := s.Valid(v), oracleValid(o, v)
			if got {
				valid++
			}
			if got != want {
				t.Errorf("%s: instance %s: engine valid=%v, santhosh-tekuri %v", name, key, got, want)
			}
			if issues := s.Validate(v); (issues == nil) != got {
				t.Errorf("%s: %s: Valid=%v but Validate says %v", name, key, got, issues)
			}
			if sv := s.ValidJSON([]byte(key), 64); sv != got {
				t.Errorf("%s: %s: ValidJSON=%v but Valid=%v", name, key, sv, got)
			}
		}
		// (Corpus schemas are written for CUE's reading, in which some are
		// satisfiable only there — {"const":1,"not":{"type":"integer"}} —
		// or accept everything; the generator's coverage is checked on the
		// others.)
		if !strings.HasPrefix(name, "corpus/") && (valid == 0 || valid == len(seen)) {
			t.Errorf("%s: the generator produced %d instances, %d valid: boundaries on one side only", name, len(seen), valid)
		}
	}
	t.Logf("%d schemas, %d distinct instances judged by both validators", len(names), total)
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// gen makes instances near the boundaries a schema states: bounds ±1 and
// ±a fraction, lengths at and beyond the limits, required members left out,
// undeclared members added, wrong kinds, enum and const values and their
// near misses.
type gen struct {
	root any
	r    *rand.Rand
}

func newGen(root any, seed uint64) *gen {
	return &gen{root: root, r: rand.New(rand.NewPCG(seed, 7))}
}

func (g *gen) pick(n int) int { return g.r.IntN(n) }

var anyValues = []string{`null`, `true`, `false`, `0`, `-1`, `1.5`, `1.0`, `""`, `"a"`, `"t_1"`, `[]`, `{}`, `[1,1]`, `{"a":1}`, `1e400`, `9007199254740993`, `"2024-01-02T03:04:05Z"`, `"2024-01-02T03:04:60Z"`, `"é"`}

func (g *gen) scalar() any {
	var v any
	_ = json.Unmarshal([]byte(anyValues[g.pick(len(anyValues))]), &v)
	return asNumber(v)
}

// asNumber turns float64s from json.Unmarshal into json.Number text.
func asNumber(v any) any {
	b, _ := json.Marshal(v)
	var out any
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	_ = dec.Decode(&out)
	return out
}

func (g *gen) instance(s any, depth int) any {
	if depth > 6 || g.pick(12) == 0 {
		return g.scalar()
	}
	m, ok := s.(map[string]any)
	if !ok {
		return g.scalar()
	}
	if ref, ok := m["$ref"].(string); ok && g.pick(4) != 0 {
		if t, found := schematree.Resolve(g.root, ref); found {
			return g.instance(t, depth+1)
		}
	}
	for _, kw := range []string{"allOf", "anyOf", "oneOf"} {
		if arms, ok := m[kw].([]any); ok && len(arms) > 0 && g.pick(2) == 0 {
			return g.instance(arms[g.pick(len(arms))], depth+1)
		}
	}
	if c, ok := m["const"]; ok && g.pick(3) != 0 {
		return g.nearValue(c)
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 && g.pick(3) != 0 {
		return g.nearValue(e[g.pick(len(e))])
	}
	for _, kw := range []string{"then", "else", "not", "if"} {
		if sub, ok := m[kw]; ok && g.pick(4) == 0 {
			return g.instance(sub, depth+1)
		}
	}
	t := g.typeOf(m)
	switch t {
	case "object":
		return g.object(m, depth)
	case "array":
		return g.array(m, depth)
	case "string":
		return g.str(m)
	case "integer", "number":
		return g.number(m, t == "integer")
	case "boolean":
		return g.pick(2) == 0
	case "null":
		return nil
	}
	return g.scalar()
}

func (g *gen) typeOf(m map[string]any) string {
	switch t := m["type"].(type) {
	case string:
		if g.pick(10) == 0 {
			return []string{"object", "array", "string", "number", "null"}[g.pick(5)]
		}
		return t
	case []any:
		if s, ok := t[g.pick(len(t))].(string); ok {
			return s
		}
	}
	switch {
	case m["properties"] != nil || m["required"] != nil || m["additionalProperties"] != nil || m["patternProperties"] != nil:
		return "object"
	case m["items"] != nil || m["prefixItems"] != nil || m["contains"] != nil:
		return "array"
	case m["minLength"] != nil || m["pattern"] != nil || m["format"] != nil:
		return "string"
	case m["minimum"] != nil || m["maximum"] != nil || m["multipleOf"] != nil || m["exclusiveMinimum"] != nil:
		return "number"
	}
	return ""
}

// nearValue returns v, or a value close to it (another number kind, a
// changed member).
func (g *gen) nearValue(v any) any {
	v = asNumber(v)
	switch g.pick(4) {
	case 0:
		if n, ok := v.(json.Number); ok {
			return validNumber(string(n)+[]string{".0", "e0", "1", ".5"}[g.pick(4)], string(n))
		}
		if s, ok := v.(string); ok {
			return s + "x"
		}
		return g.scalar()
	case 1:
		return g.scalar()
	}
	return v
}

func (g *gen) object(m map[string]any, depth int) any {
	out := map[string]any{}
	props, _ := m["properties"].(map[string]any)
	req := map[string]bool{}
	if r, ok := m["required"].([]any); ok {
		for _, e := range r {
			if s, ok := e.(string); ok {
				req[s] = true
			}
		}
	}
	for _, name := range slices.Sorted(mapsKeys(props)) {
		if req[name] && g.pick(8) != 0 || !req[name] && g.pick(2) == 0 {
			out[name] = g.instance(props[name], depth+1)
		}
	}
	for name := range req {
		if _, ok := props[name]; !ok && g.pick(3) != 0 {
			out[name] = g.scalar()
		}
	}
	if pp, ok := m["patternProperties"].(map[string]any); ok {
		for src, sub := range pp {
			if g.pick(2) == 0 {
				key := strings.Trim(strings.ReplaceAll(strings.ReplaceAll(src, "[a-z]+", "ab"), "^", ""), "$")
				out[key] = g.instance(sub, depth+1)
			}
		}
	}
	if g.pick(4) == 0 {
		extra := []string{"extra", "x-y", "ZZ", "a/b", "abcde"}[g.pick(5)]
		if ap, ok := m["additionalProperties"]; ok && ap != false && g.pick(2) == 0 {
			out[extra] = g.instance(ap, depth+1)
		} else {
			out[extra] = g.scalar()
		}
	}
	return out
}

func (g *gen) count(m map[string]any, lo, hi string) int {
	n := g.pick(4)
	if v, ok := m[lo].(float64); ok {
		n = int(v) - 1 + g.pick(3)
	}
	if v, ok := m[hi].(float64); ok && g.pick(2) == 0 {
		n = int(v) - 1 + g.pick(3)
	}
	return max(n, 0)
}

func (g *gen) array(m map[string]any, depth int) any {
	mm := numbersAsFloat(m)
	n := g.count(mm, "minItems", "maxItems")
	if n > 60 {
		n = 60
	}
	out := make([]any, 0, n)
	prefix, _ := m["prefixItems"].([]any)
	for i := range n {
		switch {
		case i < len(prefix):
			out = append(out, g.instance(prefix[i], depth+1))
		case m["items"] != nil:
			out = append(out, g.instance(m["items"], depth+1))
		case m["contains"] != nil && g.pick(2) == 0:
			out = append(out, g.instance(m["contains"], depth+1))
		default:
			out = append(out, g.scalar())
		}
	}
	if len(out) > 1 && g.pick(3) == 0 {
		out[len(out)-1] = out[0] // a duplicate, for uniqueItems
	}
	return out
}

func (g *gen) str(m map[string]any) any {
	mm := numbersAsFloat(m)
	n := g.count(mm, "minLength", "maxLength")
	if n > 300 {
		n = 300
	}
	if src, ok := m["pattern"].(string); ok && g.pick(5) < 3 {
		if re, err := regexp.Compile(src); err == nil {
			var fits []string
			for _, c := range patternPool {
				if re.MatchString(c) {
					fits = append(fits, c)
				}
			}
			if len(fits) > 0 {
				return fits[g.pick(len(fits))]
			}
		}
	}
	switch g.pick(5) {
	case 0:
		return strings.Repeat("é", n)
	case 1:
		if f, ok := m["format"].(string); ok && f == "date-time" {
			return []string{"2024-01-02T03:04:05Z", "2024-01-02T03:04:05.123+02:00", "2024-01-02", "2024-13-02T03:04:05Z"}[g.pick(4)]
		}
		return []string{"t_abc", "i_42", "a@b", "abc-def", "Tag", "t_", "x", "a b@c"}[g.pick(8)]
	}
	return strings.Repeat("ab", n/2+1)[:n]
}

// patternPool are candidate strings for pattern-constrained schemas.
var patternPool = []string{"t_abc", "t_1", "i_42", "abc", "a-b", "ab", "a@b", "x@y.z", "+1234567", "+12", "é", "Tag", "x-y", "2024-01-02"}

func (g *gen) number(m map[string]any, integer bool) any {
	var bounds []json.Number
	for _, kw := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"} {
		if b, ok := asNumber(m[kw]).(json.Number); ok {
			bounds = append(bounds, b)
		}
	}
	if len(bounds) == 0 || g.pick(5) == 0 {
		return json.Number([]string{"0", "-1", "1", "1.5", "1.0", "1e2", "-0", "9007199254740993", "1e400", "0.3"}[g.pick(10)])
	}
	b := string(bounds[g.pick(len(bounds))])
	var v string
	switch g.pick(6) {
	case 0:
		v = b
	case 1:
		v = b + ".0"
	case 2:
		v = b + "1"
	case 3:
		v = "-" + strings.TrimPrefix(b, "-")
	case 4:
		if integer {
			v = b + "e0"
		} else {
			v = b + "5"
		}
	default:
		v = b + "e1"
	}
	return validNumber(v, b)
}

// validNumber returns v as a json.Number, or fallback when v is not JSON
// number text.
func validNumber(v, fallback string) json.Number {
	if !json.Valid([]byte(v)) {
		v = fallback
	}
	return json.Number(v)
}

func numbersAsFloat(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if n, ok := v.(json.Number); ok {
			f, _ := n.Float64()
			out[k] = f
			continue
		}
		out[k] = v
	}
	return out
}
