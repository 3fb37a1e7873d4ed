// Package conformancetest holds the testing side of pkg/conformance, as
// net/http/httptest stands beside net/http: the golden-file harness with
// its -conformancetest.update switch, the manifest snapshot assertion and the probe runner
// for tests. It imports testing and go-cmp; pkg/conformance does not, so
// the stitch binary links neither.
//
// A test pins its surface manifest and runs its probes in a few lines:
//
//	func TestConformance(t *testing.T) {
//		m, err := conformance.BuildManifest(runner.Projection(), nil)
//		if err != nil {
//			t.Fatal(err)
//		}
//		conformancetest.AssertManifestSnapshot(t, m, "testdata/surface-manifest.json")
//		conformancetest.RunProbes(t, probes, drivers, nil)
//	}
//
// `go test -conformancetest.update` rewrites every golden file (snapshots included)
// instead of comparing with it; review the diff before committing.
package conformancetest

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"stitchkit.dev/stitchkit/pkg/conformance"
)

// UpdateFlag is the name of the one update switch of the repository:
// `go test -conformancetest.update` rewrites golden files instead of
// comparing them.
//
// It is namespaced and registered only when the command line names it,
// as net/http/httptest does with -httptest.serve: a bare global -conformancetest.update
// registered by a library panics every user test that declares the common
// flag.Bool("update", …) ("flag redefined: update"). A test binary that
// links this package may therefore define its own -conformancetest.update; this package
// never reads it.
const UpdateFlag = "conformancetest.update"

// update is the value of -conformancetest.update.
var update bool

func init() {
	if namesFlag(os.Args[1:], UpdateFlag) {
		flag.BoolVar(&update, UpdateFlag, false, "rewrite golden files (surface manifest snapshots, corpora) instead of comparing them")
	}
}

// namesFlag reports whether args name the flag (-name, --name, -name=v,
// --name=v).
func namesFlag(args []string, name string) bool {
	for _, a := range args {
		a = strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}

// Update reports whether the test binary runs with
// -conformancetest.update: golden files are to be rewritten rather than
// compared.
func Update() bool { return update }

// maxReport caps a golden mismatch report, as [conformance.MaxDiffBytes]
// caps a manifest drift report.
const maxReport = conformance.MaxDiffBytes

// Golden compares got with the golden file at path, byte for byte, and
// fails t with a line diff (-golden +got, capped at 4 KiB) when they
// differ. With -conformancetest.update it writes got to path instead, creating the
// directory. A missing golden file fails with the command that creates it.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	golden(t, path, got, func(want []byte) string {
		if bytes.Equal(want, got) {
			return ""
		}
		return fmt.Sprintf("%s differs from its golden file (-golden +got):\n%s", path, capReport(cmp.Diff(lines(want), lines(got))))
	})
}

// lines splits b after each newline, so a diff shows the changed lines.
func lines(b []byte) []string { return strings.SplitAfter(string(b), "\n") }

// golden is the one harness behind [Golden] and [AssertManifestSnapshot]:
// with -conformancetest.update it writes got to path; otherwise it reads path and fails t
// with compare's report (which says how the file differs) when compare
// returns one.
func golden(t testing.TB, path string, got []byte, compare func(want []byte) string) {
	t.Helper()
	if Update() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatalf("golden %s: %v", path, err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatalf("golden %s: %v", path, err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Fatalf("golden file %s does not exist: run `go test -conformancetest.update` and commit it", path)
	}
	if err != nil {
		t.Fatalf("golden %s: %v", path, err)
	}
	if report := compare(want); report != "" {
		t.Errorf("%s\nIf the change is intended, run `go test -conformancetest.update` and review the diff.", report)
	}
}

// AssertManifestSnapshot compares m with the committed snapshot at path and
// fails t with a field-path diff ([conformance.CompareManifest], -snapshot
// +built) when they differ. With -conformancetest.update it writes m to path instead. A
// snapshot of another manifestVersion, or one that does not decode
// strictly, fails with the reason.
func AssertManifestSnapshot(t testing.TB, m *conformance.Manifest, path string) {
	t.Helper()
	got, err := m.Encode()
	if err != nil {
		t.Fatalf("surface manifest: %v", err)
	}
	golden(t, path, got, func(data []byte) string {
		want, err := conformance.DecodeManifest(data)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if diff, equal := conformance.CompareManifest(want, m); !equal {
			return fmt.Sprintf("Surface manifest diverged from its committed snapshot %s (-snapshot +built):\n%s", path, diff)
		}
		return ""
	})
}

// capReport cuts s to at most maxReport bytes on a rune boundary, saying
// how much was left out.
func capReport(s string) string {
	if len(s) <= maxReport {
		return s
	}
	const note = "\n… report truncated (%d more bytes)"
	cut := maxReport - len(note) - 8
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf(note, len(s)-cut)
}
