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
// through [Registrar.RegisterTool] it gets what contract tools get: the
// identity of the caller in its context, the runner's hooks, input
// validation against InputSchema, and a context of its own per call.
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
	// InputSchema is a JSON Schema 2020-12 document whose root has
	// "type": "object". It is advertised (canonicalised) and compiled once
	// into the validator every call's arguments must pass.
	InputSchema json.RawMessage
	// OutputSchema, when set, validates the result's structuredContent
	// (and nothing else of the result). A result without
	// structuredContent, or with one the schema refuses, is an internal
	// error.
	OutputSchema json.RawMessage
	// Handler answers a call whose arguments passed InputSchema.
	Handler NativeHandler
}

// NativeHandler answers one native tool call. Its result is sent as it is —
// content blocks, `_meta` and isError untouched — apart from the catalog
// stamp added to `_meta` and structuredContent replaced by its validated
// form when an output schema is declared. A returned error is answered as
// an isError result with the tool error envelope: a *mount.Error keeps its
// code, anything else is INTERNAL_SERVER_ERROR (its message never crosses).
type NativeHandler func(ctx context.Context, call *NativeCall) (*sdk.CallToolResult, error)

// NativeCall is one validated native tool call.
type NativeCall struct {
	// Tool is the definition being called.
	Tool *NativeTool
	// Arguments are the validated arguments, decoded as pkg/validate
	// decodes JSON (map[string]any, []any, string, bool, nil, json.Number).
	Arguments map[string]any
	// Raw are the arguments exactly as sent.
	Raw json.RawMessage
	// Request is the SDK request (session, `_meta`, progress token).
	Request *sdk.CallToolRequest
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
// no identity check, hooks, validation or per-call context — and is in
// neither the catalog stamp nor the manifest, so a discovery check will
// report it. Opting out is therefore visible in code and in tests.
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
	if t.Identity.Service == "" || t.Identity.Action == "" || t.Identity.Method == "" {
		return errors.New("identity needs a service, an action and a semantic method")
	}
	if t.Identity.Scope == "" {
		t.Identity.Scope = "public"
	}
	nt := &nativeTool{def: t}
	var err error
	if nt.input, nt.inputDigest, nt.inValidator, err = compileSchema(t.InputSchema); err != nil {
		return fmt.Errorf("input schema: %w", err)
	}
	if err := objectSchema(nt.input); err != nil {
		return err
	}
	if t.OutputSchema != nil {
		if nt.output, nt.outputDigest, nt.outValidator, err = compileSchema(t.OutputSchema); err != nil {
			return fmt.Errorf("output schema: %w", err)
		}
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

// nativeTool is a registered native tool with its compiled schemas.
type nativeTool struct {
	def                       NativeTool
	input, output             json.RawMessage
	inputDigest, outputDigest graph.Digest
	inValidator, outValidator *validate.Validator
}

// compileSchema canonicalises a schema and compiles its validator.
func compileSchema(schema json.RawMessage) (json.RawMessage, graph.Digest, *validate.Validator, error) {
	if len(schema) == 0 {
		return nil, "", nil, errors.New("missing")
	}
	doc, err := validate.DecodeJSON(schema, nil)
	if err != nil {
		return nil, "", nil, err
	}
	b, d, err := graph.SchemaDigest(doc)
	if err != nil {
		return nil, "", nil, err
	}
	v, err := validate.Compile(b)
	if err != nil {
		return nil, "", nil, err
	}
	return b, d, v, nil
}

// nativeHandler validates a native call's arguments, runs the handler and
// checks its structured output.
func (h *Handler) nativeHandler(nt *nativeTool) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (res *sdk.CallToolResult, err error) {
		defer func() {
			if p := recover(); p != nil {
				h.logger.Error("mcp: native tool panicked", "tool", nt.def.Name, "panic", p)
				res, err = errorResult(mount.NewError("INTERNAL_SERVER_ERROR", "")), nil
			}
		}()
		args, verr := decodeArgs(req.Params.Arguments)
		if verr == nil {
			verr = validationError(nt.inValidator.Validate(args))
		}
		if verr != nil {
			return errorResult(verr), nil
		}
		call := &NativeCall{Tool: &nt.def, Arguments: args.(map[string]any), Raw: req.Params.Arguments, Request: req}
		out, herr := nt.def.Handler(ctx, call)
		if herr != nil {
			if _, ok := mount.AsError(herr); !ok {
				h.logger.Error("mcp: native tool failed", "tool", nt.def.Name, "error", herr)
			}
			return errorResult(asMountError(herr)), nil
		}
		if out == nil {
			out = &sdk.CallToolResult{Content: []sdk.Content{}}
		}
		if nt.outValidator != nil && !out.IsError {
			sc, oerr := structured(out.StructuredContent)
			if oerr == nil {
				oerr = nt.outValidator.Validate(sc)
			}
			if oerr != nil {
				h.logger.Error("mcp: native tool output does not match its schema", "tool", nt.def.Name, "error", oerr)
				return errorResult(mount.NewError("INTERNAL_SERVER_ERROR", "")), nil
			}
			b, _ := json.Marshal(sc)
			res := *out
			res.StructuredContent = json.RawMessage(b)
			out = &res
		}
		return out, nil
	}
}

// decodeArgs decodes tool arguments for validation; absent arguments are
// an empty object.
func decodeArgs(raw json.RawMessage) (any, *mount.Error) {
	if len(raw) == 0 {
		return map[string]any{}, nil
	}
	v, err := validate.DecodeJSON(raw, nil)
	if err != nil {
		return nil, mount.Errorf("BAD_REQUEST", "Tool arguments are not valid JSON: %v", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, mount.NewError("VALIDATION_ERROR", "Tool arguments must be a JSON object")
	}
	return v, nil
}

// validationError turns a validator's refusal into VALIDATION_ERROR with
// at most 20 issues.
func validationError(err error) *mount.Error {
	if err == nil {
		return nil
	}
	var ve *validate.Error
	if !errors.As(err, &ve) {
		return mount.NewError("VALIDATION_ERROR", err.Error())
	}
	issues := ve.Issues
	if len(issues) > 20 {
		issues = issues[:20]
	}
	list := make([]any, len(issues))
	for i, is := range issues {
		list[i] = map[string]any{"path": is.Path, "keyword": is.Keyword, "message": is.Message}
	}
	return &mount.Error{Code: "VALIDATION_ERROR", Message: "Invalid input: " + ve.Error(), Details: map[string]any{"issues": list}}
}

// structured decodes a result's structuredContent for output validation.
func structured(sc any) (any, error) {
	if sc == nil {
		return nil, errors.New("the result has no structuredContent")
	}
	b, ok := sc.(json.RawMessage)
	if !ok {
		var err error
		if b, err = json.Marshal(sc); err != nil {
			return nil, err
		}
	}
	return validate.DecodeJSON(b, nil)
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
