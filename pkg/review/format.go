package review

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// ReportSchema is the JSON Schema (2020-12) of the JSON report written by
// [Report.WriteJSON]; `stitch diff --print-schema` prints it.
//
//go:embed report.schema.json
var ReportSchema []byte

// Formats lists the output formats of [Report.Write].
var Formats = []string{"text", "json", "markdown", "githubactions"}

// Write renders the report in format (one of [Formats]).
func (r *Report) Write(w io.Writer, format string) error {
	switch format {
	case "text", "":
		return r.WriteText(w)
	case "json":
		return r.WriteJSON(w)
	case "markdown":
		return r.WriteMarkdown(w)
	case "githubactions":
		return r.WriteGitHubActions(w)
	}
	return fmt.Errorf("unknown format %q (want %s)", format, strings.Join(Formats, ", "))
}

// WriteJSON writes the report as indented JSON with a final newline. The
// shape is described by [ReportSchema].
func (r *Report) WriteJSON(w io.Writer) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

func (r *Report) title() string {
	side := func(s Side) string {
		label := s.Contract
		if s.Version != "" {
			label += " " + s.Version
		}
		if s.Source != "" {
			label += " (" + s.Source + ")"
		}
		return label
	}
	return side(r.Old) + " → " + side(r.New)
}

func (r *Report) verdict() string {
	s := r.Summary
	rest := fmt.Sprintf("(%d %s, %d info, %d suppressed)", s.Warning, plural(s.Warning, "warning", "warnings"), s.Info, s.Suppressed)
	if s.Breaking == 0 {
		return "no breaking changes " + rest
	}
	return fmt.Sprintf("%d breaking %s %s", s.Breaking, plural(s.Breaking, "change", "changes"), rest)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// WriteText writes a plain-text report for terminals.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "stitch diff: %s\n", r.title())
	for _, f := range r.Findings {
		sev := strings.ToUpper(string(f.Severity))
		if f.Suppressed {
			sev += " (suppressed)"
		}
		fmt.Fprintf(&b, "\n%s %s\n  %s\n", sev, f.Rule, f.Surface)
		if len(f.AlsoAffects) > 0 {
			fmt.Fprintf(&b, "  also: %s\n", strings.Join(f.AlsoAffects, ", "))
		}
		if ops := f.usedBy(); ops != "" {
			fmt.Fprintf(&b, "  used by: %s\n", ops)
		}
		fmt.Fprintf(&b, "  at %s\n  %s\n", f.Location, f.Message)
		if f.Pos.IsValid() {
			fmt.Fprintf(&b, "  %s\n", f.Pos)
		}
		fmt.Fprintf(&b, "  fingerprint %s", f.Fingerprint)
		if f.Suppressed {
			fmt.Fprintf(&b, " — accepted: %s", f.SuppressionReason)
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "\n%s\n", r.verdict())
	_, err := io.WriteString(w, b.String())
	return err
}

// MarkdownMarker is the first line of the markdown report, so a workflow
// can find and update its previous pull-request comment in place.
const MarkdownMarker = "<!-- stitch-diff -->"

// WriteMarkdown writes a pull-request comment: a verdict, a summary table,
// one table per severity and how to accept a change.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString(MarkdownMarker + "\n")
	fmt.Fprintf(&b, "## stitch diff: %s\n\n", mdEscape(r.title()))
	if r.Summary.Breaking > 0 {
		fmt.Fprintf(&b, ":x: **%s**\n\n", r.verdict())
	} else {
		fmt.Fprintf(&b, ":white_check_mark: **%s**\n\n", r.verdict())
	}
	b.WriteString("| Severity | Count |\n|---|---:|\n")
	fmt.Fprintf(&b, "| breaking | %d |\n| warning | %d |\n| info | %d |\n| suppressed | %d |\n",
		r.Summary.Breaking, r.Summary.Warning, r.Summary.Info, r.Summary.Suppressed)
	groups := []struct {
		title string
		open  bool
		keep  func(Finding) bool
	}{
		{"Breaking changes", true, func(f Finding) bool { return !f.Suppressed && f.Severity == Breaking }},
		{"Warnings", true, func(f Finding) bool { return !f.Suppressed && f.Severity == Warning }},
		{"Compatible changes", false, func(f Finding) bool { return !f.Suppressed && f.Severity == Info }},
		{"Accepted (suppressed)", false, func(f Finding) bool { return f.Suppressed }},
	}
	for _, g := range groups {
		var rows []Finding
		for _, f := range r.Findings {
			if g.keep(f) {
				rows = append(rows, f)
			}
		}
		if len(rows) == 0 {
			continue
		}
		open := ""
		if g.open {
			open = " open"
		}
		fmt.Fprintf(&b, "\n<details%s><summary><b>%s (%d)</b></summary>\n\n", open, g.title, len(rows))
		b.WriteString("| Rule | Surface | Location | Change | Source | Fingerprint |\n|---|---|---|---|---|---|\n")
		for _, f := range rows {
			msg := f.Message
			if f.Suppressed {
				msg += " — accepted: " + f.SuppressionReason
			}
			src := ""
			if f.Pos.IsValid() {
				src = "`" + f.Pos.String() + "`"
			}
			surface := mdEscape(f.Surface)
			if len(f.AlsoAffects) > 0 {
				also := make([]string, len(f.AlsoAffects))
				for i, a := range f.AlsoAffects {
					also[i] = mdEscape(a)
				}
				surface += "<br>also: " + strings.Join(also, ", ")
			}
			if ops := f.usedBy(); ops != "" {
				surface += "<br>used by: " + mdEscape(ops)
			}
			fmt.Fprintf(&b, "| `%s` | %s | `%s` | %s | %s | `%s` |\n", f.Rule, surface, mdEscape(f.Location), mdEscape(msg), src, f.Fingerprint)
		}
		b.WriteString("\n</details>\n")
	}
	if r.Summary.Breaking > 0 {
		var first string
		for _, f := range r.Findings {
			if f.Severity == Breaking && !f.Suppressed {
				first = f.Fingerprint
				break
			}
		}
		fmt.Fprintf(&b, "\n### Accepting a breaking change\n\nIf a breaking change is intended (callers migrated, endpoint unused, new major version), "+
			"accept it by fingerprint in `%s` next to the contract and commit it with this pull request:\n\n"+
			"```yaml\nsuppressions:\n  - fingerprint: %s\n    reason: \"why this change is safe\"\n    expires: 2099-12-31 # optional\n```\n",
			SuppressionsFile, first)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// usedBy lists the subjects of a finding when the location alone does not
// name them: a change inside a definition, or one reaching several
// subjects (an error code several operations declare).
func (f *Finding) usedBy() string {
	if len(f.Operations) == 0 || len(f.Operations) == 1 && f.Operations[0] == f.Operation() {
		return ""
	}
	return strings.Join(f.Operations, ", ")
}

func mdEscape(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "\n", " ")
	return s
}

// WriteGitHubActions writes one workflow command per finding: ::error for
// breaking, ::warning for warnings, ::notice for info and suppressed
// findings, each with file, line and col when the position is known.
func (r *Report) WriteGitHubActions(w io.Writer) error {
	var b strings.Builder
	for _, f := range r.Findings {
		level := "notice"
		switch {
		case f.Suppressed:
		case f.Severity == Breaking:
			level = "error"
		case f.Severity == Warning:
			level = "warning"
		}
		var props []string
		if f.Pos.IsValid() {
			props = append(props, "file="+ghaProperty(f.Pos.File), fmt.Sprintf("line=%d", f.Pos.Line))
			if f.Pos.Col > 0 {
				props = append(props, fmt.Sprintf("col=%d", f.Pos.Col))
			}
		}
		props = append(props, "title="+ghaProperty(f.Rule))
		msg := f.Surface + ": " + f.Message
		if len(f.AlsoAffects) > 0 {
			msg += " (also affects " + strings.Join(f.AlsoAffects, ", ") + ")"
		}
		if ops := f.usedBy(); ops != "" {
			msg += " (used by " + ops + ")"
		}
		msg += " [" + f.Location + "; fingerprint " + f.Fingerprint + "]"
		if f.Suppressed {
			msg += " (accepted: " + f.SuppressionReason + ")"
		}
		fmt.Fprintf(&b, "::%s %s::%s\n", level, strings.Join(props, ","), ghaData(msg))
	}
	fmt.Fprintf(&b, "stitch diff: %s: %s\n", r.title(), r.verdict())
	_, err := io.WriteString(w, b.String())
	return err
}

func ghaData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func ghaProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
