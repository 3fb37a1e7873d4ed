package mount

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"

	"stitchkit.dev/stitchkit/pkg/validate"
)

// KindNative is an operation identity an application registers in code on
// a transport (a native MCP tool, ADR 0048): it is not in the graph, so it
// has no route and no contract schemas of its own.
const KindNative Kind = "native"

// NativeDefinition describes an endpoint that is not in the graph.
type NativeDefinition struct {
	// Identity is the endpoint's identity; Kind is set to KindNative and
	// an empty Scope means "public". Service, Action and Method are
	// required.
	Identity Identity
	// Input is the JSON Schema 2020-12 document the arguments must match
	// (its defaults are applied, as for contract inputs).
	Input json.RawMessage
	// Output, when set, is the JSON Schema the handler's output must match.
	Output json.RawMessage
	// Errors are the application codes (declared in the graph's errors)
	// the handler may answer besides the framework's.
	Errors []string
	// Handler runs a validated call. Its input is every argument.
	Handler Handler
}

// NativeEndpoint prepares an endpoint outside the graph — a native tool a
// transport registers in code — that runs the same pipeline as a runtime
// tool, with this runner's hooks: Authorize, input defaults and
// validation, BeforeHandle, the handler, AfterHandle, output validation,
// AfterCall, and the same error normalisation. Transports call it once,
// when they are built, and [Endpoint.CallTool] per call.
func (r *Runner) NativeEndpoint(def NativeDefinition) (*Endpoint, error) {
	id := def.Identity
	id.Kind = KindNative
	id.Scope = cmp.Or(id.Scope, "public")
	if id.Service == "" || id.Action == "" || id.Method == "" {
		return nil, errors.New("mount: a native endpoint needs a service, an action and a method")
	}
	if def.Handler == nil {
		return nil, fmt.Errorf("mount: nil handler for native %s", id.ID())
	}
	ep := &Endpoint{r: r, id: id, handler: def.Handler}
	var err error
	if len(def.Input) == 0 {
		return nil, fmt.Errorf("mount: native %s has no input schema", id.ID())
	}
	if ep.input, err = validate.Compile(def.Input); err != nil {
		return nil, fmt.Errorf("mount: native %s input: %w", id.ID(), err)
	}
	if len(def.Output) > 0 {
		if ep.output, err = validate.Compile(def.Output); err != nil {
			return nil, fmt.Errorf("mount: native %s output: %w", id.ID(), err)
		}
	}
	codes := []string{string(CodeBadRequest), string(CodeValidation), string(CodeInternal)}
	if id.Scope != "public" {
		codes = append(codes, string(CodeUnauthorized), string(CodeForbidden))
	}
	for _, c := range def.Errors {
		if _, ok := r.registry[c]; !ok {
			return nil, fmt.Errorf("mount: native %s: error code %s is not in the error registry", id.ID(), c)
		}
		codes = append(codes, c)
	}
	ep.allowed = make(map[string]bool, len(codes))
	for _, c := range codes {
		ep.allowed[c] = true
	}
	return ep, nil
}
