package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestDocsCIRecipe holds the workflow of docs/review.md to what it
// promises: it works in a repository that is not a Go module and does not
// depend on stitchkit — stitch is installed with go install at a pinned
// version of this module — and every stitch command it runs parses (a
// usage error would exit 2; a missing git ref exits 1).
func TestDocsCIRecipe(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "review.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(doc)
	i := strings.Index(section, "## In CI and in pull requests")
	if i < 0 {
		t.Fatal("docs/review.md has no CI section")
	}
	section = section[i:]
	start := strings.Index(section, "```yaml\n")
	end := strings.Index(section[start+8:], "```")
	if start < 0 || end < 0 {
		t.Fatal("no yaml block in the CI section")
	}
	block := section[start+8 : start+8+end]
	var wf struct {
		Env  map[string]string `yaml:"env"`
		Jobs map[string]struct {
			Steps []struct {
				Name string            `yaml:"name"`
				Uses string            `yaml:"uses"`
				With map[string]string `yaml:"with"`
				Run  string            `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal([]byte(block), &wf); err != nil {
		t.Fatalf("the workflow is not YAML: %v\n%s", err, block)
	}
	if !regexp.MustCompile(`^v\d+\.\d+\.\d+$`).MatchString(wf.Env["STITCH_VERSION"]) {
		t.Errorf("STITCH_VERSION = %q; want a pinned vX.Y.Z", wf.Env["STITCH_VERSION"])
	}
	mod, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	module := strings.TrimPrefix(strings.SplitN(string(mod), "\n", 2)[0], "module ")
	installed, commands := false, 0
	for _, job := range wf.Jobs {
		for _, step := range job.Steps {
			if step.With["go-version-file"] != "" {
				t.Errorf("step %q reads the Go version from %s: the repository may not be a Go module", step.Name, step.With["go-version-file"])
			}
			if strings.Contains(step.Run, `go install "`+module+`/cmd/stitch@${STITCH_VERSION}"`) {
				installed = true
			}
			for _, line := range strings.Split(step.Run, "\n") {
				line = strings.TrimSpace(line)
				if !strings.HasPrefix(line, "stitch ") {
					continue
				}
				commands++
				line = strings.ReplaceAll(line, "${{ github.base_ref }}", "no-such-branch-for-docs-test")
				if j := strings.Index(line, " >"); j >= 0 {
					line = line[:j]
				}
				args := strings.Fields(line)[1:]
				code, _, errOut := runStitch(args...)
				if code == exitUsage {
					t.Errorf("%q is a usage error: %s", line, errOut)
				}
			}
		}
	}
	if !installed {
		t.Errorf("no step installs stitch with go install %s/cmd/stitch@${STITCH_VERSION}", module)
	}
	if commands < 2 {
		t.Errorf("found %d stitch commands in the workflow; the check is vacuous", commands)
	}
	if _, err := os.Stat(filepath.Join("..", "..", "cmd", "stitch", "main.go")); err != nil {
		t.Errorf("the recipe installs %s/cmd/stitch, which does not exist: %v", module, err)
	}
}
