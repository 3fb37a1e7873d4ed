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
//
// structured says whether the tool advertises its output schema (an object
// schema); only then does a success carry structuredContent.
func (h *Handler) toolHandler(name string, ep *mount.Endpoint, structured bool) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		// CallTool never panics: the runner turns a panic into
		// INTERNAL_SERVER_ERROR.
		res := ep.CallTool(ctx, mount.SourceMCP, req.Params.Arguments, req)
		if res.Err != nil {
			return h.errorResult(name, res.Err), nil
		}
		return successResult(ep.HasOutput(), structured, res.Output), nil
	}
}

// successResult is a contract tool's success: with a declared output, the
// validated value as JSON text (for clients that read only content) and,
// when the output is advertised (structured: an object schema), the same
// value as structuredContent; without an output, an empty content list.
func successResult(hasOutput, structured bool, out json.RawMessage) *sdk.CallToolResult {
	if !hasOutput || out == nil {
		return &sdk.CallToolResult{Content: []sdk.Content{}}
	}
	res := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(out)}}}
	if structured {
		res.StructuredContent = out
	}
	return res
}

// errorResult is a failed call: isError with the tool error envelope
// {"error": CODE, "details", "_hint"?, "retryable"?} as its text.
func (h *Handler) errorResult(tool string, e *mount.Error) *sdk.CallToolResult {
	hint := ""
	if h.opts.ErrorHint != nil {
		hint = h.opts.ErrorHint(tool, string(e.Code))
	}
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: string(e.ToolEnvelope(hint))}}}
}
