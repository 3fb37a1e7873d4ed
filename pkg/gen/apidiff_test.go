package gen

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/exp/apidiff"
	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/txtar"

	"stitchkit.dev/stitchkit/pkg/check"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/review"
)

// Generated code is an API: a contract change that review calls
// compatible must not break Go code written against the generated package.
// The judge is golang.org/x/exp/apidiff, the Go team's own checker of
// API compatibility, run on the package generated before and after each
// change. Nothing here decides compatibility by itself: review gives the
// contract verdict, apidiff the Go one, and the test only compares them.

// apiChange is one contract change: the two sides, compiled.
type apiChange struct {
	name     string
	old, new *graph.Graph
}

// apidiffExceptions are compatible contract changes whose generated Go API
// does change incompatibly, each with the reason it is accepted. docs/gen.md
// (Compatibility) lists the same cases.
var apidiffExceptions = func() map[string]string {
	reasons := map[string][]string{
		// Go states in a field's type whether a value may be absent or
		// null (*T, Nullable[T]); the wire accepts both before and after.
		"a field's presence or nullability changed": {
			"payments/payment-field-became-required", "payments/request-field-became-optional", "payments/request-nullable",
			"billing/charge-description-not-nullable", "billing/create-input-became-optional", "billing/customer-email-request-nullable",
		},
		// JSON's integer is a number; Go's int64 is not a float64.
		"an integer became a number": {
			"payments/request-integer-to-number", "billing/fx-amount-int-to-number", "corpus/request-type-widened",
		},
		// An enum is a named type with constants; a string with a pattern
		// is a string. The values stay the same.
		"a pattern became an enum": {"payments/card-country-pattern-to-enum", "billing/last4-pattern-to-matching-enum"},
		// The generator sees the contract, not its history: a value a
		// response no longer sends loses its constant (a one-value enum
		// is a plain string), a retired code its Code constant.
		"an enum value or an error code was removed": {
			"payments/refund-reason-narrowed-in-response", "billing/wallet-value-removed", "corpus/response-enum-narrowed",
			"billing/error-code-retired",
		},
		// A definition's name is its Go type's name: renaming it, inlining
		// it, or replacing a reference to it by an equal or wider schema
		// renames or retypes the field.
		"a definition was renamed, inlined or no longer referenced": {
			"payments/definition-renamed", "payments/definition-inlined", "payments/refund-ref-sibling-pattern",
			"billing/list-status-query-widened", "billing/retrieve-id-sibling-redundant", "billing/retrieve-param-pattern-dropped",
		},
		// A union has one Go shape, its single arm another.
		"a schema became a union": {
			"billing/attach-card-body-union", "billing/card-source-union",
			"payments/realtime-client-optional-arg", "billing/subscribe-optional-arg-appended",
		},
		// Review decides on sets: an enum of the integers of a range is the
		// range. Go states an enum as a named type with constants and a
		// range as int64, so the field's type changes either way.
		"an integer enum became the equal range, or back": {
			"billing/card-exp-month-enum-as-range", "billing/card-exp-month-range-as-enum", "billing/card-exp-month-enum-one-less",
		},
		// A conditional field's object is one struct; the same set written
		// as a union of cases, or the union collapsing when the field is
		// dropped, is another Go shape. (refund-conditional-note-dropped
		// also shows a suffixed name, RefundReason2: a known naming gap.)
		"a conditional field became a union, or was dropped": {
			"billing/refund-conditional-as-union", "billing/refund-conditional-note-dropped",
		},
		// A removed acknowledgement removes its type.
		"an acknowledgement was removed": {"billing/dispute-ack-removed"},
		// The Go field is named after the parameter, whatever the transport.
		"a parameter was renamed": {"corpus/path-parameter-renamed-http-only"},
	}
	out := map[string]string{}
	for why, cases := range reasons {
		for _, c := range cases {
			out[c] = why
		}
	}
	return out
}()

// checkAPICompatible generates every side of changes into one temporary
// module, type-checks all of them with one `go list` (go/packages), and
// fails for each change apidiff finds incompatible. With vet it also runs
// `go vet` on every generated package.
func checkAPICompatible(t *testing.T, changes []apiChange, vet bool) {
	t.Helper()
	dir := tempModule(t)
	pkgOf := map[graph.Digest]string{} // one package per distinct graph
	add := func(g *graph.Graph) string {
		d, err := graph.DigestOf(g)
		if err != nil {
			t.Fatal(err)
		}
		if p, ok := pkgOf[d]; ok {
			return p
		}
		p := fmt.Sprintf("v%03d", len(pkgOf))
		pkgOf[d] = p
		files, err := Generate(g, &Options{Package: "api"})
		if err != nil {
			t.Fatalf("generate %s: %v", p, err)
		}
		if err := os.MkdirAll(filepath.Join(dir, p), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(dir, p, f.Name), f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	type pair struct {
		c        apiChange
		old, new string
	}
	var pairs []pair
	for _, c := range changes {
		pairs = append(pairs, pair{c, add(c.old), add(c.new)})
	}
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedTypes | packages.NeedSyntax | packages.NeedTypesInfo | packages.NeedImports,
		Dir:  dir,
		Env:  append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local"),
	}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]*packages.Package{}
	for _, p := range pkgs {
		for _, e := range p.Errors {
			t.Errorf("%s does not type-check: %v", p.PkgPath, e)
		}
		byPath[strings.TrimPrefix(p.PkgPath, "gentest/")] = p
	}
	if len(byPath) != len(pkgOf) {
		t.Fatalf("loaded %d packages, generated %d", len(byPath), len(pkgOf))
	}
	for _, p := range pairs {
		rep := apidiff.Changes(byPath[p.old].Types, byPath[p.new].Types)
		var bad []string
		for _, ch := range rep.Changes {
			if !ch.Compatible {
				bad = append(bad, ch.Message)
			}
		}
		why, excepted := apidiffExceptions[p.c.name]
		switch {
		case len(bad) > 0 && !excepted:
			t.Errorf("%s: review calls the change compatible, but the generated Go API breaks (%s → %s):\n\t%s", p.c.name, p.old, p.new, strings.Join(bad, "\n\t"))
		case len(bad) == 0 && excepted:
			t.Errorf("%s is listed as an exception (%s) but apidiff finds no incompatible change: drop it", p.c.name, why)
		}
	}
	if vet {
		goRun(t, dir, "vet", "./...")
	}
}

// compatible reports whether review calls old → new compatible: no
// breaking change and no warning.
func compatible(t *testing.T, name string, old, new *graph.Graph) bool {
	t.Helper()
	rep, err := review.Compare(old, new, nil)
	if err != nil {
		t.Fatalf("%s: review: %v", name, err)
	}
	return rep.Summary.Breaking == 0 && rep.Summary.Warning == 0
}

// reviewCorpusChanges reads the review corpora (pkg/review/testdata:
// the two single-change corpora on base.cue, and the pairs of corpus/)
// and returns the changes review calls compatible.
func reviewCorpusChanges(t *testing.T) []apiChange {
	t.Helper()
	root := filepath.Join("..", "review", "testdata")
	cache := map[string]*graph.Graph{}
	compileSrc := func(name string, files map[string][]byte) *graph.Graph {
		var key strings.Builder
		names := make([]string, 0, len(files))
		for n := range files {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			fmt.Fprintf(&key, "%s\x00%s\x00", n, files[n])
		}
		if g, ok := cache[key.String()]; ok {
			return g
		}
		g, err := check.CompileFiles(context.Background(), files)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cache[key.String()] = g
		return g
	}
	var out []apiChange
	keep := func(name string, old, new *graph.Graph) {
		if compatible(t, name, old, new) {
			out = append(out, apiChange{name: name, old: old, new: new})
		}
	}
	for _, corpus := range []string{"payments", "billing"} {
		base, err := os.ReadFile(filepath.Join(root, corpus, "base.cue"))
		if err != nil {
			t.Fatal(err)
		}
		paths, err := filepath.Glob(filepath.Join(root, corpus, "*.txtar"))
		if err != nil || len(paths) == 0 {
			t.Fatalf("%s: no cases (%v)", corpus, err)
		}
		file := corpus + ".cue"
		for _, p := range paths {
			a, err := txtar.ParseFile(p)
			if err != nil {
				t.Fatal(err)
			}
			// The corpus states each case's verdict; only those it calls
			// compatible are compiled (review.Compare below still decides),
			// which keeps the test within minutes under -race.
			if !wantsCompatible(a) {
				continue
			}
			old, neu := string(base), ""
			var edits [][2]string
			for i := 0; i+1 < len(a.Files); i++ {
				f, next := a.Files[i], a.Files[i+1]
				from := strings.TrimSuffix(string(f.Data), "\n")
				to := strings.TrimSuffix(string(next.Data), "\n")
				switch {
				case f.Name == "both" && next.Name == "both-with":
					old = strings.Replace(old, from, to, 1)
				case f.Name == "replace" && next.Name == "with":
					edits = append(edits, [2]string{from, to})
				}
			}
			neu = old
			for _, e := range edits {
				if !strings.Contains(neu, e[0]) {
					t.Fatalf("%s: the edit does not apply", p)
				}
				neu = strings.Replace(neu, e[0], e[1], 1)
			}
			name := corpus + "/" + strings.TrimSuffix(filepath.Base(p), ".txtar")
			keep(name, compileSrc(name, map[string][]byte{file: []byte(old)}), compileSrc(name, map[string][]byte{file: []byte(neu)}))
		}
	}
	paths, err := filepath.Glob(filepath.Join(root, "corpus", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("corpus: no pairs (%v)", err)
	}
	for _, p := range paths {
		a, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if data := txtar.Format(a); bytes.Contains(data, []byte(`"severity": "breaking"`)) || bytes.Contains(data, []byte(`"severity": "warning"`)) {
			continue // the pair's golden findings are not compatible
		}
		side := func(prefix string) map[string][]byte {
			files := map[string][]byte{}
			for _, f := range a.Files {
				if n, ok := strings.CutPrefix(f.Name, prefix+"/"); ok {
					files[n] = f.Data
				}
			}
			return files
		}
		name := "corpus/" + strings.TrimSuffix(filepath.Base(p), ".txtar")
		keep(name, compileSrc(name, side("old")), compileSrc(name, side("new")))
	}
	return out
}

// wantsCompatible reports whether a single-change case's want section
// says the verdict is compatible.
func wantsCompatible(a *txtar.Archive) bool {
	for _, f := range a.Files {
		if f.Name == "want" {
			return bytes.Contains(f.Data, []byte("verdict: compatible\n"))
		}
	}
	return false
}

// TestAPIStableOnReviewCorpora: every change of the review corpora that
// review calls compatible leaves the generated package's Go API compatible
// by apidiff (or is a documented exception).
func TestAPIStableOnReviewCorpora(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles and type-checks a few hundred contracts")
	}
	changes := reviewCorpusChanges(t)
	if len(changes) < 50 {
		t.Fatalf("only %d compatible changes in the review corpora; the corpora shrank or review changed", len(changes))
	}
	t.Logf("%d compatible changes", len(changes))
	checkAPICompatible(t, changes, false)
}

// evolveBase is a contract of the kind the issue describes: #Invoice used
// once, as a whole output; a CLI-only command with a default.
const evolveBase = `package clinic

import "stitchkit.dev/stitchkit/schema"

#Invoice: {
	id:     string
	status: "open" | "paid"
	lines: [...{sku: string, qty: int}]
}

#Pet: {
	name:    string
	species: "cat" | "dog"
}

schema.#Contract & {
	name:    "clinic"
	version: "1.0.0"
	errors: {
		INVOICE_NOT_FOUND: {status: 404, message: "No such invoice"}
	}
	services: invoices: {
		scope: "user"
		operations: {
			create: {
				method: "POST", path: "/invoices", desc: "Create an invoice"
				#input: {pet: #Pet, kind: "visit" | "surgery", note?: string}
				#output: #Invoice
			}
			get: {
				method: "GET", path: "/invoices/{id}", desc: "Read an invoice"
				#params: {id: string}
				#output: #Invoice
				errors: ["INVOICE_NOT_FOUND"]
			}
		}
	}
	//EVENTS
	surfaces: mcp: named: {
		all: include: ["*.*"]
	}
	cliCommands: doctor: {
		desc: "Check the configuration"
		#input: {level: *3 | int}
		#output: {ok: bool}
	}
}
`

// evolutions are compatible changes of evolveBase, each one edit (old
// text, new text), applied alone and all together.
var evolutions = []struct{ name, from, to string }{
	{"definition-shared", "\t\toperations: {\n", "\t\toperations: {\n\t\t\tlist: {\n\t\t\t\tmethod: \"GET\", path: \"/invoices\", desc: \"List invoices\"\n\t\t\t\t#output: {items: [...#Invoice]}\n\t\t\t}\n"},
	{"optional-field", "\tlines: [...{sku: string, qty: int}]\n", "\tlines: [...{sku: string, qty: int}]\n\tpaid_at?: string\n\ttags?: [...string]\n"},
	{"input-enum-value", `kind: "visit" | "surgery"`, `kind: "visit" | "surgery" | "vaccine"`},
	{"new-service", "\tservices: invoices: {\n", "\tservices: pets: {\n\t\tscope: \"user\"\n\t\toperations: get: {\n\t\t\tmethod: \"GET\", path: \"/pets/{name}\", desc: \"Read a pet\"\n\t\t\t#params: {name: string}\n\t\t\t#output: #Pet\n\t\t}\n\t}\n\tservices: invoices: {\n"},
	{"new-event", "\t//EVENTS\n", "\trealtime: clinic: {\n\t\tserverToClient: invoicePaid: {\n\t\t\tdesc: \"An invoice was paid\"\n\t\t\t#args: [#Invoice]\n\t\t}\n\t\tclientToServer: follow: {\n\t\t\tdesc: \"Follow an invoice\"\n\t\t\t#args: [{id: string}]\n\t\t\t#ack: {ok: bool}\n\t\t}\n\t}\n"},
	{"new-surface", "\t\tall: include: [\"*.*\"]\n", "\t\tall: include: [\"*.*\"]\n\t\tbilling: include: [\"invoices.*\"]\n"},
	{"new-error-code", "\t\tINVOICE_NOT_FOUND: {status: 404, message: \"No such invoice\"}\n", "\t\tINVOICE_NOT_FOUND: {status: 404, message: \"No such invoice\"}\n\t\tINVOICE_LOCKED: {status: 409, message: \"The invoice is locked\"}\n"},
}

// TestAPIStableOnCompatibleEvolution applies each compatible change of
// the kind issue 20 lists to evolveBase (and all of them at once): review
// must call it compatible, apidiff must find the generated API compatible,
// and every generated package must pass go vet.
func TestAPIStableOnCompatibleEvolution(t *testing.T) {
	compileSrc := func(name, src string) *graph.Graph {
		g, err := check.CompileFiles(context.Background(), map[string][]byte{"clinic.cue": []byte(src)})
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, src)
		}
		return g
	}
	base := compileSrc("base", evolveBase)
	all := evolveBase
	var changes []apiChange
	for _, e := range evolutions {
		if !strings.Contains(evolveBase, e.from) {
			t.Fatalf("%s: the edit does not apply", e.name)
		}
		src := strings.Replace(evolveBase, e.from, e.to, 1)
		all = strings.Replace(all, e.from, e.to, 1)
		if e.from == "\t//EVENTS\n" {
			all = strings.Replace(all, e.to, e.to+e.from, 1)
		}
		changes = append(changes, apiChange{name: e.name, old: base, new: compileSrc(e.name, src)})
	}
	changes = append(changes, apiChange{name: "all", old: base, new: compileSrc("all", all)})
	for _, c := range changes {
		if !compatible(t, c.name, c.old, c.new) {
			rep, _ := review.Compare(c.old, c.new, nil)
			t.Fatalf("%s: review does not call the change compatible: %+v", c.name, rep.Findings)
		}
	}
	checkAPICompatible(t, changes, true)
}
