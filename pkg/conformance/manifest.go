package conformance

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/project"
)

// ManifestVersion is the version of the manifest shape this build writes.
// Bump it whenever a row gains, loses or changes a field.
const ManifestVersion = 2

// Transports of a manifest row. REALTIME exists only for extensions.
const (
	TransportHTTP     = "HTTP"
	TransportMCP      = "MCP"
	TransportAGENT    = "AGENT"
	TransportCLI      = "CLI"
	TransportREALTIME = "REALTIME"
)

// Manifest is the surface manifest v2 (research conformance §5, with paths
// in {name} form and a query digest).
type Manifest struct {
	ManifestVersion   int             `json:"manifestVersion"`
	DigestVersion     int             `json:"digestVersion"`
	Operations        []Operation     `json:"operations"`
	ToolSurfaces      []ToolSurface   `json:"toolSurfaces"`
	RealtimeContracts []string        `json:"realtimeContracts"`
	Realtime          []RealtimeEvent `json:"realtime"`
	CliOnly           []CliCommand    `json:"cliOnly"`
	Extensions        []Extension     `json:"extensions"`
	// Options are the presentation options of the projection the manifest
	// was built from; nil (omitted) when every option has its default.
	Options *ManifestOptions `json:"options,omitempty"`
}

// ManifestOptions records the [project.Options] a manifest was built with,
// so `stitch manifest --check` rebuilds the same projection (and its hint
// names the same flags). Each field is omitted at its default.
type ManifestOptions struct {
	// HTTPPrefix is project.Options.HTTPPrefix.
	HTTPPrefix string `json:"httpPrefix,omitempty"`
}

// ProjectOptions returns the projection options the manifest records.
func (m *Manifest) ProjectOptions() project.Options {
	if m.Options == nil {
		return project.Options{}
	}
	return project.Options{HTTPPrefix: m.Options.HTTPPrefix}
}

func manifestOptions(o project.Options) *ManifestOptions {
	if o == (project.Options{}) {
		return nil
	}
	return &ManifestOptions{HTTPPrefix: o.HTTPPrefix}
}

// Operation is one operation identity: every contract operation (exposed on
// HTTP or not) and every runtime tool.
type Operation struct {
	// Kind is "contract", "runtime" or "native".
	Kind    string `json:"kind"`
	Service string `json:"service"`
	Action  string `json:"action"`
	Method  string `json:"method"`
	// Scope is the effective scope; stitchkit always has one ("public" by
	// default), so it is never null.
	Scope       string    `json:"scope"`
	Description string    `json:"description"`
	Schemas     Schemas   `json:"schemas"`
	HTTP        []HTTPRow `json:"http"`
}

// Schemas are the digests of an operation's contract schemas; an absent
// schema encodes as null. Runtime tools have only input and output.
type Schemas struct {
	Params Digest `json:"params"`
	Query  Digest `json:"query"`
	Input  Digest `json:"input"`
	Output Digest `json:"output"`
}

// Digest is a schema digest that encodes as JSON null when empty.
type Digest graph.Digest

// MarshalJSON writes null for the empty digest.
func (d Digest) MarshalJSON() ([]byte, error) {
	if d == "" {
		return []byte("null"), nil
	}
	return json.Marshal(string(d))
}

// HTTPRow is one route of an operation; Path is the full net/http pattern
// path ({name}, final {name...}).
type HTTPRow struct {
	Method string `json:"method"`
	Path   string `json:"path"`
}

// ToolSurface is one tool surface. Surface is the named MCP surface, or ""
// (written as null) for the default MCP, the AGENT and the CLI surface.
type ToolSurface struct {
	Transport string `json:"transport"`
	Surface   string `json:"-"`
	Tools     []Tool `json:"tools"`
}

type toolSurfaceJSON struct {
	Transport string  `json:"transport"`
	Surface   *string `json:"surface"`
	Tools     []Tool  `json:"tools"`
}

// MarshalJSON writes the default surface as "surface": null.
func (s ToolSurface) MarshalJSON() ([]byte, error) {
	j := toolSurfaceJSON{Transport: s.Transport, Tools: s.Tools}
	if s.Surface != "" {
		j.Surface = &s.Surface
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads "surface": null as the default surface.
func (s *ToolSurface) UnmarshalJSON(b []byte) error {
	var j toolSurfaceJSON
	if err := strictUnmarshal(b, &j); err != nil {
		return err
	}
	*s = ToolSurface{Transport: j.Transport, Tools: j.Tools}
	if j.Surface != nil {
		s.Surface = *j.Surface
	}
	return nil
}

// Tool is one tool of a surface; Input is the digest of the exact input
// schema the surface advertises.
type Tool struct {
	Kind    string       `json:"kind"`
	Service string       `json:"service"`
	Action  string       `json:"action"`
	Name    string       `json:"name"`
	Input   graph.Digest `json:"input"`
}

// RealtimeEvent is one realtime event row.
type RealtimeEvent struct {
	Contract  string `json:"contract"`
	Direction string `json:"direction"`
	Event     string `json:"event"`
	// Args digests the argument tuple. CUE schemas are direction-free, so
	// Input and Output are the same digest; both are kept for the v2 shape.
	Args DirectedDigests `json:"args"`
	// Acknowledgement is nil (null) when the event takes no ack.
	Acknowledgement *DirectedDigests `json:"acknowledgement"`
}

// DirectedDigests are the input- and output-direction digests of a schema.
type DirectedDigests struct {
	Input  graph.Digest `json:"input"`
	Output graph.Digest `json:"output"`
}

// CliCommand is a CLI-only native command row. Input is the digest of its
// input schema, or of {} ("44136fa355b3678a") when it has none.
type CliCommand struct {
	Name        string       `json:"name"`
	Description string       `json:"description"`
	Input       graph.Digest `json:"input"`
	Output      Digest       `json:"output"`
}

// Extension is a route or command the application mounts outside contracts
// (a raw HTTP route, a native command, an extra realtime namespace).
type Extension struct {
	Name string `json:"name"`
	// Transport is HTTP, MCP, AGENT, CLI or REALTIME.
	Transport string `json:"transport"`
}

// Options configures [BuildManifest]; nil means defaults.
type Options struct {
	// Extensions are passed through sorted (by transport, then name).
	Extensions []Extension
	// Native are the tools a mount registers in Go code (native MCP
	// tools, kind "native"), by surface: what the MCP mount's NativeTools
	// returns. Each is listed on its surface like a contract tool; a
	// surface the graph does not declare, or a name already on the
	// surface, fails the build.
	Native []project.Surface
}

// emptyObjectDigest is digest({}), the input of a CLI-only command without
// an input schema.
const emptyObjectDigest graph.Digest = "44136fa355b3678a"

// BuildManifest builds the surface manifest v2 of the projection p: its
// HTTP routes (with p's HTTP prefix), tool surfaces and realtime topology,
// exactly what mounts built from p serve. The manifest records the
// presentation options p was built with (Manifest.Options), so a check of
// the manifest rebuilds the same projection. opts adds what a mount
// serves beside the contract (nil means none).
func BuildManifest(p *project.Projection, opts *Options) (*Manifest, error) {
	if p == nil {
		return nil, errors.New("conformance: nil projection")
	}
	if opts == nil {
		opts = &Options{}
	}
	g := p.Graph()
	tools, rt := p.Tools(), p.Realtime()
	m := &Manifest{
		Options:           manifestOptions(p.Options()),
		ManifestVersion:   ManifestVersion,
		DigestVersion:     graph.DigestVersion,
		Operations:        []Operation{},
		ToolSurfaces:      []ToolSurface{},
		RealtimeContracts: append([]string{}, rt.Contracts...),
		Realtime:          []RealtimeEvent{},
		CliOnly:           []CliCommand{},
		Extensions:        append([]Extension{}, opts.Extensions...),
	}
	ops, err := operations(p)
	if err != nil {
		return nil, err
	}
	m.Operations = ops
	for _, s := range tools.Surfaces {
		ts := ToolSurface{Transport: string(s.Transport), Surface: s.Name, Tools: []Tool{}}
		for _, t := range s.Tools {
			ts.Tools = append(ts.Tools, Tool{Kind: string(t.Kind), Service: t.Service, Action: t.Action, Name: t.Name, Input: t.InputDigest})
		}
		m.ToolSurfaces = append(m.ToolSurfaces, ts)
	}
	if err := m.addNative(opts.Native); err != nil {
		return nil, err
	}
	for _, ev := range rt.Events {
		row := RealtimeEvent{Contract: ev.Contract, Direction: ev.Direction, Event: ev.Event,
			Args: DirectedDigests{Input: ev.ArgsDigest, Output: ev.ArgsDigest}}
		if ev.AckDigest != "" {
			row.Acknowledgement = &DirectedDigests{Input: ev.AckDigest, Output: ev.AckDigest}
		}
		m.Realtime = append(m.Realtime, row)
	}
	for _, c := range g.CliCommands {
		row := CliCommand{Name: c.Name, Description: c.Desc, Input: c.Input, Output: Digest(c.Output)}
		if row.Input == "" {
			row.Input = emptyObjectDigest
		}
		m.CliOnly = append(m.CliOnly, row)
	}
	m.sort()
	return m, nil
}

// addNative lists native tools on their surfaces, and each native
// identity once among the operations (kind "native", no HTTP rows). One
// identity registered with different schemas or descriptions on two
// surfaces fails.
func (m *Manifest) addNative(native []project.Surface) error {
	var errs []error
	ops := map[string]Operation{}
	for _, ns := range native {
		ts := m.surface(string(ns.Transport), ns.Name)
		if ts == nil {
			errs = append(errs, fmt.Errorf("native tools: %s is not a surface of the graph", project.SurfaceLabel(ns.Transport, ns.Name)))
			continue
		}
		for _, t := range ns.Tools {
			if slices.ContainsFunc(ts.Tools, func(o Tool) bool { return o.Name == t.Name }) {
				errs = append(errs, fmt.Errorf("native tools: %s already has a tool named %q", project.SurfaceLabel(ns.Transport, ns.Name), t.Name))
				continue
			}
			ts.Tools = append(ts.Tools, Tool{Kind: string(project.KindNative), Service: t.Service, Action: t.Action, Name: t.Name, Input: t.InputDigest})
			scope := t.Scope
			if scope == "" {
				scope = "public"
			}
			op := Operation{Kind: string(project.KindNative), Service: t.Service, Action: t.Action, Method: t.Method, Scope: scope,
				Description: t.Description, Schemas: Schemas{Input: Digest(t.InputDigest), Output: Digest(t.OutputDigest)}, HTTP: []HTTPRow{}}
			id := t.Service + "." + t.Action
			if prev, ok := ops[id]; ok {
				if !reflect.DeepEqual(prev, op) {
					errs = append(errs, fmt.Errorf("Conflicting native operation identity %s: two definitions differ", id))
				}
				continue
			}
			ops[id] = op
			m.Operations = append(m.Operations, op)
		}
	}
	return errors.Join(errs...)
}

// operations lists every contract operation and runtime tool with its HTTP
// rows, refusing two runtime tools that claim one identity.
func operations(p *project.Projection) ([]Operation, error) {
	g := p.Graph()
	routes := map[*graph.Operation][]HTTPRow{}
	for _, r := range p.Routes() {
		routes[r.Op] = append(routes[r.Op], HTTPRow{Method: r.Method, Path: r.Path})
	}
	var ops []Operation
	for _, op := range g.Operations() {
		rows := routes[op]
		if rows == nil {
			rows = []HTTPRow{}
		}
		ops = append(ops, Operation{Kind: string(project.KindContract), Service: op.Service, Action: op.Action,
			Method: op.Method, Scope: op.Scope, Description: op.Desc,
			Schemas: Schemas{Params: Digest(op.Params), Query: Digest(op.Query), Input: Digest(op.Input), Output: Digest(op.Output)},
			HTTP:    rows})
	}
	seen := map[string]string{}
	var errs []error
	for _, rt := range g.RuntimeTools {
		id := rt.Identity.Service + "." + rt.Identity.Action
		if other, ok := seen[id]; ok {
			errs = append(errs, fmt.Errorf("Conflicting runtime operation identity %s: runtime tools %q and %q", id, other, rt.Name))
			continue
		}
		seen[id] = rt.Name
		scope := rt.Identity.Scope
		if scope == "" {
			scope = "public"
		}
		ops = append(ops, Operation{Kind: string(project.KindRuntime), Service: rt.Identity.Service, Action: rt.Identity.Action,
			Method: rt.Identity.Method, Scope: scope, Description: rt.Desc,
			Schemas: Schemas{Input: Digest(rt.Input), Output: Digest(rt.Output)}, HTTP: []HTTPRow{}})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if ops == nil {
		ops = []Operation{}
	}
	return ops, nil
}

// sort applies every sort order of research conformance §5.1.
func (m *Manifest) sort() {
	cu := graph.CompareUTF16
	slices.SortStableFunc(m.Operations, func(a, b Operation) int {
		return cmp.Or(cu(a.Service, b.Service), cu(a.Action, b.Action), cu(a.Kind, b.Kind))
	})
	for i := range m.Operations {
		rows := m.Operations[i].HTTP
		slices.SortStableFunc(rows, func(a, b HTTPRow) int { return cmp.Or(cu(a.Path, b.Path), cu(a.Method, b.Method)) })
		m.Operations[i].HTTP = slices.Compact(rows)
	}
	slices.SortStableFunc(m.ToolSurfaces, func(a, b ToolSurface) int {
		return cmp.Or(cu(a.Transport, b.Transport), cu(a.Surface, b.Surface))
	})
	for i := range m.ToolSurfaces {
		slices.SortStableFunc(m.ToolSurfaces[i].Tools, func(a, b Tool) int {
			return cmp.Or(cu(a.Name, b.Name), cu(a.Service, b.Service), cu(a.Action, b.Action), cu(a.Kind, b.Kind))
		})
	}
	slices.SortFunc(m.RealtimeContracts, cu)
	slices.SortStableFunc(m.CliOnly, func(a, b CliCommand) int { return cu(a.Name, b.Name) })
	slices.SortStableFunc(m.Extensions, func(a, b Extension) int {
		return cmp.Or(cu(a.Transport, b.Transport), cu(a.Name, b.Name))
	})
}

// Canonical returns the canonical JSON bytes of m: what digests, snapshots
// and comparisons are taken over.
func (m *Manifest) Canonical() ([]byte, error) { return graph.Canonical(m) }

// Encode returns the manifest file bytes: the canonical JSON of m indented
// with two spaces (for reviewable diffs) and a final newline. The bytes
// depend only on the manifest's content.
func (m *Manifest) Encode() ([]byte, error) { return graph.CanonicalIndent(m) }

// VersionError reports a manifest file of another manifestVersion.
type VersionError struct{ Version int }

func (e *VersionError) Error() string {
	return fmt.Sprintf("Surface snapshot is manifestVersion %d; this build writes %d. Regenerate it and review the diff — the format changed, so the first regeneration is expected to be large.", e.Version, ManifestVersion)
}

// DecodeManifest parses manifest bytes strictly: a manifest of another
// manifestVersion fails with a [*VersionError], and an unknown field, a
// wrong type or a wrong digestVersion fail too (a snapshot is regenerated,
// never hand-edited).
func DecodeManifest(data []byte) (*Manifest, error) {
	var head struct {
		ManifestVersion *int `json:"manifestVersion"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("surface manifest: %w", err)
	}
	if head.ManifestVersion == nil {
		return nil, errors.New("surface manifest: manifestVersion is missing")
	}
	if *head.ManifestVersion != ManifestVersion {
		return nil, &VersionError{Version: *head.ManifestVersion}
	}
	var m Manifest
	if err := strictUnmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("surface manifest: %w", err)
	}
	if m.DigestVersion != graph.DigestVersion {
		return nil, fmt.Errorf("surface manifest: digestVersion %d; this build computes %d: regenerate the snapshot", m.DigestVersion, graph.DigestVersion)
	}
	return &m, nil
}

func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the manifest")
	}
	return nil
}
