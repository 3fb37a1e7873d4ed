package review

import (
	"fmt"
	"slices"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/oasdiff/oasdiff/checker"
	"github.com/oasdiff/oasdiff/diff"
	"github.com/oasdiff/oasdiff/load"

	"stitchkit.dev/stitchkit/pkg/export/openapi"
	"stitchkit.dev/stitchkit/pkg/graph"
)

// oasdiffErrors exports both graphs to OpenAPI and returns every ERR-level
// change oasdiff's breaking-change checker reports.
func oasdiffErrors(t *testing.T, old, new *graph.Graph) []checker.Change {
	t.Helper()
	spec := func(g *graph.Graph) *load.SpecInfo {
		doc, err := openapi.Generate(projecttest.New(t, g, nil), nil)
		if err != nil {
			t.Fatalf("openapi.Generate: %v", err)
		}
		loader := openapi3.NewLoader()
		s, err := loader.LoadFromData(doc)
		if err != nil {
			t.Fatalf("kin-openapi load: %v", err)
		}
		return &load.SpecInfo{Spec: s, Version: g.Version}
	}
	d, sources, err := diff.GetWithOperationsSourcesMap(diff.NewConfig(), spec(old), spec(new))
	if err != nil {
		t.Fatalf("oasdiff: %v", err)
	}
	var out []checker.Change
	for _, c := range checker.CheckBackwardCompatibility(checker.NewConfig(checker.GetAllChecks()), d, sources) {
		if c.GetLevel() == checker.ERR {
			out = append(out, c)
		}
	}
	return out
}

// opIDFor maps an OpenAPI operationId ("service_action") back to the
// operation identity it was exported from.
func opIDFor(gs []*graph.Graph, operationID string) string {
	for _, g := range gs {
		for _, op := range g.Operations() {
			if op.Service+"_"+op.Action == operationID {
				return op.ID()
			}
		}
	}
	return ""
}

// TestOracleOasdiff holds the HTTP projection to oasdiff: every ERR-level
// change oasdiff finds between the OpenAPI exports of a corpus pair must be
// matched by at least one breaking finding of ours on the same operation.
// It also logs what we report that oasdiff cannot see.
//
// oasdiffWaivers lists the ERR changes we deliberately do not report as
// breaking, each with the reason; a waiver that no longer matches fails the
// test, so the list cannot rot.
var oasdiffWaivers = map[string]string{
	"request-exclusive-bound-equivalent request-parameter-exclusive-max-set":    "limit is an integer: <101 admits exactly the values <=100 did; oasdiff compares bounds without the type",
	"request-exclusive-bound-equivalent request-parameter-exclusive-min-set":    "limit is an integer: >0 admits exactly the values >=1 did",
	"payments/query-bound-equivalent request-parameter-exclusive-max-set":       "limit is an integer: <101 admits exactly the values <=100 did",
	"payments/query-bound-equivalent request-parameter-exclusive-min-set":       "limit is an integer: >0 admits exactly the values >=1 did",
	"payments/card-country-pattern-to-enum response-property-pattern-removed":   "the pattern gave way to an enum whose every value matches it: the response narrowed; oasdiff compares the pattern keyword alone",
	"billing/amount-exclusive-equivalent request-property-min-set":              "#Amount is an integer: >=1 admits exactly the values >0 did",
	"billing/amount-exclusive-equivalent response-property-exclusive-min-unset": "#Amount is an integer: >=1 admits exactly the values >0 did",
	"billing/last4-pattern-to-matching-enum response-property-pattern-removed":  "#Card.last4's pattern gave way to an enum whose every value matches it: the response narrowed",
	// oasdiff compares keyword by keyword; these pairs change the keywords
	// and not (or only compatibly) the set of values, which pkg/review
	// decides on the whole sets.
	"billing/card-exp-month-range-as-enum response-property-max-unset":       "int & >=1 & <=12 gave way to the twelve values 1…12: the same set",
	"billing/card-exp-month-range-as-enum response-property-min-unset":       "int & >=1 & <=12 gave way to the twelve values 1…12: the same set",
	"billing/card-exp-month-enum-as-range response-property-became-not-enum": "the twelve values 1…12 gave way to int & >=1 & <=12: the same set",
	"billing/card-exp-month-enum-one-less response-property-max-unset":       "int & >=1 & <=12 gave way to the values 1…11, each in the range: the response narrowed",
	"billing/card-exp-month-enum-one-less response-property-min-unset":       "int & >=1 & <=12 gave way to the values 1…11, each in the range: the response narrowed",
	"billing/customer-born-date-as-regex request-property-pattern-added":     "format date gave way to a pattern admitting exactly the same dates (TestDateLanguage)",
	"billing/customer-born-naive-regex request-property-pattern-added":       "format date gave way to a pattern admitting every date and more: the request widened",
	"billing/refund-conditional-as-union request-body-any-of-removed":        "the conditional field's variants and the explicit disjunction admit the same bodies",
	"billing/refund-conditional-note-dropped request-body-any-of-removed":    "the variants collapsed into one object that accepts each of them: the request widened",
	"billing/refund-conditional-note-dropped request-body-type-changed":      "the variants (all objects) collapsed into one object that accepts each of them",
	"billing/refund-conditional-note-dropped new-required-request-property":  "charge and reason were required in every old variant already",
	"billing/refund-tagged-variants-collapse request-body-any-of-removed":    "the tagged variants collapsed into one object that accepts each of them: the request widened",
	"billing/refund-tagged-variants-collapse request-body-type-changed":      "the variants (all objects) collapsed into one object that accepts each of them",
	"billing/refund-tagged-variants-collapse new-required-request-property":  "charge and kind were required in every old variant already",
}

// oraclePair is one old/new pair the oracle runs on.
type oraclePair struct {
	name     string
	old, new *graph.Graph
}

// oraclePairs are the pairs of every corpus: testdata/corpus and the
// single-change corpora (named DIR/CASE, e.g. payments/currency-added).
func oraclePairs(t *testing.T) []oraclePair {
	var out []oraclePair
	for _, p := range loadCorpus(t) {
		out = append(out, oraclePair{p.name, p.old, p.new})
	}
	for _, dir := range singleChangeCorpora {
		for _, c := range loadPayments(t, dir) {
			old, err := compiled(c.old)
			if err != nil {
				t.Fatalf("%s/%s: %v", dir, c.name, err)
			}
			neu, err := compiled(c.new)
			if err != nil {
				t.Fatalf("%s/%s: %v", dir, c.name, err)
			}
			out = append(out, oraclePair{dir + "/" + c.name, old, neu})
		}
	}
	return out
}

func TestOracleOasdiff(t *testing.T) {
	var invisible []string
	used := map[string]bool{}
	for _, p := range oraclePairs(t) {
		rep, err := Compare(p.old, p.new, nil)
		if err != nil {
			t.Fatal(err)
		}
		errs := oasdiffErrors(t, p.old, p.new)
		seenByOasdiff := map[string]bool{}
		for _, c := range errs {
			id := opIDFor([]*graph.Graph{p.old, p.new}, c.GetOperationId())
			seenByOasdiff[id] = true
			ok := slices.ContainsFunc(rep.Findings, func(f Finding) bool {
				return f.Severity == Breaking && f.Affects(id)
			})
			if key := p.name + " " + c.GetId(); !ok && oasdiffWaivers[key] != "" {
				used[key] = true
				continue
			}
			if !ok {
				t.Errorf("%s: oasdiff reports %s on %s %s (%s) and we report no breaking finding for operation %q",
					p.name, c.GetId(), c.GetOperation(), c.GetPath(), c.GetUncolorizedText(checker.NewDefaultLocalizer()), id)
			}
		}
		for _, f := range rep.Findings {
			if f.Severity != Breaking {
				continue
			}
			if !strings.HasPrefix(f.Surface, "HTTP ") || !slices.ContainsFunc(f.Operations, func(op string) bool { return seenByOasdiff[op] }) {
				invisible = append(invisible, fmt.Sprintf("%s: %s on %s", p.name, f.Rule, f.Surface))
			}
		}
	}
	for key := range oasdiffWaivers {
		if !used[key] {
			t.Errorf("waiver %q matched no oasdiff change: remove it", key)
		}
	}
	t.Logf("breaking findings oasdiff cannot see (%d):\n  %s", len(invisible), strings.Join(invisible, "\n  "))
}
