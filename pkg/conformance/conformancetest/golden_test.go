package conformancetest

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"stitchkit.dev/stitchkit/pkg/conformance"
)

// fakeT records failures instead of stopping the test; Fatalf unwinds with
// a panic that run recovers.
type fakeT struct {
	testing.TB
	msgs  []string
	fatal bool
}

func (f *fakeT) Helper() {}
func (f *fakeT) Errorf(format string, a ...any) {
	f.msgs = append(f.msgs, fmt.Sprintf(format, a...))
}
func (f *fakeT) Fatalf(format string, a ...any) {
	f.msgs = append(f.msgs, fmt.Sprintf(format, a...))
	f.fatal = true
	panic(f)
}

func run(t *testing.T, f func(tb testing.TB)) (ft *fakeT) {
	ft = &fakeT{TB: t}
	defer func() {
		if r := recover(); r != nil && r != any(ft) {
			panic(r)
		}
	}()
	f(ft)
	return ft
}

// itemsManifest decodes pkg/conformance's committed fixture snapshot.
func itemsManifest(t *testing.T) (*conformance.Manifest, []byte) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "items.manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := conformance.DecodeManifest(b)
	if err != nil {
		t.Fatal(err)
	}
	return m, b
}

func TestAssertManifestSnapshot(t *testing.T) {
	if Update() {
		t.Skip("-conformancetest.update rewrites golden files")
	}
	path := filepath.Join(t.TempDir(), "m.json")
	m, b := itemsManifest(t)

	if ft := run(t, func(tb testing.TB) { AssertManifestSnapshot(tb, m, path) }); !ft.fatal || !strings.Contains(ft.msgs[0], "does not exist: run `go test -conformancetest.update`") {
		t.Errorf("missing snapshot: %q", ft.msgs)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if ft := run(t, func(tb testing.TB) { AssertManifestSnapshot(tb, m, path) }); len(ft.msgs) != 0 {
		t.Errorf("equal snapshot failed: %q", ft.msgs)
	}

	changed, _ := itemsManifest(t)
	changed.Operations[0].Description = "Pick one"
	changed.ToolSurfaces[2].Tools = changed.ToolSurfaces[2].Tools[1:]
	changed.Realtime[2].Acknowledgement.Input = "0000000000000000"
	ft := run(t, func(tb testing.TB) { AssertManifestSnapshot(tb, changed, path) })
	if len(ft.msgs) != 1 || ft.fatal {
		t.Fatalf("drift: %q", ft.msgs)
	}
	for _, want := range []string{
		"Surface manifest diverged from its committed snapshot " + path + " (-snapshot +built):\n",
		`-operations[contract items.choose].description: "Choose a projection"`,
		`+operations[contract items.choose].description: "Pick one"`,
		`-toolSurfaces[MCP (default)].tools[choose_item]: {`,
		"-realtime[primary clientToServer sum].acknowledgement.input: \"ff776df9e304ddb1\"\n+realtime[primary clientToServer sum].acknowledgement.input: \"0000000000000000\"",
		"run `go test -conformancetest.update`",
	} {
		if !strings.Contains(ft.msgs[0], want) {
			t.Errorf("drift report lacks %q:\n%s", want, ft.msgs[0])
		}
	}

	old := strings.Replace(string(b), `"manifestVersion": 2`, `"manifestVersion": 1`, 1)
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	if ft := run(t, func(tb testing.TB) { AssertManifestSnapshot(tb, m, path) }); !ft.fatal || !strings.Contains(ft.msgs[0], "Surface snapshot is manifestVersion 1; this build writes 2. Regenerate it and review the diff") {
		t.Errorf("old version: %q", ft.msgs)
	}
}

func TestGolden(t *testing.T) {
	if Update() {
		t.Skip("-conformancetest.update rewrites golden files")
	}
	path := filepath.Join(t.TempDir(), "sub", "g.txt")
	if ft := run(t, func(tb testing.TB) { Golden(tb, path, []byte("a\n")) }); !ft.fatal || !strings.Contains(ft.msgs[0], path+" does not exist") {
		t.Errorf("missing golden: %q", ft.msgs)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if ft := run(t, func(tb testing.TB) { Golden(tb, path, []byte("one\ntwo\nthree\n")) }); len(ft.msgs) != 0 {
		t.Errorf("equal golden failed: %q", ft.msgs)
	}
	ft := run(t, func(tb testing.TB) { Golden(tb, path, []byte("one\n2\nthree\n")) })
	if len(ft.msgs) != 1 || ft.fatal {
		t.Fatalf("mismatch: %q", ft.msgs)
	}
	for _, want := range []string{path + " differs from its golden file (-golden +got)", `"two\n",`, `"2\n",`, "run `go test -conformancetest.update`"} {
		if !strings.Contains(ft.msgs[0], want) {
			t.Errorf("report lacks %q:\n%s", want, ft.msgs[0])
		}
	}
	// A huge mismatch is capped on a rune boundary.
	big := strings.Repeat("ü line\n", 3000)
	ft = run(t, func(tb testing.TB) { Golden(tb, path, []byte(big)) })
	if len(ft.msgs) != 1 || len(ft.msgs[0]) > maxReport+400 || !strings.Contains(ft.msgs[0], "report truncated") {
		t.Errorf("uncapped report of %d bytes", len(ft.msgs[0]))
	}
}

// The update switch is registered only when the command line names it, so
// a user test that declares the common -conformancetest.update flag does not panic with
// "flag redefined" (net/http/httptest's -httptest.serve works the same
// way).
func TestUpdateFlagOnlyWhenAsked(t *testing.T) {
	if namesFlag(os.Args[1:], UpdateFlag) {
		t.Skip("run with -conformancetest.update")
	}
	if flag.Lookup(UpdateFlag) != nil || flag.Lookup("update") != nil {
		t.Fatal("a flag was registered without being asked for")
	}
	// What a user's test does at init time; it must not panic.
	flag.CommandLine.Bool("update", false, "a user's own update flag")
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"-test.v", "-update"}, false},
		{[]string{"-conformancetest.update"}, true},
		{[]string{"--conformancetest.update=true"}, true},
		{[]string{"-conformancetest.updated"}, false},
	} {
		if got := namesFlag(tc.args, UpdateFlag); got != tc.want {
			t.Errorf("namesFlag(%q) = %v", tc.args, got)
		}
	}
}

// -conformancetest.update writes instead of comparing.
func TestUpdateWrites(t *testing.T) {
	update = true
	t.Cleanup(func() { update = false })
	if !Update() {
		t.Fatal("Update() false under -conformancetest.update")
	}
	path := filepath.Join(t.TempDir(), "new", "g.json")
	Golden(t, path, []byte("fresh\n"))
	if b, err := os.ReadFile(path); err != nil || string(b) != "fresh\n" {
		t.Errorf("golden not written: %q %v", b, err)
	}
	m, want := itemsManifest(t)
	snap := filepath.Join(t.TempDir(), "m.json")
	AssertManifestSnapshot(t, m, snap)
	if b, err := os.ReadFile(snap); err != nil || string(b) != string(want) {
		t.Errorf("snapshot not written as Encode bytes: %v", err)
	}
}
