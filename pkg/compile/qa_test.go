package compile

import (
	"context"
	"slices"
	"strings"
	"testing"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// TestHeadDefaultExpose: a HEAD operation without expose is HTTP-only (not
// refused as a tool).
func TestHeadDefaultExpose(t *testing.T) {
	g, err := compileFiles(context.Background(), map[string][]byte{"c.cue": []byte(header +
		"\tservices: s: operations: exists: {method: \"HEAD\", path: \"/{id}\", desc: \"d\"}\n}\n")})
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Services[0].Operations[0].Expose; !slices.Equal(got, []graph.Transport{graph.HTTP}) {
		t.Errorf("HEAD expose = %v, want [HTTP]", got)
	}
}

// TestSemVer: the official SemVer 2.0 grammar.
func TestSemVer(t *testing.T) {
	for v, ok := range map[string]bool{
		"1.0.0": true, "1.0.0+build.1": true, "1.2.3-rc.1+exp.sha.5114f85": true, "0.0.0-alpha-1": true,
		"01.0.0": false, "1.0.0-rc..1": false, "1.0.0-01": false, "1.0": false, "1.0.0+": false,
	} {
		src := "package c\n\nimport \"stitchkit.dev/stitchkit/schema\"\n\nschema.#Contract & {name: \"c\", version: \"" + v + "\"}\n"
		ds := compileSrc(t, src)
		if got := len(ds) == 0; got != ok {
			t.Errorf("version %q: accepted=%v, want %v (%v)", v, got, ok, ds)
		}
	}
}

// TestPartialValuesNoPanic: broken nodes of every kind are skipped by the
// graph checks without a panic, and their siblings are still checked.
func TestPartialValuesNoPanic(t *testing.T) {
	src := header + `
	errors: BAD: {status: 600, message: "m"}
	services: s: {prefix: "x", operations: a: {method: "GET", path: "/", desc: "d", errors: ["BAD"]}}
	services: t: operations: {
		a: {method: "GET", path: "/", desc: "d", #query: {q: int & string}}
		b: {method: "GET", path: "/b", desc: "d", errors: ["NOPE"]}
	}
	runtimeTools: rt: {desc: "", identity: {service: "x", action: "y", method: "GET"}, #input: {}}
	surfaces: agent: include: ["s.a", "t.a", "runtime.rt", "t.zz"]
	policy: mcp: schemaValidation: "loud"
	realtime: r: serverToClient: e: {#args: 1}
}
`
	ds := compileSrc(t, src)
	var rules []string
	for _, d := range ds {
		rules = append(rules, d.Rule+": "+d.Message)
	}
	joined := strings.Join(rules, "\n")
	if !strings.Contains(joined, `error "NOPE" is neither declared`) {
		t.Errorf("graph check of an intact operation missing:\n%s", joined)
	}
	if strings.Contains(joined, `"BAD" is neither declared`) {
		t.Errorf("graph checks reported on broken nodes:\n%s", joined)
	}
}
