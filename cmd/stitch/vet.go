package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"stitchkit.dev/stitchkit/pkg/compile"
	"stitchkit.dev/stitchkit/pkg/graph"
)

func init() {
	commandFactories = append(commandFactories, func(env *cliEnv) *cobra.Command {
		return &cobra.Command{
			Use:   "vet DIR",
			Short: "Check a contract: CUE shape errors and the graph checks CUE cannot do",
			Long: `vet loads the CUE contract package in DIR, checks it against the contract
language and runs the graph checks (cross references, route and tool-name
collisions, JSON Schema representability). It prints "ok" and exits 0 when
the contract is clean, or prints every diagnostic on stderr, one per line as
file:line:col: rule: message, and exits 1. Non-fatal findings (MCP policy
warnings, tools dropped under schemaValidation "warn", ambiguous HEAD
routes) are printed to stderr as "warning: file:line:col: rule: message"
and do not change the exit code.`,
			Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				g, err := compileDir(cmd.Context(), args[0], env.stderr)
				if err != nil {
					return err
				}
				for _, w := range compile.Warnings(g) {
					w.Pos.File = displayPath(args[0], w.Pos.File)
					fmt.Fprintln(env.stderr, "warning: "+w.String())
				}
				fmt.Fprintln(env.stdout, "ok")
				return nil
			},
		}
	})
}

// compileDir compiles dir; on contract errors it prints every diagnostic
// to stderr (file paths joined to dir as given) and returns exit code 1.
func compileDir(ctx context.Context, dir string, stderr io.Writer) (*graph.Graph, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	g, err := compile.Compile(ctx, dir)
	if err == nil {
		return g, nil
	}
	var cerr *compile.Error
	if errors.As(err, &cerr) {
		for _, d := range cerr.Diagnostics {
			d.Pos.File = displayPath(dir, d.Pos.File)
			fmt.Fprintln(stderr, d.String())
		}
		return nil, exitWith(exitFailure, fmt.Errorf("%s: %d error(s)", dir, len(cerr.Diagnostics)))
	}
	return nil, exitWith(exitFailure, err)
}

// displayPath joins a contract-relative file to the directory as the user
// gave it.
func displayPath(dir, file string) string {
	if file == "" {
		return file
	}
	return filepath.ToSlash(filepath.Join(dir, filepath.FromSlash(file)))
}
