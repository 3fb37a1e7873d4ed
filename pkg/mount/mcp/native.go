package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
	"stitchkit.dev/stitchkit/pkg/project"
	"stitchkit.dev/stitchkit/pkg/validate"
)

// NativeTool is an MCP tool an application writes in Go rather than in the
// contract: one that must answer with MCP content blocks (images, audio,
// resources) a JSON contract cannot describe (ADR 0048).
//
// It owns its MCP schemas and one operation identity, and registered
// through [Registrar.RegisterTool] it runs through the runner like a
// contract tool: Authorize, input defaults and validation, BeforeHandle,
// the handler, AfterHandle, output validation and AfterCall, each call
// with its own context and *mount.Call (Identity.Kind is
// mount.KindNative).
type NativeTool struct {
	// Name is the tool name; it must pass project.ValidToolName and not
	// collide with a contract tool of the surface.
	Name        string
	Description string
	Annotations *sdk.ToolAnnotations
	// Identity is the tool's operation identity (service, action, semantic
	// method, scope — "public" when empty): what hooks, audit and the
	// manifest key on. It has no HTTP path.
	Identity graph.Identity
	// Meta is the identity's metadata, as contract operations carry it.
	Meta json.RawMessage
	// Errors are the application codes of the graph the handler may
	// answer (framework codes need no declaring).
	Errors []string
	// InputSchema is a JSON Schema 2020-12 document whose root has
	// "type": "object". It is advertised (canonicalised) and compiled once
	// into the validator every call's arguments must pass.
	InputSchema json.RawMessage
	// OutputSchema, when set, validates the result's structuredContent —
	// and nothing else of the result. Its root must have "type": "object"
	// (MCP's rule for outputSchema). A success without structuredContent,
	// or with one the schema refuses, is INTERNAL_SERVER_ERROR.
	OutputSchema json.RawMessage
	// Handler answers a call whose arguments passed InputSchema.
	Handler NativeHandler
}

// NativeHandler answers one native tool call. Its result is sent as it is —
// content blocks, `_meta` and isError untouched — except that the catalog
// stamp is added to `_meta` and, when an output schema is declared,
// structuredContent is replaced by its validated form. A returned error is
// answered as an isError result with the tool error envelope: a
// *mount.Error with a code the tool may answer keeps it, anything else is
// INTERNAL_SERVER_ERROR (its message never crosses). A result with isError
// set is sent as it is and reported to the runner's hooks as a failure.
type NativeHandler func(ctx context.Context, call *NativeCall) (*sdk.CallToolResult, error)

// NativeCall is one validated native tool call.
type NativeCall struct {
	// Tool is the definition being called.
	Tool *NativeTool
	// Call is the runner's call: identity, source, and Input — the
	// validated arguments with defaults applied, as pkg/validate decodes
	// JSON (map[string]any, []any, string, bool, nil, json.Number).
	Call *mount.Call
	// Request is the SDK request (session, `_meta`, progress token).
	Request *sdk.CallToolRequest
}

// Arguments returns the validated arguments.
func (c *NativeCall) Arguments() map[string]any {
	m, _ := c.Call.Input.(map[string]any)
	return m
}

// Registrar registers native tools on one prepared surface. It is handed
// to Options.Native once per surface while the handler is built and must
// not be kept.
type Registrar struct {
	h    *Handler
	s    *surface
	errs []error
	done bool
}

// Surface returns the name of the surface being built ("" for the default).
func (r *Registrar) Surface() string { return r.s.name }

// RegisterTool registers a native tool on the surface: the protected path.
// Problems (a bad name or schema, a collision) are returned and also make
// [New] fail.
func (r *Registrar) RegisterTool(t NativeTool) error {
	err := r.register(t)
	if err != nil {
		err = fmt.Errorf("mcp: %s native tool %q: %w", project.SurfaceLabel(graph.MCP, r.s.name), t.Name, err)
		r.errs = append(r.errs, err)
	}
	return err
}

// RawServer returns the surface's SDK server: the escape hatch. A tool
// added to it directly runs with none of the guarantees of RegisterTool —
// no runner, so no hooks, validation or per-call context — and is in
// neither the catalog stamp nor the manifest, so a discovery check reports
// it. Opting out is therefore visible in code and in tests.
func (r *Registrar) RawServer() *sdk.Server { return r.s.server }

func (r *Registrar) register(t NativeTool) error {
	if r.done {
		return errors.New("the registrar is used after the handler was built")
	}
	if err := project.ValidToolName(t.Name); err != nil {
		return err
	}
	if _, dup := r.s.tools[t.Name]; dup {
		return fmt.Errorf("duplicate MCP tool name %q on this surface", t.Name)
	}
	if t.Handler == nil {
		return errors.New("no Handler")
	}
	if t.Identity.Scope == "" {
		t.Identity.Scope = "public"
	}
	nt := &nativeTool{def: t}
	var err error
	if nt.input, nt.inputDigest, err = canonicalSchema(t.InputSchema); err != nil {
		return fmt.Errorf("input schema: %w", err)
	}
	if err := objectSchema("input", nt.input); err != nil {
		return err
	}
	if t.OutputSchema != nil {
		if nt.output, nt.outputDigest, err = canonicalSchema(t.OutputSchema); err != nil {
			return fmt.Errorf("output schema: %w", err)
		}
		// MCP: structuredContent is an object, so is its schema.
		if err := objectSchema("output", nt.output); err != nil {
			return err
		}
	}
	id := mount.Identity{Service: t.Identity.Service, Action: t.Identity.Action, Method: t.Identity.Method, Scope: t.Identity.Scope, Meta: t.Meta}
	nt.ep, err = r.h.runner.NativeEndpoint(mount.NativeDefinition{Identity: id, Input: nt.input, Output: nt.output,
		Errors: t.Errors, Handler: nt.handle})
	if err != nil {
		return err
	}
	tool := &sdk.Tool{Name: t.Name, Description: t.Description, Annotations: t.Annotations, InputSchema: nt.input}
	if nt.output != nil {
		tool.OutputSchema = nt.output
	}
	r.s.server.AddTool(tool, r.h.nativeHandler(nt))
	r.s.tools[t.Name] = tool
	r.s.native = append(r.s.native, nt)
	return nil
}

// nativeTool is a registered native tool and its runner endpoint.
type nativeTool struct {
	def                       NativeTool
	input, output             json.RawMessage
	inputDigest, outputDigest graph.Digest
	ep                        *mount.Endpoint
}

// canonicalSchema returns a schema's canonical bytes and digest.
func canonicalSchema(schema json.RawMessage) (json.RawMessage, graph.Digest, error) {
	if len(schema) == 0 {
		return nil, "", errors.New("missing")
	}
	doc, err := validate.DecodeJSON(schema, nil)
	if err != nil {
		return nil, "", err
	}
	b, d, err := graph.SchemaDigest(doc)
	return b, d, err
}

// nativeExchange carries the handler's MCP result out around the runner,
// through the call's context. (Hooks see the *mcp.CallToolRequest as
// Call.Native, as for contract tools.)
type nativeExchange struct {
	res *sdk.CallToolResult
}

type exchangeKey struct{}

// errIsError reports a native result with isError set to the runner.
var errIsError = errors.New("the native tool answered an isError result")

// handle is the runner handler of a native tool: it runs the application's
// handler and hands the runner the structuredContent to validate.
func (nt *nativeTool) handle(ctx context.Context, c *mount.Call) (json.RawMessage, error) {
	x, _ := ctx.Value(exchangeKey{}).(*nativeExchange)
	req, _ := c.Native.(*sdk.CallToolRequest)
	if x == nil {
		return nil, errors.New("mcp: native tool called outside its MCP handler")
	}
	res, err := nt.def.Handler(ctx, &NativeCall{Tool: &nt.def, Call: c, Request: req})
	if err != nil {
		return nil, err
	}
	if res == nil {
		res = &sdk.CallToolResult{Content: []sdk.Content{}}
	}
	x.res = res
	if res.IsError {
		return nil, mount.NewError(mount.CodeInternal, "").WithCause(errIsError)
	}
	if nt.output == nil {
		return nil, nil
	}
	switch sc := res.StructuredContent.(type) {
	case nil:
		return nil, nil // the runner refuses the missing output
	case json.RawMessage:
		return sc, nil
	default:
		return json.Marshal(sc)
	}
}

// nativeHandler runs a native call through the runner.
func (h *Handler) nativeHandler(nt *nativeTool) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		x := &nativeExchange{}
		out := nt.ep.CallTool(context.WithValue(ctx, exchangeKey{}, x), mount.SourceMCP, req.Params.Arguments, req)
		switch {
		case x.res != nil && x.res.IsError:
			return x.res, nil
		case out.Err != nil:
			return h.errorResult(nt.def.Name, out.Err), nil
		}
		res := *x.res
		if nt.output != nil {
			res.StructuredContent = out.Output
		}
		return &res, nil
	}
}

// NativeTools returns the native tools of every surface as projector tools
// (kind native), for the surface manifest:
//
//	m, err := conformance.BuildManifest(g, &conformance.Options{Native: h.NativeTools()})
func (h *Handler) NativeTools() []project.Surface {
	var out []project.Surface
	for _, name := range h.names {
		s := h.surfaces[name]
		if len(s.native) == 0 {
			continue
		}
		ps := project.Surface{Transport: graph.MCP, Name: name}
		for _, nt := range s.native {
			d := nt.def
			ps.Tools = append(ps.Tools, project.Tool{Kind: project.KindNative, Service: d.Identity.Service, Action: d.Identity.Action,
				Method: d.Identity.Method, Scope: d.Identity.Scope, Name: d.Name, Description: d.Description,
				Input: nt.input, InputDigest: nt.inputDigest, Output: nt.output, OutputDigest: nt.outputDigest})
		}
		out = append(out, ps)
	}
	return out
}
