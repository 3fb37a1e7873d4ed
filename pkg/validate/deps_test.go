package validate

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps: the validator every mount uses links no CUE and no testing
// (DESIGN invariant 5), and no longer the JSON Schema library it replaced
// (santhosh-tekuri is the differential oracle in tests only).
func TestDeps(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("go is not on PATH")
	}
	out, err := exec.Command(goBin, "list", "-deps", "stitchkit.dev/stitchkit/pkg/validate").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed only %q", deps)
	}
	for _, d := range deps {
		if strings.HasPrefix(d, "cuelang.org/") || d == "testing" || strings.HasPrefix(d, "github.com/santhosh-tekuri/") {
			t.Errorf("pkg/validate links %s", d)
		}
	}
}
