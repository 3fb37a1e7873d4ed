package review_test

import (
	"context"
	"fmt"
	"os"

	"stitchkit.dev/stitchkit/pkg/compile"
	"stitchkit.dev/stitchkit/pkg/review"
)

const exampleContract = `package notes

import "stitchkit.dev/stitchkit/schema"

schema.#Contract & {
	name:    "notes"
	version: "1.0.0"
	services: notes: operations: create: {
		method: "POST"
		path:   "/"
		desc:   "Create a note"
		#input: {text: string%s}
		#output: {id: string}
	}
}
`

// Compare two versions of a contract: adding a required input field breaks
// the HTTP route and every tool built from the operation.
func ExampleCompare() {
	ctx := context.Background()
	old, err := compile.CompileFiles(ctx, map[string][]byte{"notes.cue": fmt.Appendf(nil, exampleContract, "")})
	if err != nil {
		panic(err)
	}
	new, err := compile.CompileFiles(ctx, map[string][]byte{"notes.cue": fmt.Appendf(nil, exampleContract, ", lang: string")})
	if err != nil {
		panic(err)
	}
	rep, err := review.Compare(old, new, nil)
	if err != nil {
		panic(err)
	}
	for _, f := range rep.Findings {
		fmt.Println(f.Severity, f.Rule, f.Surface, f.Location)
		for _, also := range f.AlsoAffects {
			fmt.Println("  also:", also)
		}
	}
	fmt.Println("breaking:", rep.Breaking())
	_ = rep.WriteGitHubActions(os.Stdout)
	// Output:
	// breaking request-required-property-added HTTP POST /notes notes.create#/input/properties/lang
	//   also: AGENT tool create_note
	//   also: MCP tool create_note
	// breaking: 1
	// ::error file=notes.cue,line=12,col=3,title=request-required-property-added::HTTP POST /notes: input: required property "lang" added: requests without it are now rejected (also affects AGENT tool create_note, MCP tool create_note) [notes.create#/input/properties/lang; fingerprint 533edd6b1c6d3d4a]
	// stitch diff: notes 1.0.0 → notes 1.0.0: 1 breaking change (0 warnings, 0 info, 0 suppressed)
}
