package review

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/project"
)

func corpusPairNamed(t *testing.T, name string) *corpusPair {
	t.Helper()
	for _, p := range loadCorpus(t) {
		if p.name == name {
			return p
		}
	}
	t.Fatalf("no corpus pair %s", name)
	return nil
}

// TestFingerprintsIgnoreUnrelatedEdits: the pair unrelated-edit-with-breaking
// makes the change of request-required-property-added plus a new operation
// and a reformatted operation; the breaking finding keeps its fingerprint
// (and its rule, surface and location) although its source line moved.
func TestFingerprintsIgnoreUnrelatedEdits(t *testing.T) {
	alone := corpusPairNamed(t, "request-required-property-added")
	noisy := corpusPairNamed(t, "unrelated-edit-with-breaking")
	ra, err := Compare(alone.old, alone.new, nil)
	if err != nil {
		t.Fatal(err)
	}
	rn, err := Compare(noisy.old, noisy.new, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ra.Breaking() != 1 || rn.Breaking() != 1 {
		t.Fatalf("want one breaking finding each, got %d and %d", ra.Breaking(), rn.Breaking())
	}
	a, n := ra.Findings[0], rn.Findings[0]
	if a.Fingerprint != n.Fingerprint || a.Location != n.Location || a.Rule != n.Rule {
		t.Errorf("fingerprint changed with unrelated edits:\n  %+v\n  %+v", a, n)
	}
	if a.Pos == n.Pos {
		t.Errorf("test is vacuous: the reformatting did not move the source position (%s)", a.Pos)
	}
}

// TestReportByteStable renders every format twice from graphs compiled
// twice and requires identical bytes.
func TestReportByteStable(t *testing.T) {
	for _, name := range []string{"operation-removed", "response-enum-widened", "realtime-ack-removed"} {
		var prev map[string][]byte
		for range 2 {
			p := corpusPairNamed(t, name)
			rep, err := Compare(p.old, p.new, &Options{OldSource: "old", NewSource: "new"})
			if err != nil {
				t.Fatal(err)
			}
			cur := map[string][]byte{}
			for _, f := range Formats {
				var buf bytes.Buffer
				if err := rep.Write(&buf, f); err != nil {
					t.Fatal(err)
				}
				cur[f] = buf.Bytes()
			}
			for f, b := range prev {
				if !bytes.Equal(b, cur[f]) {
					t.Errorf("%s: %s output is not byte-stable", name, f)
				}
			}
			prev = cur
		}
	}
}

// TestJSONReportMatchesSchema validates the JSON report of every corpus
// pair (with a suppression, so optional fields appear) against the
// published report.schema.json.
func TestJSONReportMatchesSchema(t *testing.T) {
	c := jsonschema.NewCompiler()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(ReportSchema))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource("report.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("report.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range loadCorpus(t) {
		rep, err := Compare(p.old, p.new, &Options{OldSource: "a", NewSource: "b"})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Findings) > 0 {
			s, err := ParseSuppressions("s.yaml", []byte("suppressions:\n  - fingerprint: "+rep.Findings[0].Fingerprint+"\n    reason: ok\n"))
			if err != nil {
				t.Fatal(err)
			}
			if rep, err = Compare(p.old, p.new, &Options{Suppressions: s}); err != nil {
				t.Fatal(err)
			}
		}
		var buf bytes.Buffer
		if err := rep.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(inst); err != nil {
			t.Errorf("%s: report does not match report.schema.json: %v", p.name, err)
		}
		var back Report
		if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
			t.Fatal(err)
		}
		var again bytes.Buffer
		if err := back.WriteJSON(&again); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), again.Bytes()) {
			t.Errorf("%s: JSON report does not round-trip", p.name)
		}
	}
}

func TestSuppressions(t *testing.T) {
	// Three breaking edits of the billing contract: a response field
	// removed, an error status changed, a tool renamed.
	src, err := os.ReadFile(filepath.Join("testdata", "billing", "base.cue"))
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.NewReplacer("\tcaptured:        bool\n", "", "CARD_DECLINED: {status: 402", "CARD_DECLINED: {status: 422",
		`tool: name: "create_charge"`, `tool: name: "charge_create"`).Replace(string(src))
	old, err := compiled(src)
	if err != nil {
		t.Fatal(err)
	}
	neu, err := compiled([]byte(edited))
	if err != nil {
		t.Fatal(err)
	}
	p := &corpusPair{name: "three-breaking", old: old, new: neu}
	base, err := Compare(p.old, p.new, nil)
	if err != nil {
		t.Fatal(err)
	}
	if base.Breaking() != 3 {
		t.Fatalf("want 3 breaking findings, got %d", base.Breaking())
	}
	var fps []string
	for _, f := range base.Findings {
		fps = append(fps, f.Fingerprint)
	}
	yaml := "suppressions:\n" +
		"  - fingerprint: " + fps[0] + "\n    reason: agents migrated\n" +
		"  - fingerprint: " + fps[1][:12] + "\n    reason: prefix is enough\n    expires: 2099-01-01\n" +
		"  - fingerprint: " + fps[2] + "\n    reason: too late\n    expires: 2020-01-01\n" +
		"  - fingerprint: 0000000000000000\n    reason: stale\n"
	s, err := ParseSuppressions(SuppressionsFile, []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Compare(p.old, p.new, &Options{Suppressions: s, Now: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	// Warnings: the expired and the unused suppression, and the version
	// that was not bumped for the (accepted or not) breaking changes.
	if rep.Breaking() != 1 || rep.Summary.Suppressed != 2 || rep.Summary.Warning != 3 {
		t.Fatalf("summary %+v; want 1 breaking (its suppression expired), 2 suppressed, 3 warnings", rep.Summary)
	}
	var rules []string
	for _, f := range rep.Findings {
		if f.Surface == "suppressions" {
			rules = append(rules, f.Rule+"@"+f.Pos.String())
		}
	}
	slices.Sort(rules)
	want := "suppression-expired@stitch-review.yaml:7:5 suppression-unused@stitch-review.yaml:10:5"
	if strings.Join(rules, " ") != want {
		t.Errorf("suppression warnings %q; want %q", strings.Join(rules, " "), want)
	}
	for _, f := range rep.Findings {
		if f.Fingerprint == fps[0] && (!f.Suppressed || f.SuppressionReason != "agents migrated") {
			t.Errorf("finding %s not suppressed: %+v", fps[0], f)
		}
	}
}

func TestParseSuppressionsStrict(t *testing.T) {
	for _, c := range []struct{ name, yaml, want string }{
		{"unknown key", "suppressions:\n  - fingerprint: 0123456789abcdef\n    reason: x\n    expire: 2026-01-01\n", "line 4: field expire not found"},
		{"unknown top key", "supressions: []\n", "line 1: field supressions not found"},
		{"no reason", "suppressions:\n  - fingerprint: 0123456789abcdef\n", "f.yaml:2: reason is required"},
		{"bad fingerprint", "suppressions:\n  - fingerprint: xyz\n    reason: r\n", "f.yaml:2: fingerprint \"xyz\""},
		{"bad date", "suppressions:\n  - fingerprint: 0123456789abcdef\n    reason: r\n    expires: 31/12/2026\n", "f.yaml:2: expires \"31/12/2026\""},
		{"duplicate", "suppressions:\n  - {fingerprint: 0123456789abcdef, reason: r}\n  - {fingerprint: 0123456789abcdef, reason: r}\n", "f.yaml:3: fingerprint 0123456789abcdef is already suppressed at line 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseSuppressions("f.yaml", []byte(c.yaml))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v; want it to contain %q", err, c.want)
			}
		})
	}
	if s, err := ParseSuppressions("f.yaml", nil); err != nil || len(s.Suppressions) != 0 {
		t.Errorf("empty file: %v, %v", s, err)
	}
}

// TestFormats pins the shape of the human formats on one pair.
func TestFormats(t *testing.T) {
	p := corpusPairNamed(t, "request-required-property-added")
	g := *p.new
	g.Sources = map[string]graph.Pos{}
	for k, v := range p.new.Sources {
		v.File = "contracts/" + v.File
		g.Sources[k] = v
	}
	rep, err := Compare(p.old, &g, &Options{OldSource: "git:origin/main:contracts", NewSource: "contracts"})
	if err != nil {
		t.Fatal(err)
	}
	var gha, md, txt bytes.Buffer
	for f, b := range map[string]*bytes.Buffer{"githubactions": &gha, "markdown": &md, "text": &txt} {
		if err := rep.Write(b, f); err != nil {
			t.Fatal(err)
		}
	}
	fp := rep.Findings[0].Fingerprint
	// The annotation sits on the added field's own line (55), where GitHub
	// shows it, not on the line of #input.
	wantGHA := "::error file=contracts/contract.cue,line=55,col=6,title=request-required-property-added::HTTP POST /tasks: due: added as a required field; requests without it are now rejected (also affects AGENT tool create_task, MCP tool create_task (surface admin), MCP tool create_task (surface member)) [tasks.create#/input/properties/due; fingerprint " + fp + "]\n"
	if !strings.HasPrefix(gha.String(), wantGHA) {
		t.Errorf("githubactions:\n%s\nwant prefix:\n%s", gha.String(), wantGHA)
	}
	for _, want := range []string{MarkdownMarker, ":x: **1 breaking change", "| `request-required-property-added` | HTTP POST /tasks<br>also: AGENT tool create_task, MCP tool create_task (surface admin), MCP tool create_task (surface member) |", "fingerprint: " + fp, SuppressionsFile} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	if strings.Contains(txt.String(), "no breaking changes") || !strings.Contains(txt.String(), "1 breaking change") {
		t.Errorf("text verdict wrong:\n%s", txt.String())
	}
	wantTxt := "\nBREAKING request-required-property-added\n  HTTP POST /tasks\n" +
		"  also: AGENT tool create_task, MCP tool create_task (surface admin), MCP tool create_task (surface member)\n" +
		"  at tasks.create#/input/properties/due\n"
	if !strings.Contains(txt.String(), wantTxt) {
		t.Errorf("text lacks the also: line:\n%s\nwant:\n%s", txt.String(), wantTxt)
	}
	if err := rep.Write(&txt, "yaml"); err == nil {
		t.Error("unknown format accepted")
	}
}

// TestRulesDocumented checks that docs/review.md lists every rule with the
// severity Rules gives it.
func TestRulesDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "review.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Rules() {
		row := "| `" + r.ID + "` | " + r.Severity + " |"
		if !strings.Contains(string(doc), row) {
			t.Errorf("docs/review.md lacks the row %q", row)
		}
	}
}

// TestAlsoAffects: an operation-level finding names its primary surface
// and, in AlsoAffects, every other surface the operation is visible on, in
// a fixed order; findings about one route or tool row name only that one.
func TestAlsoAffects(t *testing.T) {
	p := corpusPairNamed(t, "request-maximum-lowered")
	rep, err := Compare(p.old, p.new, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 2 || rep.Findings[1].Rule != "version-major-bump-missing" {
		t.Fatalf("want one finding and the version warning, got %+v", rep.Findings)
	}
	f := rep.Findings[0]
	want := []string{"AGENT tool list_tasks", "CLI command list_tasks", "MCP tool list_tasks (surface admin)", "MCP tool list_tasks (surface member)"}
	if f.Surface != "HTTP GET /tasks" || !slices.Equal(f.AlsoAffects, want) {
		t.Errorf("surface %q also %q; want %q also %q", f.Surface, f.AlsoAffects, "HTTP GET /tasks", want)
	}

	// An operation-level finding on "operation ID" lists every surface,
	// the route first.
	p = corpusPairNamed(t, "description-only")
	if rep, err = Compare(p.old, p.new, nil); err != nil {
		t.Fatal(err)
	}
	want = append([]string{"HTTP GET /tasks"}, want...)
	i := slices.IndexFunc(rep.Findings, func(f Finding) bool { return f.Rule == "operation-description-changed" })
	if i < 0 {
		t.Fatalf("description-only: no operation-description-changed finding in %+v", rep.Findings)
	}
	if f := rep.Findings[i]; f.Surface != "operation tasks.list" || !slices.Equal(f.AlsoAffects, want) {
		t.Errorf("%s on %q also %q; want also %q", f.Rule, f.Surface, f.AlsoAffects, want)
	}

	// A membership change is one finding per edit: the rows one edit
	// removed or renamed are listed together, a route or one surface's
	// selection concerns that surface alone.
	rows := map[string][]string{
		"operation-removed":                {"AGENT tool get_task", "MCP tool get_task (surface admin)", "MCP tool get_task (surface member)"},
		"tool-renamed-explicit":            {"AGENT tool finish_task", "MCP tool finish_task (surface admin)", "MCP tool finish_task (surface member)"},
		"http-method-changed":              nil,
		"named-surface-membership-removed": {"MCP tool create_task (surface member)"},
	}
	for name, want := range rows {
		p := corpusPairNamed(t, name)
		rep, err := Compare(p.old, p.new, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range rep.Findings {
			switch {
			case strings.HasPrefix(f.Rule, "http-") && len(f.AlsoAffects) > 0:
				t.Errorf("%s: %s on %s lists also %q", name, f.Rule, f.Surface, f.AlsoAffects)
			case strings.HasPrefix(f.Rule, "tool-"):
				if got := append([]string{f.Surface}, f.AlsoAffects...); !slices.Equal(got, want) {
					t.Errorf("%s: %s on %q; want %q", name, f.Rule, got, want)
				}
			}
		}
	}

	// A subject visible nowhere in the new projection is named from the
	// old one (a removal).
	p = corpusPairNamed(t, "request-maximum-lowered")
	c := &comparer{old: p.old, new: p.new, oldRoutes: routesByOp(p.old), newRoutes: map[string]project.Route{}, newTools: &project.Tools{}}
	if c.oldTools, err = project.ToolSurfaces(p.old); err != nil {
		t.Fatal(err)
	}
	if got := c.visibleOn("tasks.list"); !slices.Equal(got, want) {
		t.Errorf("visibleOn from the old projection: %q; want %q", got, want)
	}
	if got := c.visibleOn("tasks.nope"); got != nil {
		t.Errorf("visibleOn of an unknown operation: %q", got)
	}
}

// TestGitHubActionsGraphJSONNewSide: with a NEW side read from graph.json
// (no positions), a non-removal finding is a plain annotation without
// file/line — never the OLD file's line — while a removal keeps its OLD
// position.
func TestGitHubActionsGraphJSONNewSide(t *testing.T) {
	for _, tc := range []struct {
		pair    string
		wantPos bool
	}{
		{"request-required-property-added", false},
		{"response-required-property-removed", false},
		{"operation-removed", true},
	} {
		t.Run(tc.pair, func(t *testing.T) {
			p := corpusPairNamed(t, tc.pair)
			g := *p.new
			g.Sources = nil
			rep, err := Compare(p.old, &g, nil)
			if err != nil {
				t.Fatal(err)
			}
			var gha bytes.Buffer
			if err := rep.WriteGitHubActions(&gha); err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(gha.String(), "\n")
			if !strings.HasPrefix(first, "::error ") {
				t.Fatalf("first line %q", first)
			}
			if got := strings.Contains(first, "file="); got != tc.wantPos {
				t.Errorf("file= present %v, want %v: %s", got, tc.wantPos, first)
			}
			if !tc.wantPos && !strings.HasPrefix(first, "::error title=") {
				t.Errorf("want a plain ::error title=… annotation: %s", first)
			}
		})
	}
}
