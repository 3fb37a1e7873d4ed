package mount

import (
	"errors"
	"fmt"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// Error is the typed error every transport turns into its envelope. A
// handler returns one (or wraps one) to answer with an application code the
// contract declares; the framework uses the codes of [graph.FrameworkErrors].
//
// Only Code, Message, Details and Hint ever reach a client; the wrapped
// cause is for logs.
type Error struct {
	// Code is a registry code: a framework code or one the contract's
	// errors block declares.
	Code Code
	// Status is the HTTP status; 0 means the registry's status for Code
	// (500 for a code the registry does not know).
	Status int
	// Message is safe to show a client. Empty means the registry message.
	Message string
	// Details is structured data for the client (validation issues, for
	// example). It must marshal to a JSON object.
	Details map[string]any
	// Hint tells a caller (often a model) how to recover.
	Hint string
	// Retryable overrides the default, which is derived from the status
	// (408, 429, 502, 503 and 504 are retryable).
	Retryable *bool

	cause error
}

// NewError returns an error with code and message; the status comes from the
// registry the error is answered with.
func NewError(code Code, message string) *Error { return &Error{Code: code, Message: message} }

// Errorf is NewError with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithCause returns a copy of e that wraps cause (kept for logs, never sent).
func (e *Error) WithCause(cause error) *Error {
	c := *e
	c.cause = cause
	return &c
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		if fe, ok := graph.FrameworkError(string(e.Code)); ok {
			msg = fe.Message
		}
	}
	if e.cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, msg, e.cause)
	}
	return string(e.Code) + ": " + msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.cause }

// AsError returns the first *Error in err's chain.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// IsRetryable reports whether a caller may retry: Retryable when set, else
// derived from the status ([RetryableStatus]).
func (e *Error) IsRetryable() bool {
	if e.Retryable != nil {
		return *e.Retryable
	}
	return RetryableStatus(e.HTTPStatus())
}

// HTTPStatus returns Status, or the framework registry's status for Code
// when Status is 0 (500 for a code the framework registry does not know).
// Errors the runner returns always carry their registry status.
func (e *Error) HTTPStatus() int {
	if e.Status != 0 {
		return e.Status
	}
	if fe, ok := graph.FrameworkError(string(e.Code)); ok {
		return fe.Status
	}
	return 500
}

// RetryableStatus reports whether a status is retryable by default.
func RetryableStatus(status int) bool {
	switch status {
	case 408, 429, 502, 503, 504:
		return true
	}
	return false
}
