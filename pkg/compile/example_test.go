package compile_test

import (
	"context"
	"fmt"

	"stitchkit.dev/stitchkit/pkg/compile"
)

// Analyze is the lower level of the one compile (check.Compile): the
// graph and the contract's own diagnostics, before the projector's checks.
func ExampleAnalyze() {
	r, err := compile.Analyze(context.Background(), "../../examples/minimal")
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := r.Err(); err != nil {
		fmt.Println(err)
		return
	}
	for _, op := range r.Graph.Operations() {
		fmt.Println(op.ID(), op.Method, op.Path, op.Expose)
	}
	// Output:
	// notes.create POST / [HTTP MCP AGENT]
	// notes.list GET / [HTTP MCP AGENT]
}

func ExampleAnalyzeFiles() {
	r, err := compile.AnalyzeFiles(context.Background(), map[string][]byte{
		"contract.cue": []byte(`package demo

import "stitchkit.dev/stitchkit/schema"

schema.#Contract & {
	name:    "demo"
	version: "1.0.0"
	services: notes: operations: get: {
		method: "GET"
		path:   "/{id}"
		desc:   "Get a note"
		#params: {slug: string}
	}
}
`),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Err())
	// Output:
	// contract (in memory) has 2 error(s):
	// contract.cue:12:3: params-cover-path: services.notes.operations.get: #params has no field "id" for the path parameter {id} of "/{id}"; add id: string (or a narrower schema)
	// contract.cue:12:13: params-not-in-path: services.notes.operations.get: #params field "slug" names no path parameter of "/{id}"; remove it, or add {slug} to the path
}
