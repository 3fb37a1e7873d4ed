package clidriver_test

import (
	"fmt"

	"stitchkit.dev/stitchkit/pkg/conformance/clidriver"
)

// The command line a Call becomes: strings as typed, everything else as
// JSON, which the CLI mount reads for a flag of that type.
func ExampleCommandLine() {
	line, _ := clidriver.CommandLine("list_tasks", map[string]any{"limit": 2, "tag": []string{"docs", "ui"}, "done": false})
	fmt.Printf("%q\n", line)
	// Output:
	// ["list_tasks" "--json" "--done=false" "--limit=2" "--tag=[\"docs\",\"ui\"]"]
}
