// Package cli is the CLI mount: the contract's CLI surface as a command
// tree (cobra), one command per tool plus the contract's CLI-only
// commands. Flags come from each tool's input schema; a command runs in
// process through the shared runner (source "cli"), or against a running
// HTTP mount with --server URL; the answer is JSON on stdout, a failure
// the tool error envelope on stderr, and the exit code says which error it
// was.
//
//	p, _ := project.New(g, nil) // the one projection; g from check.Compile or graph.Load
//	runner, _ := mount.New(impl, &mount.Options{Projection: p})
//	app, _ := cli.New(runner.Projection(), &cli.Options{Runner: runner})
//	os.Exit(app.Run(ctx, os.Args[1:]))
//
// Flags (from the input schema's top-level properties, through $ref,
// allOf, anyOf and oneOf):
//
//   - boolean: --x, --x=false, --no-x;
//   - integer: a whole number (--limit 1.5 is refused naming the flag);
//   - number, string: as typed; an enum's values are listed in --help;
//   - list: the flag repeated (--tag a --tag b), or one JSON array; the
//     values an enum element may take are listed in --help;
//   - object: a JSON object, or dotted flags: --opts.k v for a declared
//     property, --labels.KEY v for a key of a map (or of an object open to
//     undeclared keys), the key taken whole;
//   - anything else: JSON if it parses, else the text.
//
// When a required field is given by no flag and standard input is not a
// terminal, the first such field is read from standard input. --json prints one compact
// line instead of indented JSON.
package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
	"stitchkit.dev/stitchkit/pkg/project"
	"stitchkit.dev/stitchkit/pkg/validate"
)

// DefaultExitCodes maps error codes to exit codes (research contracts
// §2.7); any other code exits 1.
var DefaultExitCodes = map[string]int{
	"VALIDATION_ERROR":      1,
	"BAD_REQUEST":           1,
	"UNAUTHORIZED":          2,
	"FORBIDDEN":             3,
	"NOT_FOUND":             4,
	"CONFLICT":              5,
	"RATE_LIMITED":          6,
	"TIMEOUT":               7,
	"INTERNAL_SERVER_ERROR": 1,
}

// statusExitCodes gives an application error code the exit code of the
// framework code with its HTTP status; any other status exits 1.
var statusExitCodes = map[int]int{401: 2, 403: 3, 404: 4, 409: 5, 429: 6, 408: 7, 504: 7}

// Options configures [New]; nil means defaults.
type Options struct {
	// Name is the root command's name (the graph's name when empty).
	Name string
	// Runner runs commands in process. Without one, every contract
	// command needs --server.
	Runner *mount.Runner
	// Server is the default for --server: the base URL of a running HTTP
	// mount, including its prefix (e.g. "http://127.0.0.1:8080/api").
	// When set (or given), commands call it instead of the runner.
	Server string
	// HTTPClient makes the remote calls (http.DefaultClient when nil).
	HTTPClient *http.Client
	// Header is sent with every remote call (credentials, for example),
	// before the --header flags.
	Header http.Header
	// Commands are the handlers of the contract's CLI-only commands, by
	// name. A CLI-only command without one answers NOT_IMPLEMENTED.
	Commands map[string]CommandFunc
	// ExitCodes override DefaultExitCodes, code by code.
	ExitCodes map[string]int
	// Stdin, Stdout and Stderr default to the process's.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// MaxStdinBytes caps what is read from standard input (1 MiB when
	// zero).
	MaxStdinBytes int64
}

// CommandFunc runs a CLI-only command with its validated input and returns
// its output JSON (nil when it declares none). It has no operation
// identity: no runner, no hooks.
type CommandFunc func(ctx context.Context, input map[string]any) (json.RawMessage, error)

// App is the command tree of one graph.
type App struct {
	root     *cobra.Command
	opts     Options
	g        *graph.Graph
	exit     map[string]int
	commands []*command
	stdin    io.Reader
	stdout   io.Writer
	stderr   io.Writer

	// Per run: the command line, the global flags and the outcome.
	argv    []string
	server  string
	headers []string
	compact bool
	code    int
}

// command is one command of the tree.
type command struct {
	name   string
	cobra  *cobra.Command
	tool   *project.Tool     // a contract or runtime tool; nil for CLI-only
	native *graph.CliCommand // a CLI-only command
	fields []*field
	ep     *mount.Endpoint
	remote *remoteRoute // nil for runtime tools (no route)
	input  *validate.Validator
	output *validate.Validator
}

// reserved are the framework's flags; a field may not use their names.
var reserved = []string{"json", "server", "header", "help", "version"}

// New builds the command tree of the CLI surface of p (the graph's one
// projection; with Options.Runner, the runner's own) and its CLI-only
// commands. A field whose flag would collide with a framework flag
// (--json, --server, --header, --help, --version) is an error.
func New(p *project.Projection, opts *Options) (*App, error) {
	if opts == nil {
		opts = &Options{}
	}
	if p == nil {
		return nil, errors.New("cli: nil projection")
	}
	if opts.Runner != nil && opts.Runner.Projection() != p {
		return nil, errors.New("cli: Options.Runner serves another projection (pass runner.Projection())")
	}
	g := p.Graph()
	a := &App{opts: *opts, g: g, exit: map[string]int{}, stdin: opts.Stdin, stdout: opts.Stdout, stderr: opts.Stderr}
	for k, v := range DefaultExitCodes {
		a.exit[k] = v
	}
	// An application code exits like the framework code of its HTTP
	// status (TASK_NOT_FOUND, 404, exits 4 as NOT_FOUND does), so a
	// script can test for "not found" whatever the contract calls it.
	for _, e := range g.Errors {
		if _, framework := DefaultExitCodes[e.Code]; !framework {
			a.exit[e.Code] = statusExitCodes[e.Status]
			if a.exit[e.Code] == 0 {
				a.exit[e.Code] = 1
			}
		}
	}
	for k, v := range opts.ExitCodes {
		a.exit[k] = v
	}
	if a.stdin == nil {
		a.stdin = os.Stdin
	}
	if a.stdout == nil {
		a.stdout = os.Stdout
	}
	if a.stderr == nil {
		a.stderr = os.Stderr
	}
	routes := remoteRoutes(p)
	var errs []error
	var err error
	s := p.Tools().Surface(graph.CLI, "")
	for i := range s.Tools {
		t := &s.Tools[i]
		c := &command{name: t.Name, tool: t, remote: routes[t.Op]}
		if c.fields, err = fieldsOf(t.Input); err != nil {
			errs = append(errs, fmt.Errorf("cli: command %q: input schema: %w", t.Name, err))
			continue
		}
		if opts.Runner != nil {
			if c.ep = opts.Runner.Endpoint(t.Service, t.Action); c.ep == nil {
				errs = append(errs, fmt.Errorf("cli: the runner has no endpoint %s for command %q", t.ID(), t.Name))
			}
		}
		if t.Op != nil && c.remote != nil {
			c.remote.split = p.Endpoint(t.Service, t.Action).Split
		}
		a.commands = append(a.commands, c)
	}
	for i := range g.CliCommands {
		nc := &g.CliCommands[i]
		c := &command{name: nc.Name, native: nc}
		if nc.Input != "" {
			if c.fields, err = fieldsOf(g.Schema(nc.Input)); err == nil {
				c.input, err = validate.Compile(g.Schema(nc.Input))
			}
		}
		if err == nil && nc.Output != "" {
			c.output, err = validate.Compile(g.Schema(nc.Output))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("cli: CLI-only command %q: %w", nc.Name, err))
			continue
		}
		a.commands = append(a.commands, c)
	}
	for _, c := range a.commands {
		for _, n := range allNames(c.fields) {
			if slices.Contains(reserved, n) {
				errs = append(errs, fmt.Errorf("cli: command %q: its field %q collides with the framework flag --%s; rename the field", c.name, n, n))
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	slices.SortFunc(a.commands, func(x, y *command) int { return graph.CompareUTF16(x.name, y.name) })
	a.build()
	return a, nil
}

// Command returns the root cobra command, e.g. to add commands of the
// application's own. Run it with [App.Run] to get the exit codes.
func (a *App) Command() *cobra.Command { return a.root }

func (a *App) build() {
	name := a.opts.Name
	if name == "" {
		name = a.g.Name
	}
	root := &cobra.Command{
		Use:           name,
		Short:         cmpOr(a.g.Info.Title, a.g.Name),
		Long:          a.g.Info.Description,
		Version:       a.g.Version,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return mount.Errorf(mount.CodeNotFound, "Unknown command %q; run %s --help for the list", args[0], cmd.Name())
			}
			return nil
		},
		RunE:              func(cmd *cobra.Command, args []string) error { return cmd.Help() },
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	// A flag the command does not have is an argument the tool does not
	// declare: VALIDATION_ERROR, as an undeclared field is over HTTP, MCP
	// and the Agent.
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return mount.NewError(mount.CodeValidation, err.Error())
	})
	pf := root.PersistentFlags()
	pf.StringVar(&a.server, "server", a.opts.Server, "call the HTTP mount at this base URL (including its prefix) instead of running in process")
	pf.StringArrayVar(&a.headers, "header", nil, `a "Name: value" header for --server calls (repeatable)`)
	pf.BoolVar(&a.compact, "json", false, "print one compact JSON line")
	for _, c := range a.commands {
		root.AddCommand(a.cobraCommand(c))
	}
	a.root = root
}

func (a *App) cobraCommand(c *command) *cobra.Command {
	short := ""
	switch {
	case c.tool != nil:
		short = c.tool.Description
	case c.native != nil:
		short = c.native.Desc
	}
	cc := &cobra.Command{
		Use:   c.name,
		Short: short,
		Long:  strings.TrimSpace(short + "\n\n" + describe(c.fields)),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			if f := a.boolBefore(c, args[0]); f != "" {
				// --done false: a boolean flag takes no separate value.
				return mount.Errorf(mount.CodeBadRequest, "--%s is a boolean flag and takes no separate value: write --%s=%s (or --%s, --no-%s)", f, f, args[0], f, f)
			}
			return mount.Errorf(mount.CodeBadRequest, "%s takes flags, not arguments (got %q)", c.name, args[0])
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runCommand(cmd.Context(), c) },
	}
	for _, f := range c.fields {
		register(cc.Flags(), f)
	}
	c.cobra = cc
	return cc
}

// boolBefore returns the name of the boolean field whose bare flag (--x or
// --no-x, no "=") comes just before the argument arg on the command line,
// or "".
func (a *App) boolBefore(c *command, arg string) string {
	for i := 1; i < len(a.argv); i++ {
		if a.argv[i] != arg {
			continue
		}
		prev, ok := strings.CutPrefix(a.argv[i-1], "--")
		if !ok || strings.Contains(prev, "=") {
			continue
		}
		name := strings.TrimPrefix(prev, "no-")
		for _, f := range flatFields(c.fields) {
			if f.kind == kindBoolean && f.name() == name {
				return name
			}
		}
	}
	return ""
}

// flatFields lists fields and their dotted children.
func flatFields(fields []*field) []*field {
	var out []*field
	for _, f := range fields {
		out = append(out, f)
		out = append(out, flatFields(f.children)...)
	}
	return out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// RunWith is [App.Run] with the given standard streams for this one run.
func (a *App) RunWith(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	in, out, errw := a.stdin, a.stdout, a.stderr
	defer func() {
		a.stdin, a.stdout, a.stderr = in, out, errw
		a.root.SetIn(in)
		a.root.SetOut(out)
		a.root.SetErr(errw)
	}()
	a.stdin, a.stdout, a.stderr = stdin, stdout, stderr
	a.root.SetIn(stdin)
	a.root.SetOut(stdout)
	a.root.SetErr(stderr)
	return a.Run(ctx, args)
}

// Run executes one command line (without the program name) and returns
// the exit code: 0 on success, else the code's exit code
// ([DefaultExitCodes]; an application code by its HTTP status, see
// docs/cli.md; Options.ExitCodes; 1 for any other code). An App
// runs one command line at a time.
func (a *App) Run(ctx context.Context, args []string) int {
	for _, c := range a.commands {
		reset(c.fields)
	}
	a.code = 0
	a.compact, a.headers, a.server, a.argv = false, nil, a.opts.Server, args
	if cmd, _, err := a.root.Find(args); err == nil {
		for _, c := range a.commands {
			if c.cobra == cmd {
				addKeyFlags(cmd.Flags(), c.fields, args)
			}
		}
	}
	a.root.SetArgs(args)
	if err := a.root.ExecuteContext(ctx); err != nil {
		e, ok := mount.AsError(err)
		if !ok {
			e = mount.NewError(mount.CodeBadRequest, err.Error())
		}
		a.fail(e)
	}
	return a.code
}

// runCommand collects a command's arguments and runs it.
func (a *App) runCommand(ctx context.Context, c *command) error {
	args, err := collect(c.fields)
	if err != nil {
		return err
	}
	if err := a.fromStdin(c, args); err != nil {
		return err
	}
	var out json.RawMessage
	switch {
	case c.native != nil:
		out, err = a.runNative(ctx, c, args)
	case a.server != "":
		out, err = a.runRemote(ctx, c, args)
	case c.ep != nil:
		raw, _ := json.Marshal(args)
		res := c.ep.CallTool(ctx, mount.SourceCLI, raw, c)
		if res.Err != nil {
			return res.Err
		}
		out = res.Output
	default:
		return mount.Errorf(mount.CodeBadRequest, "%s needs --server URL: this program runs no operations in process", c.name)
	}
	if err != nil {
		return err
	}
	if out == nil {
		out = json.RawMessage(`{"status":"ok"}`)
	}
	return a.print(a.stdout, out)
}

// fromStdin fills the first required field that no flag set from standard
// input, unless standard input is a terminal.
func (a *App) fromStdin(c *command, args map[string]any) error {
	var first *field
	for _, f := range c.fields {
		if _, set := args[f.path[0]]; f.required && !set {
			first = f
			break
		}
	}
	if first == nil || isTerminal(a.stdin) {
		return nil
	}
	max := a.opts.MaxStdinBytes
	if max <= 0 {
		max = 1 << 20
	}
	b, err := io.ReadAll(io.LimitReader(a.stdin, max+1))
	if err != nil {
		return mount.Errorf(mount.CodeBadRequest, "reading standard input: %v", err)
	}
	if int64(len(b)) > max {
		return mount.Errorf(mount.CodePayloadTooLarge, "standard input exceeds %d bytes", max)
	}
	if len(b) == 0 {
		return nil
	}
	text := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	v, err := convert(first, first.kind, text)
	if err != nil {
		return err
	}
	args[first.path[0]] = v
	return nil
}

// isTerminal reports whether r is a character device (a terminal).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// runNative runs a CLI-only command: validated input, its handler,
// validated output.
func (a *App) runNative(ctx context.Context, c *command, args map[string]any) (out json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, mount.NewError(mount.CodeInternal, "Internal server error")
		}
	}()
	if c.input != nil {
		// The handler sees what CUE would have produced, as an operation's
		// does: defaults first, then validation (DESIGN invariant 3).
		if v, _ := c.input.ApplyDefaults(args); v != nil {
			if m, ok := v.(map[string]any); ok {
				args = m
			}
		}
		if err := c.input.Validate(args); err != nil {
			var ve *validate.Error
			if errors.As(err, &ve) {
				return nil, issues(ve)
			}
			return nil, mount.NewError(mount.CodeValidation, err.Error())
		}
	} else if len(args) > 0 {
		return nil, mount.Errorf(mount.CodeValidation, "%s takes no input", c.name)
	}
	h := a.opts.Commands[c.name]
	if h == nil {
		return nil, mount.Errorf(mount.CodeNotImplemented, "%s is not implemented", c.name)
	}
	out, err = h(ctx, args)
	if err != nil {
		if e, ok := mount.AsError(err); ok {
			return nil, e
		}
		return nil, mount.NewError(mount.CodeInternal, "Internal server error").WithCause(err)
	}
	if c.output != nil {
		v, derr := validate.DecodeJSON(out, &validate.DecodeOptions{MaxDepth: 10000})
		if derr == nil {
			derr = c.output.Validate(v)
		}
		if derr != nil {
			return nil, mount.NewError(mount.CodeInternal, "Internal server error").WithCause(derr)
		}
	}
	return out, nil
}

func issues(ve *validate.Error) *mount.Error {
	list := make([]mount.Issue, 0, len(ve.Issues))
	for i, is := range ve.Issues {
		if i == project.MaxIssues {
			break
		}
		list = append(list, mount.Issue{In: project.PartInput, Path: is.Path, Keyword: is.Keyword, Message: is.Message})
	}
	return &mount.Error{Code: mount.CodeValidation, Message: "Invalid input: " + ve.Issues[0].String(), Details: map[string]any{"issues": list}}
}

// print writes JSON indented, or compact with --json, and a newline.
func (a *App) print(w io.Writer, b []byte) error {
	var buf bytes.Buffer
	var err error
	if a.compact {
		err = json.Compact(&buf, b)
	} else {
		err = json.Indent(&buf, b, "", "  ")
	}
	if err != nil {
		buf.Reset()
		buf.Write(b)
	}
	buf.WriteByte('\n')
	_, err = w.Write(buf.Bytes())
	return err
}

// fail prints the tool error envelope on stderr and sets the exit code.
func (a *App) fail(e *mount.Error) {
	a.print(a.stderr, e.ToolEnvelope(""))
	code, ok := a.exit[string(e.Code)]
	if !ok {
		code = 1
	}
	a.code = code
}

// ExitCode returns the exit code of an error code under the app's table.
func (a *App) ExitCode(code string) int {
	if c, ok := a.exit[code]; ok {
		return c
	}
	return 1
}
