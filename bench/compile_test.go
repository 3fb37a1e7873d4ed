// Package bench holds side-by-side benchmarks of stitchkit against the
// peers users compare it with; bench/run.sh turns them into ratio rows.
package bench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/load"
	"cuelang.org/go/encoding/jsonschema"

	"stitchkit.dev/stitchkit/pkg/check"
	"stitchkit.dev/stitchkit/schema"
)

// writeContract writes a CUE module with a contract of ops operations,
// each with a #query, an #input (or none on GET) and an #output schema.
func writeContract(tb testing.TB, ops int) string {
	tb.Helper()
	dir := tb.TempDir()
	must := func(err error) {
		if err != nil {
			tb.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "cue.mod", "pkg", "stitchkit.dev", "stitchkit", "schema"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "cue.mod", "module.cue"), []byte("module: \"example.com/bench@v0\"\nlanguage: version: \"v0.17.1\"\n"), 0o644))
	entries, err := schema.FS.ReadDir(".")
	must(err)
	for _, e := range entries {
		b, err := schema.FS.ReadFile(e.Name())
		must(err)
		must(os.WriteFile(filepath.Join(dir, "cue.mod", "pkg", "stitchkit.dev", "stitchkit", "schema", e.Name()), b, 0o644))
	}
	var b strings.Builder
	b.WriteString("package bench\n\nimport (\n\t\"strings\"\n\t\"stitchkit.dev/stitchkit/schema\"\n)\n\n")
	b.WriteString("#Item: {\n\tid: string & =~\"^i_[a-z0-9]+$\"\n\tname: string & strings.MinRunes(1) & strings.MaxRunes(100)\n\tcount: int & >=0\n\ttags?: [...string]\n}\n\n")
	b.WriteString("schema.#Contract & {\n\tname: \"bench\"\n\tversion: \"1.0.0\"\n\tservices: {\n")
	const perService = 25
	for s := 0; s < (ops+perService-1)/perService; s++ {
		fmt.Fprintf(&b, "\t\tsvc%d: operations: {\n", s)
		for o := 0; o < perService && s*perService+o < ops; o++ {
			fmt.Fprintf(&b, "\t\t\top%d: {\n\t\t\t\tmethod: \"POST\"\n\t\t\t\tpath: \"/op%d/{id}\"\n\t\t\t\tdesc: \"Operation %d\"\n", o, o, o)
			// Every schema differs from every other one (n is global), so
			// the compiler's per-shape caches cannot make this contract
			// cheaper than a real one.
			n := s*perService + o
			fmt.Fprintf(&b, "\t\t\t\t#query: {limit?: int & >=1 & <=%d, cursor?: string}\n", 10+n)
			fmt.Fprintf(&b, "\t\t\t\t#input: {name: string & strings.MinRunes(1), count%d: int & >=0, tags?: [...string]}\n", n)
			fmt.Fprintf(&b, "\t\t\t\t#output: {items: [...#Item], next?: string, total%d?: int}\n\t\t\t}\n", n)
		}
		b.WriteString("\t\t}\n")
	}
	b.WriteString("\t}\n}\n")
	must(os.WriteFile(filepath.Join(dir, "contract.cue"), []byte(b.String()), 0o644))
	return dir
}

const benchOps = 500

// rounds is how many times a side-by-side benchmark alternates its two
// sides (bench/run.sh passes BENCH_COUNT).
var rounds = flag.Int("bench.rounds", 5, "rounds of a side-by-side benchmark (ours, peer, ours, peer, …)")

// sideBySide runs ours and peer alternately, rounds times each, in this
// one process: sub-benchmarks ours, peer, ours#01, peer#01, … in that
// order. `go test -count N` would not do that: it runs all N counts of one
// benchmark before the next, so a slow phase of the machine (another
// process, thermal throttling) would land on one side only.
func sideBySide(b *testing.B, ours, peer func(*testing.B)) {
	for i := 0; i < *rounds; i++ {
		b.Run("ours", ours)
		b.Run("peer", peer)
	}
}

// BenchmarkCompileVsCUEExport is the compile-vs-cue-export row of
// bench/run.sh: BenchmarkCompile and BenchmarkCUEExport, interleaved.
func BenchmarkCompileVsCUEExport(b *testing.B) {
	dir := writeContract(b, benchOps)
	sideBySide(b, func(b *testing.B) { benchCompile(b, dir) }, func(b *testing.B) { benchCUEExport(b, dir) })
}

// BenchmarkCompileVsCUEVet is the compile-vs-cue-vet row: CUE's own full
// validation of the package, definitions included, as the peer.
func BenchmarkCompileVsCUEVet(b *testing.B) {
	dir := writeContract(b, benchOps)
	sideBySide(b, func(b *testing.B) { benchCompile(b, dir) }, func(b *testing.B) { benchCUEVet(b, dir) })
}

// BenchmarkCompileVsCUEJSONSchema is the compile-vs-cue-jsonschema row:
// load plus stock encoding/jsonschema.Generate on every schema node as the
// peer.
func BenchmarkCompileVsCUEJSONSchema(b *testing.B) {
	dir := writeContract(b, benchOps)
	sideBySide(b, func(b *testing.B) { benchCompile(b, dir) }, func(b *testing.B) { benchGenerate(b, dir) })
}

// BenchmarkCompileScaling reports compile time at 100, 1,000 and 5,000
// operations (it must grow linearly).
func BenchmarkCompileScaling(b *testing.B) {
	for _, n := range []int{100, 1000, 5000} {
		dir := writeContract(b, n)
		b.Run(fmt.Sprintf("ops=%d", n), func(b *testing.B) { benchCompile(b, dir) })
	}
}

func load1(b *testing.B, dir string) cue.Value {
	insts := load.Instances([]string{"."}, &load.Config{Dir: dir})
	if insts[0].Err != nil {
		b.Fatal(insts[0].Err)
	}
	return cuecontext.New().BuildInstance(insts[0])
}

func benchCUEVet(b *testing.B, dir string) {
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v := load1(b, dir)
		if err := v.Validate(cue.Definitions(true), cue.Hidden(true), cue.Optional(true), cue.All()); err != nil {
			b.Fatal(err)
		}
	}
}

func benchGenerate(b *testing.B, dir string) {
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v := load1(b, dir)
		iter, _ := v.LookupPath(cue.ParsePath("services")).Fields()
		for iter.Next() {
			ops, _ := iter.Value().LookupPath(cue.ParsePath("operations")).Fields()
			for ops.Next() {
				for _, d := range []string{"#query", "#input", "#output"} {
					n := ops.Value().LookupPath(cue.MakePath(cue.Def(d)))
					if !n.Exists() {
						continue
					}
					if _, err := jsonschema.Generate(n, &jsonschema.GenerateConfig{Version: jsonschema.VersionDraft2020_12}); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
	}
}

// BenchmarkCompile measures what `stitch vet` does on the generated
// contract: check.Compile, the compiler and the checks that need the
// projector (compile.Compile alone no longer runs those).
func BenchmarkCompile(b *testing.B) {
	benchCompile(b, writeContract(b, benchOps))
}

func benchCompile(b *testing.B, dir string) {
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := check.Compile(ctx, dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCUEExport is the peer: what `cue export` does with the same
// package through the CUE Go API — load, build, and marshal the whole value.
func BenchmarkCUEExport(b *testing.B) {
	benchCUEExport(b, writeContract(b, benchOps))
}

func benchCUEExport(b *testing.B, dir string) {
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		insts := load.Instances([]string{"."}, &load.Config{Dir: dir})
		if insts[0].Err != nil {
			b.Fatal(insts[0].Err)
		}
		v := cuecontext.New().BuildInstance(insts[0])
		if _, err := v.MarshalJSON(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestBenchContractCompiles keeps the generated contract valid.
func TestBenchContractCompiles(t *testing.T) {
	dir := writeContract(t, 30)
	g, err := check.Compile(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(g.Operations()); n != 30 {
		t.Fatalf("%d operations, want 30", n)
	}
}
