package check

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"stitchkit.dev/stitchkit/pkg/compile"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/project"
)

const header = "package c\n\nimport \"stitchkit.dev/stitchkit/schema\"\n\nschema.#Contract & {\n\tname: \"c\"\n\tversion: \"1.0.0\"\n"

func files(src string) map[string][]byte { return map[string][]byte{"c.cue": []byte(src)} }

func report(t *testing.T, fs map[string][]byte) *Report {
	t.Helper()
	rep, err := Files(context.Background(), fs)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestAllDiagnosticsReported: CUE's, the compiler's and the projector's
// diagnostics come in one sorted list, and the graph is withheld.
func TestAllDiagnosticsReported(t *testing.T) {
	rep := report(t, files(header+`
	services: s: operations: {
		a: {method: "GET", path: "/{id}", desc: "d", #params: {x: string}, errors: ["NOPE"]}
		b: {method: "GET", path: "/{other}", desc: "d"}
		c: {method: "FETCH", path: "/c", desc: "d"}
	}
}
`))
	var rules []string
	for _, d := range rep.Errors {
		rules = append(rules, d.Rule)
	}
	for _, w := range []string{"cue", "params-cover-path", "undeclared-error", "duplicate-route"} {
		if !slices.Contains(rules, w) {
			t.Errorf("missing %s in %v", w, rep.Errors)
		}
	}
	if !slices.IsSortedFunc(rep.Errors, func(a, b compile.Diagnostic) int {
		if posLess(a.Pos, b.Pos) {
			return -1
		}
		if posLess(b.Pos, a.Pos) {
			return 1
		}
		return 0
	}) {
		t.Errorf("diagnostics not sorted: %v", rep.Errors)
	}
	if rep.Graph != nil {
		t.Error("a report with errors carries a graph")
	}
	var cerr *compile.Error
	if err := rep.Err(); !errors.As(err, &cerr) || len(cerr.Diagnostics) != len(rep.Errors) {
		t.Errorf("Err() = %v", err)
	}
	// compile.Analyze alone reports the contract's own mistakes, not the
	// projector's.
	r, err := compile.AnalyzeFiles(context.Background(), files(header+`
	services: s: operations: {
		a: {method: "GET", path: "/{id}", desc: "d"}
		b: {method: "GET", path: "/{other}", desc: "d"}
	}
}
`))
	if err == nil {
		err = r.Err()
	}
	if err != nil {
		t.Errorf("compile.AnalyzeFiles reported a projector-level mistake: %v", err)
	}
}

// TestRelatedPlaces: a two-party rule names the other place, with its
// CUE path, across files.
func TestRelatedPlaces(t *testing.T) {
	rep := report(t, map[string][]byte{
		"a.cue": []byte(header + "\tservices: s: operations: a: {method: \"GET\", path: \"/{id}\", desc: \"d\"}\n}\n"),
		"b.cue": []byte("package c\n\nservices: s: operations: b: {method: \"GET\", path: \"/{other}\", desc: \"d\"}\n"),
	})
	if len(rep.Errors) != 1 {
		t.Fatalf("want one diagnostic, got %v", rep.Errors)
	}
	d := rep.Errors[0]
	if d.Rule != "duplicate-route" || d.Path != "services.s.operations.b.path" || d.Pos.File != "b.cue" {
		t.Errorf("diagnostic %+v", d)
	}
	if len(d.Related) != 1 || d.Related[0].Pos.File != "a.cue" || d.Related[0].Pos.Line != 8 || d.Related[0].Path != "services.s.operations.a.path" {
		t.Fatalf("related %+v", d.Related)
	}
	want := "b.cue:3:45: duplicate-route: s.b: route GET /s/{other} is also served by s.a (GET /s/{id}); change the path or the method\n" +
		"\ta.cue:8:46: duplicate-route: s.a serves GET /s/{id}"
	if got := d.String(); got != want {
		t.Errorf("String() =\n%s\nwant\n%s", got, want)
	}
}

// TestBrokenNodesSkipped: a selection pattern naming a node CUE found
// broken is not reported; one naming nothing still is.
func TestBrokenNodesSkipped(t *testing.T) {
	rep := report(t, files(header+`
	services: t: operations: {
		a: {method: "GET", path: "/", desc: "d", #query: {q: int & string}}
		b: {method: "GET", path: "/b", desc: "d"}
	}
	surfaces: agent: include: ["t.a", "t.b", "t.zz"]
}
`))
	var msgs []string
	for _, d := range rep.Errors {
		msgs = append(msgs, d.String())
	}
	joined := strings.Join(msgs, "\n")
	if strings.Contains(joined, `"t.a"`) {
		t.Errorf("a pattern naming a broken operation was reported:\n%s", joined)
	}
	if !strings.Contains(joined, `selection-unknown: surfaces.agent.include: "t.zz" names no operation`) {
		t.Errorf("a pattern naming nothing was not reported:\n%s", joined)
	}
	// Broken surfaces or policy: no surface check at all.
	rep = report(t, files(header+`
	services: t: operations: b: {method: "GET", path: "/b", desc: "d"}
	surfaces: agent: include: ["t.zz"]
	policy: mcp: schemaValidation: "loud"
}
`))
	for _, d := range rep.Errors {
		if d.Rule != "cue" {
			t.Errorf("surface check ran on broken surfaces: %v", d)
		}
	}
}

// TestEmptyInclude: include: [] selects nothing, survives graph.json, and
// the projector lists no tool for it.
func TestEmptyInclude(t *testing.T) {
	g, err := CompileFiles(context.Background(), files(header+
		"\tservices: s: operations: list: {method: \"GET\", path: \"/\", desc: \"d\"}\n\tsurfaces: agent: include: []\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if g.Surfaces.Agent == nil || g.Surfaces.Agent.Include == nil || len(g.Surfaces.Agent.Include) != 0 {
		t.Fatalf("agent selection %+v, want an explicit empty include", g.Surfaces.Agent)
	}
	b, err := g.Encode()
	if err != nil {
		t.Fatal(err)
	}
	g2, err := graph.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	if g2.Surfaces.Agent == nil || g2.Surfaces.Agent.Include == nil {
		t.Fatalf("include: [] lost in graph.json: %s", b)
	}
	ts, err := project.ToolSurfaces(g2)
	if err != nil {
		t.Fatal(err)
	}
	if s := ts.Surface(graph.AGENT, ""); s == nil || len(s.Tools) != 0 {
		t.Errorf("agent surface %+v, want no tools", s)
	}
}

// TestWarnings: MCP preparation findings are warnings positioned at the
// tool, and only for a contract without errors.
func TestWarnings(t *testing.T) {
	src := header + "\tservices: s: operations: make: {method: \"POST\", path: \"/\", desc: \"d\", #input: {x: _, y: string}}\n" +
		"\tpolicy: mcp: requireTypedProperties: true\n}\n"
	rep := report(t, files(src))
	if len(rep.Errors) != 0 || rep.Graph == nil {
		t.Fatalf("errors %v", rep.Errors)
	}
	if len(rep.Warnings) != 1 || rep.Warnings[0].Rule != "mcp-policy" || rep.Warnings[0].Pos.String() != "c.cue:8:27" ||
		rep.Warnings[0].Path != "services.s.operations.make" || !strings.Contains(rep.Warnings[0].Message, "untyped property make_s.x") {
		t.Errorf("warnings %v", rep.Warnings)
	}
	if got := Warnings(rep.Graph); !slices.EqualFunc(got, rep.Warnings, func(a, b compile.Diagnostic) bool { return a.String() == b.String() }) {
		t.Errorf("Warnings(g) = %v, report has %v", got, rep.Warnings)
	}
}

// TestDuplicateClass: three operations on one route shape are two
// duplicate-route diagnostics, each against the first in graph order;
// a conflict of the class is reported once, for its first route.
func TestDuplicateClass(t *testing.T) {
	rep := report(t, files(header+`
	services: s: operations: {
		c: {method: "GET", path: "/{c}/w", desc: "d"}
		a: {method: "GET", path: "/{a}/w", desc: "d"}
		b: {method: "GET", path: "/{b}/w", desc: "d"}
		x: {method: "GET", path: "/x/{y}", desc: "d"}
	}
}
`))
	var got []string
	for _, d := range rep.Errors {
		got = append(got, d.Rule+" "+d.Path+" -> "+d.Related[0].Path)
	}
	want := []string{
		"duplicate-route services.s.operations.c.path -> services.s.operations.a.path",
		"duplicate-route services.s.operations.b.path -> services.s.operations.a.path",
		"route-conflict services.s.operations.x.path -> services.s.operations.a.path",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestSchemaWarningsReported: the translator's warnings (a reference to
// an optional field) reach the report stitch vet prints, positioned, and
// do not fail the contract.
func TestSchemaWarningsReported(t *testing.T) {
	src := "package c\n\nimport \"stitchkit.dev/stitchkit/schema\"\n\n#Book: {year?: int & >=1450}\n\nschema.#Contract & {\n\tname: \"c\"\n\tversion: \"1.0.0\"\n" +
		"\tservices: books: operations: create: {method: \"POST\", path: \"/\", desc: \"d\", #input: {year?: #Book.year}}\n}\n"
	rep := report(t, files(src))
	if len(rep.Errors) > 0 || rep.Graph == nil {
		t.Fatalf("a warning failed the contract: %v", rep.Errors)
	}
	for _, w := range rep.Warnings {
		if w.Rule == "optional-field-reference" && w.Pos.File == "c.cue" && w.Pos.Line == 10 && strings.Contains(w.Message, "#Year: int & >=1450") {
			return
		}
	}
	t.Errorf("no positioned optional-field-reference warning in %v", rep.Warnings)
}
