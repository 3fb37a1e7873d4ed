package main

import (
	"github.com/spf13/cobra"

	"stitchkit.dev/stitchkit/pkg/export/asyncapi"
	"stitchkit.dev/stitchkit/pkg/project"
)

func init() {
	commandFactories = append(commandFactories, newAsyncAPICommand)
}

func newAsyncAPICommand(env *cliEnv) *cobra.Command {
	var (
		prefix string
		output string
	)
	cmd := &cobra.Command{
		Use:   "asyncapi [DIR]",
		Short: "Print the AsyncAPI 3.0 document of a contract's realtime contracts",
		Long: `asyncapi compiles the contract in DIR (default ".") and prints the AsyncAPI 3.0.0 JSON
document of its realtime contracts: one channel per contract at
REALTIME-PREFIX/<contract> (/realtime/<contract> by default, as stitch serve
mounts them; --realtime-prefix moves it), a send or receive operation per event and acks as replies.

Exit codes: 0 success, 1 contract errors (diagnostics on stderr) or a
failed write, 2 usage error.`,
		Example: `  stitch asyncapi contracts -o asyncapi.json`,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			g, err := compileForExport(cmd, env, dirArg(args))
			if err != nil {
				return err
			}
			p, err := project.New(g, nil)
			if err != nil {
				return exitWith(exitFailure, err)
			}
			doc, err := asyncapi.Generate(p, &asyncapi.Options{Prefix: prefix})
			if err != nil {
				return exitWith(exitFailure, err)
			}
			return env.writeOutput(output, doc)
		},
	}
	cmd.Flags().StringVar(&prefix, "realtime-prefix", "", "`PATH` the realtime contracts are served under (default "+asyncapi.DefaultPrefix+")")
	// --prefix was this command's spelling before openapi took
	// --http-prefix; a prefix flag must say which surface it moves.
	cmd.Flags().StringVar(&prefix, "prefix", "", "deprecated spelling of --realtime-prefix")
	_ = cmd.Flags().MarkDeprecated("prefix", "use --realtime-prefix")
	cmd.Flags().SetOutput(env.stderr) // the deprecation notice must not mix into the document
	cmd.Flags().StringVarP(&output, "output", "o", "", "write the document to `FILE` instead of stdout")
	return cmd
}
