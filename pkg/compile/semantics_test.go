package compile

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// contractWith returns a contract whose operation s.op takes #input: expr
// (HTTP only, so tool-input checks stay out of the way), with defs as
// package-level declarations and imports as the import list.
func contractWith(imports, defs, expr string) string {
	imp := `import "stitchkit.dev/stitchkit/schema"`
	if imports != "" {
		imp = "import (\n\t\"stitchkit.dev/stitchkit/schema\"\n" + imports + "\n)"
	}
	return "package c\n\n" + imp + "\n\nschema.#Contract\n\nname: \"c\"\nversion: \"1.0.0\"\n\n" + defs + "\n\n" +
		"services: s: operations: op: {method: \"POST\", path: \"/\", desc: \"d\", expose: [\"HTTP\"]\n\t#input: " + expr + "\n}\n"
}

func compileInput(t *testing.T, imports, defs, expr string) (*graph.Graph, graph.Digest) {
	t.Helper()
	g, err := compileFiles(context.Background(), map[string][]byte{"c.cue": []byte(contractWith(imports, defs, expr))})
	if err != nil {
		t.Fatalf("#input: %s: %v", expr, err)
	}
	return g, g.Operations()[0].Input
}

type instance struct {
	json string
	want bool
	// fill: CUE accepts the instance by filling in an omitted regular
	// field with its concrete value; nothing does that at run time, so
	// the schema refuses it (a regular field is required).
	fill bool
}

// TestSchemaMatchesCUE: for each schema, the generated JSON Schema
// accepts exactly what CUE accepts (the value unified with the instance
// validates as concrete), except that an omitted regular field is refused.
func TestSchemaMatchesCUE(t *testing.T) {
	for _, tc := range []struct {
		name, defs, expr string
		instances        []instance
	}{
		{"regular fields are required", "", `{kind: "email", items: [...int], meta: {n?: int}, a: {...}, g: null, e: {}, d: *1 | int, x?: int, r!: int}`, []instance{
			{`{"kind":"email","items":[],"meta":{},"a":{},"g":null,"e":{},"r":1}`, true, false},
			{`{"kind":"email","items":[1],"meta":{"n":1},"a":{"z":[1]},"g":null,"e":{},"d":2,"x":3,"r":1}`, true, false},
			{`{"items":[],"meta":{},"a":{},"g":null,"e":{},"r":1}`, false, true},
			{`{"kind":"email","meta":{},"a":{},"g":null,"e":{},"r":1}`, false, true},
			{`{"kind":"email","items":[],"a":{},"g":null,"e":{},"r":1}`, false, true},
			{`{"kind":"email","items":[],"meta":{},"g":null,"e":{},"r":1}`, false, true},
			{`{"kind":"email","items":[],"meta":{},"a":{},"e":{},"r":1}`, false, true},
			{`{"kind":"email","items":[],"meta":{},"a":{},"g":null,"r":1}`, false, true},
			{`{"kind":"email","items":[],"meta":{},"a":{},"g":null,"e":{}}`, false, false},
			{`{"kind":"sms","items":[],"meta":{},"a":{},"g":null,"e":{},"r":1}`, false, false},
			{`{"kind":"email","items":[],"meta":{},"a":{},"g":null,"e":{"z":1},"r":1}`, false, false},
			{`{"kind":"email","items":[],"meta":{"z":1},"a":{},"g":null,"e":{},"r":1}`, false, false},
			{`{"kind":"email","items":[],"meta":{},"a":1,"g":null,"e":{},"r":1}`, false, false},
		}},
		{"open structs in a list", "", `{l: [...{...}], c: [...{}]}`, []instance{
			{`{"l":[{"a":1},{}],"c":[{}]}`, true, false},
			{`{"l":[1],"c":[]}`, false, false},
			{`{"l":[],"c":[{"a":1}]}`, false, false},
		}},
		{"definitions are fixed up too", `#T: {kind: "t", v: int}`, `{a: #T, b?: [...#T]}`, []instance{
			{`{"a":{"kind":"t","v":1},"b":[{"kind":"t","v":2}]}`, true, false},
			{`{"a":{"v":1}}`, false, true},
			{`{"a":{"kind":"t","v":1},"b":[{"v":2}]}`, false, true},
		}},
		{"union arms", "", `{n: {kind: "a", x: int} | {kind: "b", y: string}}`, []instance{
			{`{"n":{"kind":"a","x":1}}`, true, false},
			{`{"n":{"kind":"b","y":"s"}}`, true, false},
			{`{"n":{"x":1}}`, false, true},
			{`{"n":{"kind":"b","x":1}}`, false, false},
		}},
		{"embedding", `#Base: {title: string}
#Task: {#Base, id: string}`, `#Task`, []instance{
			{`{"title":"a","id":"1"}`, true, false},
			{`{"title":"a","id":"1","x":1}`, false, false},
			{`{"id":"1"}`, false, false},
		}},
		{"embedding in a field", `#Base: {title: string}
#T: {#Base, id: string}`, `{t: #T, u: #Base}`, []instance{
			{`{"t":{"title":"a","id":"1"},"u":{"title":"b"}}`, true, false},
			{`{"t":{"title":"a","id":"1","x":1},"u":{"title":"b"}}`, false, false},
			{`{"t":{"title":"a","id":"1"},"u":{"title":"b","id":"1"}}`, false, false},
		}},
		{"conjunction with a closed definition", `#Base: {title: string}`, `#Base & {done?: bool}`, []instance{
			{`{"title":"a"}`, true, false},
			{`{"title":"a","done":true}`, false, false},
			{`{}`, false, false},
		}},
		{"embedding an open definition", `#Open: {title: string, ...}`, `{#Open, id: string}`, []instance{
			{`{"title":"a","id":"1","x":1}`, true, false},
			{`{"title":"a"}`, false, false},
		}},
		{"pattern constraint values", "", `{[=~"^x_"]: {a: int, b: "k"}}`, []instance{
			{`{"x_1":{"a":1,"b":"k"}}`, true, false},
			{`{}`, true, false},
			{`{"x_1":{"a":1}}`, false, true},
			{`{"x_1":{"a":1,"b":"z"}}`, false, false},
			{`{"x_1":{"a":1,"b":"k","c":1}}`, false, false},
			{`{"y":1}`, false, false},
		}},
		{"map of structs", "", `{m: [string]: {a: int, b: "k"}}`, []instance{
			{`{"m":{"p":{"a":1,"b":"k"}}}`, true, false},
			{`{"m":{"p":{"a":1}}}`, false, true},
			{`{"m":{"p":{"a":1,"b":"k","c":1}}}`, false, false},
		}},
		{"map of structs embedding a definition", `#Base: {title: string}`, `{m: [string]: {#Base, id: string}}`, []instance{
			{`{"m":{"p":{"title":"a","id":"1"}}}`, true, false},
			{`{"m":{"p":{"id":"1"}}}`, false, false},
			{`{"m":{"p":{"title":"a","id":"1","x":1}}}`, false, false},
		}},
		{"union arms with the same field names", "", `{n: {kind: "a", x: int, m: {n?: int}} | {kind: "b", x: int, m: {n?: int}}}`, []instance{
			{`{"n":{"kind":"a","x":1,"m":{}}}`, true, false},
			{`{"n":{"kind":"b","x":1,"m":{"n":1}}}`, true, false},
			{`{"n":{"kind":"a","x":1}}`, false, true},
			{`{"n":{"kind":"a","x":1,"m":{"z":1}}}`, false, false},
			{`{"n":{"x":1,"m":{}}}`, false, false},
		}},
		{"union arm embedding a definition", `#Base: {title: string}`, `{n: {#Base, kind: "a"} | {kind: "b", y: string}}`, []instance{
			{`{"n":{"title":"t","kind":"a"}}`, true, false},
			{`{"n":{"kind":"b","y":"s"}}`, true, false},
			{`{"n":{"title":"t"}}`, false, true},
			{`{"n":{"title":"t","kind":"a","y":"s"}}`, false, false},
		}},
		{"inline struct embedding a definition", `#Base: {title: string}`, `{t: {#Base, id: string}, o?: {#Base, k: "v"}}`, []instance{
			{`{"t":{"title":"a","id":"1"}}`, true, false},
			{`{"t":{"title":"a","id":"1"},"o":{"title":"b","k":"v"}}`, true, false},
			{`{"t":{"title":"a","id":"1"},"o":{"title":"b"}}`, false, true},
			{`{"t":{"title":"a","id":"1","x":1}}`, false, false},
			{`{"t":{"id":"1"}}`, false, false},
			{`{"t":{"title":"a","id":"1"},"z":1}`, false, false},
			{`{}`, false, false},
		}},
		{"inline embedding in an open struct", `#Base: {title: string}`, `{a: int, t: {#Base, id: string}, ...}`, []instance{
			{`{"a":1,"t":{"title":"a","id":"1"},"z":1}`, true, false},
			{`{"a":1,"t":{"title":"a"}}`, false, false},
			{`{"a":1,"t":{"title":"a","id":"1","x":1}}`, false, false},
		}},
		{"nested inline embedding", `#Base: {title: string}`, `{x: {y: {t: {#Base, id: string}, k: "c"}}}`, []instance{
			{`{"x":{"y":{"t":{"title":"a","id":"1"},"k":"c"}}}`, true, false},
			{`{"x":{"y":{"t":{"title":"a","id":"1"}}}}`, false, true},
			{`{"x":{"y":{"t":{"title":"a"},"k":"c"}}}`, false, false},
		}},
		{"not keeps CUE's meaning", "", `{n: matchN(0, [{a: int, b: "k"}])}`, []instance{
			{`{"n":{"a":1,"b":"z"}}`, true, false},
			{`{"n":{"a":1}}`, false, false},
			{`{"n":{"a":1,"b":"k"}}`, false, false},
		}},
		{"patterns of both conjuncts", "", `{s: string & =~"a" & =~"b"}`, []instance{
			{`{"s":"ab"}`, true, false},
			{`{"s":"a"}`, false, false},
			{`{"s":"b"}`, false, false},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, d := compileInput(t, "", tc.defs, tc.expr)
			s := validator(t, g, d)
			ctx := cuecontext.New()
			v := ctx.CompileString(tc.defs + "\n#S: " + tc.expr).LookupPath(cue.ParsePath("#S"))
			if err := v.Err(); err != nil {
				t.Fatal(err)
			}
			for _, in := range tc.instances {
				// CUE fills in an omitted regular field with a concrete
				// value (or a default), and so does the schema's default.
				if got := accepts(t, s, in.json); got != (in.want || in.fill) {
					t.Errorf("schema: %s accepted=%v, want %v\nschema: %s", in.json, got, in.want || in.fill, g.Schema(d))
				}
				x := ctx.CompileString(in.json)
				cueOK := v.Unify(x).Validate(cue.Concrete(true)) == nil
				if wantCUE := in.want || in.fill; cueOK != wantCUE {
					t.Errorf("CUE: %s accepted=%v, want %v", in.json, cueOK, wantCUE)
				}
			}
		})
	}
}

// TestSchemaShapes pins the shapes the fix-ups produce.
func TestSchemaShapes(t *testing.T) {
	for _, tc := range []struct{ imports, defs, expr, want string }{
		{"", "", `{a: {...}, e: {}}`, `"properties":{"a":{"default":{},"type":"object"},"e":{"additionalProperties":false,"default":{},"type":"object"}},"type":"object"}`},
		{"", "", `{l: [...{...}]}`, `"l":{"default":[],"items":{"type":"object"},"type":"array"}`},
		{"", `#Base: {title: string}`, `{#Base, id: string}`, `{"$schema":"https://json-schema.org/draft/2020-12/schema","additionalProperties":false,"properties":{"id":{"type":"string"},"title":{"type":"string"}},"required":["id","title"],"type":"object"}`},
		{"", "", `{d: *1 | int, x?: int}`, `"properties":{"d":{"default":1,"type":"integer"},"x":{"type":"integer"}},"type":"object"}`},
		{`"time"`, "", `{t: time.Time}`, `"format":"date-time"`},
	} {
		g, d := compileInput(t, tc.imports, tc.defs, tc.expr)
		if got := string(g.Schema(d)); !strings.Contains(got, tc.want) {
			t.Errorf("%s:\n got %s\nwant …%s…", tc.expr, got, tc.want)
		}
	}
}

// TestSchemaOrderInsensitive: the order disjuncts and conjuncts are
// written in never reaches the graph bytes.
func TestSchemaOrderInsensitive(t *testing.T) {
	for _, pair := range [][2]string{
		{`{f: "title" | "tags"}`, `{f: "tags" | "title"}`},
		{`{a: string} | {b: int}`, `{b: int} | {a: string}`},
		{`{s: =~"a" & =~"b"}`, `{s: =~"b" & =~"a"}`},
		{`{s: string & =~"a" & =~"b"}`, `{s: =~"b" & =~"a" & string}`},
		{`{n: 1 | "x" | true}`, `{n: true | "x" | 1}`},
		{`{n: >=1 & <=5 & int}`, `{n: int & <=5 & >=1}`},
	} {
		var out [2][]byte
		for i, expr := range pair {
			g, _ := compileInput(t, "", "", expr)
			b, err := g.Encode()
			if err != nil {
				t.Fatal(err)
			}
			out[i] = b
		}
		if !bytes.Equal(out[0], out[1]) {
			t.Errorf("%s and %s compile to different graphs:\n%s\n%s", pair[0], pair[1], out[0], out[1])
		}
	}
}

// TestUnrepresentable: constraints JSON Schema cannot carry are refused
// with a positioned diagnostic (DESIGN invariant 3), never dropped.
func TestUnrepresentable(t *testing.T) {
	deep := strings.Repeat("{a: ", 210) + "int" + strings.Repeat("}", 210)
	for _, tc := range []struct{ expr, want string }{
		{`{h: net.FQDN}`, "net.FQDN has no exact JSON Schema"},
		{`{a: int, b: a}`, "reference to a sibling value"},
		{`{a: {x: int}, b: a.x}`, "reference to a sibling value"},
		{`{s: =~"(?m)^a$"}`, `line anchors`},
		{`{s: =~"("}`, `not a valid Go regular expression`},
		{`{s: =~"[z-a]"}`, `not a valid Go regular expression`},
		{`{s: =~"\\Z"}`, `not a valid Go regular expression`},
		{"{d: " + deep + "}", "nested more than 64 values deep"},
	} {
		src := contractWith("\t\"net\"\n\t\"uuid\"", "_keep: [net.IP, uuid.Valid]", tc.expr)
		_, err := compileFiles(context.Background(), map[string][]byte{"c.cue": []byte(src)})
		var ce *Error
		if !errors.As(err, &ce) {
			t.Errorf("%s: compiled (err %v), want %q", tc.expr, err, tc.want)
			continue
		}
		found := false
		for _, d := range ce.Diagnostics {
			if d.Rule == "unrepresentable" && strings.Contains(d.Message, tc.want) {
				found = true
				if d.Pos.File != "c.cue" || d.Pos.Line < 14 {
					t.Errorf("%s: diagnostic at %v, want a position in the #input line", tc.expr, d.Pos)
				}
			}
		}
		if !found {
			t.Errorf("%s: want an unrepresentable diagnostic containing %q, got:\n%v", tc.expr, tc.want, err)
		}
	}
	// Still accepted: ECMA-262 reads these as Go does.
	for _, expr := range []string{
		`{s: =~"^[^@\\s]+@[^@\\s]+$"}`, `{s: =~"(?:a|b)\\d{2,}"}`, `{s: =~"(?<y>[0-9]{4})"}`,
		`{s: =~"\\x41\\."}`, `{n: <=9007199254740992, f: 0.1, g: 1.5e300}`, `{t: time.Time}`,
		// Rewritten into the syntax both read the same way.
		`{[=~"(?i)a"]: int}`, `{s: =~"(?i)a"}`, `{s: =~"\\p{L}"}`, `{s: =~"\\pL"}`, `{s: =~"\\x{41}"}`,
		`{s: =~"a\\z"}`, `{s: =~"\\Aa"}`, `{s: =~"[[:alpha:]]"}`, `{s: =~"\\Q.\\E"}`, `{s: =~"(?P<x>a)"}`,
		`{s: =~"[]a]"}`, `{s: !~"(?s)."}`, `{s: =~"a.b\\s"}`,
	} {
		src := contractWith("\t\"time\"", "_keep: time.Time", expr)
		if _, err := compileFiles(context.Background(), map[string][]byte{"c.cue": []byte(src)}); err != nil {
			t.Errorf("%s: %v", expr, err)
		}
	}
}

// TestPatternEmbeddingRefused: cuelang.org/go v0.17.1 cannot evaluate a
// regular-expression pattern constraint's value embedding a definition on
// its own ("field not allowed"), so its regular fields cannot be made
