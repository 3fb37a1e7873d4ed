package mcp

import (
	"os/exec"
	"strings"
	"testing"
)

// The tool mounts are run-time packages: none links CUE or the testing
// machinery, the Agent and CLI mounts do not link the MCP SDK, and the
// provider SDKs the Agent exporters are checked against stay test-only.
func TestRuntimeDependencies(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list dependencies: %v", err)
	}
	never := []string{"cuelang.org/go/", "testing", "github.com/google/go-cmp/",
		"github.com/openai/", "github.com/anthropics/", "google.golang.org/genai"}
	for pkg, also := range map[string][]string{
		"stitchkit.dev/stitchkit/pkg/mount/mcp":   nil,
		"stitchkit.dev/stitchkit/pkg/mount/agent": {"github.com/modelcontextprotocol/"},
		"stitchkit.dev/stitchkit/pkg/mount/cli":   {"github.com/modelcontextprotocol/"},
	} {
		out, err := exec.Command(goBin, "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 10 {
			t.Fatalf("go list -deps %s listed only %q", pkg, deps)
		}
		for _, dep := range deps {
			for _, bad := range append(also, never...) {
				if dep == bad || strings.HasPrefix(dep, strings.TrimSuffix(bad, "/")+"/") {
					t.Errorf("%s links %s", pkg, dep)
				}
			}
		}
	}
}
