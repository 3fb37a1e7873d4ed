package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"stitchkit.dev/stitchkit/pkg/conformance"
	"stitchkit.dev/stitchkit/pkg/project"
)

func init() {
	commandFactories = append(commandFactories, func(env *cliEnv) *cobra.Command {
		var (
			out, check, prefix string
			fullDiff           bool
		)
		cmd := &cobra.Command{
			Use:   "manifest [DIR]",
			Short: "Write or check the surface manifest v2 of a contract",
			Long: `manifest compiles the contract in DIR (default ".") and writes its surface manifest v2 —
every HTTP route, tool surface, realtime event and CLI-only command, each
schema as a digest — to stdout, or to the file named by -o.

With --check FILE it compares the manifest with a committed one instead:
it says the manifest is up to date and exits 0, or exits 1 printing which
operation, surface or event field drifted (-committed +built), the first
` + fmt.Sprint(conformance.MaxDiffBytes) + ` bytes of it unless --full-diff is given. Regenerate with -o
and review the diff. The manifest records the options it was built with
(--http-prefix): --check without the flag rebuilds with the committed
manifest's options, and the regenerate hint names them.`,
			Example: `  stitch manifest contracts --http-prefix /api -o surface-manifest.json
  stitch manifest contracts --http-prefix /api --check surface-manifest.json --full-diff`,
			Args: cobra.MaximumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				g, err := compileDir(cmd.Context(), dirArg(args), env.stderr)
				if err != nil {
					return err
				}
				popts := project.Options{HTTPPrefix: prefix}
				var want *conformance.Manifest
				if check != "" {
					data, err := os.ReadFile(check)
					if err != nil {
						return exitWith(exitFailure, err)
					}
					if want, err = conformance.DecodeManifest(data); err != nil {
						return exitWith(exitFailure, fmt.Errorf("%s: %w", check, err))
					}
					if !cmd.Flags().Changed("http-prefix") {
						// The committed manifest records the options it
						// was built with: check against the same
						// projection unless a flag says otherwise.
						popts = want.ProjectOptions()
					}
				}
				p, err := project.New(g, &popts)
				if err != nil {
					return exitWith(exitFailure, err)
				}
				m, err := conformance.BuildManifest(p, nil)
				if err != nil {
					return exitWith(exitFailure, err)
				}
				if check != "" {
					diff, equal := conformance.CompareManifest(want, m)
					if fullDiff {
						diff, equal = conformance.DiffManifests(want, m)
					}
					if !equal {
						fmt.Fprintf(env.stdout, "%s\n", diff)
						hint := ""
						if !fullDiff {
							if whole, _ := conformance.DiffManifests(want, m); len(whole) > len(diff) {
								hint = " (the diff above is cut; --full-diff prints all of it)"
							}
						}
						return exitWith(exitFailure, fmt.Errorf("surface manifest of %s drifted from %s (-committed +built)%s; regenerate it with `stitch manifest %s%s -o %s` and review the diff", dirArg(args), check, hint, dirArg(args), projectFlags(popts), check))
					}
					msg := fmt.Sprintf("surface manifest %s is up to date with %s\n", check, dirArg(args))
					if out == "" {
						fmt.Fprint(env.stdout, msg)
						return nil
					}
					fmt.Fprint(env.stderr, msg) // with -o, stdout may carry the manifest
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
		cmd.Flags().BoolVar(&fullDiff, "full-diff", false, "with --check, print the whole drift, not only its first bytes")
		httpPrefixFlag(cmd, &prefix)
		return cmd
	})
}

// projectFlags are the command-line flags that state o (" --http-prefix
// /api"), for a hint that must rebuild the same projection.
func projectFlags(o project.Options) string {
	var b strings.Builder
	if o.HTTPPrefix != "" {
		fmt.Fprintf(&b, " --http-prefix %s", shellQuote(o.HTTPPrefix))
	}
	return b.String()
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// httpPrefixFlag registers --http-prefix, the mount prefix of the HTTP
// routes, with the same name and meaning on every command that projects
// HTTP routes (manifest, openapi).
func httpPrefixFlag(cmd *cobra.Command, prefix *string) {
	cmd.Flags().StringVar(prefix, "http-prefix", "", "mount `PREFIX` of the HTTP routes, as given to the HTTP mount (e.g. /api)")
}
