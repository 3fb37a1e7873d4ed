// Package check holds the one compile: [Compile] turns a contract
// directory into a graph exactly when `stitch vet` accepts it. It is
// `stitch vet` as a library: it compiles a contract with package compile
// ([compile.Analyze], the lower level) and adds the checks that need the projector (package
// project) — HTTP route conflicts, selection patterns, tool names and
// collisions, advertised tool inputs, MCP policy — so one call reports
// every mistake of a contract, positioned and sorted.
//
// The data path runs one way (contract → graph → projection): the
// compiler knows nothing of projections, the projector nothing of CUE
// positions, and this package, above both, positions what the projector
// refuses using where the contract wrote each node ([compile.Result.Pos]).
//
// Start with [Compile] (a graph, or *[compile.Error] with every
// diagnostic) or [Dir] (the whole [Report], warnings included):
//
//	rep, err := check.Dir(ctx, "./contracts")
//	if err != nil {
//		return err // not a contract mistake: unreadable directory, ...
//	}
//	for _, d := range rep.Errors {
//		fmt.Println(d) // file:line:col: rule: message
//	}
//	for _, w := range rep.Warnings {
//		fmt.Println("warning:", w)
//	}
package check

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"

	"stitchkit.dev/stitchkit/pkg/compile"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/project"
)

// Report is everything `stitch vet` says about one contract.
type Report struct {
	// Dir is the contract directory as given.
	Dir string
	// Graph is the compiled graph; nil unless Errors is empty.
	Graph *graph.Graph
	// Errors are the contract's mistakes — the compiler's and the
	// projector's — sorted by position.
	Errors []compile.Diagnostic
	// Warnings are the findings that do not fail the contract, sorted:
	// the compiler's (a stale copy of the contract language under
	// cue.mod/pkg) and, for a contract without errors, the projector's
	// MCP preparation findings ([Warnings]).
	Warnings []compile.Diagnostic
}

// Err returns Errors as an *[compile.Error], or nil when there is none.
func (r *Report) Err() error {
	if len(r.Errors) == 0 {
		return nil
	}
	return &compile.Error{Dir: r.Dir, Diagnostics: r.Errors}
}

// Dir compiles and checks the contract in dir (see [compile.Analyze] for
// how dir is resolved). The error is non-nil only for failures that are
// not contract mistakes.
func Dir(ctx context.Context, dir string) (*Report, error) {
	r, err := compile.Analyze(ctx, dir)
	if err != nil {
		return nil, err
	}
	return Run(r), nil
}

// Files is [Dir] for an in-memory contract (see [compile.AnalyzeFiles]).
func Files(ctx context.Context, files map[string][]byte) (*Report, error) {
	r, err := compile.AnalyzeFiles(ctx, files)
	if err != nil {
		return nil, err
	}
	return Run(r), nil
}

// Compile is the one compile users call: it loads the CUE contract in dir
// ([compile.Analyze]) and runs every check `stitch vet` runs, the
// projector's included (route conflicts, tool names and surfaces, MCP
// policy). It returns the graph of a contract `stitch vet` accepts, else
// an *[compile.Error] holding every diagnostic, positioned and sorted; a
// failure that is not a contract mistake (unreadable directory, cancelled
// ctx) is a plain error.
//
// A graph it returns always projects ([project.New]) and mounts.
func Compile(ctx context.Context, dir string) (*graph.Graph, error) {
	return graphOf(Dir(ctx, dir))
}

// CompileFiles is [Compile] for an in-memory contract.
func CompileFiles(ctx context.Context, files map[string][]byte) (*graph.Graph, error) {
	return graphOf(Files(ctx, files))
}

func graphOf(r *Report, err error) (*graph.Graph, error) {
	if err != nil {
		return nil, err
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return r.Graph, nil
}

// Run adds the projector's checks to a compilation. They run on the graph
// built from every node CUE found intact, so one run reports the CUE
// errors and the projection problems together; nodes CUE found broken
// are skipped (a selection pattern naming one is not reported).
//
// Run never panics: a failure of a check itself becomes an "internal"
// diagnostic, so the contract is refused rather than the caller crashed.
func Run(r *compile.Result) *Report {
	rep := &Report{Dir: r.Dir}
	errs := slices.Clone(r.Diagnostics)
	var tools *project.Tools
	if r.Graph != nil {
		var diags []compile.Diagnostic
		diags, tools = projectorChecks(r)
		errs = append(errs, diags...)
	}
	rep.Errors = compile.SortDiagnostics(errs)
	warnings := slices.Clone(r.Warnings)
	if len(rep.Errors) == 0 {
		rep.Graph = r.Graph
		if tools != nil {
			// The surfaces the checks projected: projecting them again
			// would cost as much.
			warnings = append(warnings, warningsOf(r.Graph, tools)...)
		} else {
			warnings = append(warnings, Warnings(r.Graph)...)
		}
	}
	rep.Warnings = compile.SortDiagnostics(warnings)
	return rep
}

// projectorChecks runs the checks that need the projector on r.Graph.
func projectorChecks(r *compile.Result) (diags []compile.Diagnostic, tools *project.Tools) {
	k := &checker{r: r, g: r.Graph}
	defer func() {
		if p := recover(); p != nil {
			diags = append(k.diags, compile.Diagnostic{Pos: r.Pos(""), Rule: "internal",
				Message: fmt.Sprintf("internal checker error (please report it with the contract): %v\n%s", p, debug.Stack())})
			tools = nil
		}
	}()
	// The route table and the tool surfaces are independent reads of the
	// graph: build the table on a second goroutine meanwhile.
	type routeResult struct {
		err      error
		panicked any
	}
	done := make(chan routeResult, 1)
	go func() {
		var res routeResult
		defer func() {
			res.panicked = recover()
			done <- res
		}()
		_, res.err = project.RouteTable(k.g, project.HTTPOptions{})
	}()
	var ts *project.Tools
	var tsErr error
	var tsPanic any
	surfaces := !r.SurfacesBroken()
	if surfaces {
		func() {
			defer func() { tsPanic = recover() }()
			ts, tsErr = project.ToolSurfaces(k.g)
		}()
	}
	// Report in the order the checks ran one after the other: routes,
	// then surfaces (a panic keeps what came before it).
	res := <-done
	if res.panicked != nil {
		panic(res.panicked)
	}
	k.routes(res.err)
	if tsPanic != nil {
		panic(tsPanic)
	}
	if surfaces {
		k.surfaces(ts, tsErr)
	}
	return k.diags, k.tools
}

// checker accumulates the projector-level diagnostics of one
// compilation.
type checker struct {
	r     *compile.Result
	g     *graph.Graph
	diags []compile.Diagnostic
	// tools are the surfaces the checks projected (nil when the
	// projection failed or did not run): the warnings reuse them.
	tools *project.Tools
}

func (k *checker) add(d compile.Diagnostic) { k.diags = append(k.diags, d) }

// opNode is the CUE path of an operation.
func opNode(op *graph.Operation) string { return project.OperationNode(op.Service, op.Action) }

// posLess orders positions by file, line and column.
func posLess(a, b graph.Pos) bool {
	if a.File != b.File {
		return a.File < b.File
	}
	if a.Line != b.Line {
		return a.Line < b.Line
	}
	return a.Col < b.Col
}
