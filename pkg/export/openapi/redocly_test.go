package openapi_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"strings"
	"testing"
	"time"

	"stitchkit.dev/stitchkit/pkg/check"
	"stitchkit.dev/stitchkit/pkg/export/openapi"
	"stitchkit.dev/stitchkit/pkg/graph"
)

// TestRedoclyRecommended lints the document of examples/tasks with
// Redocly's own lint engine and its recommended ruleset: with a server and
// a license given, nothing is reported; without a license, exactly the
// info-license warning (so the lint is known to run). The engine
// (@redocly/openapi-core, pinned in testdata/redocly/package-lock.json) is
// installed by the test with npm ci into the user cache, once per lock
// file.
func TestRedoclyRecommended(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is needed to run Redocly's linter (install Node.js 20 or later)")
	}
	dir := redoclyInstall(t)
	g, err := check.Compile(context.Background(), filepath.Join(moduleRoot(t), "examples", "tasks"))
	if err != nil {
		t.Fatal(err)
	}
	billing, err := check.Compile(context.Background(), filepath.Join("testdata", "billing"))
	if err != nil {
		t.Fatal(err)
	}
	lint := func(opts *openapi.Options) []string { return redoclyLint(t, dir, g, "/api", opts) }
	complete := &openapi.Options{
		Servers: []openapi.Server{{URL: "https://tasks.stitchkit.dev", Description: "Production"}},
		License: &openapi.License{Name: "Apache 2.0", Identifier: "Apache-2.0"},
	}
	if problems := lint(complete); len(problems) > 0 {
		t.Errorf("Redocly's recommended ruleset reports:\n%s", strings.Join(problems, "\n"))
	}
	problems := lint(nil)
	if len(problems) != 1 || !strings.HasPrefix(problems[0], "warn\tinfo-license\t") {
		t.Errorf("without a license, want exactly the info-license warning; got:\n%s", strings.Join(problems, "\n"))
	}
	// A payments contract: shared components, unions, nullable fields.
	if problems := redoclyLint(t, dir, billing, "/api", complete); len(problems) > 0 {
		t.Errorf("Redocly's recommended ruleset reports on testdata/billing:\n%s", strings.Join(problems, "\n"))
	}
}

// redoclyLint lints the document of g with the engine installed in dir and
// returns its problems, one per line.
func redoclyLint(t *testing.T, dir string, g *graph.Graph, prefix string, opts *openapi.Options) []string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi.Generate(projecttest.Prefixed(t, g, prefix), opts)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(file, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "lint.mjs"), file)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("redocly lint: %v\n%s", err, out)
	}
	var problems []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line != "" {
			problems = append(problems, line)
		}
	}
	return problems
}

// redoclyInstall installs testdata/redocly (npm ci) into a cache folder
// named after the lock file and returns it.
func redoclyInstall(t *testing.T) string {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatal("npm is needed to install Redocly's linter (it comes with Node.js)")
	}
	src := filepath.Join("testdata", "redocly")
	lock, err := os.ReadFile(filepath.Join(src, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(src, "lint.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(append(append([]byte{}, lock...), script...))
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "stitchkit-test", "redocly-"+hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@redocly", "openapi-core", "package.json")); err == nil {
		return dir
	}
	// Install next to the final place and rename, so a concurrent run
	// never sees a half-installed folder.
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "install-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	for _, name := range []string{"package.json", "package-lock.json", "lint.mjs"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci (testdata/redocly): %v\n%s", err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(filepath.Join(dir, "node_modules")); statErr != nil {
			t.Fatal(err)
		}
		// Another run installed it first.
	}
	return dir
}
