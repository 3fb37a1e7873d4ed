package project

import (
	"cmp"
	"fmt"
	"slices"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// The error answers of an operation: the one statement of which registry
// codes a route (or tool) can answer and what the error envelope looks
// like. The runner (pkg/mount) refuses a handler any other code, and the
// OpenAPI exporter documents exactly these, so the two cannot disagree.

// OperationErrors returns the codes a call of op can answer, with their
// registry statuses, sorted by status then code:
//
//   - BAD_REQUEST and VALIDATION_ERROR (400) and INTERNAL_SERVER_ERROR
//     (500), always;
//   - UNAUTHORIZED (401) and FORBIDDEN (403) unless the scope is "public";
//   - every code op declares in its errors list.
//
// It fails when a declared code is not in the graph's error registry.
// Transport answers that precede the route (NOT_FOUND, METHOD_NOT_ALLOWED,
// PAYLOAD_TOO_LARGE, UNSUPPORTED_MEDIA_TYPE) and the runner's
// NOT_IMPLEMENTED for an unbound operation are not listed: they do not
// depend on the operation.
func OperationErrors(g *graph.Graph, op *graph.Operation) ([]graph.ErrorCode, error) {
	return answerable(g, op.Scope, op.Errors)
}

// RuntimeToolErrors is [OperationErrors] for a runtime tool: it declares no
// codes of its own, so it answers the framework codes of its scope (an
// empty identity scope is "public").
func RuntimeToolErrors(g *graph.Graph, rt *graph.RuntimeTool) ([]graph.ErrorCode, error) {
	return answerable(g, cmp.Or(rt.Identity.Scope, "public"), nil)
}

func answerable(g *graph.Graph, scope string, declared []string) ([]graph.ErrorCode, error) {
	reg := map[string]graph.ErrorCode{}
	for _, e := range g.ErrorRegistry() {
		reg[e.Code] = e
	}
	codes := []string{"BAD_REQUEST", "VALIDATION_ERROR", "INTERNAL_SERVER_ERROR"}
	if scope != "public" {
		codes = append(codes, "UNAUTHORIZED", "FORBIDDEN")
	}
	var out []graph.ErrorCode
	for _, c := range codes {
		out = append(out, reg[c])
	}
	for _, c := range declared {
		e, ok := reg[c]
		if !ok {
			return nil, fmt.Errorf("error code %s is not in the error registry", c)
		}
		if !slices.ContainsFunc(out, func(x graph.ErrorCode) bool { return x.Code == c }) {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b graph.ErrorCode) int {
		return cmp.Or(cmp.Compare(a.Status, b.Status), graph.CompareUTF16(a.Code, b.Code))
	})
	return out, nil
}

// MaxIssues is the most validation issues an error envelope carries in
// details.issues; the message says how many more there were.
const MaxIssues = 20

// ErrorEnvelopeSchema returns the JSON Schema of the HTTP error body
// {"error":{"code","message","details"?}} whose code is one of codes (in
// the order given). The HTTP mount writes exactly this shape.
func ErrorEnvelopeSchema(codes []string) map[string]any {
	enum := make([]any, len(codes))
	for i, c := range codes {
		enum[i] = c
	}
	return map[string]any{
		"type":     "object",
		"required": []any{"error"},
		"properties": map[string]any{"error": map[string]any{
			"type":     "object",
			"required": []any{"code", "message"},
			"properties": map[string]any{
				"code":    map[string]any{"type": "string", "enum": enum},
				"message": map[string]any{"type": "string"},
				"details": map[string]any{"type": "object"},
			},
		}},
	}
}
