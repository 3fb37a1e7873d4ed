package mount

import (
	"fmt"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/project"
)

// Code is a registry error code: one of the framework's (the constants
// below, [graph.FrameworkErrors]) or one the contract's errors block
// declares (generated bindings name those). A Code is an error, so
//
//	errors.Is(err, mount.CodeNotFound)
//
// reports whether err is, or wraps, an *[Error] with that code.
type Code string

// Error returns the code itself.
func (c Code) Error() string { return string(c) }

// The framework registry ([graph.FrameworkErrors]); TestCodesAreTheRegistry
// holds the two lists equal.
const (
	CodeBadRequest           Code = "BAD_REQUEST"
	CodeConflict             Code = "CONFLICT"
	CodeForbidden            Code = "FORBIDDEN"
	CodeInternal             Code = "INTERNAL_SERVER_ERROR"
	CodeMethodNotAllowed     Code = "METHOD_NOT_ALLOWED"
	CodeNotFound             Code = "NOT_FOUND"
	CodeNotImplemented       Code = "NOT_IMPLEMENTED"
	CodePayloadTooLarge      Code = "PAYLOAD_TOO_LARGE"
	CodeRateLimited          Code = "RATE_LIMITED"
	CodeServiceUnavailable   Code = "SERVICE_UNAVAILABLE"
	CodeTimeout              Code = "TIMEOUT"
	CodeUnauthorized         Code = "UNAUTHORIZED"
	CodeUnsupportedMediaType Code = "UNSUPPORTED_MEDIA_TYPE"
	CodeValidation           Code = "VALIDATION_ERROR"
	CodeRealtimeViolation    Code = "REALTIME_CONTRACT_VIOLATION"
	CodeRealtimeDisconnected Code = "REALTIME_REQUEST_DISCONNECTED"
	CodeRealtimeInvalidAck   Code = "REALTIME_REQUEST_INVALID_ACKNOWLEDGEMENT"
	CodeRealtimeRejected     Code = "REALTIME_REQUEST_REJECTED"
	CodeRealtimeTimeout      Code = "REALTIME_REQUEST_TIMEOUT"
)

// Is reports whether target is e's code (errors.Is(err, mount.CodeNotFound)),
// or an *Error with e's code.
func (e *Error) Is(target error) bool {
	switch t := target.(type) {
	case Code:
		return e.Code == t
	case *Error:
		return t != nil && e.Code == t.Code
	}
	return false
}

// Constructors for the codes handlers and hooks answer most. A handler
// may answer only the codes its operation can answer
// ([project.Endpoint].Errors: its declared codes, BAD_REQUEST,
// VALIDATION_ERROR, INTERNAL_SERVER_ERROR, and UNAUTHORIZED and FORBIDDEN
// unless public); a hook may answer any registry code. An empty message
// sends the registry's.

// NotFound returns a NOT_FOUND (404) error.
func NotFound(message string) *Error { return NewError(CodeNotFound, message) }

// Conflict returns a CONFLICT (409) error.
func Conflict(message string) *Error { return NewError(CodeConflict, message) }

// Unauthorized returns an UNAUTHORIZED (401) error.
func Unauthorized(message string) *Error { return NewError(CodeUnauthorized, message) }

// Forbidden returns a FORBIDDEN (403) error.
func Forbidden(message string) *Error { return NewError(CodeForbidden, message) }

// BadRequest returns a BAD_REQUEST (400) error.
func BadRequest(message string) *Error { return NewError(CodeBadRequest, message) }

// RateLimited returns a RATE_LIMITED (429, retryable) error.
func RateLimited(message string) *Error { return NewError(CodeRateLimited, message) }

// Unavailable returns a SERVICE_UNAVAILABLE (503, retryable) error.
func Unavailable(message string) *Error { return NewError(CodeServiceUnavailable, message) }

// NotImplemented returns a NOT_IMPLEMENTED (501) error.
func NotImplemented(message string) *Error { return NewError(CodeNotImplemented, message) }

// Invalid returns the VALIDATION_ERROR (400) the runner itself answers
// for a value that does not match its schema, for a rule only the
// application can check (a title already taken, a cursor this server did
// not issue): details.issues holds the issues (at most
// [project.MaxIssues]) and the message names the first, e.g. "Invalid
// input: /title: another task has this title".
func Invalid(issues ...Issue) *Error {
	if len(issues) == 0 {
		return &Error{Code: CodeValidation, Status: 400, Message: "Invalid request",
			Details: map[string]any{"issues": []Issue{}}}
	}
	shown := issues
	if len(shown) > project.MaxIssues {
		shown = shown[:project.MaxIssues]
	}
	first := issues[0]
	path := first.Path
	if path == "" {
		path = "/"
	}
	msg := "Invalid " + string(first.In) + ": " + path + ": " + first.Message
	if len(issues) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(issues)-1)
	}
	return &Error{Code: CodeValidation, Status: 400, Message: msg, Details: map[string]any{"issues": shown}}
}

// opaque reports a framework code whose message and details describe the
// server's own fault (which side broke a realtime contract, an internal
// failure): a caller gets the registry message only, and the cause is
// logged. It is a property of the code in the registry, not of the
// transport that raised it.
func opaque(code Code) bool {
	fe, ok := graph.FrameworkError(string(code))
	return ok && fe.Internal
}
