// Package schema embeds the stitchkit contract language: the CUE package
// "stitchkit.dev/stitchkit/schema" held in this directory.
//
// Go code never evaluates these files itself. Package compile overlays them
// into every contract module it loads, over any copy the module holds, so
// `stitch vet` always checks with exactly this language (and warns when the
// module's copy differs); `stitch init` copies them into
// cue.mod/pkg/stitchkit.dev/stitchkit/schema so that plain `cue vet`
// resolves the import without a registry, and `stitch init --upgrade`
// refreshes that copy.
package schema

import "embed"

// FS holds the *.cue files of the schema package, at the root of the FS.
//
//go:embed *.cue
var FS embed.FS

// ImportPath is the CUE import path of the schema package.
const ImportPath = "stitchkit.dev/stitchkit/schema"
