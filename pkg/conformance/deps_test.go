package conformance

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoTestingMachinery: the stitch binary and this library link neither
// testing nor go-cmp; those live in conformancetest. The library links no
// transport either (the MCP SDK, cobra, gorilla/websocket): each
// transport's driver is a package of its own.
func TestNoTestingMachinery(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list dependencies: %v", err)
	}
	for _, pkg := range []string{"stitchkit.dev/stitchkit/cmd/stitch", "stitchkit.dev/stitchkit/pkg/conformance"} {
		out, err := exec.Command(goBin, "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 10 {
			t.Fatalf("go list -deps %s listed only %q", pkg, deps)
		}
		for _, dep := range deps {
			if dep == "testing" || strings.HasPrefix(dep, "testing/") || strings.HasPrefix(dep, "github.com/google/go-cmp/") {
				t.Errorf("%s links %s", pkg, dep)
			}
			if pkg == "stitchkit.dev/stitchkit/pkg/conformance" && (strings.HasPrefix(dep, "github.com/modelcontextprotocol/") ||
				strings.HasPrefix(dep, "github.com/spf13/cobra") || strings.HasPrefix(dep, "github.com/gorilla/")) {
				t.Errorf("%s links the transport package %s", pkg, dep)
			}
		}
	}
}
