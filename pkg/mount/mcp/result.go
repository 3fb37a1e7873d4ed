package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"stitchkit.dev/stitchkit/pkg/mount"
	"stitchkit.dev/stitchkit/pkg/project"
)

// contractHandler runs a contract (or runtime) tool through the runner.
// Every failure — invalid arguments included — is an isError result, never
// a JSON-RPC error, so a model reads the code and details and can correct
// its call.
func (h *Handler) contractHandler(t *project.Tool) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (res *sdk.CallToolResult, err error) {
		defer func() {
			if p := recover(); p != nil {
				h.logger.Error("mcp: tool call panicked", "tool", t.Name, "panic", p)
				res, err = errorResult(mount.NewError("INTERNAL_SERVER_ERROR", "")), nil
			}
		}()
		out, cerr := h.caller.callTool(ctx, t, req.Params.Arguments)
		if cerr != nil {
			return errorResult(asMountError(cerr)), nil
		}
		return successResult(t.Output != nil, out), nil
	}
}

// successResult is a contract tool's success: with a declared output, the
// validated value as structuredContent and the same JSON as text (for
// clients that read only content); without one, an empty content list.
func successResult(hasOutput bool, out json.RawMessage) *sdk.CallToolResult {
	if !hasOutput || out == nil {
		return &sdk.CallToolResult{Content: []sdk.Content{}}
	}
	return &sdk.CallToolResult{
		Content:           []sdk.Content{&sdk.TextContent{Text: string(out)}},
		StructuredContent: out,
	}
}

// errorResult is a failed call: isError with the tool error envelope
// {"error": CODE, "details"?, "_hint"?, "retryable"?} as its text.
func errorResult(e *mount.Error) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: string(toolEnvelope(e))}}}
}

// toolEnvelope is the tool error envelope of e.
func toolEnvelope(e *mount.Error) []byte {
	env := map[string]any{"error": e.Code}
	details := e.Details
	if len(details) == 0 && e.Message != "" {
		details = map[string]any{"message": e.Message}
	}
	if len(details) > 0 {
		env["details"] = details
	}
	if e.Hint != "" {
		env["_hint"] = e.Hint
	}
	if e.Retryable != nil && *e.Retryable {
		env["retryable"] = true
	}
	b, err := json.Marshal(env)
	if err != nil {
		b = []byte(fmt.Sprintf(`{"error":%q}`, e.Code))
	}
	return b
}

// asMountError returns err as a *mount.Error; anything else is an internal
// error whose message never crosses.
func asMountError(err error) *mount.Error {
	if e, ok := mount.AsError(err); ok {
		return e
	}
	return mount.NewError("INTERNAL_SERVER_ERROR", "").WithCause(err)
}
