package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"stitchkit.dev/stitchkit/pkg/check"
	"stitchkit.dev/stitchkit/pkg/compile"
	"stitchkit.dev/stitchkit/pkg/graph"
)

func init() {
	commandFactories = append(commandFactories, func(env *cliEnv) *cobra.Command {
		return &cobra.Command{
			Use:   "vet [DIR]",
			Short: "Check a contract: CUE shape errors and the graph checks CUE cannot do",
			Long: `vet loads the CUE contract package in DIR (default ".") and checks it
against the contract language embedded in this stitch binary, then runs the
graph checks (cross references, route and tool-name collisions, JSON Schema
representability). It prints "ok" and exits 0 when the contract is clean,
or prints every diagnostic on stderr and exits 1.

A diagnostic is one line, file:line:col: rule: message. A mistake that
involves two places (a duplicate route, a tool-name collision, a field
declared twice with different values) is followed by one line per other
place, starting with a tab, in the same file:line:col: rule: message form.

Non-fatal findings (MCP policy warnings, tools dropped under
schemaValidation "warn", a copy of the contract language under cue.mod/pkg
that differs from the embedded one) are printed to stderr as
"warning: file:line:col: rule: message" and do not change the exit code.`,
			Args: cobra.MaximumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				if _, err := compileDir(cmd.Context(), dirArg(args), env.stderr); err != nil {
					return err
				}
				fmt.Fprintln(env.stdout, "ok")
				return nil
			},
		}
	})
}

// dirArg is the contract directory argument of a command: "." when none
// is given.
func dirArg(args []string) string {
	if len(args) == 0 {
		return "."
	}
	return args[0]
}

// compileDir compiles and checks dir as vet does (package check). It
// prints every diagnostic to stderr (file paths joined to dir as given),
// then every warning; on contract errors it returns exit code 1.
func compileDir(ctx context.Context, dir string, stderr io.Writer) (*graph.Graph, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	rep, err := check.Dir(ctx, dir)
	if err != nil {
		return nil, exitWith(exitFailure, err)
	}
	for _, d := range rep.Errors {
		fmt.Fprintln(stderr, displayDiagnostic(dir, d))
	}
	for _, w := range rep.Warnings {
		fmt.Fprintln(stderr, "warning: "+displayDiagnostic(dir, w))
	}
	if len(rep.Errors) > 0 {
		return nil, exitWith(exitFailure, fmt.Errorf("%s: %d error(s)", dir, len(rep.Errors)))
	}
	return rep.Graph, nil
}

// displayDiagnostic formats d with its file paths (and those of its
// related places) joined to the directory as the user gave it.
func displayDiagnostic(dir string, d compile.Diagnostic) string {
	d.Pos.File = displayPath(dir, d.Pos.File)
	rel := make([]compile.Related, len(d.Related))
	for i, r := range d.Related {
		r.Pos.File = displayPath(dir, r.Pos.File)
		rel[i] = r
	}
	d.Related = rel
	return d.String()
}

// displayPath joins a contract-relative file to the directory as the user
// gave it.
func displayPath(dir, file string) string {
	if file == "" {
		return file
	}
	return filepath.ToSlash(filepath.Join(dir, filepath.FromSlash(file)))
}
