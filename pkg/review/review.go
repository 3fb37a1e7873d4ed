// Package review classifies the changes between two versions of a stitchkit
// contract: what changed, on which surface (HTTP route, MCP tool on a named
// surface, Agent tool, CLI command, realtime event, error code, scope), and
// whether it breaks a caller.
//
// Start with [Compare]: it takes the old and the new [graph.Graph] and
// returns a [Report] whose findings are sorted and byte-stable. Every
// [Finding] carries a stable rule id, a fingerprint that survives unrelated
// edits (so a reviewed change can be accepted by a [Suppressions] file), a
// severity, the surface callers see, a location (operation, tool or event
// plus a JSON pointer into the schema) and the source position in the new
// contract.
//
//	old, _ := check.Compile(ctx, "old/contracts")
//	new, _ := check.Compile(ctx, "contracts")
//	rep, err := review.Compare(old, new, nil)
//	if err != nil { ... }
//	rep.WriteText(os.Stdout)
//	if rep.Breaking() > 0 { os.Exit(100) }
//
// Direction decides severity: narrowing what the server accepts (params,
// query, request bodies, tool arguments, clientToServer event arguments,
// acks of serverToClient events) or widening what it returns (outputs,
// serverToClient event arguments, acks of clientToServer events) breaks
// callers. The rules and their severities are listed in docs/review.md and
// by [Rules].
//
// Schemas are compared as the sets of values they accept wherever that can
// be decided: a $ref and its siblings are a conjunction, enum values are
// checked against the other side's schema with pkg/validate, pattern
// inclusion is decided on the regular expressions; keyword by keyword only
// where it cannot. Each change is classified in every view callers have of
// it — HTTP (params, query on the wire, body) and the tools' flat arguments
// — and the findings one edit causes are grouped: a change inside a named
// definition is one finding, located at the definition's changed field,
// listing every operation, event and surface that uses it
// ([Finding.Operations], [Finding.AlsoAffects]). The version change is held
// to SemVer.
package review

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/project"
)

// ReportVersion is the version of the JSON report shape
// (report.schema.json). Bump it when a field is removed, changes meaning or
// becomes required; an added optional field (consumers ignore what they do
// not know) keeps the version.
const ReportVersion = 2

// Severity is how much a change matters to existing callers.
type Severity string

// Severities, most severe first.
const (
	// Breaking changes break existing callers; they fail `stitch diff`
	// (exit 100) unless suppressed.
	Breaking Severity = "breaking"
	// Warning changes may break some callers and deserve a reviewer's look.
	Warning Severity = "warning"
	// Info changes are compatible.
	Info Severity = "info"
)

func (s Severity) rank() int {
	switch s {
	case Breaking:
		return 0
	case Warning:
		return 1
	}
	return 2
}

// Finding is one classified change.
type Finding struct {
	// Rule is the stable rule id, e.g. "request-required-property-added".
	Rule string `json:"rule"`
	// Fingerprint is the first 16 hex characters of the SHA-256 of the
	// rule, the surface key and the location. It does not depend on
	// source positions, messages or unrelated parts of the contract, so a
	// suppression keeps matching the same change.
	Fingerprint string `json:"fingerprint"`
	// Severity is breaking, warning or info.
	Severity Severity `json:"severity"`
	// Surface is what callers see, e.g. "HTTP GET /tasks/{id}",
	// "MCP tool list_tasks (surface member)", "AGENT tool list_tasks",
	// "CLI command list_tasks", "REALTIME board.clientToServer.watch",
	// "error TASK_NOT_FOUND" or "operation tasks.get". For a schema change
	// it is the first surface the change reaches.
	Surface string `json:"surface"`
	// AlsoAffects names the other surfaces the change reaches, labelled
	// like Surface: HTTP routes first, then tool rows by transport (AGENT,
	// CLI, MCP) and surface name, then realtime events, e.g. ["AGENT tool
	// list_tasks", "MCP tool list_tasks (surface admin)"]. A schema change
	// lists exactly the surfaces whose callers see it (a field moved from
	// #input to #query reaches the HTTP route, not the tools, whose
	// advertised input is unchanged); a finding about an operation as a
	// whole (scope, description, errors) lists every surface it is visible
	// on; the tool rows one edit added, removed or renamed are one finding
	// naming each row. Empty for findings about one surface (a route, one
	// surface's selection). It is not part of the fingerprint.
	AlsoAffects []string `json:"alsoAffects,omitempty"`
	// Operations are the subjects the change reaches, sorted: operations
	// (service.action), runtime tools (runtime.NAME), CLI-only commands
	// (cli.NAME) and realtime events (contract.direction.event). One edit
	// of a shared definition is one finding listing every subject using
	// it; an error status change lists the operations declaring the code.
	Operations []string `json:"operations,omitempty"`
	// Location is the operation, tool, event, error code or surface id,
	// optionally followed by "#" and a JSON pointer into the schema, e.g.
	// "tasks.get#/output/properties/title/maxLength". A change made inside
	// a named definition is located in the definition, written as in CUE:
	// "#Task#/properties/priority/enum".
	Location string `json:"location"`
	// Message explains the change to a human.
	Message string `json:"message"`
	// Pos is the source position in the new contract — for a change inside
	// a definition, the definition's field that changed; for something
	// removed, the line now standing where it stood (a line the diff
	// shows). It is the zero Pos when the new side was read from
	// graph.json (then a removal keeps its position in the old contract).
	Pos graph.Pos `json:"-"`
	// Suppressed reports that a suppression accepted this finding; it then
	// does not count as breaking.
	Suppressed bool `json:"suppressed,omitempty"`
	// SuppressionReason is the reason given by the suppression.
	SuppressionReason string `json:"suppressionReason,omitempty"`

	surfaceKey string // part of the fingerprint: transport and surface name for tool rows

	// serviceEdit marks a finding of one service edit (see
	// groupServiceEdits).
	serviceEdit *serviceEdit

	// schema findings are grouped: the same change seen on several
	// surfaces (or, in a definition, by several subjects) is one finding.
	groupable         bool
	def, defPtr       string
	shared, sharedPtr string
	surfaces          []string
}

// Operation returns the id part of Location (before any "#"): the
// operation, tool, event or error code — or "#Name" for a change inside a
// definition (then [Finding.Operations] lists who uses it).
func (f *Finding) Operation() string {
	if strings.HasPrefix(f.Location, "#") {
		name, _, _ := strings.Cut(f.Location[1:], "#")
		return "#" + name
	}
	id, _, _ := strings.Cut(f.Location, "#")
	return id
}

// Affects reports whether the finding concerns subject (an operation id,
// runtime.NAME, cli.NAME or an event id).
func (f *Finding) Affects(subject string) bool {
	return slices.Contains(f.Operations, subject) || f.Operation() == subject
}

type findingJSON struct {
	Rule              string   `json:"rule"`
	Fingerprint       string   `json:"fingerprint"`
	Severity          Severity `json:"severity"`
	Surface           string   `json:"surface"`
	AlsoAffects       []string `json:"alsoAffects,omitempty"`
	Operations        []string `json:"operations,omitempty"`
	Location          string   `json:"location"`
	Message           string   `json:"message"`
	Pos               *posJSON `json:"pos,omitempty"`
	Suppressed        bool     `json:"suppressed,omitempty"`
	SuppressionReason string   `json:"suppressionReason,omitempty"`
}

type posJSON struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
}

// MarshalJSON writes the finding with its position as {file, line, col}.
func (f Finding) MarshalJSON() ([]byte, error) {
	j := findingJSON{Rule: f.Rule, Fingerprint: f.Fingerprint, Severity: f.Severity, Surface: f.Surface, AlsoAffects: f.AlsoAffects,
		Operations: f.Operations, Location: f.Location, Message: f.Message, Suppressed: f.Suppressed, SuppressionReason: f.SuppressionReason}
	if f.Pos.IsValid() {
		j.Pos = &posJSON{File: f.Pos.File, Line: f.Pos.Line, Col: f.Pos.Col}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(j); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON reads a finding written by MarshalJSON.
func (f *Finding) UnmarshalJSON(b []byte) error {
	var j findingJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*f = Finding{Rule: j.Rule, Fingerprint: j.Fingerprint, Severity: j.Severity, Surface: j.Surface, AlsoAffects: j.AlsoAffects,
		Operations: j.Operations, Location: j.Location, Message: j.Message, Suppressed: j.Suppressed, SuppressionReason: j.SuppressionReason}
	if j.Pos != nil {
		f.Pos = graph.Pos{File: j.Pos.File, Line: j.Pos.Line, Col: j.Pos.Col}
	}
	return nil
}

// Side describes one side of a comparison.
type Side struct {
	// Source is where the side was read from (a folder, a graph.json file
	// or git:REF:DIR); set by the caller through [Options].
	Source string `json:"source,omitempty"`
	// Contract and Version are the contract's name and version.
	Contract string `json:"contract"`
	Version  string `json:"version"`
}

// Summary counts findings. Suppressed findings count only as Suppressed.
type Summary struct {
	Breaking   int `json:"breaking"`
	Warning    int `json:"warning"`
	Info       int `json:"info"`
	Suppressed int `json:"suppressed"`
}

// Report is the result of [Compare].
type Report struct {
	// ReportVersion is [ReportVersion].
	ReportVersion int     `json:"reportVersion"`
	Old           Side    `json:"old"`
	New           Side    `json:"new"`
	Summary       Summary `json:"summary"`
	// Findings are sorted by severity, surface, location, rule and
	// fingerprint.
	Findings []Finding `json:"findings"`
}

// Breaking returns the number of unsuppressed breaking findings.
func (r *Report) Breaking() int { return r.Summary.Breaking }

// Options configures [Compare]. A nil *Options means defaults.
type Options struct {
	// OldSource and NewSource label the two sides in the report.
	OldSource, NewSource string
	// Suppressions accepts reviewed findings by fingerprint; nil means none.
	Suppressions *Suppressions
	// Now is the date suppressions expire against; zero means time.Now.
	Now time.Time
}

// Compare classifies every change from old to new. It fails when either
// graph cannot be projected (the comparison would be incomplete), never by
// returning a partial report.
func Compare(old, new *graph.Graph, opts *Options) (*Report, error) {
	if opts == nil {
		opts = &Options{}
	}
	if old == nil || new == nil {
		return nil, fmt.Errorf("review: both graphs are required")
	}
	if err := old.Validate(); err != nil {
		return nil, fmt.Errorf("review: old contract: %w", err)
	}
	if err := new.Validate(); err != nil {
		return nil, fmt.Errorf("review: new contract: %w", err)
	}
	c := &comparer{old: old, new: new, vals: newValueChecker()}
	var err error
	if c.oldTools, err = project.ToolSurfaces(old); err != nil {
		return nil, fmt.Errorf("review: old contract: %w", err)
	}
	if c.newTools, err = project.ToolSurfaces(new); err != nil {
		return nil, fmt.Errorf("review: new contract: %w", err)
	}
	c.oldRoutes = routesByOp(old)
	c.newRoutes = routesByOp(new)
	steps := []func() error{c.contract, c.errors, c.operations, c.toolSurfaces, c.runtimeTools, c.cliCommands, c.realtime, c.policy}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, fmt.Errorf("review: %w", err)
		}
	}
	c.group()
	c.groupServiceEdits()
	c.groupToolRows()
	c.versions()
	for i := range c.findings {
		f := &c.findings[i]
		f.Fingerprint = fingerprint(f.Rule, f.surfaceKey, f.Location)
	}
	rep := &Report{
		ReportVersion: ReportVersion,
		Old:           Side{Source: opts.OldSource, Contract: old.Name, Version: old.Version},
		New:           Side{Source: opts.NewSource, Contract: new.Name, Version: new.Version},
		Findings:      c.findings,
	}
	if opts.Suppressions != nil {
		now := opts.Now
		if now.IsZero() {
			now = time.Now()
		}
		opts.Suppressions.apply(rep, now)
	}
	rep.finish()
	return rep, nil
}

// finish de-duplicates, sorts and counts the findings.
func (r *Report) finish() {
	sortFindings(r.Findings)
	r.Findings = slices.CompactFunc(r.Findings, func(a, b Finding) bool {
		return a.Fingerprint == b.Fingerprint && a.Message == b.Message && a.Surface == b.Surface
	})
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	r.Summary = Summary{}
	for _, f := range r.Findings {
		switch {
		case f.Suppressed:
			r.Summary.Suppressed++
		case f.Severity == Breaking:
			r.Summary.Breaking++
		case f.Severity == Warning:
			r.Summary.Warning++
		default:
			r.Summary.Info++
		}
	}
}

func sortFindings(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.Severity.rank(), b.Severity.rank()),
			graph.CompareUTF16(a.Surface, b.Surface), graph.CompareUTF16(a.Location, b.Location),
			graph.CompareUTF16(a.Rule, b.Rule), graph.CompareUTF16(a.Fingerprint, b.Fingerprint),
			graph.CompareUTF16(a.Message, b.Message))
	})
}

// fingerprint hashes what identifies a change and nothing else.
func fingerprint(rule, surfaceKey, location string) string {
	sum := sha256.Sum256([]byte(rule + "\x00" + surfaceKey + "\x00" + location))
	return hex.EncodeToString(sum[:])[:16]
}
