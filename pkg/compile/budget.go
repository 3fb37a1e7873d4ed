package compile

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"time"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/token"
)

// CUE's evaluation cannot be interrupted, and a few lines can make it
// exponential: _h1: {x: _h0, y: _h0}, _h2: {x: _h1, y: _h1}, … doubles at
// every line, and CUE evaluates every value. So the compiler runs the
// evaluation (and the translation, whose own work is bounded by
// cueschema) in a goroutine under a watchdog: when it takes longer than
// the budget, the compilation reports a positioned "evaluation-budget"
// diagnostic instead of hanging.
//
// The budget is generous next to what contracts cost (a 50-line contract
// compiles in tens of milliseconds, 500 operations in about half a
// second) and grows with the size of the contract's source, so only a
// contract whose evaluation grows far beyond its source meets it. What
// it costs: the abandoned goroutine stops at the compiler's next check of
// its context, but a CUE call already under way runs on (CPU and memory)
// until it returns, which for an exponential value may be never. A
// process that compiles untrusted contracts and must not carry that
// should compile in a child process.

// evalBudgetBase and evalBudgetPerKiB make the budget: base + per KiB of
// the contract's own source (race-detector builds get ten times as much).
const (
	evalBudgetBase   = 1200 * time.Millisecond
	evalBudgetPerKiB = 10 * time.Millisecond
)

// evalBudget is the time the evaluation of a contract of size bytes may
// take.
func evalBudget(size int) time.Duration {
	b := evalBudgetBase + time.Duration(size/1024)*evalBudgetPerKiB
	if raceEnabled {
		b *= 10
	}
	return b
}

// budgetFor is evalBudget (a test replaces it).
var budgetFor = evalBudget

// progress is what a compilation is doing: the watchdog names it when the
// budget runs out.
type progress struct {
	mu    sync.Mutex
	phase string
	node  string
	stop  <-chan struct{} // closed when the watchdog gave up
}

// mark records what the compilation is about to do. Once the watchdog
// has given up on the compilation, it stops it there (errAbandoned
// unwinds the goroutine).
func (c *compiler) mark(phase, node string) {
	c.progress.mu.Lock()
	c.progress.phase, c.progress.node = phase, node
	stop := c.progress.stop
	c.progress.mu.Unlock()
	if stop != nil {
		select {
		case <-stop:
			panic(errAbandoned)
		default:
		}
	}
}

// sourceSize is the size in bytes of files.
func sourceSize(files []*ast.File) int {
	size := 0
	for _, file := range files {
		if tf := file.Pos().File(); tf != nil {
			size += tf.Size()
		}
	}
	return size
}

// errAbandoned stops a compilation the watchdog gave up on.
var errAbandoned = errors.New("compilation abandoned")

func (c *compiler) current() (string, string) {
	c.progress.mu.Lock()
	defer c.progress.mu.Unlock()
	return c.progress.phase, c.progress.node
}

// watch runs f (the evaluation of inst) in a goroutine and waits for it,
// for ctx, or for the budget, whichever comes first (see above).
func (c *compiler) watch(ctx context.Context, inst *build.Instance, f func(context.Context) (*Result, error)) (*Result, error) {
	files := c.userFiles(inst.Files)
	budget := budgetFor(sourceSize(files))
	wctx, cancel := context.WithCancel(ctx)
	c.progress.mu.Lock()
	c.progress.stop = wctx.Done()
	c.progress.mu.Unlock()
	warnings := slices.Clone(c.warnings)
	type outcome struct {
		r   *Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		defer func() {
			if p := recover(); p == errAbandoned {
				o = outcome{err: context.Canceled}
			} else if p != nil {
				o = outcome{err: fmt.Errorf("contract %s: internal compiler error (please report it with the contract): %v\n%s", c.display, p, debug.Stack())}
			}
			done <- o
		}()
		o.r, o.err = f(wctx)
	}()
	timer := time.NewTimer(budget)
	defer timer.Stop()
	select {
	case o := <-done:
		cancel()
		return o.r, o.err
	case <-ctx.Done():
		cancel()
		return nil, ctx.Err()
	case <-timer.C:
		cancel()
	}
	phase, node := c.current()
	return c.overBudget(files, budget, phase, node, warnings), nil
}

// overBudget is the result of a compilation stopped by the watchdog: one
// diagnostic at the node the compiler was working on (the contract root
// while CUE evaluates the package), naming the likely culprit.
func (c *compiler) overBudget(files []*ast.File, budget time.Duration, phase, node string, warnings []Diagnostic) *Result {
	c.waitScan()
	pos := c.index.lookup(node)
	if !pos.IsValid() {
		pos = c.packagePos(files)
	}
	msg := fmt.Sprintf("%s did not finish within %v: CUE's evaluation grows far beyond the size of the source", phase, budget.Round(100*time.Millisecond))
	if node != "" {
		msg = node + ": " + msg
	}
	hint := "look for a value that refers to another one several times, at every level (it doubles with each), or a comprehension over a huge range; name shared parts as definitions (#Part), and bound the ranges"
	if name, at, weight, ok := heaviest(files); ok {
		if p := c.relPos(at); p.IsValid() && node == "" {
			pos = p
		}
		msg += fmt.Sprintf("; %s (%s) expands to about %s values once its references are followed, and is likely the cause", name, c.relPos(at), approx(weight))
	}
	d := Diagnostic{Pos: pos, Rule: "evaluation-budget", Message: msg + "; " + hint, Path: node}
	return &Result{Dir: c.display, Diagnostics: []Diagnostic{d}, Warnings: SortDiagnostics(warnings), index: c.index}
}

func approx(w float64) string {
	if w >= 1e30 {
		return "more than 1e30"
	}
	return strconv.FormatFloat(w, 'g', 2, 64)
}

// heavyWeight is the expansion above which a field is named as the likely
// cause of an evaluation that did not finish.
const heavyWeight = 1e5

// heaviest estimates, from the source alone, how many values each field
// of the contract's files expands to once references are followed (a
// field referring to another twice counts it twice; a comprehension over
// list.Range counts its body once per element), and returns the field
// where the expansion multiplies — the heaviest one that refers to heavy
// values at least twice, or holds a comprehension over a large range —
// when it expands to more than heavyWeight values. It is an estimate for
// a message, never a verdict: the watchdog has already stopped the
// compilation.
func heaviest(files []*ast.File) (name string, at token.Pos, weight float64, ok bool) {
	weights := map[ast.Node]float64{}
	multiplies := map[ast.Node]bool{}
	visiting := map[ast.Node]bool{}
	var weigh func(n ast.Node) float64
	weigh = func(n ast.Node) float64 {
		if w, seen := weights[n]; seen {
			return w
		}
		if visiting[n] {
			return 1 // a cycle: CUE evaluates it structurally
		}
		visiting[n] = true
		w := 1.0
		var terms []float64
		ast.Walk(n, func(m ast.Node) bool {
			switch x := m.(type) {
			case *ast.Field:
				// A nested field counts as a whole: its own
				// comprehensions and references are its own.
				t := weigh(x.Value)
				w += t
				terms = append(terms, t)
				return false
			case *ast.Ident:
				if x.Node != nil && x.Node != n {
					t := weigh(x.Node)
					w += t
					terms = append(terms, t)
				}
			case *ast.Comprehension:
				if k := rangeSize(x); k > 1 {
					t := (k - 1) * weigh(x.Value)
					w += t
					if k >= heavyWeight/10 {
						multiplies[n] = true
					}
				}
			}
			return true
		}, nil)
		w = math.Min(w, 1e30)
		heavy := 0
		for _, t := range terms {
			if t >= w/10 && t > 1 {
				heavy++
			}
		}
		if heavy >= 2 {
			multiplies[n] = true
		}
		visiting[n] = false
		weights[n] = w
		return w
	}
	var visit func(decls []ast.Decl, prefix string)
	// embedded visits the structs of an embedding (schema.#Contract &
	// {...}).
	var embedded func(e ast.Expr, prefix string)
	embedded = func(e ast.Expr, prefix string) {
		switch x := e.(type) {
		case *ast.ParenExpr:
			embedded(x.X, prefix)
		case *ast.BinaryExpr:
			embedded(x.X, prefix)
			embedded(x.Y, prefix)
		case *ast.StructLit:
			visit(x.Elts, prefix)
		}
	}
	visit = func(decls []ast.Decl, prefix string) {
		for _, d := range decls {
			if e, isEmbed := d.(*ast.EmbedDecl); isEmbed {
				embedded(e.Expr, prefix)
				continue
			}
			f, isField := d.(*ast.Field)
			if !isField {
				continue
			}
			label, isName := labelName(f.Label)
			if !isName {
				continue
			}
			if prefix != "" {
				label = prefix + "." + label
			}
			if w := weigh(f.Value); w > weight && multiplies[f.Value] {
				name, at, weight = label, f.Label.Pos(), w
			}
			embedded(f.Value, label)
		}
	}
	for _, f := range files {
		visit(f.Decls, "")
	}
	return name, at, weight, weight > heavyWeight
}

// rangeSize is the number of elements of a comprehension's
// list.Range(lo, hi, step) with literal arguments, else 1.
func rangeSize(c *ast.Comprehension) float64 {
	for _, cl := range c.Clauses {
		fc, ok := cl.(*ast.ForClause)
		if !ok {
			continue
		}
		call, ok := fc.Source.(*ast.CallExpr)
		if !ok || len(call.Args) != 3 {
			continue
		}
		var n [3]float64
		for i, a := range call.Args {
			lit, ok := a.(*ast.BasicLit)
			if !ok {
				return 1
			}
			v, err := strconv.ParseFloat(lit.Value, 64)
			if err != nil {
				return 1
			}
			n[i] = v
		}
		if n[2] > 0 && n[1] > n[0] {
			return (n[1] - n[0]) / n[2]
		}
	}
	return 1
}
