module stitchkit.dev/stitchkit/pkg/validate/internal/oracletest

go 1.26.8

require (
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	golang.org/x/tools v0.52.0
	stitchkit.dev/stitchkit v0.0.0
)

require golang.org/x/text v0.14.0 // indirect

replace stitchkit.dev/stitchkit => ../../../..
