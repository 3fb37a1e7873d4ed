package mcp

import (
	"context"
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"stitchkit.dev/stitchkit/pkg/mount"
)

// toolHandler runs a contract (or runtime) tool through the runner. Every
// failure — invalid arguments included — is an isError result, never a
// JSON-RPC error, so a model reads the code and the validation details and
// can correct its call.
func (h *Handler) toolHandler(name string, ep *mount.Endpoint) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		// CallTool never panics: the runner turns a panic into
		// INTERNAL_SERVER_ERROR.
		res := ep.CallTool(ctx, mount.SourceMCP, req.Params.Arguments, req)
		if res.Err != nil {
			return h.errorResult(name, res.Err), nil
		}
		return successResult(ep.HasOutput(), res.Output), nil
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
// {"error": CODE, "details", "_hint"?, "retryable"?} as its text.
func (h *Handler) errorResult(tool string, e *mount.Error) *sdk.CallToolResult {
	hint := ""
	if h.opts.ErrorHint != nil {
		hint = h.opts.ErrorHint(tool, e.Code)
	}
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: string(e.ToolEnvelope(hint))}}}
}
