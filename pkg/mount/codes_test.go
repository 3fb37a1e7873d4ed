package mount

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/project"
)

// frameworkCodes are the Code constants, listed once more only to compare
// them with the registry.
var frameworkCodes = []Code{CodeBadRequest, CodeConflict, CodeForbidden, CodeInternal, CodeMethodNotAllowed,
	CodeNotFound, CodeNotImplemented, CodePayloadTooLarge, CodeRateLimited, CodeServiceUnavailable, CodeTimeout,
	CodeUnauthorized, CodeUnsupportedMediaType, CodeValidation, CodeRealtimeViolation, CodeRealtimeDisconnected,
	CodeRealtimeInvalidAck, CodeRealtimeRejected, CodeRealtimeTimeout}

// TestCodesAreTheRegistry: a constant for every framework code and no
// other, so a code added to graph.FrameworkErrors fails here until it has
// its constant.
func TestCodesAreTheRegistry(t *testing.T) {
	var reg, consts []string
	for _, e := range graph.FrameworkErrors {
		reg = append(reg, e.Code)
	}
	for _, c := range frameworkCodes {
		consts = append(consts, string(c))
	}
	slices.Sort(reg)
	slices.Sort(consts)
	if !slices.Equal(reg, consts) {
		t.Errorf("registry %v\nconstants %v", reg, consts)
	}
}

// TestErrorsIsByCode: errors.Is matches an *Error, however wrapped, by its
// code; the constructors carry theirs.
func TestErrorsIsByCode(t *testing.T) {
	for _, tc := range []struct {
		err  *Error
		code Code
	}{
		{NotFound(""), CodeNotFound}, {Conflict("taken"), CodeConflict}, {Unauthorized(""), CodeUnauthorized},
		{Forbidden(""), CodeForbidden}, {BadRequest("x"), CodeBadRequest}, {RateLimited(""), CodeRateLimited},
		{Unavailable(""), CodeServiceUnavailable}, {NotImplemented(""), CodeNotImplemented},
		{Invalid(Issue{In: project.PartInput, Path: "/title", Message: "taken"}), CodeValidation},
	} {
		wrapped := fmt.Errorf("store: %w", tc.err.WithCause(errors.New("cause")))
		if !errors.Is(wrapped, tc.code) || errors.Is(wrapped, CodeTimeout) {
			t.Errorf("%v: errors.Is by code", tc.err)
		}
		if !errors.Is(wrapped, &Error{Code: tc.code}) {
			t.Errorf("%v: errors.Is by *Error", tc.err)
		}
	}
	if errors.Is(errors.New("NOT_FOUND"), CodeNotFound) {
		t.Error("a plain error with the code's text matched")
	}
}

// TestInvalid: the constructor builds the VALIDATION_ERROR the runner
// itself answers: the message names the first issue, details.issues holds
// at most project.MaxIssues.
func TestInvalid(t *testing.T) {
	e := Invalid(Issue{In: project.PartInput, Path: "/title", Keyword: "unique", Message: "another task has this title"})
	if e.Message != "Invalid input: /title: another task has this title" || e.HTTPStatus() != 400 {
		t.Errorf("message %q status %d", e.Message, e.HTTPStatus())
	}
	b, _ := json.Marshal(e.Details)
	if string(b) != `{"issues":[{"in":"input","path":"/title","keyword":"unique","message":"another task has this title"}]}` {
		t.Errorf("details %s", b)
	}
	many := make([]Issue, project.MaxIssues+5)
	for i := range many {
		many[i] = Issue{In: project.PartQuery, Path: fmt.Sprintf("/%d", i), Message: "bad"}
	}
	e = Invalid(many...)
	if got := len(e.Details["issues"].([]Issue)); got != project.MaxIssues || !strings.HasSuffix(e.Message, fmt.Sprintf("(and %d more)", len(many)-1)) {
		t.Errorf("%d issues shown, message %q", got, e.Message)
	}
}
