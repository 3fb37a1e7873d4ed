module stitchkit.dev/stitchkit/pkg/review

go 1.26.8

require (
	github.com/getkin/kin-openapi v0.153.0
	github.com/oasdiff/oasdiff v1.37.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	golang.org/x/tools v0.52.0
	gopkg.in/yaml.v3 v3.0.1
	stitchkit.dev/stitchkit v0.0.0
	stitchkit.dev/stitchkit/pkg/export v0.0.0
)

require stitchkit.dev/stitchkit/pkg/compile v0.0.0 // indirect

require (
	cloud.google.com/go v0.123.0 // indirect
	cuelabs.dev/go/oci/ociregistry v0.0.0-20260601085548-328ff8e2c943 // indirect
	cuelang.org/go v0.17.1 // indirect
	github.com/TwiN/go-color v1.4.1 // indirect
	github.com/cockroachdb/apd/v3 v3.2.3 // indirect
	github.com/emicklei/proto v1.14.3 // indirect
	github.com/go-openapi/jsonpointer v1.0.2 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/mitchellh/go-wordwrap v1.0.1 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/image-spec v1.1.1 // indirect
	github.com/pelletier/go-toml/v2 v2.4.3 // indirect
	github.com/protocolbuffers/txtpbfmt v0.0.0-20260420112717-c39628bde8b5 // indirect
	github.com/rogpeppe/go-internal v1.15.0 // indirect
	github.com/tidwall/gjson v1.20.0 // indirect
	github.com/tidwall/match v1.2.0 // indirect
	github.com/tidwall/pretty v1.2.2 // indirect
	github.com/tidwall/sjson v1.2.5 // indirect
	github.com/wI2L/jsondiff v0.7.1 // indirect
	github.com/yargevad/filepathx v1.0.0 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	go.yaml.in/yaml/v4 v4.0.0 // indirect
	golang.org/x/net v0.61.0 // indirect
	golang.org/x/oauth2 v0.36.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/protobuf v1.36.11 // indirect
	stitchkit.dev/stitchkit/pkg/check v0.0.0
)

replace (
	stitchkit.dev/stitchkit => ../..
	stitchkit.dev/stitchkit/pkg/compile => ../compile
	stitchkit.dev/stitchkit/pkg/export => ../export
)

replace stitchkit.dev/stitchkit/pkg/check => ../check
