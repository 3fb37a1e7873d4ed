package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"

	"github.com/spf13/cobra"
	"golang.org/x/mod/modfile"

	"stitchkit.dev/stitchkit/pkg/gen"
	"stitchkit.dev/stitchkit/pkg/graph"
)

func init() {
	commandFactories = append(commandFactories, func(env *cliEnv) *cobra.Command {
		var out, pkg, cliDir string
		cmd := &cobra.Command{
			Use:   "gen [DIR] -o PKGDIR [-p NAME] [--cli CMDDIR]",
			Short: "Generate a Go package: embedded graph + typed bindings",
			Long: `gen compiles the contract in DIR (default: the current directory), or
reads DIR as a graph.json file, and writes a Go package into PKGDIR:
graph.json (embedded and digest-verified when the package initialises),
one Go type per schema, and typed service interfaces bound to the runner
(Register). The package name is NAME, else the base name of PKGDIR. The
output is deterministic and gofmt'ed: regenerating an unchanged contract
rewrites the same bytes. See docs/gen.md.

--cli CMDDIR also writes CMDDIR/main.go, a command running the contract's
CLI commands against a server (--server URL) or in process (docs/cli.md).
PKGDIR must then be inside a Go module, to import it.`,
			Args: cobra.MaximumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				if out == "" {
					return exitWith(exitUsage, fmt.Errorf("gen: -o PKGDIR is required"))
				}
				return runGen(cmd.Context(), env, dirArg(args), out, pkg, cliDir)
			},
		}
		cmd.Flags().StringVarP(&out, "output", "o", "", "write the package into `PKGDIR` (created if missing)")
		cmd.Flags().StringVarP(&pkg, "package", "p", "", "Go package `NAME` (default: the base name of PKGDIR)")
		cmd.Flags().StringVar(&cliDir, "cli", "", "also write `CMDDIR`/main.go: the contract's CLI as a command")
		return cmd
	})
}

func runGen(ctx context.Context, env *cliEnv, src, out, pkg, cliDir string) error {
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
	if err := writeFiles(out, files); err != nil {
		return err
	}
	if cliDir == "" {
		return nil
	}
	imp, err := importPath(out)
	if err != nil {
		return exitWith(exitFailure, fmt.Errorf("gen --cli: %w", err))
	}
	main, err := gen.CLIMain(g, imp, pkg)
	if err != nil {
		return exitWith(exitFailure, err)
	}
	if err := os.MkdirAll(cliDir, 0o755); err != nil {
		return exitWith(exitFailure, err)
	}
	return writeFiles(cliDir, []gen.File{main})
}

// writeFiles writes files into dir, leaving alone those whose bytes did
// not change (their modification time stays).
func writeFiles(dir string, files []gen.File) error {
	for _, f := range files {
		p := filepath.Join(dir, f.Name)
		if old, err := os.ReadFile(p); err == nil && string(old) == string(f.Data) {
			continue
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			return exitWith(exitFailure, fmt.Errorf("write %s: %w", p, err))
		}
	}
	return nil
}

// importPath is the Go import path of directory dir: the module path of
// the nearest go.mod above it, joined with dir's path below the module.
func importPath(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil {
			mod := modfile.ModulePath(data)
			if mod == "" {
				return "", fmt.Errorf("%s has no module line", filepath.Join(d, "go.mod"))
			}
			rel, err := filepath.Rel(d, abs)
			if err != nil {
				return "", err
			}
			if rel == "." {
				return mod, nil
			}
			return path.Join(mod, filepath.ToSlash(rel)), nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("%s is not inside a Go module (no go.mod above it)", dir)
		}
	}
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
