package mount

import "unicode/utf8"

// Bounds on what an error answer may quote back. A client controls the
// values that fail validation (a path parameter is validated before
// authorization, so with no credentials at all), and validation messages
// quote them: without a bound a 0.9 MB URL came back as a 3.0 MB answer.
// With them an answer stays a few KiB whatever is sent.
const (
	// MaxIssueBytes caps one issue's message and one issue's path in an
	// error answer (and the top-level message, which names the first
	// issue). A longer text is cut at a UTF-8 boundary and ends in "…".
	MaxIssueBytes = 256
	// MaxIssuesBytes caps the messages and paths of all the issues of one
	// answer together; issues past it are left out (the top-level message
	// still counts them). At most project.MaxIssues issues are sent.
	MaxIssuesBytes = 4 << 10
)

// excerpt returns s cut to at most max bytes (plus "…") at a UTF-8
// boundary.
func excerpt(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
