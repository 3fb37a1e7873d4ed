package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"stitchkit.dev/stitchkit/pkg/export/openapi"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/project"
)

func init() {
	commandFactories = append(commandFactories, newOpenAPICommand)
}

func newOpenAPICommand(env *cliEnv) *cobra.Command {
	var (
		prefix, oldPrefix                  string
		output                             string
		servers                            []string
		licenseName, licenseID, licenseURL string
	)
	cmd := &cobra.Command{
		Use:   "openapi [DIR]",
		Short: "Print the OpenAPI 3.1 document of a contract's HTTP surface",
		Long: `openapi compiles the contract in DIR (default ".") and prints the OpenAPI 3.1.0 JSON
document of its HTTP projection: the same routes the HTTP mount serves and
the manifest records (so pass the same --http-prefix the mount uses).

Named definitions are components referenced by $ref, every enum and const
states its type and the contract's examples are OpenAPI examples, so code
generators (oapi-codegen, ogen, openapi-generator) produce named, typed
code. --server (repeatable) fills "servers" (default: one server at "/");
--license and --license-id or --license-url fill info.license.

Exit codes: 0 success, 1 contract errors (diagnostics on stderr) or a
failed write, 2 usage error.`,
		Example: `  stitch openapi contracts --http-prefix /api --server https://api.example.org --license Apache-2.0 --license-id Apache-2.0 -o openapi.json`,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if oldPrefix != "" && prefix == "" {
				prefix = oldPrefix
			}
			if (licenseID != "" || licenseURL != "") && licenseName == "" {
				return exitWith(exitUsage, fmt.Errorf("--license-id and --license-url need --license NAME"))
			}
			g, err := compileForExport(cmd, env, dirArg(args))
			if err != nil {
				return err
			}
			p, err := project.New(g, &project.Options{HTTPPrefix: prefix})
			if err != nil {
				return exitWith(exitFailure, err)
			}
			opts := &openapi.Options{}
			for _, s := range servers {
				opts.Servers = append(opts.Servers, openapi.Server{URL: s})
			}
			if licenseName != "" {
				opts.License = &openapi.License{Name: licenseName, Identifier: licenseID, URL: licenseURL}
			}
			doc, err := openapi.Generate(p, opts)
			if err != nil {
				return exitWith(exitFailure, err)
			}
			return env.writeOutput(output, doc)
		},
	}
	httpPrefixFlag(cmd, &prefix)
	cmd.Flags().StringVar(&oldPrefix, "prefix", "", "deprecated spelling of --http-prefix")
	_ = cmd.Flags().MarkDeprecated("prefix", "use --http-prefix, as stitch manifest does")
	cmd.Flags().SetOutput(env.stderr) // the deprecation notice must not mix into the document
	cmd.Flags().StringArrayVar(&servers, "server", nil, "server `URL` of the API (repeatable, in order)")
	cmd.Flags().StringVar(&licenseName, "license", "", "license `NAME` for info.license")
	cmd.Flags().StringVar(&licenseID, "license-id", "", "SPDX license `ID` for info.license (e.g. Apache-2.0)")
	cmd.Flags().StringVar(&licenseURL, "license-url", "", "license `URL` for info.license (instead of --license-id)")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write the document to `FILE` instead of stdout")
	return cmd
}

// compileForExport compiles the contract in dir for an exporter; contract
// mistakes print their diagnostics exactly like vet (paths relative to the
// working directory) and exit 1.
func compileForExport(cmd *cobra.Command, env *cliEnv, dir string) (*graph.Graph, error) {
	return compileDir(cmd.Context(), dir, env.stderr)
}
