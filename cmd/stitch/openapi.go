package main

import (
	"github.com/spf13/cobra"

	"stitchkit.dev/stitchkit/pkg/export/openapi"
	"stitchkit.dev/stitchkit/pkg/graph"
)

func init() {
	commandFactories = append(commandFactories, newOpenAPICommand)
}

func newOpenAPICommand(env *cliEnv) *cobra.Command {
	var (
		prefix string
		output string
	)
	cmd := &cobra.Command{
		Use:   "openapi [DIR]",
		Short: "Print the OpenAPI 3.1 document of a contract's HTTP surface",
		Long: `openapi compiles the contract in DIR (default ".") and prints the OpenAPI 3.1.0 JSON
document of its HTTP projection: the same routes the HTTP mount serves and
the manifest records (so pass the same --prefix the mount uses).

Exit codes: 0 success, 1 contract errors (diagnostics on stderr) or a
failed write, 2 usage error.`,
		Example: `  stitch openapi contracts --prefix /api -o openapi.json`,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			g, err := compileForExport(cmd, env, dirArg(args))
			if err != nil {
				return err
			}
			doc, err := openapi.Generate(g, &openapi.Options{Prefix: prefix})
			if err != nil {
				return exitWith(exitFailure, err)
			}
			return env.writeOutput(output, doc)
		},
	}
	cmd.Flags().StringVar(&prefix, "prefix", "", "mount prefix placed before every route, e.g. /api")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write the document to `FILE` instead of stdout")
	return cmd
}

// compileForExport compiles the contract in dir for an exporter; contract
// mistakes print their diagnostics exactly like vet (paths relative to the
// working directory) and exit 1.
func compileForExport(cmd *cobra.Command, env *cliEnv, dir string) (*graph.Graph, error) {
	return compileDir(cmd.Context(), dir, env.stderr)
}
