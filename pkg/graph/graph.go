// Package graph holds the canonical graph of a stitchkit contract: the one
// data structure every projection (HTTP routes, MCP/Agent/CLI tool surfaces,
// realtime topology, manifests, OpenAPI, AsyncAPI, review) is computed from.
//
// A Graph is produced by package compile from CUE and written as graph.json;
// [Load] reads it back (and refuses a tampered file) without linking CUE, so
// a server built from a compiled graph carries no CUE dependency.
//
// Every schema in the graph is a canonical JSON Schema 2020-12 document held
// once in [Graph.Schemas] and referred to by its [Digest].
//
//	g, err := graph.Load(bytes)           // or check.Compile(ctx, dir)
//	for _, op := range g.Operations() { fmt.Println(op.ID()) }
package graph

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// GraphVersion is the version of the graph.json shape. Bump it whenever a
// field is added, removed or changes meaning.
const GraphVersion = 1

// Transport names a surface an operation can be exposed on.
type Transport string

// The transports of the contract language, in their canonical order.
const (
	HTTP  Transport = "HTTP"
	MCP   Transport = "MCP"
	AGENT Transport = "AGENT"
	CLI   Transport = "CLI"
)

// Transports lists every transport in canonical order (HTTP, MCP, AGENT, CLI).
var Transports = []Transport{HTTP, MCP, AGENT, CLI}

// Methods lists the HTTP methods the contract language accepts.
var Methods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"}

// Graph is one compiled contract.
type Graph struct {
	// GraphVersion is always [GraphVersion] for graphs this package writes.
	GraphVersion int `json:"graphVersion"`
	// DigestVersion is always [DigestVersion].
	DigestVersion int `json:"digestVersion"`
	// Generator records what produced the schemas; JSON Schema generation
	// may change between CUE releases, so the CUE version is pinned here.
	Generator Generator `json:"generator"`

	Name    string `json:"name"`
	Version string `json:"version"`
	Info    Info   `json:"info"`

	// Errors are the application error codes the contract declares, sorted
	// by code. The framework registry is [FrameworkErrors].
	Errors []ErrorCode `json:"errors"`
	// Services are sorted by name.
	Services []Service `json:"services"`
	// RuntimeTools are pathless tools, sorted by name.
	RuntimeTools []RuntimeTool `json:"runtimeTools"`
	// CliCommands are CLI-only native commands (no operation identity),
	// sorted by name.
	CliCommands []CliCommand `json:"cliCommands"`
	Surfaces    Surfaces     `json:"surfaces"`
	Policy      Policy       `json:"policy"`
	// Realtime contracts, sorted by name. Empty contracts are kept.
	Realtime []RealtimeContract `json:"realtime"`
	// Schemas maps each digest to its canonical JSON Schema bytes.
	Schemas map[Digest]json.RawMessage `json:"schemas"`

	// Sources maps node paths (see [NodePath]) to their position in the
	// contract source. It is not part of graph.json: positions change when a
	// file is reformatted, and graph.json must not.
	Sources map[string]Pos `json:"-"`
}

// Generator records the tools that produced a graph.
type Generator struct {
	// Stitchkit is the graph compiler's identity, e.g. "stitchkit.dev/stitchkit".
	Stitchkit string `json:"stitchkit"`
	// CUE is the cuelang.org/go version whose jsonschema generator was used.
	CUE string `json:"cue"`
}

// Info is descriptive contract metadata.
type Info struct {
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
}

// ErrorCode is one entry of an error registry.
type ErrorCode struct {
	Code    string `json:"code"`
	Status  int    `json:"status"`
	Message string `json:"message"`
	// Internal marks a framework code whose message and details describe
	// the server's own fault: a caller sees the registry message only.
	// It is never part of a graph's bytes.
	Internal bool `json:"-"`
}

// Service groups operations under one name and URL prefix.
type Service struct {
	Name string `json:"name"`
	// Prefix is the service's HTTP prefix ("/<name>" unless declared).
	Prefix string `json:"prefix"`
	// Scope is the service's default scope ("public" if none was declared).
	Scope string `json:"scope"`
	// Operations are sorted by action.
	Operations []Operation `json:"operations"`
}

// Operation is one contract operation. Its identity is Service.Action.
type Operation struct {
	Service string `json:"service"`
	Action  string `json:"action"`
	// Method is the HTTP (and semantic) method.
	Method string `json:"method"`
	// Path is relative to the service prefix, in net/http pattern syntax.
	Path string `json:"path"`
	Desc string `json:"desc"`
	// Scope is the effective scope: operation, else service, else "public".
	Scope string `json:"scope"`
	// Expose is the effective transport list, in canonical order.
	Expose []Transport `json:"expose"`
	// Meta is the one-level merge of contract, service and operation meta;
	// absent when none of them declared meta.
	Meta json.RawMessage `json:"meta,omitempty"`
	// Schemas: empty when the operation declares no such schema. Params is
	// synthesised (required strings) when the path has names and #params is
	// absent.
	Params Digest `json:"params,omitempty"`
	Query  Digest `json:"query,omitempty"`
	Input  Digest `json:"input,omitempty"`
	Output Digest `json:"output,omitempty"`
	// ParamsSynthesized reports that Params was derived from the path.
	ParamsSynthesized bool `json:"paramsSynthesized,omitempty"`
	// Errors are the declared application error codes, sorted.
	Errors []string `json:"errors,omitempty"`
	Tool   *Tool    `json:"tool,omitempty"`
	// Examples hold canonical JSON objects {params?, query?, input?, output?}.
	Examples []json.RawMessage `json:"examples,omitempty"`
}

// ID returns the operation identity "service.action".
func (o *Operation) ID() string { return o.Service + "." + o.Action }

// Exposed reports whether the operation is exposed on t.
func (o *Operation) Exposed(t Transport) bool { return slices.Contains(o.Expose, t) }

// PathNames returns the names of the path's {name} and {name...} segments in
// order.
func (o *Operation) PathNames() []string { return PathNames(o.Path) }

// PathNames returns the wildcard names of a net/http style path pattern.
func PathNames(path string) []string {
	var names []string
	for _, seg := range strings.Split(path, "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			names = append(names, strings.TrimSuffix(seg[1:len(seg)-1], "..."))
		}
	}
	return names
}

// PathShape replaces every wildcard name of a path pattern by "{}" (or
// "{...}" for a final rest wildcard), so patterns that match the same URLs
// compare equal: /tasks/{id} and /tasks/{taskId} have one shape.
func PathShape(path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			if strings.HasSuffix(s, "...}") {
				segs[i] = "{...}"
			} else {
				segs[i] = "{}"
			}
		}
	}
	return strings.Join(segs, "/")
}

// Tool holds tool-only options of an operation.
type Tool struct {
	// Name is an explicit tool name; empty means derived.
	Name        string       `json:"name,omitempty"`
	Annotations *Annotations `json:"annotations,omitempty"`
}

// Annotations are MCP tool hints. They are hints only, never security.
type Annotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// Identity is the path-free identity of an operation: what hooks, audit and
// manifests key on.
type Identity struct {
	Service string `json:"service"`
	Action  string `json:"action"`
	Method  string `json:"method"`
	Scope   string `json:"scope"`
}

// RuntimeTool is a pathless tool with an operation identity but no route.
type RuntimeTool struct {
	Name     string          `json:"name"`
	Desc     string          `json:"desc"`
	Identity Identity        `json:"identity"`
	Meta     json.RawMessage `json:"meta,omitempty"`
	Input    Digest          `json:"input"`
	Output   Digest          `json:"output,omitempty"`
	// Transports defaults to MCP+AGENT; canonical order.
	Transports  []Transport       `json:"transports"`
	Annotations *Annotations      `json:"annotations,omitempty"`
	Examples    []json.RawMessage `json:"examples,omitempty"`
}

// CliCommand is a CLI-only native command: it has no operation identity and
// never appears on MCP or Agent surfaces.
type CliCommand struct {
	Name   string `json:"name"`
	Desc   string `json:"desc"`
	Input  Digest `json:"input,omitempty"`
	Output Digest `json:"output,omitempty"`
}

// Surfaces selects which exposed operations each tool transport lists. A nil
// selection means "every operation exposed to that transport".
type Surfaces struct {
	MCP   *MCPSurfaces `json:"mcp,omitempty"`
	Agent *Selection   `json:"agent,omitempty"`
	CLI   *Selection   `json:"cli,omitempty"`
}

// MCPSurfaces is either one default selection or a set of named ones, never
// both.
type MCPSurfaces struct {
	Default *Selection `json:"default,omitempty"`
	// Named surfaces, sorted by name.
	Named []NamedSelection `json:"named,omitempty"`
}

// NamedSelection is one finite named MCP surface.
type NamedSelection struct {
	Name      string    `json:"name"`
	Selection Selection `json:"selection"`
}

// Selection includes and excludes operations by pattern: "service.action"
// with '*' wildcards, or "runtime.NAME" for runtime tools. An absent (nil)
// Include means everything exposed; an explicit empty one (non-nil, length
// 0, written "include": []) selects nothing. Patterns are sorted and
// de-duplicated.
type Selection struct {
	Include []string `json:"include,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
}

// MarshalJSON writes "include" whenever Include is non-nil, even empty, so
// an explicit empty selection survives graph.json (decoding "include": []
// gives a non-nil empty slice, an absent key nil).
func (s Selection) MarshalJSON() ([]byte, error) {
	type wire struct {
		Include *[]string `json:"include,omitempty"`
		Exclude []string  `json:"exclude,omitempty"`
	}
	w := wire{Exclude: s.Exclude}
	if s.Include != nil {
		inc := s.Include
		w.Include = &inc
	}
	return json.Marshal(w)
}

// Policy is the presentation policy of the tool surfaces.
type Policy struct {
	MCP   MCPPolicy   `json:"mcp"`
	Agent AgentPolicy `json:"agent"`
}

// Schema validation policies for MCP preparation.
const (
	ValidationThrow = "throw"
	ValidationWarn  = "warn"
	ValidationSkip  = "skip"
)

// MCPPolicy is the one global MCP preparation policy, applied identically to
// the default and every named MCP surface.
type MCPPolicy struct {
	FlattenUnionInput bool `json:"flattenUnionInput"`
	// SchemaValidation is throw (default), warn or skip.
	SchemaValidation       string   `json:"schemaValidation"`
	RequireTypedProperties bool     `json:"requireTypedProperties"`
	AllowUntyped           []string `json:"allowUntyped,omitempty"`
	RequirePortableFormats bool     `json:"requirePortableFormats"`
	AllowFormats           []string `json:"allowFormats,omitempty"`
}

// AgentPolicy is the Agent surface's own presentation policy.
type AgentPolicy struct {
	FlattenUnionInput bool `json:"flattenUnionInput"`
	// Strict prepares schemas for OpenAI strict function calling.
	Strict bool `json:"strict"`
}

// RealtimeContract is a named pair of event registries.
type RealtimeContract struct {
	Name string `json:"name"`
	// ServerToClient and ClientToServer events, each sorted by name.
	ServerToClient []Event `json:"serverToClient"`
	ClientToServer []Event `json:"clientToServer"`
}

// Realtime directions, in manifest order.
const (
	ServerToClient = "serverToClient"
	ClientToServer = "clientToServer"
)

// Event is one realtime event. Args is the digest of a tuple schema (an
// array schema with prefixItems); Ack travels the opposite way.
type Event struct {
	Name     string            `json:"name"`
	Desc     string            `json:"desc,omitempty"`
	Args     Digest            `json:"args"`
	Ack      Digest            `json:"ack,omitempty"`
	Examples []json.RawMessage `json:"examples,omitempty"`
}

// Pos is a position in a contract source file.
type Pos struct {
	File string
	Line int
	Col  int
}

// String formats p as file:line:col.
func (p Pos) String() string {
	if p.File == "" && p.Line == 0 {
		return "-"
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// IsValid reports whether p names a file position.
func (p Pos) IsValid() bool { return p.File != "" && p.Line > 0 }

// NodePath builds the key used in [Graph.Sources]: the CUE path of the node,
// e.g. NodePath("services", "tasks", "operations", "list", "#input").
func NodePath(parts ...string) string { return strings.Join(parts, ".") }

// Operations returns every operation of every service in graph order
// (service name, then action).
func (g *Graph) Operations() []*Operation {
	var ops []*Operation
	for i := range g.Services {
		for j := range g.Services[i].Operations {
			ops = append(ops, &g.Services[i].Operations[j])
		}
	}
	return ops
}

// Service returns the named service or nil.
func (g *Graph) Service(name string) *Service {
	for i := range g.Services {
		if g.Services[i].Name == name {
			return &g.Services[i]
		}
	}
	return nil
}

// Operation returns the operation with identity service.action, or nil.
func (g *Graph) Operation(service, action string) *Operation {
	s := g.Service(service)
	if s == nil {
		return nil
	}
	for i := range s.Operations {
		if s.Operations[i].Action == action {
			return &s.Operations[i]
		}
	}
	return nil
}

// Schema returns the canonical JSON Schema bytes for d, or nil if d is empty
// or unknown.
func (g *Graph) Schema(d Digest) json.RawMessage {
	if d == "" {
		return nil
	}
	return g.Schemas[d]
}

// AddSchema canonicalises a JSON Schema document, stores it and returns its
// digest.
func (g *Graph) AddSchema(schema any) (Digest, error) {
	b, d, err := SchemaDigest(schema)
	if err != nil {
		return "", err
	}
	if g.Schemas == nil {
		g.Schemas = map[Digest]json.RawMessage{}
	}
	g.Schemas[d] = b
	return d, nil
}

// Source returns the recorded source position of a node path, or the zero
// Pos.
func (g *Graph) Source(path string) Pos {
	if g.Sources == nil {
		return Pos{}
	}
	return g.Sources[path]
}

// ErrorRegistry returns the framework registry merged with the contract's
// application codes, sorted by code.
func (g *Graph) ErrorRegistry() []ErrorCode {
	byCode := map[string]ErrorCode{}
	for _, e := range FrameworkErrors {
		byCode[e.Code] = e
	}
	for _, e := range g.Errors {
		byCode[e.Code] = e
	}
	out := make([]ErrorCode, 0, len(byCode))
	for _, e := range byCode {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b ErrorCode) int { return strings.Compare(a.Code, b.Code) })
	return out
}
