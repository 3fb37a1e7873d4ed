package compile

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"stitchkit.dev/stitchkit/pkg/graph"
)

const closedUnionContract = `package c

import "stitchkit.dev/stitchkit/schema"

schema.#Contract

name:    "c"
version: "1.0.0"

services: s: operations: {
	closed: {
		method: "POST", path: "/closed", desc: "closed union", expose: ["HTTP"]
		#input: {kind: "email", address: string} | {kind: "sms", phone: string}
	}
	open: {
		method: "POST", path: "/open", desc: "union with an open arm", expose: ["HTTP"]
		#input: {kind: "email", address: string, ...} | {kind: "sms", phone: string}
	}
	closedRef: {
		method: "POST", path: "/ref", desc: "union through a definition", expose: ["HTTP"]
		#input: #Notify
	}
	list: {
		method: "POST", path: "/list", desc: "list of closed structs"
		#input: {items: [...{a: int}]}
		#output: [...{a: int}]
	}
}

#Notify: {kind: "email", address: string} | {kind: "sms", phone: string}

realtime: r: clientToServer: watch: {#args: [{board: string}]}
`

// validator compiles schema d of g with santhosh-tekuri/jsonschema.
func validator(t *testing.T, g *graph.Graph, d graph.Digest) *jsonschema.Schema {
	t.Helper()
	raw := g.Schema(d)
	if raw == nil {
		t.Fatalf("schema %q not in the graph", d)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("s.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("s.json")
	if err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return s
}

func accepts(t *testing.T, s *jsonschema.Schema, instance string) bool {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(instance))
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(v) == nil
}

// TestClosedUnionArms: a disjunction of closed structs (or a list of them)
// in a definition refuses unknown keys in CUE, so its JSON Schema must too
// (DESIGN invariant 3); an arm opened with ... still accepts them.
func TestClosedUnionArms(t *testing.T) {
	g, err := compileFiles(context.Background(), map[string][]byte{"c.cue": []byte(closedUnionContract)})
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]*graph.Operation{}
	for _, op := range g.Operations() {
		ops[op.Action] = op
	}
	for _, tc := range []struct {
		name     string
		d        graph.Digest
		instance string
		want     bool
	}{
		{"closed arm", ops["closed"].Input, `{"kind": "email", "address": "a@b"}`, true},
		{"closed arm", ops["closed"].Input, `{"kind": "sms", "phone": "1"}`, true},
		{"closed arm, extra key", ops["closed"].Input, `{"kind": "email", "address": "a@b", "extra": 1}`, false},
		{"closed arm, other arm's key", ops["closed"].Input, `{"kind": "email", "address": "a@b", "phone": "1"}`, false},
		{"open arm, extra key", ops["open"].Input, `{"kind": "email", "address": "a@b", "extra": 1}`, true},
		{"open union's closed arm, extra key", ops["open"].Input, `{"kind": "sms", "phone": "1", "extra": 1}`, false},
		{"definition union, extra key", ops["closedRef"].Input, `{"kind": "sms", "phone": "1", "extra": 1}`, false},
		{"definition union", ops["closedRef"].Input, `{"kind": "sms", "phone": "1"}`, true},
		{"nested list element, extra key", ops["list"].Input, `{"items": [{"a": 1, "b": 2}]}`, false},
		{"root list element, extra key", ops["list"].Output, `[{"a": 1, "b": 2}]`, false},
		{"root list element", ops["list"].Output, `[{"a": 1}]`, true},
		{"tuple element, extra key", g.Realtime[0].ClientToServer[0].Args, `[{"board": "b", "extra": 1}]`, false},
		{"tuple element", g.Realtime[0].ClientToServer[0].Args, `[{"board": "b"}]`, true},
	} {
		if got := accepts(t, validator(t, g, tc.d), tc.instance); got != tc.want {
			t.Errorf("%s: %s accepted=%v, want %v\nschema: %s", tc.name, tc.instance, got, tc.want, g.Schema(tc.d))
		}
	}
}

// TestClosedUnionMatchesCUE: the instances the schemas above refuse are
// refused by CUE itself (checked through examples), so closing the arms
// does not refuse anything CUE accepts.
func TestClosedUnionMatchesCUE(t *testing.T) {
	for _, ex := range []string{
		`{input: {kind: "email", address: "a@b", extra: 1}}`,
		`{input: {kind: "email", address: "a@b", phone: "1"}}`,
	} {
		src := strings.Replace(closedUnionContract, `desc: "closed union"`, `desc: "closed union", examples: [`+ex+`]`, 1)
		if _, err := compileFiles(context.Background(), map[string][]byte{"c.cue": []byte(src)}); err == nil {
			t.Errorf("example %s: CUE accepted it", ex)
		}
	}
	src := strings.Replace(closedUnionContract, `desc: "union with an open arm"`, `desc: "union with an open arm", examples: [{input: {kind: "email", address: "a@b", extra: 1}}]`, 1)
	if _, err := compileFiles(context.Background(), map[string][]byte{"c.cue": []byte(src)}); err != nil {
		t.Errorf("open arm with an extra key: %v", err)
	}
}

// TestSchemaCacheSoundness: schemas written the same way share one
// generation only when they mean the same thing; the same text whose
// identifiers resolve to different enclosing declarations does not.
func TestSchemaCacheSoundness(t *testing.T) {
	src := `package c

import "stitchkit.dev/stitchkit/schema"

schema.#Contract

name:    "c"
version: "1.0.0"

#T: {id: string}

services: s: operations: {
	a: {
		let L = string
		method: "POST", path: "/a", desc: "a"
		#input: {v: L, t: #T}
		#output: {ok: bool}
	}
	b: {
		let L = int
		method: "POST", path: "/b", desc: "b"
		#input: {v: L, t: #T}
		#output: {ok: bool}
	}
	c: {
		method: "POST", path: "/c", desc: "c"
		#input: {
			// A doc comment is part of the schema.
			v: string
		}
		#output: {ok: bool}
	}
	d: {
		method: "POST", path: "/d", desc: "d"
		#input: {
			v: string
		}
		#output: {ok: bool}
	}
	e: {
		method: "POST", path: "/e", desc: "e"
		_n: "e"
		#input: {v: _n, w: [for x in ["p"] {x}]}
	}
	f: {
		method: "POST", path: "/f", desc: "f"
		_n: "f"
		#input: {v: _n, w: [for x in ["p"] {x}]}
	}
	g: {
		method: "POST", path: "/g", desc: "g"
		#input: {w: [for x in ["p"] {x}]}
	}
	h: {
		method: "POST", path: "/h", desc: "h"
		#input: {w: [for x in ["p"] {x}]}
	}
}
`
	g, err := compileFiles(context.Background(), map[string][]byte{"c.cue": []byte(src)})
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]*graph.Operation{}
	for _, op := range g.Operations() {
		ops[op.Action] = op
	}
	if ops["a"].Input == ops["b"].Input {
		t.Errorf("a and b share input %s though L differs:\n%s", ops["a"].Input, g.Schema(ops["a"].Input))
	}
	if !bytes.Contains(g.Schema(ops["a"].Input), []byte(`"v":{"type":"string"}`)) || !bytes.Contains(g.Schema(ops["b"].Input), []byte(`"v":{"type":"integer"}`)) {
		t.Errorf("a: %s\nb: %s", g.Schema(ops["a"].Input), g.Schema(ops["b"].Input))
	}
	if ops["c"].Input == ops["d"].Input || !bytes.Contains(g.Schema(ops["c"].Input), []byte("A doc comment")) {
		t.Errorf("c: %s\nd: %s", g.Schema(ops["c"].Input), g.Schema(ops["d"].Input))
	}
	if ops["e"].Input == ops["f"].Input {
		t.Errorf("e and f share input %s though _n differs", ops["e"].Input)
	}
	if ops["g"].Input != ops["h"].Input {
		t.Errorf("equal inputs differ: %s, %s", ops["g"].Input, ops["h"].Input)
	}
	if ops["a"].Output != ops["c"].Output {
		t.Errorf("equal outputs differ: %s, %s", ops["a"].Output, ops["c"].Output)
	}
}

// TestSchemaWarnings: a reference to an optional field compiles with
// CUE's meaning (the field can never be given) and is reported as a
// positioned warning naming the field and the rewrite that works; so is a
// default copied from another field, which the runner cannot apply.
func TestSchemaWarnings(t *testing.T) {
	src := `package c

import "stitchkit.dev/stitchkit/schema"

#Book: {title: string, year?: int & >=1450}

schema.#Contract & {
	name:    "c"
	version: "1.0.0"
	services: books: operations: create: {
		method: "POST", path: "/", desc: "Add a book"
		#input: {title: #Book.title, year?: #Book.year}
		#query: {limit: *10 | int, page: *limit | int}
	}
}
`
	r, err := AnalyzeFiles(context.Background(), map[string][]byte{"c.cue": []byte(src)})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Diagnostics) > 0 {
		t.Fatalf("a warning is not an error: %v", r.Diagnostics)
	}
	var got []string
	for _, w := range r.Warnings {
		got = append(got, w.String())
	}
	want := []string{
		"c.cue:12:32: optional-field-reference: services.books.operations.create.#input.year?: year refers to the optional field #Book.year",
		"c.cue:13:30: default-from-field: services.books.operations.create.#query.page: the default of page copies limit",
	}
	if len(got) != len(want) {
		t.Fatalf("warnings:\n%s\nwant %d", strings.Join(got, "\n"), len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("warning %d:\n got %s\nwant %s…", i, got[i], w)
		}
	}
	if !strings.Contains(got[0], "#Year: int & >=1450, then year?: #Year") {
		t.Errorf("the optional-field warning does not give the rewrite: %s", got[0])
	}
}

// TestStructValidatorScan: the translator skips searching conjuncts for
// struct and list validators only when no file a schema can draw on calls
// one; any call, under any import name, in the contract package or a user
// package it imports, or a reference into the contract language, turns
// the search back on.
func TestStructValidatorScan(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		want bool
	}{
		{"none", `package c
import "strings"
#S: {name: string & strings.MinRunes(1)}`, false},
		{"list", `package c
import "list"
#S: [...int] & list.MaxItems(3)`, true},
		{"aliased", `package c
import lists "list"
#S: [...int] & lists.UniqueItems()`, true},
		{"struct", `package c
import "struct"
#S: {a?: int} & struct.MinFields(1)`, true},
		{"matchN", `package c
#S: {matchN(1, [{a!: _}, {b!: _}]), a?: int, b?: int}`, true},
		{"contract language", `package c
import "stitchkit.dev/stitchkit/schema"
#S: schema.#Selection`, true},
		{"contract root", `package c
import "stitchkit.dev/stitchkit/schema"
schema.#Contract & {name: "c"}`, false},
	} {
		f, err := parseFile("c.cue", []byte(tc.src))
		if err != nil {
			t.Fatal(err)
		}
		if got := fileCallsStructValidators(f); got != tc.want {
			t.Errorf("%s: fileCallsStructValidators = %v, want %v", tc.name, got, tc.want)
		}
	}
	// Through an imported user package.
	src := map[string][]byte{
		"cue.mod/module.cue": []byte("module: \"example.com/c@v0\"\nlanguage: version: \"v0.17.1\"\n"),
		"types/types.cue":    []byte("package types\n\nimport \"list\"\n\n#Tags: [...string] & list.MaxItems(2)\n"),
		"c.cue": []byte(`package c

import (
	"stitchkit.dev/stitchkit/schema"
	"example.com/c/types"
)

schema.#Contract & {
	name:    "c"
	version: "1.0.0"
	services: s: operations: op: {method: "POST", path: "/", desc: "d", expose: ["HTTP"], #input: {tags: types.#Tags}}
}
`),
	}
	g, err := compileFiles(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	raw := string(g.Schema(g.Services[0].Operations[0].Input))
	if !strings.Contains(raw, `"maxItems":2`) {
		t.Errorf("a validator from an imported package is lost: %s", raw)
	}
}
