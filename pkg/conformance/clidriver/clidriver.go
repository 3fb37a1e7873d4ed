// Package clidriver is the conformance probe driver for the CLI: it runs a
// probe's [conformance.Call] as the command line the CLI surface gives the
// operation — the command the projector names, one --flag=value per
// argument — either in process (the CLI mount's *cli.App) or as a binary,
// and normalises stdout, stderr and the exit status into a
// [conformance.Observation].
//
//	app, err := cli.New(g, &cli.Options{Runner: runner})
//	d, err := clidriver.New(g, clidriver.InProcess(app))
//	// or: clidriver.New(g, clidriver.Binary("./bin/tasks", "--server", srv.URL+"/api"))
//	err = conformance.RunProbes(ctx, probes, conformance.Drivers{conformance.TransportCLI: d}, nil)
package clidriver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"

	"stitchkit.dev/stitchkit/pkg/conformance"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/project"
)

// Result is one command line's outcome.
type Result struct {
	Stdout, Stderr []byte
	// Exit is the exit status; 0 is success.
	Exit int
}

// Runner runs one command line (without the program name) and reports
// what it printed and how it exited. An error means the command could not
// run at all (a missing binary), not that it failed.
type Runner func(ctx context.Context, args []string) (Result, error)

// App is what [InProcess] needs of a CLI: *cli.App implements it.
type App interface {
	RunWith(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

// InProcess runs command lines on app, with an empty standard input.
func InProcess(app App) Runner {
	return func(ctx context.Context, args []string) (Result, error) {
		var out, errb bytes.Buffer
		code := app.RunWith(ctx, args, strings.NewReader(""), &out, &errb)
		return Result{Stdout: out.Bytes(), Stderr: errb.Bytes(), Exit: code}, nil
	}
}

// Binary runs command lines as the program at path, with prefix before
// each command line (global flags such as --server URL) and an empty
// standard input. The process is killed when the probe's context ends.
func Binary(path string, prefix ...string) Runner {
	return func(ctx context.Context, args []string) (Result, error) {
		cmd := exec.CommandContext(ctx, path, append(slices.Clone(prefix), args...)...)
		var out, errb bytes.Buffer
		cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(""), &out, &errb
		err := cmd.Run()
		var exit *exec.ExitError
		switch {
		case err == nil:
			return Result{Stdout: out.Bytes(), Stderr: errb.Bytes()}, nil
		case ctx.Err() != nil:
			return Result{}, ctx.Err()
		case errors.As(err, &exit):
			return Result{Stdout: out.Bytes(), Stderr: errb.Bytes(), Exit: exit.ExitCode()}, nil
		}
		return Result{}, err
	}
}

// New returns the CLI driver of the CLI surface of the projection p over
// run.
//
// A Call becomes `<command> --json --name=value …`: the command is the
// operation's CLI name; a string argument is passed as is, anything else
// (numbers, booleans, lists, objects) as its JSON text, which the CLI
// mount reads for a flag of that type (a list as one JSON array). Exit 0
// is a success with stdout's JSON as data (none for a command without
// output: its {"status":"ok"} stand-in is dropped); any other exit with
// the tool error envelope on stderr is [conformance.ErrorObservation];
// anything else is a domain_error with the exit status and stderr as
// diagnostic.
func New(p *project.Projection, run Runner) (conformance.Driver, error) {
	if run == nil {
		return nil, errors.New("clidriver: no runner")
	}
	if p == nil {
		return nil, errors.New("clidriver: nil projection")
	}
	ts := p.Tools()
	return &driver{run: run, index: conformance.NewToolIndex(ts.Surface(graph.CLI, ""), "a command of the CLI surface")}, nil
}

type driver struct {
	run   Runner
	index *conformance.ToolIndex
}

func (d *driver) Invoke(ctx context.Context, fixture any) (conformance.Observation, error) {
	call, tool, err := d.index.Resolve(fixture)
	if err != nil {
		return conformance.Observation{}, err
	}
	args, err := CommandLine(tool.Name, call.Args)
	if err != nil {
		return conformance.Observation{}, err
	}
	res, err := d.run(ctx, args)
	if err != nil {
		return conformance.Observation{}, err
	}
	if res.Exit == 0 {
		o, err := conformance.ToolOutputObservation(res.Stdout, tool.Output != nil)
		if err != nil {
			return conformance.Observation{Outcome: conformance.OutcomeDomainError, Diagnostic: fmt.Sprintf("exit 0 with stdout that is not JSON: %s", res.Stdout)}, nil
		}
		return o, nil
	}
	var env struct {
		Error   string         `json:"error"`
		Details map[string]any `json:"details"`
	}
	if json.Unmarshal(bytes.TrimSpace(res.Stderr), &env) != nil || env.Error == "" {
		return conformance.Observation{Outcome: conformance.OutcomeDomainError, Diagnostic: fmt.Sprintf("exit %d without an error envelope: %s", res.Exit, res.Stderr)}, nil
	}
	return conformance.ErrorObservation(env.Error, env.Details), nil
}

// CommandLine is the command line of one call: the command, --json (one
// compact line of output) and one --name=value flag per argument, sorted
// by name.
func CommandLine(command string, args map[string]any) ([]string, error) {
	line := []string{command, "--json"}
	names := make([]string, 0, len(args))
	for k := range args {
		names = append(names, k)
	}
	graph.SortUTF16(names)
	for _, k := range names {
		v := args[k]
		text, ok := v.(string)
		if !ok {
			b, err := json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("argument %q: %w", k, err)
			}
			text = string(b)
		}
		line = append(line, "--"+k+"="+text)
	}
	return line, nil
}
