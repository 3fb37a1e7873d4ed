package review_test

import (
	"context"
	"fmt"
	"os"

	"stitchkit.dev/stitchkit/pkg/check"
	"stitchkit.dev/stitchkit/pkg/review"
)

const exampleContract = `package notes

import "stitchkit.dev/stitchkit/schema"

schema.#Contract & {
	name:    "notes"
	version: "%s"
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
// the HTTP route and every tool built from the operation, and SemVer asks
// for a new major version.
func ExampleCompare() {
	ctx := context.Background()
	old, err := check.CompileFiles(ctx, map[string][]byte{"notes.cue": fmt.Appendf(nil, exampleContract, "1.0.0", "")})
	if err != nil {
		panic(err)
	}
	new, err := check.CompileFiles(ctx, map[string][]byte{"notes.cue": fmt.Appendf(nil, exampleContract, "1.1.0", ", lang: string")})
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
	// warning version-major-bump-missing contract contract#/version
	// info contract-version-changed contract contract
	// breaking: 1
	// ::error file=notes.cue,line=12,col=26,title=request-required-property-added::HTTP POST /notes: lang: added as a required field; requests without it are now rejected (also affects AGENT tool create_note, MCP tool create_note) [notes.create#/input/properties/lang; fingerprint 533edd6b1c6d3d4a]
	// ::warning file=notes.cue,line=7,col=2,title=version-major-bump-missing::contract: 1 breaking change but the version goes from 1.0.0 to 1.1.0: SemVer requires a new major version (2.0.0) for backwards incompatible changes [contract#/version; fingerprint ca9091916e86ce54]
	// ::notice file=notes.cue,line=7,col=2,title=contract-version-changed::contract: version changed from "1.0.0" to "1.1.0" [contract; fingerprint 5f4c5cbcbb0f6dec]
	// stitch diff: notes 1.0.0 → notes 1.1.0: 1 breaking change (1 warning, 1 info, 0 suppressed)
}
