// Package schema embeds the stitchkit contract language: the CUE package
// "stitchkit.dev/stitchkit/schema" held in this directory.
//
// Go code never evaluates these files itself; package compile overlays them
// into a contract module that does not vendor the schema, and `stitch init`
// copies them into cue.mod/pkg/stitchkit.dev/stitchkit/schema so that plain
// `cue vet` resolves the import without a registry.
package schema

import "embed"

// FS holds the *.cue files of the schema package, at the root of the FS.
//
//go:embed *.cue
var FS embed.FS

// ImportPath is the CUE import path of the schema package.
const ImportPath = "stitchkit.dev/stitchkit/schema"
