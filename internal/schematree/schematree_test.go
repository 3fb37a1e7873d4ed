package schematree

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func decode(t testing.TB, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

const doc = `{
	"$defs": {
		"a/b": {"type": "string"},
		"ti~lde": {"type": "integer"},
		"Ü": {"type": "boolean"},
		"sp ace": {"type": "null"},
		"loop": {"$ref": "#/$defs/loop"},
		"hop": {"$ref": "#/$defs/a~1b"},
		"sib": {"$ref": "#/$defs/a~1b", "minLength": 1}
	},
	"type": "object",
	"properties": {
		"x": {"items": {"$ref": "#/$defs/ti~0lde"}, "default": {"properties": {"no": {}}}},
		"t": {"items": [{"const": {"allOf": [{}]}}, true]}
	},
	"allOf": [{"not": false}],
	"enum": [{"properties": {"no": {}}}],
	"x-custom": {"properties": {"no": {}}}
}`

func TestResolve(t *testing.T) {
	root := decode(t, doc)
	for ref, want := range map[string]string{
		"#/$defs/a~1b":           `{"type":"string"}`,
		"#/$defs/ti~0lde":        `{"type":"integer"}`,
		"#/$defs/%C3%9C":         `{"type":"boolean"}`,
		"#/$defs/sp%20ace":       `{"type":"null"}`,
		"#/properties/t/items/1": `true`,
		"#/allOf/0/not":          `false`,
		"#/properties/x/items":   `{"$ref":"#/$defs/ti~0lde"}`,
		RefTo("$defs", "a/b"):    `{"type":"string"}`,
		RefTo("$defs", "ti~lde"): `{"type":"integer"}`,
		RefTo("$defs", "sp ace"): `{"type":"null"}`,
		RefTo("$defs", "Ü"):      `{"type":"boolean"}`,
		RefTo("properties", "t", "items", "0", "const", "allOf", "0"): `{}`,
	} {
		got, ok := Resolve(root, ref)
		if !ok {
			t.Errorf("Resolve(%q) failed", ref)
			continue
		}
		if b, _ := json.Marshal(got); string(b) != want {
			t.Errorf("Resolve(%q) = %s, want %s", ref, b, want)
		}
	}
	if got, ok := Resolve(root, "#"); !ok || !reflect.DeepEqual(got, root) {
		t.Errorf(`Resolve("#") is not the root`)
	}
	for _, ref := range []string{"", "other.json#/x", "#anchor", "#/nope", "#/allOf/1", "#/allOf/01", "#/allOf/-1", "#/type/x", "#/$defs/a/b"} {
		if _, ok := Resolve(root, ref); ok {
			t.Errorf("Resolve(%q) resolved", ref)
		}
	}
}

func TestDeref(t *testing.T) {
	root := decode(t, doc)
	defs := root.(map[string]any)["$defs"].(map[string]any)
	if got, ok := Deref(root, defs["hop"]); !ok || !reflect.DeepEqual(got, defs["a/b"]) {
		t.Errorf("Deref(hop) = %v, %v", got, ok)
	}
	if got, ok := Deref(root, defs["sib"]); !ok || !reflect.DeepEqual(got, defs["a/b"]) {
		t.Errorf("Deref(sib) = %v, %v: siblings are ignored", got, ok)
	}
	if _, ok := Deref(root, defs["loop"]); ok {
		t.Error("Deref followed a cycle to an end")
	}
	if _, ok := Deref(root, map[string]any{"$ref": "#/nope"}); ok {
		t.Error("Deref resolved a dangling reference")
	}
	if got, ok := Deref(root, true); !ok || got != true {
		t.Errorf("Deref(true) = %v, %v", got, ok)
	}

	if got := DerefBare(root, defs["hop"]); !reflect.DeepEqual(got, defs["a/b"]) {
		t.Errorf("DerefBare(hop) = %v", got)
	}
	if got := DerefBare(root, defs["sib"]); !reflect.DeepEqual(got, defs["sib"]) {
		t.Errorf("DerefBare(sib) = %v: a reference with siblings is a schema of its own", got)
	}
	if got := DerefBare(root, defs["loop"]); !reflect.DeepEqual(got, defs["loop"]) {
		t.Errorf("DerefBare(loop) = %v", got)
	}
	dangling := map[string]any{"$ref": "#/nope"}
	if got := DerefBare(root, dangling); !reflect.DeepEqual(got, dangling) {
		t.Errorf("DerefBare(dangling) = %v", got)
	}
}

func TestWalk(t *testing.T) {
	root := decode(t, doc)
	var ptrs []string
	Walk(root, func(ptr string, c Child) bool {
		ptrs = append(ptrs, ptr)
		// Every pointer a walk reports resolves to the node it visited.
		if got, ok := Lookup(root, ptr); !ok || !reflect.DeepEqual(got, c.Schema) {
			t.Errorf("pointer %q does not resolve to the visited node", ptr)
		}
		return true
	})
	want := []string{
		"",
		"/$defs/Ü", "/$defs/a~1b", "/$defs/hop", "/$defs/loop", "/$defs/sib", "/$defs/sp ace", "/$defs/ti~0lde",
		"/allOf/0", "/allOf/0/not",
		"/properties/t", "/properties/t/items/0", "/properties/t/items/1",
		"/properties/x", "/properties/x/items",
	}
	slices.Sort(want)
	got := slices.Clone(ptrs)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("walk visited\n%q\nwant\n%q", ptrs, want)
	}
	// Data keywords (const, enum, default) and unknown keywords are not
	// schemas: nothing under them is visited.
	for _, p := range ptrs {
		if strings.HasSuffix(p, "/properties/no") {
			t.Errorf("walk descended into data: %s", p)
		}
	}
	// Pruning: returning false skips the descendants.
	var n int
	Walk(root, func(ptr string, c Child) bool {
		n++
		return c.Keyword != "properties" && c.Keyword != "$defs" && c.Keyword != "allOf"
	})
	if n != 1+7+1+2 {
		t.Errorf("pruned walk visited %d nodes", n)
	}
	// Two walks visit in the same order.
	var again []string
	Walk(root, func(ptr string, c Child) bool { again = append(again, ptr); return true })
	if !slices.Equal(ptrs, again) {
		t.Error("walk order is not deterministic")
	}
}

func TestMapChildren(t *testing.T) {
	root := decode(t, `{"properties": {"a": {}, "b": {}}, "items": {}, "anyOf": [{}, {}], "const": {}}`)
	MapChildren(root, func(c Child) any { return c.Pointer() })
	want := decode(t, `{"properties": {"a": "/properties/a", "b": "/properties/b"}, "items": "/items", "anyOf": ["/anyOf/0", "/anyOf/1"], "const": {}}`)
	if !reflect.DeepEqual(root, want) {
		t.Errorf("MapChildren: %v", root)
	}
	MapChildren(true, func(Child) any { t.Fatal("called on a bool schema"); return nil })
}

func TestClone(t *testing.T) {
	root := decode(t, doc)
	cp := Clone(root)
	if !reflect.DeepEqual(cp, root) {
		t.Fatal("clone differs")
	}
	cp.(map[string]any)["properties"].(map[string]any)["x"].(map[string]any)["items"] = false
	cp.(map[string]any)["allOf"].([]any)[0] = true
	if again := decode(t, doc); !reflect.DeepEqual(again, root) {
		t.Error("changing the clone changed the original")
	}
}

func TestKeywordTable(t *testing.T) {
	for _, k := range []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"} {
		if KeywordKind(k) != Map {
			t.Errorf("%s is not a map of schemas", k)
		}
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf", "prefixItems"} {
		if KeywordKind(k) != List {
			t.Errorf("%s is not a list of schemas", k)
		}
	}
	for _, k := range []string{"items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema", "additionalItems"} {
		if KeywordKind(k) != Single {
			t.Errorf("%s is not a schema", k)
		}
	}
	for _, k := range []string{"const", "enum", "default", "examples", "type", "required", "$ref", "x-custom"} {
		if KeywordKind(k) != Data {
			t.Errorf("%s holds a schema", k)
		}
	}
	if got := len(Keywords(Single)) + len(Keywords(Map)) + len(Keywords(List)); got != len(keywords) {
		t.Errorf("Keywords lists %d, table has %d", got, len(keywords))
	}
}

func TestRefToRoundTrip(t *testing.T) {
	for _, toks := range [][]string{{"$defs", "Task"}, {"$defs", "a/b~c"}, {"$defs", "100%"}, {"$defs", "x#y?z"}, {"$defs", ""}, {"$defs", "Ünï code ☃"}} {
		ref := RefTo(toks...)
		got, ok := ParseRef(ref)
		if !ok || !slices.Equal(got, toks) {
			t.Errorf("ParseRef(RefTo(%q)) = %q (%s)", toks, got, ref)
		}
		if strings.ContainsAny(ref[1:], " #%") && !strings.Contains(ref, "%25") && !strings.Contains(ref, "%20") && !strings.Contains(ref, "%23") {
			t.Errorf("RefTo(%q) = %s is not a valid fragment", toks, ref)
		}
	}
}

// FuzzTree: on any JSON document, walking, resolving the walked pointers,
// cloning and dereferencing terminate without a panic, and every pointer
// a walk reports resolves to the node it visited.
func FuzzTree(f *testing.F) {
	f.Add([]byte(doc), "#/$defs/loop")
	f.Add([]byte(`{"$ref":"#"}`), "#")
	f.Add([]byte(`{"items":[{"$ref":"#/items/0"}],"$defs":{"%":{"$ref":"#/$defs/%25"}}}`), "#/$defs/%25")
	f.Add([]byte(`{"properties":{"~":{"$ref":"#/properties/~0"}}}`), "#/properties/~0")
	f.Add([]byte(`[1,{"allOf":5}]`), "#/1/allOf")
	f.Add([]byte(`{"$defs":{"%41":{},"A":{"type":"null"}}}`), "#/$defs/%41")
	f.Fuzz(func(t *testing.T, src []byte, ref string) {
		var root any
		if json.Unmarshal(src, &root) != nil {
			return
		}
		Walk(root, func(ptr string, c Child) bool {
			got, ok := Lookup(root, ptr)
			if !ok || !reflect.DeepEqual(got, c.Schema) {
				t.Fatalf("pointer %q of a walk does not resolve to its node", ptr)
			}
			// The same place as a $ref: tokens through RefTo.
			var toks []string
			if ptr != "" {
				for _, tok := range strings.Split(ptr[1:], "/") {
					toks = append(toks, strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~"))
				}
			}
			if got, ok := Resolve(root, RefTo(toks...)); !ok || !reflect.DeepEqual(got, c.Schema) {
				t.Fatalf("RefTo of pointer %q does not resolve to its node", ptr)
			}
			Deref(root, c.Schema)
			DerefBare(root, c.Schema)
			return true
		})
		if toks, ok := ParseRef(ref); ok {
			a, okA := Resolve(root, ref)
			b, okB := Resolve(root, RefTo(toks...))
			if okA != okB || !reflect.DeepEqual(a, b) {
				t.Fatalf("Resolve(%q) and Resolve(RefTo(ParseRef)) disagree", ref)
			}
		}
		if !reflect.DeepEqual(Clone(root), root) {
			t.Fatal("clone differs")
		}
	})
}

// TestApplicable: s, its $ref target and every combinator member, each
// once, and a reference cycle ends the walk.
func TestApplicable(t *testing.T) {
	root := map[string]any{
		"$defs": map[string]any{
			"A": map[string]any{"type": "object", "anyOf": []any{map[string]any{"$ref": "#/$defs/B"}}},
			"B": map[string]any{"allOf": []any{map[string]any{"$ref": "#/$defs/A"}}, "required": []any{"x"}},
		},
		"$ref": "#/$defs/A",
	}
	got := Applicable(root, root)
	// root, A, A's anyOf member ($ref B), B, B's allOf member ($ref A): A again is not revisited.
	if len(got) != 5 {
		t.Fatalf("%d schemas: %v", len(got), got)
	}
	if Applicable(root, "not a schema") != nil {
		t.Error("a non-object applies")
	}
}
