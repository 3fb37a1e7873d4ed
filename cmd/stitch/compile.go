package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func init() {
	commandFactories = append(commandFactories, func(env *cliEnv) *cobra.Command {
		var out string
		cmd := &cobra.Command{
			Use:   "compile [DIR]",
			Short: "Compile a contract into canonical graph JSON",
			Long: `compile vets the contract in DIR (default ".") and writes its canonical graph (graph.json)
to stdout, or to the file named by -o. The bytes depend only on the
contract's meaning. On contract errors it prints the diagnostics like vet
and exits 1.`,
			Args: cobra.MaximumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				g, err := compileDir(cmd.Context(), dirArg(args), env.stderr)
				if err != nil {
					return err
				}
				b, err := g.Encode()
				if err != nil {
					return exitWith(exitFailure, fmt.Errorf("encode graph: %w", err))
				}
				return env.writeOutput(out, b)
			},
		}
		cmd.Flags().StringVarP(&out, "output", "o", "", "write graph.json to `FILE` instead of stdout")
		return cmd
	})
}
