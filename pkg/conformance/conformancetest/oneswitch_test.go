package conformancetest

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// definesUpdate matches a test defining its own -conformancetest.update flag.
var definesUpdate = regexp.MustCompile(`flag\.(Bool|BoolVar)\([^)]*"update"`)

// TestOneUpdateSwitch: the repository's golden tests have one switch,
// -conformancetest.update; no test of the repository defines an -conformancetest.update of
// its own (a user's test may: this package no longer claims the name), so
// one `go test ./... -conformancetest.update` refreshes them all.
func TestOneUpdateSwitch(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found: %v", err)
	}
	scanned := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		scanned++
		if definesUpdate.Match(b) && !strings.HasSuffix(path, filepath.Join("conformancetest", "golden.go")) {
			rel, _ := filepath.Rel(root, path)
			t.Errorf("%s defines its own -conformancetest.update flag; read conformancetest.Update instead", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 50 {
		t.Fatalf("scanned only %d Go files under %s", scanned, root)
	}
}
