package compile

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// analyzeBoth compiles files twice, with the second translator on its own
// goroutine and without, and returns both results.
func analyzeBoth(t *testing.T, files map[string][]byte) (pre, serial *Result) {
	t.Helper()
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("the prefetcher needs two cores") // it never starts on one
	}
	saved := prefetchMinSource
	defer func() { prefetchMinSource = saved }()
	var err error
	prefetchMinSource = 0
	if pre, err = AnalyzeFiles(context.Background(), files); err != nil {
		t.Fatal(err)
	}
	prefetchMinSource = math.MaxInt
	if serial, err = AnalyzeFiles(context.Background(), files); err != nil {
		t.Fatal(err)
	}
	return pre, serial
}

func resultText(t *testing.T, r *Result) string {
	t.Helper()
	var b strings.Builder
	if r.Graph != nil {
		out, err := r.Graph.Encode()
		if err != nil {
			t.Fatal(err)
		}
		b.Write(out)
	}
	for _, d := range r.Diagnostics {
		fmt.Fprintln(&b, "error:", d)
	}
	for _, d := range r.Warnings {
		fmt.Fprintln(&b, "warning:", d)
	}
	return b.String()
}

// TestPrefetchSameResult holds the prefetcher to its promise (see
// prefetch.go): the graph, the diagnostics and the warnings are the same
// bytes whether the second translator ran on its own goroutine or not,
// and it translated every node of its share (so the compiler never fell
// back to a translator that had seen fewer nodes). Under -race it also
// checks that two evaluations of one loaded instance share nothing
// mutable.
func TestPrefetchSameResult(t *testing.T) {
	cases := map[string]map[string][]byte{}
	for _, ex := range []string{"tasks", "minimal"} {
		dir := filepath.Join("..", "..", "examples", ex)
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{}
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".cue") {
				b, err := os.ReadFile(filepath.Join(dir, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				files[e.Name()] = b
			}
		}
		cases["examples/"+ex] = files
	}
	cases["generated"] = map[string][]byte{"c.cue": []byte(prefetchContract(120))}
	fixtures, err := filepath.Glob(filepath.Join("..", "..", "testdata", "invalid", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fixtures {
		ar, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{}
		for _, af := range ar.Files {
			if name, ok := strings.CutPrefix(af.Name, "contract/"); ok {
				files[name] = af.Data
			}
		}
		if len(files) > 0 {
			cases["invalid/"+filepath.Base(f)] = files
		}
	}
	for name, files := range cases {
		t.Run(name, func(t *testing.T) {
			pre, serial := analyzeBoth(t, files)
			if len(pre.Diagnostics) == 0 && pre.prefetched != pre.sideB {
				t.Errorf("the prefetcher translated %d of the %d nodes of its share", pre.prefetched, pre.sideB)
			}
			if pre.prefetchMisses != 0 {
				t.Errorf("the compiler translated %d node(s) of the prefetcher's share itself", pre.prefetchMisses)
			}
			if a, b := resultText(t, pre), resultText(t, serial); a != b {
				t.Errorf("results differ with and without the prefetcher:\n--- prefetched\n%s\n--- serial\n%s", a, b)
			}
		})
	}
}

// prefetchContract is a contract of n operations whose schemas share
// definitions (so both translators translate some of them), with doc
// comments, defaults, unions, a recursive definition and realtime events.
func prefetchContract(n int) string {
	var b bytes.Buffer
	b.WriteString(`package c

import "stitchkit.dev/stitchkit/schema"

// #Node is a tree.
#Node: {name: string, kids?: [...#Node]}
#Shape: {kind: "circle", r: number} | {kind: "square", side: number}
#Page: {limit?: *20 | int & >=1 & <=100, cursor?: string}

schema.#Contract & {
	name:    "c"
	version: "1.0.0"
	services: s: operations: {
`)
	for i := range n {
		fmt.Fprintf(&b, "\t\top%d: {method: \"POST\", path: \"/op%d/{id}\", desc: \"Op %d\", #query: {#Page, extra%d?: bool}, #input: {shape: #Shape, tree?: #Node, n%d: *%d | int}, #output: {items: [...#Node], total: int & >=%d}}\n", i, i, i, i, i, i, i)
	}
	b.WriteString("\t}\n\trealtime: r: {\n\t\tserverToClient: changed: {#args: [#Node]}\n\t\tclientToServer: watch: {#args: [{board: string}], #ack: {ok: bool}}\n\t}\n}\n")
	return b.String()
}
