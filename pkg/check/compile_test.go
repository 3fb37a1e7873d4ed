package check

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"stitchkit.dev/stitchkit/pkg/compile"
)

// TestCompileRefusesEveryInvalidContract: the one compile refuses every
// contract `stitch vet` refuses (testdata/invalid, whose want/diagnostics
// cmd/stitch's vet test holds the CLI to), with the first diagnostic `stitch
// vet` prints at the same place. compile.Compile used to accept
// duplicate-route.txtar, which then failed at mount time with no position;
// the archive list is globbed, so a new invalid contract is covered too.
func TestCompileRefusesEveryInvalidContract(t *testing.T) {
	archives, err := filepath.Glob("../../testdata/invalid/*.txtar")
	if err != nil || len(archives) == 0 {
		t.Fatalf("no archives: %v", err)
	}
	sawDuplicateRoute := false
	for _, path := range archives {
		t.Run(filepath.Base(path), func(t *testing.T) {
			a, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			files := map[string][]byte{}
			var want string
			for _, f := range a.Files {
				switch {
				case strings.HasPrefix(f.Name, "contract/"):
					files[strings.TrimPrefix(f.Name, "contract/")] = f.Data
				case f.Name == "want/diagnostics":
					want, _, _ = strings.Cut(string(f.Data), "\n")
				}
			}
			if len(files) == 0 || want == "" {
				t.Fatal("archive has no contract or no want/diagnostics")
			}
			g, err := CompileFiles(context.Background(), files)
			var cerr *compile.Error
			if !errors.As(err, &cerr) {
				t.Fatalf("CompileFiles = graph %v, error %v; want a *compile.Error", g != nil, err)
			}
			// want is "contract/FILE:LINE:COL: RULE: message" (warnings
			// and related places follow on other lines).
			wantAt := strings.TrimPrefix(strings.TrimPrefix(want, "warning: "), "contract/")
			for _, d := range cerr.Diagnostics {
				if firstLine(d.String()) == wantAt {
					if d.Rule == "duplicate-route" {
						sawDuplicateRoute = true
					}
					return
				}
			}
			t.Errorf("no diagnostic %q among:\n%v", wantAt, err)
		})
	}
	if !sawDuplicateRoute {
		t.Error("no archive was refused for duplicate-route: the case the one compile exists for is not covered")
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
