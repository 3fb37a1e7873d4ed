package compile

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// worstInputs are contracts of at most 50 lines that once hung the
// compiler, overflowed its stack or took far too long, with what the
// answer must say ("" when compiling them is fine).
func worstInputs() map[string]struct{ body, top, want string } {
	chain := func(n int, format string) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			b.WriteString(strings.NewReplacer("I", fmt.Sprint(i), "P", fmt.Sprint(i-1)).Replace(format) + "\n")
		}
		return b.String()
	}
	nest := func(n int, format, leaf string) string {
		e := leaf
		for range n {
			e = strings.ReplaceAll(format, "E", e)
		}
		return e
	}
	ops := func(n int, input string) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "\top%d: {method: \"POST\", path: \"/%d\", desc: \"d\", expose: [\"HTTP\"], #input: %s}\n", i, i, input)
		}
		return b.String()
	}
	return map[string]struct{ body, top, want string }{
		// CUE itself doubles at every line.
		"hidden-doubling":   {top: "_h0: {z: int}\n" + chain(29, "_hI: {x: _hP, y: _hP}"), body: ops(1, "{v: _h29}"), want: "_h29 (c.cue:"},
		"list-doubling":     {top: "_h0: int\n" + chain(19, "_hI: [_hP] | [_hP, _hP]"), body: ops(1, "{v: _h19}"), want: "_h19 (c.cue:"},
		"default-doubling":  {top: "_h0: {z: int}\n" + chain(19, "_hI: *{a: _hP} | {b?: _hP}"), body: ops(1, "{v: _h19}"), want: "evaluation-budget"},
		"optional-doubling": {top: "_h0: {z?: int}\n" + chain(29, "_hI: {a?: _hP} | {b?: _hP}"), body: ops(1, "{v: _h29}"), want: "evaluation-budget"},
		"range":             {top: "import \"list\"\n", body: ops(1, "{v: [for x in list.Range(0, 100000, 1) {x}]}"), want: "evaluation-budget"},
		// CUE is quick; the element the schema needs is not.
		"element-doubling": {top: "_h0: {z: int}\n" + chain(29, "_hI: {x: _hP, y: _hP}"), body: ops(1, "{v: [..._h29]}"), want: "translating the schema did not finish"},
		// The translator's own work once grew past seconds.
		"nested-defaults":  {body: ops(1, nest(8, "*{a: E} | {b: E}", "int")), want: "unrepresentable"},
		"nested-optionals": {body: ops(1, nest(7, "{a?: E} | {b?: E}", "{z?: int}"))},
		"many-unions":      {body: ops(10, nest(6, "{a?: E} | {b?: E}", "{z?: int}"))},
		// The stack overflow.
		"default-struct-arm": {body: ops(1, "{o: *{a: 1} | {a: int}}")},
	}
}

func worstContract(top, body string) string {
	imp := "import \"stitchkit.dev/stitchkit/schema\"\n"
	if strings.HasPrefix(top, "import ") {
		imp = "import (\n\t\"stitchkit.dev/stitchkit/schema\"\n\t" + strings.TrimSpace(strings.TrimPrefix(top, "import ")) + "\n)\n"
		top = ""
	}
	return "package c\n\n" + imp + top + "schema.#Contract & {\n\tname: \"c\", version: \"1.0.0\"\n\tservices: s: operations: {\n" + body + "\t}\n}\n"
}

// TestWorstInputsAnswerQuickly: each of the worst inputs known is
// answered — a graph, or positioned diagnostics — within 2 s, as the
// issue asks of any 50-line contract. Each runs in a child process
// (TestWorstInputChild), so an evaluation the watchdog abandoned (CUE
// cannot be interrupted) dies with it instead of burning this process's
// CPU and memory.
//
// Two kinds of input, two measures, neither of which a busy machine can
// fake:
//   - An input the watchdog must stop (its answer names the budget or the
//     stalled phase) runs with the production budget of a build without
//     the race detector (1.2 s), and the answer must come within 2 s of
//     wall time: the watchdog's timer does not wait for the CPU, and the
//     rest (loading 50 lines before, a walk of them after) takes
//     milliseconds. Under the race detector that rest gets ten times its
//     0.8 s margin.
//   - An input that must compile (or be refused for what it says) runs
//     with a budget it cannot meet (two minutes), so a busy machine can
//     no longer turn it into an "evaluation-budget" answer, and the answer
//     must be the expected one. Its cost is measured as work: the child's
//     CPU time, which other processes on the machine do not add to, must
//     stay within 2 s (ten times that under the race detector) — an
//     evaluation that went exponential again would take minutes.
func TestWorstInputsAnswerQuickly(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process per input")
	}
	budget := evalBudgetBase // the child's production budget: 50 lines are under 1 KiB
	margin, work := 800*time.Millisecond, 2*time.Second
	if raceEnabled {
		margin, work = 10*margin, 10*work
	}
	inputs := worstInputs()
	names := make([]string, 0, len(inputs))
	for name := range inputs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		in := inputs[name]
		t.Run(name, func(t *testing.T) {
			t.Parallel() // children, -parallel at a time
			src := worstContract(in.top, in.body)
			if n := strings.Count(src, "\n"); n > 50 {
				t.Fatalf("the input has %d lines: the claim is about 50-line contracts", n)
			}
			watchdog := strings.Contains(in.want, "evaluation-budget") || strings.Contains(in.want, "did not finish") || strings.Contains(in.want, " (c.cue:")
			kind := "production"
			if !watchdog {
				kind = "unmeetable"
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestWorstInputChild$")
			cmd.Env = append(os.Environ(), "STITCH_WORST_INPUT="+name, "STITCH_WORST_BUDGET="+kind)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			var got childAnswer
			line := out[strings.LastIndex(string(out), "\n{")+1:]
			if err := json.Unmarshal(line, &got); err != nil {
				t.Fatalf("child said %q: %v", out, err)
			}
			if got.Err != "" {
				t.Fatalf("not a contract answer: %s", got.Err)
			}
			switch {
			case watchdog && got.Elapsed > budget+margin:
				t.Errorf("answered in %v (the bound is %v)", got.Elapsed, budget+margin)
			case !watchdog && cpu > work:
				t.Errorf("compiling took %v of CPU time (the bound is %v; %v of wall time)", cpu, work, got.Elapsed)
			}
			for _, d := range got.Diagnostics {
				if !strings.HasPrefix(d, "c.cue:") || strings.HasPrefix(d, "c.cue:0:") {
					t.Errorf("diagnostic without a position: %s", d)
				}
			}
			all := strings.Join(got.Diagnostics, "\n")
			met := in.want == "" && all == "" || in.want != "" && strings.Contains(all, in.want)
			switch {
			case !met && in.want == "":
				t.Errorf("a contract that compiles was refused:\n%s", all)
			case !met:
				t.Errorf("the answer does not say %q:\n%s", in.want, all)
			}
			t.Logf("%v (CPU %v): %s", got.Elapsed, cpu, all)
		})
	}
}

type childAnswer struct {
	Elapsed     time.Duration
	Diagnostics []string
	Err         string
}

// TestWorstInputChild compiles one worst input (named by
// STITCH_WORST_INPUT), prints the answer and exits at once, whatever CUE
// may still be evaluating. It runs with the production budget of a build
// without the race detector, or with one it cannot meet when
// STITCH_WORST_BUDGET is "unmeetable".
func TestWorstInputChild(t *testing.T) {
	name := os.Getenv("STITCH_WORST_INPUT")
	if name == "" {
		t.Skip("run by TestWorstInputsAnswerQuickly")
	}
	in := worstInputs()[name]
	budgetFor = func(size int) time.Duration {
		if os.Getenv("STITCH_WORST_BUDGET") == "unmeetable" {
			return 2 * time.Minute
		}
		return evalBudgetBase + time.Duration(size/1024)*evalBudgetPerKiB
	}
	start := time.Now()
	r, err := AnalyzeFiles(context.Background(), map[string][]byte{"c.cue": []byte(worstContract(in.top, in.body))})
	ans := childAnswer{Elapsed: time.Since(start)}
	if err != nil {
		ans.Err = err.Error()
	} else {
		for _, d := range r.Diagnostics {
			ans.Diagnostics = append(ans.Diagnostics, d.String())
		}
	}
	b, _ := json.Marshal(ans)
	fmt.Printf("\n%s\n", b)
	os.Exit(0)
}
