package cueschema

import (
	"fmt"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
)

// benchSource is the shape of bench/'s 500-operation contract without
// the contract language: three schema nodes per operation, each distinct.
func benchSource(ops int) string {
	var b strings.Builder
	b.WriteString("import \"strings\"\n\n#Item: {\n\tid: string & =~\"^i_[a-z0-9]+$\"\n\tname: string & strings.MinRunes(1) & strings.MaxRunes(100)\n\tcount: int & >=0\n\ttags?: [...string]\n}\n")
	for n := 0; n < ops; n++ {
		fmt.Fprintf(&b, "op%d: {\n", n)
		fmt.Fprintf(&b, "\t#query: {limit?: int & >=1 & <=%d, cursor?: string}\n", 10+n)
		fmt.Fprintf(&b, "\t#input: {name: string & strings.MinRunes(1), count%d: int & >=0, tags?: [...string]}\n", n)
		fmt.Fprintf(&b, "\t#output: {items: [...#Item], next?: string, total%d?: int}\n}\n", n)
	}
	return b.String()
}

// BenchmarkTranslate translates the 1,500 schema nodes of a 500-operation
// contract with one Translator (as one compilation does).
func BenchmarkTranslate(b *testing.B) {
	v := cuecontext.New().CompileString(benchSource(500))
	if err := v.Err(); err != nil {
		b.Fatal(err)
	}
	var nodes []cue.Value
	for n := 0; n < 500; n++ {
		for _, d := range []string{"#query", "#input", "#output"} {
			nodes = append(nodes, v.LookupPath(cue.MakePath(cue.Str(fmt.Sprintf("op%d", n)), cue.Def(d))))
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := New(&Options{NoStructValidators: true})
		for _, n := range nodes {
			if _, err := t.Schema(n); err != nil {
				b.Fatal(err)
			}
		}
	}
}
