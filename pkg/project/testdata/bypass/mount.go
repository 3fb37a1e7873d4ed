// Package bypass is a negative fixture for TestOneProjector: a mount that
// derives tool names and advertised schemas itself instead of asking
// pkg/project. Every marked line must be reported.
package bypass

import (
	"strings"

	"stitchkit.dev/stitchkit/pkg/graph"
	proj "stitchkit.dev/stitchkit/pkg/project"
)

func singularize(s string) string { return strings.TrimSuffix(s, "s") } // want: func singularize

func name(op *graph.Operation) string {
	if op.Tool != nil && op.Tool.Name != "" { // want: .Tool.Name
		return op.Tool.Name // want: .Tool.Name
	}
	if op.Action == "list" {
		return "list_" + op.Service // want: "list_"
	}
	return proj.ToolName(op.Service, op.Action) // want: project.ToolName
}

func hoist(defs map[string]any, k string, v any) {
	defs["input__"+k] = v // want: "input__"
}

func globMatch(pattern, key string) bool { return proj.MatchPattern(pattern, key) } // want: func globMatch, project.MatchPattern
