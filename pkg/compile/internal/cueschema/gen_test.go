package cueschema

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/validate"
)

// gen builds random CUE schemas and, alongside each value, a sampler of
// JSON values near it (TestGeneratedDifferential).
type gen struct {
	r     *rand.Rand
	defs  []string
	ndefs int
}

type node struct {
	cue    string
	sample func(r *rand.Rand) any
}

var labels = []string{"a", "b", "c", "kind", "id", "n", "x", "tags", "meta"}

func (g *gen) scalar() node {
	switch g.r.IntN(17) {
	case 0:
		return node{"int", func(r *rand.Rand) any { return pickNum(r) }}
	case 1:
		lo, hi := g.r.IntN(5), 5+g.r.IntN(10)
		return node{fmt.Sprintf("int & >=%d & <=%d", lo, hi), func(r *rand.Rand) any { return json.Number(strconv.Itoa(lo - 1 + r.IntN(hi-lo+3))) }}
	case 2:
		return node{"string", func(r *rand.Rand) any { return pickStr(r) }}
	case 3:
		return node{`=~"^[a-c]+$"`, func(r *rand.Rand) any { return pickStr(r) }}
	case 4:
		return node{`"x" | "y" | "z"`, func(r *rand.Rand) any { return []string{"x", "y", "z", "w"}[r.IntN(4)] }}
	case 5:
		d := g.r.IntN(3)
		return node{fmt.Sprintf("*%d | int & >=0 & <=5", d), func(r *rand.Rand) any { return json.Number(strconv.Itoa(r.IntN(8) - 1)) }}
	case 6:
		return node{`*"x" | "y"`, func(r *rand.Rand) any { return []string{"x", "y", "z"}[r.IntN(3)] }}
	case 7:
		return node{"bool", func(r *rand.Rand) any { return r.IntN(2) == 0 }}
	case 8:
		return node{"*false | bool", func(r *rand.Rand) any { return r.IntN(2) == 0 }}
	case 9:
		return node{"number & >0 & <1", func(r *rand.Rand) any {
			return json.Number([]string{"0", "0.5", "1", "1.0", "0.999", "-0.1"}[r.IntN(6)])
		}}
	case 10:
		return node{"*null | string", func(r *rand.Rand) any {
			if r.IntN(2) == 0 {
				return nil
			}
			return pickStr(r)
		}}
	case 11:
		return node{"string | int", func(r *rand.Rand) any { return pickAny(r) }}
	case 12:
		return node{`string & !=""`, func(r *rand.Rand) any { return pickStr(r) }}
	case 13:
		return node{"float", func(r *rand.Rand) any { return pickNum(r) }}
	case 14:
		return node{"uint8", func(r *rand.Rand) any { return pickNum(r) }}
	case 15:
		return node{`strings.HasPrefix("a") & strings.MaxRunes(2)`, func(r *rand.Rand) any { return pickStr(r) }}
	default:
		switch g.r.IntN(5) {
		case 0:
			return node{`time.Time`, func(r *rand.Rand) any {
				return []string{"2024-01-01T00:00:00Z", "2024-13-01T00:00:00Z", "x", "2024-01-01"}[r.IntN(4)]
			}}
		case 1:
			return node{`*"2024-01-01" | time.Format("2006-01-02")`, func(r *rand.Rand) any { return []string{"2024-01-01", "2024-02-30", "x"}[r.IntN(3)] }}
		case 2:
			return node{`[...int] & list.MaxItems(2) & list.UniqueItems()`, func(r *rand.Rand) any {
				return [][]any{{}, {json.Number("1")}, {json.Number("1"), json.Number("1")}, {json.Number("1"), json.Number("2"), json.Number("3")}}[r.IntN(4)]
			}}
		case 3:
			return node{`int & math.MultipleOf(2) | *4`, func(r *rand.Rand) any { return pickNum(r) }}
		}
		return node{"1 | 2 | 3", func(r *rand.Rand) any { return json.Number(strconv.Itoa(r.IntN(5))) }}
	}
}

func pickNum(r *rand.Rand) any {
	return json.Number([]string{"0", "1", "-1", "1.0", "2.5", "255", "256", "3", "1e2"}[r.IntN(9)])
}

func pickStr(r *rand.Rand) any {
	return []string{"", "a", "abc", "x", "y", "zz", "é"}[r.IntN(7)]
}

func pickAny(r *rand.Rand) any {
	switch r.IntN(6) {
	case 0:
		return nil
	case 1:
		return pickNum(r)
	case 2:
		return pickStr(r)
	case 3:
		return r.IntN(2) == 0
	case 4:
		return []any{}
	default:
		return map[string]any{}
	}
}

func (g *gen) value(depth int) node {
	if depth > 3 {
		return g.scalar()
	}
	switch g.r.IntN(18) {
	case 14, 15, 16:
		return g.idiom(depth)
	case 0, 1, 2:
		return g.structure(depth)
	case 3:
		e := g.value(depth + 1)
		return node{"[..." + paren(e.cue) + "]", listSampler(e)}
	case 4:
		e := g.value(depth + 1)
		return node{"*[] | [..." + paren(e.cue) + "]", listSampler(e)}
	case 5:
		a, b := g.structure(depth+1), g.structure(depth+1)
		return node{a.cue + " | " + b.cue, func(r *rand.Rand) any {
			if r.IntN(2) == 0 {
				return a.sample(r)
			}
			return b.sample(r)
		}}
	case 6:
		// discriminated
		a, b := g.structure(depth+1), g.structure(depth+1)
		ac := strings.Replace(a.cue, "{", `{kind: "a", `, 1)
		bc := strings.Replace(b.cue, "{", `{kind: "b", `, 1)
		return node{ac + " | " + bc, func(r *rand.Rand) any {
			var m any
			if r.IntN(2) == 0 {
				m = a.sample(r)
			} else {
				m = b.sample(r)
			}
			if mm, ok := m.(map[string]any); ok && r.IntN(3) > 0 {
				mm["kind"] = []string{"a", "b", "c"}[r.IntN(3)]
			}
			return m
		}}
	case 7:
		// definition
		s := g.structure(depth + 1)
		name := fmt.Sprintf("#D%d", g.ndefs)
		g.ndefs++
		g.defs = append(g.defs, name+": "+s.cue)
		return node{name, s.sample}
	case 8:
		// embedding
		s := g.structure(depth + 1)
		name := fmt.Sprintf("#D%d", g.ndefs)
		g.ndefs++
		g.defs = append(g.defs, name+": "+s.cue)
		f := g.value(depth + 1)
		return node{"{" + name + ", extra?: " + f.cue + "}", func(r *rand.Rand) any {
			m := s.sample(r)
			if mm, ok := m.(map[string]any); ok && r.IntN(2) == 0 {
				mm["extra"] = f.sample(r)
			}
			return m
		}}
	case 9:
		e1, e2 := g.scalar(), g.scalar()
		return node{"[" + e1.cue + ", ...(" + e2.cue + ")]", func(r *rand.Rand) any {
			n := r.IntN(3)
			l := []any{}
			if n > 0 {
				l = append(l, e1.sample(r))
			}
			for i := 1; i < n; i++ {
				l = append(l, e2.sample(r))
			}
			return l
		}}
	case 10:
		s := g.structure(depth + 1)
		return node{"*{} | " + s.cue, s.sample}
	case 11:
		// conditional
		f := g.scalar()
		return node{`{k: "p" | "q", if k == "p" {pv!: ` + f.cue + `}, o?: int}`, func(r *rand.Rand) any {
			m := map[string]any{}
			if r.IntN(5) > 0 {
				m["k"] = []string{"p", "q", "r"}[r.IntN(3)]
			}
			if r.IntN(2) == 0 {
				m["pv"] = f.sample(r)
			}
			if r.IntN(3) == 0 {
				m["o"] = pickNum(r)
			}
			return m
		}}
	case 12:
		s := g.structure(depth + 1)
		if g.r.IntN(2) == 0 {
			name := fmt.Sprintf("_H%d", g.ndefs)
			g.ndefs++
			g.defs = append(g.defs, name+": "+s.cue)
			return node{name, s.sample}
		}
		return node{paren(s.cue) + " & matchN(1, [{a?: int}, {b?: string}])", s.sample}
	default:
		return g.scalar()
	}
}

// num is a JSON number with its exact text.
func num(s string) json.Number { return json.Number(s) }

// rawString is a JSON string written with exactly these bytes between
// the quotes (escapes such as a lone UTF-16 surrogate, "\ud83d", that
// encoding/json never writes).
type rawString string

func (s rawString) MarshalJSON() ([]byte, error) { return []byte(`"` + string(s) + `"`), nil }

// pickEscaped returns strings written with escapes, whole surrogate
// pairs and lone halves of them included.
func pickEscaped(r *rand.Rand) any {
	return []any{rawString(`\ud83d`), rawString(`\udc00`), rawString(`\ud83d\ude00`), rawString(`a\u0062`), rawString(`\ud83dx`), rawString(`\u00e9`), rawString(`\n`), "😀", "ab"}[r.IntN(9)]
}

// pickOne returns one of vs.
func pickOne(r *rand.Rand, vs ...any) any { return vs[r.IntN(len(vs))] }

// idiom builds the constructs real contracts are written with (issue
// 17): float, struct and list defaults, label and value aliases, null
// around a union of definitions, list validators inside disjunction arms
// and around a disjunction, open arms beside closed ones, lists of struct
// literals taken from hidden fields, sized numbers, strings written with
// escapes, a bool-driven conditional, the any-JSON definition; samples
// sit on every boundary (1 beside 1.0, a bound and one past it, a list
// one longer than its maximum).
func (g *gen) idiom(depth int) node {
	def := func(body string) string {
		name := fmt.Sprintf("#D%d", g.ndefs)
		g.ndefs++
		g.defs = append(g.defs, name+": "+body)
		return name
	}
	hidden := func(body string) string {
		name := fmt.Sprintf("_H%d", g.ndefs)
		g.ndefs++
		g.defs = append(g.defs, name+": "+body)
		return name
	}
	switch g.r.IntN(16) {
	case 0:
		return node{"*1.0 | float & >=0 & <=2", func(r *rand.Rand) any {
			return pickOne(r, num("0"), num("0.0"), num("1"), num("1.0"), num("2"), num("2.0"), num("2.0000001"), num("-0.0"), "1")
		}}
	case 1:
		return node{"*0.5 | number & >0 & <1", func(r *rand.Rand) any {
			return pickOne(r, num("0"), num("0.5"), num("1"), num("1.0"), num("0.999"), num("1e-3"))
		}}
	case 2:
		return node{`*{type: "text"} | {type: "json_object"} | {type: "json_schema", schema!: {...}}`, func(r *rand.Rand) any {
			return pickOne(r, map[string]any{}, map[string]any{"type": "text"}, map[string]any{"type": "json_object"},
				map[string]any{"type": "json_schema"}, map[string]any{"type": "json_schema", "schema": map[string]any{"a": num("1")}}, map[string]any{"type": "x"}, "text")
		}}
	case 3:
		return node{"*[0] | [...int] & list.MinItems(1) & list.MaxItems(3)", func(r *rand.Rand) any {
			return pickOne(r, []any{}, []any{num("0")}, []any{num("1"), num("2")}, []any{num("1"), num("2"), num("3"), num("4")}, []any{"a"}, []any{num("1.0")})
		}}
	case 4:
		return node{"string | [...string] & list.MaxItems(2)", func(r *rand.Rand) any {
			return pickOne(r, "x", []any{}, []any{"a", "b"}, []any{"a", "b", "c"}, []any{num("1")}, num("1"))
		}}
	case 5:
		return node{"([...int] | string) & list.MinItems(1)", func(r *rand.Rand) any {
			return pickOne(r, "x", []any{}, []any{num("1")}, []any{"a"}, num("1"))
		}}
	case 6:
		return node{`{[Name=string]: {name: Name, port?: uint16}}`, func(r *rand.Rand) any {
			return pickOne(r, map[string]any{}, map[string]any{"a": map[string]any{"name": "a"}}, map[string]any{"a": map[string]any{"name": "a", "port": num("65535")}},
				map[string]any{"a": map[string]any{"name": "a", "port": num("65536")}}, map[string]any{"a": map[string]any{"port": num("1")}})
		}}
	case 7:
		// (Point and LineString carry list validators evaluation drops
		// the arms for.)
		pos := def("[...number] & list.MinItems(2)")
		pt := def(`{type: "Point", coordinates: ` + pos + `}`)
		ls := def(`{type: "LineString", coordinates: [...` + pos + `] & list.MinItems(2)}`)
		pg := def(`{type: "Polygon", coordinates: [...[...` + pos + `]]}`)
		geo := def(pt + " | " + ls + " | " + pg)
		if g.r.IntN(2) == 0 {
			// (Every arm one a validator fails on as written:
			// evaluation drops them all. Under a pattern whose value
			// is _ this is still lost: see the report of issue 17.)
			geo = def(pt + " | " + ls)
		}
		return node{"null | " + geo, func(r *rand.Rand) any {
			c := pickOne(r, []any{}, []any{num("1")}, []any{num("1"), num("2")}, []any{[]any{num("1"), num("2")}, []any{num("3"), num("4")}}, []any{[]any{[]any{num("1"), num("2")}}})
			return pickOne(r, nil, map[string]any{"type": pickOne(r, "Point", "LineString", "Polygon", "Line"), "coordinates": c}, map[string]any{"type": "Point"})
		}}
	case 8:
		return node{"{a: int} | {a: int, ...}", func(r *rand.Rand) any {
			return pickOne(r, map[string]any{"a": num("1")}, map[string]any{"a": num("1"), "b": num("2")}, map[string]any{"b": num("2")}, map[string]any{})
		}}
	case 9:
		h := hidden(g.structure(depth + 1).cue)
		form := []string{"[..." + h + "]", "[..." + h + "] & list.MaxItems(2) | string", "*[] | [..." + h + "] & list.MinItems(1)"}[g.r.IntN(3)]
		// (What matters is closedness: members the struct may or may
		// not declare.)
		return node{form, func(r *rand.Rand) any {
			l := []any{}
			for range r.IntN(4) {
				l = append(l, pickOne(r, map[string]any{}, map[string]any{"a": num("1")}, map[string]any{"zz": num("1")}, map[string]any{"kind": "x", "id": "y"}))
			}
			return pickOne(r, l, l, "s")
		}}
	case 10:
		t := []string{"int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32", "float64", "int128", "uint"}[g.r.IntN(12)]
		return node{t, func(r *rand.Rand) any {
			return pickOne(r, num("-129"), num("-128"), num("127"), num("128"), num("255"), num("256"), num("-1"), num("65535"), num("65536"),
				num("2147483647"), num("2147483648"), num("4294967296"), num("9223372036854775807"), num("9223372036854775808"),
				num("18446744073709551616"), num("1.5"), num("3.4e38"), num("3.5e38"), num("1e400"))
		}}
	case 11:
		return node{[]string{"string", `=~"^.$"`, "strings.MaxRunes(1)", `"😀" | "a"`, `!="\u00e9"`}[g.r.IntN(5)], pickEscaped}
	case 12:
		f := g.scalar()
		return node{`{ship: *false | bool, if ship {address!: ` + f.cue + `}, note?: string}`, func(r *rand.Rand) any {
			m := map[string]any{}
			if r.IntN(4) > 0 {
				m["ship"] = pickOne(r, true, false, "true")
			}
			if r.IntN(2) == 0 {
				m["address"] = f.sample(r)
			}
			return m
		}}
	case 13:
		j := def("null | bool | number | string | [...#J" + "] | {[string]: #J" + "}")
		// (#J must name itself: the definition is written under the
		// name it refers to.)
		g.defs[len(g.defs)-1] = strings.ReplaceAll(g.defs[len(g.defs)-1], "#J", j)
		return node{j, func(r *rand.Rand) any {
			return pickOne(r, nil, num("1"), "s", []any{num("1"), []any{map[string]any{"a": nil}}}, map[string]any{"a": map[string]any{"b": []any{true}}}, pickEscaped(r))
		}}
	case 14:
		return node{`*null | ` + def(`{kind: "a", n?: int}`) + ` | ` + def(`{kind: "b", s?: string & !=""}`), func(r *rand.Rand) any {
			return pickOne(r, nil, map[string]any{}, map[string]any{"kind": "a", "n": num("1")}, map[string]any{"kind": "b", "s": ""}, map[string]any{"kind": "b", "n": num("1")})
		}}
	default:
		return node{`{let L = int & >=0, a?: L, b?: [...L]}`, func(r *rand.Rand) any {
			return pickOne(r, map[string]any{"a": num("0")}, map[string]any{"a": num("-1")}, map[string]any{"b": []any{num("1"), num("-1")}}, map[string]any{})
		}}
	}
}

// plainVerdict is pkg/validate's verdict without defaults.
func plainVerdict(v *validate.Validator, instance []byte) bool {
	x, err := validate.DecodeJSON(instance, nil)
	return err == nil && v.Validate(x) == nil
}

func paren(s string) string {
	if strings.Contains(s, "|") || strings.Contains(s, "&") {
		return "(" + s + ")"
	}
	return s
}

func listSampler(e node) func(r *rand.Rand) any {
	return func(r *rand.Rand) any {
		n := r.IntN(3)
		l := []any{}
		for range n {
			l = append(l, e.sample(r))
		}
		return l
	}
}

func (g *gen) structure(depth int) node {
	n := 1 + g.r.IntN(3)
	type fld struct {
		name string
		mark string
		n    node
	}
	var fs []fld
	used := map[string]bool{}
	for range n {
		l := labels[g.r.IntN(len(labels))]
		if used[l] {
			continue
		}
		used[l] = true
		mark := []string{"", "?", "!", "?"}[g.r.IntN(4)]
		fs = append(fs, fld{l, mark, g.value(depth + 1)})
	}
	var b strings.Builder
	b.WriteString("{")
	for i, f := range fs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s%s: %s", f.name, f.mark, f.n.cue)
	}
	extra := g.r.IntN(6)
	switch extra {
	case 0:
		b.WriteString(", ...")
	case 1:
		b.WriteString(", [=~\"^x\"]: int")
	case 2:
		b.WriteString(", [string]: _")
	}
	b.WriteString("}")
	return node{b.String(), func(r *rand.Rand) any {
		m := map[string]any{}
		for _, f := range fs {
			if r.IntN(4) > 0 {
				m[f.name] = f.n.sample(r)
			}
		}
		if r.IntN(5) == 0 {
			m[[]string{"zz", "x1", "a"}[r.IntN(3)]] = pickAny(r)
		}
		return m
	}}
}

// TestGeneratedDifferential builds random schemas from the constructs
// contracts use every day (bounds, defaults, enums, regular expressions,
// null, open and closed structs, optional and required fields, patterns,
// lists with prefixes and validators, definitions, embeddings, hidden
// helpers, discriminated and overlapping unions, struct defaults,
// conditional fields, matchN, time and string validators) and instances
// near them, and checks every instance with CUE and with the validator
// built from the emitted schema after the decode and defaults the mounts
// apply, and the value a handler gets with CUE's completion. It also
// writes the idioms of real contracts (see idiom). It runs 200 schemas
// by default; STITCH_GEN_N and STITCH_GEN_SEED run more
// (STITCH_GEN_SEED=date: the day's seed, as CI runs it; the
// disagreements it found are corpus cases now).
func TestGeneratedDifferential(t *testing.T) {
	n, seed := 200, 1
	if s := os.Getenv("STITCH_GEN_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	switch s := os.Getenv("STITCH_GEN_SEED"); s {
	case "":
	case "date":
		// (CI: a seed that changes every day, printed to reproduce.)
		seed, _ = strconv.Atoi(time.Now().UTC().Format("20060102"))
	default:
		seed, _ = strconv.Atoi(s)
	}
	t.Logf("seed %d (STITCH_GEN_SEED=%d STITCH_GEN_N=%d reproduces this run)", seed, seed, n)
	refused, total, allowedN, optionalN := 0, 0, 0, 0
	for i := range n {
		g := &gen{r: rand.New(rand.NewPCG(uint64(seed), uint64(i)))}
		root := g.value(0)
		src := "import (\"strings\", \"time\", \"list\", \"math\")\n_x: [strings.MinRunes, time.Time, list.MaxItems, math.MultipleOf]\n" + strings.Join(g.defs, "\n") + "\n#S: " + root.cue + "\n"
		ctx := cuecontext.New()
		v := ctx.CompileString(src)
		if v.Validate() != nil {
			continue // (the generator can write conflicts)
		}
		s := v.LookupPath(cue.ParsePath("#S"))
		start := time.Now()
		// A label alias ([Name=string]: {name: Name}) is the one
		// allow-listed deviation the grammar writes: the schema
		// accepts any name, and the runner does not fill it in.
		aliased := false
		doc, err := New(&Options{Warn: func(w *Warning) { aliased = aliased || w.Rule == "label-alias" }}).Schema(s)
		var b []byte
		if err == nil {
			b, err = graph.CanonicalSchema(doc)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("translating took %v:\n%s", d, src)
		}
		var terr *Error
		if errors.As(err, &terr) {
			refused++
			continue
		}
		if err != nil {
			t.Fatalf("%v\n%s", err, src)
		}
		val, err := validate.Compile(b)
		if err != nil {
			t.Fatalf("the emitted schema does not compile: %v\n%s\n%s", err, src, b)
		}
		r := rand.New(rand.NewPCG(uint64(i), 7))
		seen := map[string]bool{}
		for range 30 {
			j, _ := json.Marshal(root.sample(r))
			if seen[string(j)] {
				continue
			}
			seen[string(j)] = true
			total++
			cv := cueJudge(ctx, s, j)
			ov := ourJudge(val, j)
			if aliased && (ov.ok && !cv.ok || cv.ok && ov.ok && !sameCompletion(ov.value, cv.value, b)) {
				allowedN++
				continue
			}
			if cv.ok != ov.ok && strings.Contains(src, "match") && plainVerdict(val, j) == cv.ok {
				// The allow-listed deviation of union-arm-validator-
				// fails: the runner fills in an optional field's
				// default before a matchN or matchIf counts it.
				optionalN++
				continue
			}
			if cv.ok != ov.ok {
				t.Errorf("%s: CUE accepted=%v, schema accepted=%v\n%s\n%s", j, cv.ok, ov.ok, src, b)
			} else if cv.ok && !sameCompletion(ov.value, cv.value, b) {
				got, _ := json.Marshal(ov.value)
				t.Errorf("%s: CUE completes it to %s, the handler gets %s\n%s\n%s", j, cv.value, got, src, b)
			}
		}
	}
	t.Logf("%d schemas (%d refused), %d instances (%d differ only as the label-alias allow-list entry says, %d as the optional-default-under-matchN one)", n, refused, total, allowedN, optionalN)
	if refused > n/10 {
		t.Errorf("%d of %d generated schemas refused: everyday constructs must translate", refused, n)
	}
}
