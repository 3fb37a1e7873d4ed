package review

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/tools/txtar"

	"stitchkit.dev/stitchkit/pkg/check"
	"stitchkit.dev/stitchkit/pkg/conformance/conformancetest"
	"stitchkit.dev/stitchkit/pkg/graph"
)

// The payments corpus (testdata/payments) holds single-change pairs on one
// contract in a domain of its own: base.cue is the old contract, and each
// case archive is one edit of it. Per case, a reviewer's expectation is
// written by hand — the verdict, every rule and every surface the change
// reaches — and the text report is a golden file a reviewer can read
// without opening any JSON.
//
// A case archive holds:
//
//	first line of the comment: what changed; the rest: why the verdict
//	-- both -- / -- both-with --   optional: an edit applied to both sides
//	-- replace -- / -- with --     the edit (repeated for one logical change
//	                               that touches two places, e.g. a moved field);
//	                               each section's final newline is not part of it
//	-- want --                     verdict: breaking|warning|compatible
//	                               rule: ID            (one per rule)
//	                               surface: LABEL      (one per surface)
//	                               needs: defaults     (the translator must carry defaults)
//	                               versions: checked   (version rules count; else ignored)
//	-- report --                   the text report (refreshed with -conformancetest.update)

type paymentsCase struct {
	name, path string
	archive    *txtar.Archive
	old, new   []byte
	want       paymentsWant
}

type paymentsWant struct {
	verdict          string
	rules, surfaces  []string
	needsDefaults    bool
	versionsCounting bool
}

// singleChangeCorpora are the corpora of single-change pairs, each one
// contract (base.cue) in a domain of its own, written by different hands:
// payments, and billing (charges, refunds, customers, webhooks).
var singleChangeCorpora = []string{"payments", "billing"}

// loadPayments loads the cases of the single-change corpus dir
// (testdata/DIR).
func loadPayments(t *testing.T, dir string) []*paymentsCase {
	t.Helper()
	base, err := os.ReadFile(filepath.Join("testdata", dir, "base.cue"))
	if err != nil {
		t.Fatal(err)
	}
	paths, err := filepath.Glob(filepath.Join("testdata", dir, "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 80 {
		t.Fatalf("%s corpus has %d cases; want at least 80", dir, len(paths))
	}
	var out []*paymentsCase
	for _, p := range paths {
		a, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		c := &paymentsCase{name: strings.TrimSuffix(filepath.Base(p), ".txtar"), path: p, archive: a}
		old := string(base)
		apply := func(src, from, to, what string) string {
			if n := strings.Count(src, from); n != 1 {
				t.Fatalf("%s: %s text occurs %d times in the contract; want exactly once:\n%s", p, what, n, from)
			}
			return strings.Replace(src, from, to, 1)
		}
		var edits [][2]string
		for i := 0; i < len(a.Files); i++ {
			f := a.Files[i]
			switch f.Name {
			case "both", "replace":
				if i+1 >= len(a.Files) || a.Files[i+1].Name != map[string]string{"both": "both-with", "replace": "with"}[f.Name] {
					t.Fatalf("%s: -- %s -- must be followed by its replacement", p, f.Name)
				}
				// A section ends with a newline; the edit is its text
				// without it, so part of a line can be replaced.
				from := strings.TrimSuffix(string(f.Data), "\n")
				to := strings.TrimSuffix(string(a.Files[i+1].Data), "\n")
				if f.Name == "both" {
					old = apply(old, from, to, "both")
				} else {
					edits = append(edits, [2]string{from, to})
				}
				i++
			case "want":
				c.want = parsePaymentsWant(t, p, f.Data)
			case "report":
			default:
				t.Fatalf("%s: unknown section %q", p, f.Name)
			}
		}
		if len(edits) == 0 && !strings.Contains(c.name, "no-change") {
			t.Fatalf("%s: no edit", p)
		}
		neu := old
		for _, e := range edits {
			neu = apply(neu, e[0], e[1], "replace")
		}
		c.old, c.new = []byte(old), []byte(neu)
		out = append(out, c)
	}
	return out
}

func parsePaymentsWant(t *testing.T, path string, data []byte) paymentsWant {
	var w paymentsWant
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		key, val, ok := strings.Cut(line, ": ")
		if !ok {
			t.Fatalf("%s: want line %q is not key: value", path, line)
		}
		switch key {
		case "verdict":
			w.verdict = val
		case "rule":
			w.rules = append(w.rules, val)
		case "surface":
			w.surfaces = append(w.surfaces, val)
		case "needs":
			w.needsDefaults = val == "defaults"
		case "versions":
			w.versionsCounting = val == "checked"
		default:
			t.Fatalf("%s: unknown want key %q", path, key)
		}
	}
	if !slices.Contains([]string{"breaking", "warning", "compatible"}, w.verdict) {
		t.Fatalf("%s: verdict %q", path, w.verdict)
	}
	slices.Sort(w.rules)
	slices.Sort(w.surfaces)
	return w
}

// compiled compiles a payments contract once per distinct source (most
// cases share the base as their old side); Compare never modifies a graph.
func compiled(src []byte) (*graph.Graph, error) {
	compiledMu.Lock()
	defer compiledMu.Unlock()
	if g, ok := compiledCache[string(src)]; ok {
		return g, nil
	}
	g, err := check.CompileFiles(context.Background(), map[string][]byte{corpusFile(src): src})
	if err != nil {
		return nil, err
	}
	compiledCache[string(src)] = g
	return g, nil
}

// corpusFile names a corpus contract's file after its package, so
// positions read payments.cue:12 or billing.cue:12.
func corpusFile(src []byte) string {
	for _, line := range strings.Split(string(src), "\n") {
		if name, ok := strings.CutPrefix(line, "package "); ok {
			return strings.TrimSpace(name) + ".cue"
		}
	}
	return "contract.cue"
}

var (
	compiledMu    sync.Mutex
	compiledCache = map[string]*graph.Graph{}
)

func hasDefaults(g *graph.Graph) bool {
	for _, s := range g.Schemas {
		if bytes.Contains(s, []byte(`"default":`)) {
			return true
		}
	}
	return false
}

// TestPaymentsCorpus checks every payments case against the hand-written
// verdict, rules and surfaces, and its text report against the golden one
// (go test ./pkg/review -run TestPaymentsCorpus -conformancetest.update rewrites only the
// reports).
func TestPaymentsCorpus(t *testing.T) {
	for _, dir := range singleChangeCorpora {
		t.Run(dir, func(t *testing.T) { testSingleChangeCorpus(t, dir) })
	}
}

func testSingleChangeCorpus(t *testing.T, dir string) {
	for _, c := range loadPayments(t, dir) {
		t.Run(c.name, func(t *testing.T) {
			old, err := compiled(c.old)
			if err != nil {
				t.Fatalf("old side does not compile: %v", err)
			}
			neu, err := compiled(c.new)
			if err != nil {
				t.Fatalf("new side does not compile: %v", err)
			}
			if c.want.needsDefaults && !hasDefaults(old) && !hasDefaults(neu) {
				// Defaults reach the graph (issue 7): a case about them
				// whose graphs carry none would compare nothing.
				t.Fatal("the case is about defaults, but neither side's graph carries one: defaults no longer reach the graph")
			}
			rep, err := Compare(old, neu, &Options{OldSource: "old", NewSource: "new"})
			if err != nil {
				t.Fatal(err)
			}
			verdict := "compatible"
			var rules, surfaces []string
			for _, f := range rep.Findings {
				if !c.want.versionsCounting && (strings.HasPrefix(f.Rule, "version-") || f.Rule == "contract-version-changed") {
					continue
				}
				switch {
				case f.Severity == Breaking:
					verdict = "breaking"
				case f.Severity == Warning && verdict == "compatible":
					verdict = "warning"
				}
				rules = append(rules, f.Rule)
				surfaces = append(surfaces, f.Surface)
				surfaces = append(surfaces, f.AlsoAffects...)
			}
			// One edit, one finding per schema rule: the views of one
			// operation and the subjects of one definition are grouped.
			count := map[string]int{}
			for _, r := range rules {
				if strings.HasPrefix(r, "request-") || strings.HasPrefix(r, "response-") {
					if count[r]++; count[r] == 2 {
						t.Errorf("%s is reported more than once: one edit should be one finding", r)
					}
				}
			}
			slices.Sort(rules)
			rules = slices.Compact(rules)
			slices.Sort(surfaces)
			surfaces = slices.Compact(surfaces)
			if verdict != c.want.verdict {
				t.Errorf("verdict %s; want %s", verdict, c.want.verdict)
			}
			if !slices.Equal(rules, c.want.rules) {
				t.Errorf("rules\n  %s\nwant\n  %s", strings.Join(rules, "\n  "), strings.Join(c.want.rules, "\n  "))
			}
			if !slices.Equal(surfaces, c.want.surfaces) {
				t.Errorf("surfaces\n  %s\nwant\n  %s", strings.Join(surfaces, "\n  "), strings.Join(c.want.surfaces, "\n  "))
			}
			var txt bytes.Buffer
			if err := rep.WriteText(&txt); err != nil {
				t.Fatal(err)
			}
			idx := slices.IndexFunc(c.archive.Files, func(f txtar.File) bool { return f.Name == "report" })
			if conformancetest.Update() {
				if idx < 0 {
					c.archive.Files = append(c.archive.Files, txtar.File{Name: "report"})
					idx = len(c.archive.Files) - 1
				}
				c.archive.Files[idx].Data = txt.Bytes()
				if err := os.WriteFile(c.path, txtar.Format(c.archive), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if idx < 0 {
				t.Fatalf("%s has no -- report -- section (run with -conformancetest.update)", c.path)
			}
			if got, want := txt.String(), string(c.archive.Files[idx].Data); got != want {
				t.Errorf("report differs from %s (run with -conformancetest.update to accept):\n%s", c.path, lineDiff(want, got))
			}
		})
	}
}

// lineDiff shows the lines of got that differ from want.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := range max(len(w), len(g)) {
		var a, c string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			c = g[i]
		}
		if a != c {
			fmt.Fprintf(&b, "-%s\n+%s\n", a, c)
		}
	}
	return b.String()
}
