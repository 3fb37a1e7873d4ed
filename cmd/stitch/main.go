// Command stitch vets, compiles and projects stitchkit contracts.
//
// Its interface is stable (tests and CI depend on it); see DESIGN §6:
//
//	stitch vet [DIR]                      exit 0 clean; 1 with file:line:col diagnostics on stderr
//	stitch compile [DIR] [-o graph.json]  canonical graph JSON
//	stitch manifest [DIR] [-o FILE] [--check FILE]
//	stitch diff OLD NEW [--format text|json|markdown|githubactions]
//	stitch openapi [DIR] | stitch asyncapi [DIR]
//	stitch gen [DIR] -o PKGDIR [-p NAME] | stitch serve [DIR] [--addr 127.0.0.1:8080]
//	stitch init [DIR] | stitch init --upgrade [DIR]
//
// DIR defaults to the current directory.
//
// Exit codes: 0 success, 1 contract errors or a failed check, 2 usage
// errors, 100 breaking changes found (diff only).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// Exit codes shared by every subcommand.
const (
	exitOK       = 0
	exitFailure  = 1
	exitUsage    = 2
	exitBreaking = 100
)

// exitError carries a specific exit code out of a command. A nil err means
// the command already printed what the user needs.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// exitWith returns an error that makes stitch exit with code, printing err
// (if any) to stderr.
func exitWith(code int, err error) error { return &exitError{code: code, err: err} }

// commandFactories registers subcommands; each command file adds its own in
// an init function so commands stay independent of one another.
var commandFactories []func(env *cliEnv) *cobra.Command

// cliEnv is what every subcommand writes to.
type cliEnv struct {
	stdout io.Writer
	stderr io.Writer
}

// writeOutput writes b to file, or to stdout when file is empty or "-".
func (env *cliEnv) writeOutput(file string, b []byte) error {
	if file == "" || file == "-" {
		if _, err := env.stdout.Write(b); err != nil {
			return exitWith(exitFailure, err)
		}
		return nil
	}
	if err := os.WriteFile(file, b, 0o644); err != nil {
		return exitWith(exitFailure, fmt.Errorf("write %s: %w", file, err))
	}
	return nil
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes stitch with args and returns the process exit code.
func run(args []string, stdout, stderr io.Writer) int {
	env := &cliEnv{stdout: stdout, stderr: stderr}
	root := &cobra.Command{
		Use:           "stitch",
		Short:         "Vet, compile and project stitchkit contracts",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetArgs(args)
	for _, f := range commandFactories {
		root.AddCommand(f(env))
	}
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(stderr, "stitch: %v\n", ee.err)
		}
		return ee.code
	}
	// Anything cobra itself reports (unknown command, bad flag, wrong
	// argument count) is a usage error.
	fmt.Fprintf(stderr, "stitch: %v\n", err)
	fmt.Fprintf(stderr, "Run 'stitch --help' for usage.\n")
	return exitUsage
}
