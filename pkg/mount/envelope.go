package mount

import (
	"encoding/json"
	"fmt"
	"strings"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// Envelopes: the two wire forms of an *Error (research contracts §3.4).
// Transports call these on errors the runner has normalised, so Code is a
// registry code and Message is safe to send.

// httpEnvelope is {"error":{"code","message","details"?}}, the shape
// [project.ErrorEnvelopeSchema] documents.
type httpEnvelope struct {
	Error httpError `json:"error"`
}

type httpError struct {
	Code    Code           `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
}

// HTTPEnvelope returns the HTTP error body of e:
// {"error":{"code":CODE,"message":MESSAGE,"details"?:{…}}}. Hint and
// Retryable are not part of the HTTP envelope.
func (e *Error) HTTPEnvelope() []byte {
	b, err := json.Marshal(httpEnvelope{httpError{Code: e.Code, Message: e.message(), Details: e.Details}})
	if err != nil {
		// Details that do not marshal: the envelope without them.
		b, _ = json.Marshal(httpEnvelope{httpError{Code: e.Code, Message: e.message()}})
	}
	return b
}

// toolEnvelope is {"error":CODE,"details"?,"_hint"?,"retryable"?}.
type toolEnvelope struct {
	Error     Code           `json:"error"`
	Details   map[string]any `json:"details,omitempty"`
	Hint      string         `json:"_hint,omitempty"`
	Retryable bool           `json:"retryable,omitempty"`
}

// ToolEnvelope returns the tool error text of e (MCP text content, agent
// error message, CLI stderr): {"error":CODE,"details":{…},"_hint"?:…,
// "retryable"?:true}. details is e.Details, or {"message": …} when e has
// none; _hint joins e.Hint and mountHint (a mount-level hint for this tool
// and code, may be empty) with a space; retryable appears only when true.
func (e *Error) ToolEnvelope(mountHint string) []byte {
	details := e.Details
	if len(details) == 0 {
		details = map[string]any{"message": e.message()}
	}
	hint := strings.TrimSpace(strings.TrimSpace(e.Hint) + " " + strings.TrimSpace(mountHint))
	env := toolEnvelope{Error: e.Code, Details: details, Hint: hint, Retryable: e.IsRetryable()}
	b, err := json.Marshal(env)
	if err != nil {
		env.Details = map[string]any{"message": e.message()}
		b, _ = json.Marshal(env)
	}
	return b
}

// ParseToolEnvelope rebuilds an *Error from a tool error text (a remote CLI
// or a relayed tool failure). The status comes from reg (the graph's error
// registry; nil means the framework registry), 500 for an unknown code;
// retryable is kept as sent.
func ParseToolEnvelope(data []byte, reg []graph.ErrorCode) (*Error, error) {
	var env struct {
		Error     Code           `json:"error"`
		Details   map[string]any `json:"details"`
		Hint      string         `json:"_hint"`
		Retryable *bool          `json:"retryable"`
	}
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, fmt.Errorf("mount: not a tool error envelope: %w", err)
	}
	if env.Error == "" {
		return nil, fmt.Errorf("mount: not a tool error envelope: no error code")
	}
	if reg == nil {
		reg = graph.FrameworkErrors
	}
	e := &Error{Code: Code(env.Error), Status: 500, Details: env.Details, Hint: env.Hint}
	for _, c := range reg {
		if Code(c.Code) == env.Error {
			e.Status = c.Status
			e.Message = c.Message
		}
	}
	if m, ok := env.Details["message"].(string); ok {
		e.Message = m
	}
	retry := env.Retryable != nil && *env.Retryable
	e.Retryable = &retry
	return e, nil
}

// message is Message, else the framework registry's message for Code.
func (e *Error) message() string {
	if e.Message != "" {
		return e.Message
	}
	if fe, ok := graph.FrameworkError(string(e.Code)); ok {
		return fe.Message
	}
	return "Error"
}
