package schematree_test

import (
	"encoding/json"
	"fmt"

	"stitchkit.dev/stitchkit/internal/schematree"
)

// Every "$ref" of a document, where it sits and what it resolves to.
func ExampleWalk() {
	var doc any
	_ = json.Unmarshal([]byte(`{
		"type": "object",
		"properties": {"owner": {"$ref": "#/$defs/User"}, "tags": {"items": {"$ref": "#/$defs/Tag"}}},
		"$defs": {"User": {"type": "object"}, "Tag": {"type": "string"}}
	}`), &doc)
	schematree.Walk(doc, func(ptr string, c schematree.Child) bool {
		if ref, ok := schematree.Ref(c.Schema); ok {
			target, _ := schematree.Deref(doc, c.Schema)
			fmt.Println(ptr, "->", ref, target.(map[string]any)["type"])
		}
		return true
	})
	// Output:
	// /properties/owner -> #/$defs/User object
	// /properties/tags/items -> #/$defs/Tag string
}

// A definition name that needs escaping in a reference.
func ExampleRefTo() {
	ref := schematree.RefTo("$defs", "a/b c")
	toks, _ := schematree.ParseRef(ref)
	fmt.Println(ref)
	fmt.Printf("%q\n", toks)
	// Output:
	// #/$defs/a~1b%20c
	// ["$defs" "a/b c"]
}
