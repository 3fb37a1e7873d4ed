package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"stitchkit.dev/stitchkit/pkg/gen"
	"stitchkit.dev/stitchkit/pkg/graph"
)

func init() {
	commandFactories = append(commandFactories, func(env *cliEnv) *cobra.Command {
		var out, pkg string
		cmd := &cobra.Command{
			Use:   "gen [DIR] -o PKGDIR [-p NAME]",
			Short: "Generate a Go package: embedded graph + typed bindings",
			Long: `gen compiles the contract in DIR (default: the current directory), or
reads DIR as a graph.json file, and writes a Go package into PKGDIR:
graph.json (embedded and digest-verified when the package initialises),
one Go type per schema, and typed service interfaces bound to the runner
(Register). The package name is NAME, else the base name of PKGDIR. The
output is deterministic and gofmt'ed: regenerating an unchanged contract
rewrites the same bytes. See docs/gen.md.`,
			Args: cobra.MaximumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				if out == "" {
					return exitWith(exitUsage, fmt.Errorf("gen: -o PKGDIR is required"))
				}
				return runGen(cmd.Context(), env, dirArg(args), out, pkg)
			},
		}
		cmd.Flags().StringVarP(&out, "output", "o", "", "write the package into `PKGDIR` (created if missing)")
		cmd.Flags().StringVarP(&pkg, "package", "p", "", "Go package `NAME` (default: the base name of PKGDIR)")
		return cmd
	})
}

func runGen(ctx context.Context, env *cliEnv, src, out, pkg string) error {
	g, err := loadContract(ctx, src, env.stderr)
	if err != nil {
		return err
	}
	if pkg == "" {
		abs, err := filepath.Abs(out)
		if err != nil {
			return exitWith(exitFailure, err)
		}
		pkg = gen.PackageName(filepath.Base(abs))
	}
	files, err := gen.Generate(g, &gen.Options{Package: pkg})
	if err != nil {
		return exitWith(exitFailure, err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return exitWith(exitFailure, err)
	}
	for _, f := range files {
		p := filepath.Join(out, f.Name)
		if old, err := os.ReadFile(p); err == nil && string(old) == string(f.Data) {
			continue // unchanged: keep the file's modification time
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			return exitWith(exitFailure, fmt.Errorf("write %s: %w", p, err))
		}
	}
	return nil
}

// loadContract compiles a contract folder (printing diagnostics like vet)
// or loads a graph.json file.
func loadContract(ctx context.Context, src string, stderr io.Writer) (*graph.Graph, error) {
	st, err := os.Stat(src)
	if err != nil {
		return nil, exitWith(exitFailure, err)
	}
	if st.IsDir() {
		return compileDir(ctx, src, stderr)
	}
	f, err := os.Open(src)
	if err != nil {
		return nil, exitWith(exitFailure, err)
	}
	defer f.Close()
	g, err := graph.ReadFrom(f)
	if err != nil {
		return nil, exitWith(exitFailure, fmt.Errorf("%s: %w", src, err))
	}
	return g, nil
}
