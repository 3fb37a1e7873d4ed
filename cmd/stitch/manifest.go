package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"stitchkit.dev/stitchkit/pkg/conformance"
)

func init() {
	commandFactories = append(commandFactories, func(env *cliEnv) *cobra.Command {
		var out, check, prefix string
		cmd := &cobra.Command{
			Use:   "manifest [DIR]",
			Short: "Write or check the surface manifest v2 of a contract",
			Long: `manifest compiles the contract in DIR (default ".") and writes its surface manifest v2 —
every HTTP route, tool surface, realtime event and CLI-only command, each
schema as a digest — to stdout, or to the file named by -o.

With --check FILE it compares the manifest with a committed one instead
and exits 1 when they differ, printing which operation, surface or event
field drifted (-committed +built). Regenerate with -o and review the diff.`,
			Args: cobra.MaximumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				g, err := compileDir(cmd.Context(), dirArg(args), env.stderr)
				if err != nil {
					return err
				}
				m, err := conformance.BuildManifest(g, &conformance.Options{HTTPPrefix: prefix})
				if err != nil {
					return exitWith(exitFailure, err)
				}
				if check != "" {
					data, err := os.ReadFile(check)
					if err != nil {
						return exitWith(exitFailure, err)
					}
					want, err := conformance.DecodeManifest(data)
					if err != nil {
						return exitWith(exitFailure, fmt.Errorf("%s: %w", check, err))
					}
					if diff, equal := conformance.CompareManifest(want, m); !equal {
						fmt.Fprintf(env.stdout, "%s\n", diff)
						return exitWith(exitFailure, fmt.Errorf("surface manifest of %s drifted from %s (-committed +built); regenerate it with `stitch manifest %s -o %s` and review the diff", dirArg(args), check, dirArg(args), check))
					}
					if out == "" {
						return nil
					}
				}
				b, err := m.Encode()
				if err != nil {
					return exitWith(exitFailure, err)
				}
				return env.writeOutput(out, b)
			},
		}
		cmd.Flags().StringVarP(&out, "output", "o", "", "write the manifest to `FILE` instead of stdout")
		cmd.Flags().StringVar(&check, "check", "", "compare with the committed manifest `FILE`; exit 1 on drift")
		cmd.Flags().StringVar(&prefix, "http-prefix", "", "mount `PREFIX` of the HTTP routes, as given to the HTTP mount (e.g. /api)")
		return cmd
	})
}
