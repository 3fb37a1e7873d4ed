package check_test

import (
	"context"
	"fmt"

	"stitchkit.dev/stitchkit/pkg/check"
)

func ExampleCompile() {
	g, err := check.Compile(context.Background(), "../../examples/minimal")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(g.Name, len(g.Operations()), "operations")
	// Output:
	// minimal 2 operations
}

// Two operations that serve the same route: the diagnostic points at
// both (the second line, starting with a tab, is the other place).
func ExampleFiles() {
	rep, err := check.Files(context.Background(), map[string][]byte{
		"contract.cue": []byte(`package demo

import "stitchkit.dev/stitchkit/schema"

schema.#Contract & {
	name:    "demo"
	version: "1.0.0"
	services: books: operations: {
		get:    {method: "GET", path: "/{id}", desc: "Get a book"}
		bySlug: {method: "GET", path: "/{slug}", desc: "Get a book by slug"}
	}
}
`),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range rep.Errors {
		fmt.Println(d)
	}
	// Output:
	// contract.cue:9:27: duplicate-route: books.get: route GET /books/{id} is also served by books.bySlug (GET /books/{slug}); change the path or the method
	// 	contract.cue:10:27: duplicate-route: books.bySlug serves GET /books/{slug}
}
