package review

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/tools/txtar"

	"stitchkit.dev/stitchkit/pkg/check"
	"stitchkit.dev/stitchkit/pkg/conformance/conformancetest"
	"stitchkit.dev/stitchkit/pkg/graph"
)

// corpusPair is one old/new contract pair of testdata/corpus.
type corpusPair struct {
	name     string
	path     string
	archive  *txtar.Archive
	old, new *graph.Graph
}

// loadCorpus compiles every pair of testdata/corpus.
func loadCorpus(t *testing.T) []*corpusPair {
	t.Helper()
	corpusMu.Lock()
	defer corpusMu.Unlock()
	if corpusCache == nil {
		corpusCache = compileCorpus(t)
	}
	return corpusCache
}

// The corpus is compiled once per test binary; Compare never modifies
// its graphs.
var (
	corpusMu    sync.Mutex
	corpusCache []*corpusPair
)

func compileCorpus(t *testing.T) []*corpusPair {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "corpus", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 40 {
		t.Fatalf("corpus has %d pairs; want at least 40", len(paths))
	}
	var pairs []*corpusPair
	for _, p := range paths {
		a, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		side := func(prefix string) *graph.Graph {
			files := map[string][]byte{}
			for _, f := range a.Files {
				if name, ok := strings.CutPrefix(f.Name, prefix+"/"); ok {
					files[name] = f.Data
				}
			}
			if len(files) == 0 {
				t.Fatalf("%s: no %s/ files", p, prefix)
			}
			g, err := check.CompileFiles(context.Background(), files)
			if err != nil {
				t.Fatalf("%s: %s contract does not compile: %v", p, prefix, err)
			}
			return g
		}
		pairs = append(pairs, &corpusPair{
			name: strings.TrimSuffix(filepath.Base(p), ".txtar"), path: p, archive: a,
			old: side("old"), new: side("new"),
		})
	}
	return pairs
}

func findingsJSON(t *testing.T, fs []Finding) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(fs); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestCorpus compares every pair of testdata/corpus with its golden
// findings. Refresh the goldens with `go test ./pkg/review -run TestCorpus
// -conformancetest.update` and review the diff.
func TestCorpus(t *testing.T) {
	for _, p := range loadCorpus(t) {
		t.Run(p.name, func(t *testing.T) {
			rep, err := Compare(p.old, p.new, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := findingsJSON(t, rep.Findings)
			var want []byte
			idx := -1
			for i, f := range p.archive.Files {
				if f.Name == "want/findings.json" {
					want, idx = f.Data, i
				}
			}
			if idx < 0 {
				t.Fatalf("%s: no want/findings.json", p.path)
			}
			if conformancetest.Update() {
				p.archive.Files[idx].Data = got
				if err := os.WriteFile(p.path, txtar.Format(p.archive), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if !bytes.Equal(got, want) {
				t.Errorf("findings differ from %s (run with -conformancetest.update to accept):\ngot:\n%s\nwant:\n%s", p.path, got, want)
			}
			// Every emitted rule is documented with its severity.
			for _, f := range rep.Findings {
				r, ok := ruleByID(f.Rule)
				if !ok {
					t.Errorf("rule %s is not listed in Rules", f.Rule)
				} else if !strings.Contains(r.Severity, string(f.Severity)) {
					t.Errorf("rule %s reported as %s; Rules documents %s", f.Rule, f.Severity, r.Severity)
				}
			}
		})
	}
}

// TestCorpusVerdicts pins the exit decision a careful reviewer expects for
// each pair: compatible pairs must not report a breaking change, and the
// others must.
func TestCorpusVerdicts(t *testing.T) {
	compatible := map[string]bool{
		"no-change": true, "reformat-only": true, "unrelated-operation-added": true,
		"version-bump-only": true, "description-only": true, "path-parameter-renamed-http-only": true,
		"request-optional-property-added": true, "request-property-removed-open": true,
		"request-type-widened": true, "request-enum-widened": true, "response-enum-narrowed": true,
		"request-max-length-loosened": true, "request-maximum-raised": true,
		"request-exclusive-bound-equivalent": true, "response-additional-properties-opened": true,
		"response-optional-property-removed": true,
		"request-union-branch-added":         true, "error-removed-from-operation": true,
		"error-added-to-operation": true, "scope-changed-public": true, "named-surface-added": true,
		"realtime-event-added": true, "realtime-client-args-widened": true,
		"agent-policy-flatten-off":     true,
		"operation-renamed-same-route": true, "operation-renamed-tool-only": true,
	}
	for _, p := range loadCorpus(t) {
		rep, err := Compare(p.old, p.new, nil)
		if err != nil {
			t.Fatal(err)
		}
		if compatible[p.name] && rep.Breaking() > 0 {
			t.Errorf("%s: %d breaking findings; want none", p.name, rep.Breaking())
		}
		if !compatible[p.name] && rep.Breaking() == 0 && p.name != "no-change" {
			t.Errorf("%s: no breaking finding; want at least one", p.name)
		}
		if p.name == "no-change" || p.name == "reformat-only" {
			if len(rep.Findings) != 0 {
				t.Errorf("%s: %d findings; want none", p.name, len(rep.Findings))
			}
		}
	}
}
