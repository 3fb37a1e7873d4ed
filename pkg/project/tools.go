package project

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// ToolKind says where a tool comes from.
type ToolKind string

// Tool kinds, in manifest order (contract before native before runtime).
const (
	KindContract ToolKind = "contract"
	KindRuntime  ToolKind = "runtime"
	// KindNative is a tool an application registers in Go code on a
	// mount (a native MCP tool, ADR 0048). The projector never produces
	// one; mounts describe theirs with it so the manifest can list them.
	KindNative ToolKind = "native"
)

// Tool is one prepared tool of one surface: the exact name, description and
// schemas a transport advertises. Input and Output are canonical JSON Schema
// bytes; they are computed once, when the surface is prepared, and must not
// be modified.
type Tool struct {
	Kind ToolKind
	// Service and Action are the identity: the operation's, or a runtime
	// tool's declared identity.
	Service string
	Action  string
	// Method and Scope complete the identity (semantic method, effective
	// scope).
	Method string
	Scope  string
	// Name is the advertised tool (or CLI command) name.
	Name        string
	Description string
	Annotations *graph.Annotations
	// Input is the advertised input schema: #params + #query + #input merged
	// into one flat object and prepared with the surface's presentation
	// policy. InputDigest is its digest.
	Input       json.RawMessage
	InputDigest graph.Digest
	// Output is the declared output schema (nil when none) and its digest.
	Output       json.RawMessage
	OutputDigest graph.Digest

	// Op is the operation a contract tool runs; nil for runtime tools.
	Op *graph.Operation
	// Runtime is the runtime tool descriptor; nil for contract tools.
	Runtime *graph.RuntimeTool

	// args splits flat tool arguments back into params, query and input.
	args argSplitter
}

// ID returns the tool's identity "service.action".
func (t *Tool) ID() string { return t.Service + "." + t.Action }

// label names the tool's identity in error messages, e.g.
// "contract tasks.get" or "runtime jobs.status (runtime tool status)".
func (t *Tool) label() string {
	if t.Kind == KindRuntime {
		return fmt.Sprintf("runtime %s (runtime tool %q)", t.ID(), t.Runtime.Name)
	}
	return "contract " + t.ID()
}

// SplitArgs splits the flat arguments of a tool call back into the
// operation's params, query and input objects by key, exactly inverting the
// merge of the advertised input: a key declared by #params goes to params,
// one declared by #query to query, and every other key to input. HTTP and
// the tool transports therefore accept exactly the same values. A runtime
// tool's arguments all go to input. Maps are nil when no key went there.
func (t *Tool) SplitArgs(args map[string]json.RawMessage) (params, query, input map[string]json.RawMessage) {
	return t.args.split(args)
}

// Surface is one prepared tool surface: the default or a named MCP surface,
// the Agent surface, or the CLI surface.
type Surface struct {
	Transport graph.Transport
	// Name is the named MCP surface's name; "" for a default surface.
	Name string
	// Tools are sorted by name, then service, action and kind.
	Tools []Tool
}

// Tool returns the surface's tool called name, or nil.
func (s *Surface) Tool(name string) *Tool {
	for i := range s.Tools {
		if s.Tools[i].Name == name {
			return &s.Tools[i]
		}
	}
	return nil
}

// Names returns the tool names of s in surface order.
func (s *Surface) Names() []string {
	names := make([]string, len(s.Tools))
	for i := range s.Tools {
		names[i] = s.Tools[i].Name
	}
	return names
}

// Warning is a finding of MCP preparation that does not fail it: a tool
// dropped under schemaValidation "warn", an untyped property, a
// non-portable format.
type Warning struct {
	Transport graph.Transport
	// Surface is the named MCP surface, "" for the default one.
	Surface string
	// Tool is the tool name.
	Tool string
	// Node is the graph node path of the tool's source
	// ("services.S.operations.A" or "runtimeTools.N"), for positioning the
	// warning without re-deriving tool names.
	Node    string
	Message string
}

func (w Warning) String() string {
	where := string(w.Transport)
	if w.Surface != "" {
		where += fmt.Sprintf(" surface %q", w.Surface)
	}
	return fmt.Sprintf("%s tool %q: %s", where, w.Tool, w.Message)
}

// Tools is the result of [ToolSurfaces].
type Tools struct {
	// Surfaces are sorted by transport (AGENT, CLI, MCP) then name. There is
	// always one AGENT and one CLI surface, and either one default MCP
	// surface or one per named MCP surface.
	Surfaces []Surface
	// Warnings are the non-fatal findings of MCP preparation, sorted.
	Warnings []Warning
}

// Surface returns the surface of transport t called name ("" for the
// default), or nil when the projection has none.
func (ts *Tools) Surface(t graph.Transport, name string) *Surface {
	for i := range ts.Surfaces {
		if ts.Surfaces[i].Transport == t && ts.Surfaces[i].Name == name {
			return &ts.Surfaces[i]
		}
	}
	return nil
}

// ErrMCPTopology is returned when a graph declares both a default and named
// MCP surfaces.
var ErrMCPTopology = errors.New("Surface manifest MCP topology must use either one direct surface or named surfaces")

// ErrorKind classifies a problem found while projecting tool surfaces. The
// values are the rule names `stitch vet` prints.
type ErrorKind string

// Problem kinds of [ToolSurfaces].
const (
	// SelectionUnknown: a literal selection pattern names no operation or
	// runtime tool.
	SelectionUnknown ErrorKind = "selection-unknown"
	// SelectionNotExposed: a literal selection pattern names an operation
	// (or runtime tool) that is not on the selection's transport.
	SelectionNotExposed ErrorKind = "selection-not-exposed"
	// InvalidToolName: a tool name is unusable on MCP or AGENT.
	InvalidToolName ErrorKind = "tool-name"
	// ToolNameCollision: two tools (or a tool and a CLI-only command) share
	// a name on one surface.
	ToolNameCollision ErrorKind = "tool-name-collision"
	// InvalidToolInput: the advertised input cannot be built (#params,
	// #query and #input declare one key twice) or fails MCP preparation.
	InvalidToolInput ErrorKind = "tool-input"
	// MCPTopology: both a default and named MCP surfaces ([ErrMCPTopology]).
	MCPTopology ErrorKind = "mcp-topology"
)

// Error is one problem of a tool projection. It names the graph nodes
// involved, so a compiler can point at the source:
//
//   - a selection problem: Selection ("surfaces.mcp.named.admin",
//     "surfaces.mcp.default", "surfaces.agent", "surfaces.cli"), Field
//     ("include" or "exclude") and Pattern;
//   - every other problem: Nodes, the node paths of the operations
//     ("services.S.operations.A"), runtime tools ("runtimeTools.N") and
//     CLI-only commands ("cliCommands.N") involved, with Labels naming them
//     the same way in prose ("contract tasks.get", `runtime s.a (runtime tool
//     "n")`, `CLI-only command "n"`).
//
// [ToolSurfaces] returns every problem at once as [Errors].
type Error struct {
	Kind      ErrorKind
	Transport graph.Transport
	// Surface is the named MCP surface; "" for a default surface.
	Surface   string
	Selection string
	Field     string
	Pattern   string
	// Tool is the tool (or CLI command) name concerned, when there is one.
	Tool   string
	Nodes  []string
	Labels []string
	// Message is the complete, self-contained description.
	Message string
	// Err is the transport-independent cause (e.g. the tool-name rule that
	// failed), or nil.
	Err error
}

// Error returns Message.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Errors is every problem of one projection, in the order found
// (surfaces in declaration order, then tools). errors.As finds it, or any
// one *Error, in what ToolSurfaces returns.
type Errors []*Error

// Error returns one problem per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Message
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the problems, for errors.Is and errors.As.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// SurfaceLabel names the surface of transport t called name in prose:
// "MCP", `MCP surface "admin"`, "AGENT", "CLI".
func SurfaceLabel(t graph.Transport, name string) string {
	if name != "" {
		return fmt.Sprintf("%s surface %q", t, name)
	}
	return string(t)
}

// OperationNode is the graph node path of operation service.action.
func OperationNode(service, action string) string {
	return graph.NodePath("services", service, "operations", action)
}

// node is the graph node path of the tool's source.
func (t *Tool) node() string {
	if t.Kind == KindRuntime {
		return graph.NodePath("runtimeTools", t.Runtime.Name)
	}
	return OperationNode(t.Service, t.Action)
}

// ToolSurfaces prepares every tool surface of g: the MCP default surface (or
// every named MCP surface), the Agent surface and the CLI surface.
//
// A tool is on a surface when its operation is exposed to the transport
// (op.Expose; HEAD operations never) and the surface's selection includes
// it; runtime tools are on a transport when their Transports list it. Names
// are the explicit tool name or [ToolName]; MCP and Agent names must pass
// [ValidToolName]; names must be unique within a surface (for the CLI, also
// against the CLI-only commands). Input schemas are merged from #params,
// #query and #input and prepared with g.Policy: MCP surfaces with the one
// global MCP policy (union flattening, schema validation, typed-property and
// portable-format checks), the Agent surface with the Agent policy, the CLI
// surface plainly.
//
// An MCPSurfaces with neither a default nor any named surface is treated as
// no MCP selection (one default surface with every MCP-exposed tool): the
// graph cannot tell "named: {}" from an absent selection.
//
// Every failure is collected: the returned error is an [Errors] listing
// every problem as a structured *[Error] (kind, surface, pattern, tool name,
// graph nodes), and the returned Tools is then nil.
func ToolSurfaces(g *graph.Graph) (*Tools, error) {
	derived("tools")
	p := &preparer{g: g, inputs: map[inputKey]*prepared{}, docs: map[docKey]*builtDoc{}, trees: map[graph.Digest]any{}}
	var surfaces []Surface
	mcp := g.Surfaces.MCP
	switch {
	case mcp != nil && mcp.Default != nil && len(mcp.Named) > 0:
		return nil, Errors{{Kind: MCPTopology, Transport: graph.MCP, Selection: "surfaces.mcp",
			Message: ErrMCPTopology.Error(), Err: ErrMCPTopology}}
	case mcp != nil && len(mcp.Named) > 0:
		for _, ns := range mcp.Named {
			sel := ns.Selection
			surfaces = append(surfaces, p.surface(graph.MCP, ns.Name, &sel))
		}
	default:
		var sel *graph.Selection
		if mcp != nil {
			sel = mcp.Default
		}
		surfaces = append(surfaces, p.surface(graph.MCP, "", sel))
	}
	surfaces = append(surfaces,
		p.surface(graph.AGENT, "", g.Surfaces.Agent),
		p.surface(graph.CLI, "", g.Surfaces.CLI))
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	slices.SortStableFunc(surfaces, func(a, b Surface) int {
		return cmp.Or(graph.CompareUTF16(string(a.Transport), string(b.Transport)), graph.CompareUTF16(a.Name, b.Name))
	})
	slices.SortFunc(p.warnings, func(a, b Warning) int {
		return cmp.Or(graph.CompareUTF16(string(a.Transport), string(b.Transport)),
			graph.CompareUTF16(a.Surface, b.Surface), graph.CompareUTF16(a.Tool, b.Tool),
			graph.CompareUTF16(a.Message, b.Message))
	})
	return &Tools{Surfaces: surfaces, Warnings: p.warnings}, nil
}

// candidate is a tool before preparation.
type candidate struct {
	key string // selection key: "service.action" or "runtime.NAME"
	op  *graph.Operation
	rt  *graph.RuntimeTool
}

// candidates lists what transport t may show, in graph order, plus the keys
// of everything that exists but is not exposed to t (for selection errors).
func candidates(g *graph.Graph, t graph.Transport) (exposed []candidate, hidden map[string]*candidate) {
	hidden = map[string]*candidate{}
	for _, op := range g.Operations() {
		c := candidate{key: op.ID(), op: op}
		if op.Method == "HEAD" || !op.Exposed(t) {
			hidden[c.key] = &c
			continue
		}
		exposed = append(exposed, c)
	}
	for i := range g.RuntimeTools {
		rt := &g.RuntimeTools[i]
		c := candidate{key: "runtime." + rt.Name, rt: rt}
		if !slices.Contains(rt.Transports, t) {
			hidden[c.key] = &c
			continue
		}
		exposed = append(exposed, c)
	}
	return exposed, hidden
}

// selectionLabel names a selection in error messages.
func selectionLabel(t graph.Transport, name string) string {
	switch {
	case t == graph.MCP && name != "":
		return "surfaces.mcp.named." + name
	case t == graph.MCP:
		return "surfaces.mcp.default"
	default:
		return "surfaces." + strings.ToLower(string(t))
	}
}

// Select applies a selection to the candidates of transport t: a nil
// selection or an absent Include selects everything; Exclude removes. A
// literal pattern (no '*') that matches nothing exposed to t is an error; a
// wildcard silently skips what is not exposed.
func selectCandidates(g *graph.Graph, t graph.Transport, surface string, sel *graph.Selection) ([]candidate, []*Error) {
	exposed, hidden := candidates(g, t)
	if sel == nil {
		return exposed, nil
	}
	var errs []*Error
	where := selectionLabel(t, surface)
	check := func(field string, patterns []string) {
		for _, pat := range patterns {
			if strings.Contains(pat, "*") {
				continue
			}
			found := slices.ContainsFunc(exposed, func(c candidate) bool { return c.key == pat })
			if found {
				continue
			}
			e := &Error{Transport: t, Surface: surface, Selection: where, Field: field, Pattern: pat}
			svc, act, _ := strings.Cut(pat, ".")
			switch h := hidden[pat]; {
			case h != nil && h.op != nil:
				e.Kind = SelectionNotExposed
				e.Nodes, e.Labels = []string{OperationNode(svc, act)}, []string{"contract " + pat}
				if h.op.Method == "HEAD" {
					e.Message = fmt.Sprintf("%s.%s: %q is not exposed to %s: HEAD operations are never tools; drop the pattern", where, field, pat, t)
				} else {
					e.Message = fmt.Sprintf("%s.%s: %q is not exposed to %s (its expose is %v); add %q to its expose or drop the pattern", where, field, pat, t, h.op.Expose, t)
				}
			case h != nil:
				e.Kind = SelectionNotExposed
				e.Nodes, e.Labels = []string{graph.NodePath("runtimeTools", act)}, []string{fmt.Sprintf("runtime tool %q", act)}
				e.Message = fmt.Sprintf("%s.%s: %q is not exposed to %s (its transports are %v); add %q to its transports or drop the pattern", where, field, pat, t, h.rt.Transports, t)
			case svc == "runtime":
				e.Kind = SelectionUnknown
				e.Message = fmt.Sprintf("%s.%s: %q names no runtime tool", where, field, pat)
			default:
				e.Kind = SelectionUnknown
				e.Message = fmt.Sprintf("%s.%s: %q names no operation", where, field, pat)
			}
			errs = append(errs, e)
		}
	}
	check("include", sel.Include)
	check("exclude", sel.Exclude)
	var out []candidate
	for _, c := range exposed {
		if sel.Include != nil && !slices.ContainsFunc(sel.Include, func(p string) bool { return MatchPattern(p, c.key) }) {
			continue
		}
		if slices.ContainsFunc(sel.Exclude, func(p string) bool { return MatchPattern(p, c.key) }) {
			continue
		}
		out = append(out, c)
	}
	return out, errs
}

// MatchPattern reports whether a selection pattern matches a key
// ("service.action" or "runtime.NAME"). '*' matches any run of characters,
// including none; every other character matches itself.
func MatchPattern(pattern, key string) bool {
	star := strings.IndexByte(pattern, '*')
	if star < 0 {
		return pattern == key
	}
	if !strings.HasPrefix(key, pattern[:star]) {
		return false
	}
	rest := pattern[star+1:]
	for i := star; i <= len(key); i++ {
		if MatchPattern(rest, key[i:]) {
			return true
		}
	}
	return false
}

// preparer prepares surfaces and caches prepared inputs, so an operation on
// several MCP surfaces is prepared (and validated) once.
type preparer struct {
	g        *graph.Graph
	inputs   map[inputKey]*prepared
	docs     map[docKey]*builtDoc
	trees    map[graph.Digest]any // decoded schemas, shared read-only
	errs     Errors
	warnings []Warning
}

// docKey identifies an advertised document by content: operations whose
// schemas are equal share one document, so a contract with many look-alike
// operations prepares each distinct shape once.
type docKey struct {
	runtime               bool
	params, query, input  graph.Digest
	flatten, strictObject bool
}

// builtDoc is a merged (and possibly flattened and strict) advertised
// document. tree is shared read-only between the tools that use it.
type builtDoc struct {
	tree   any
	bytes  json.RawMessage
	digest graph.Digest
	args   argSplitter
	err    error
}

// document builds, or reuses, the advertised document of a candidate.
func (p *preparer) document(c candidate, flatten, strict bool) *builtDoc {
	k := docKeyOf(c, flatten, strict)
	if d, ok := p.docs[k]; ok {
		return d
	}
	d := buildDoc(p.g, c, flatten, strict, p.trees)
	p.docs[k] = d
	return d
}

// docKeyOf is the docKey of candidate c's document.
func docKeyOf(c candidate, flatten, strict bool) docKey {
	k := docKey{runtime: c.op == nil, flatten: flatten, strictObject: strict}
	if c.op != nil {
		k.params, k.query, k.input = c.op.Params, c.op.Query, c.op.Input
	} else {
		k.input = c.rt.Input
	}
	return k
}

// buildDoc builds the advertised document of c; it reads g and fills
// trees only, so calls with distinct trees maps may run concurrently.
func buildDoc(g *graph.Graph, c candidate, flatten, strict bool, trees map[graph.Digest]any) *builtDoc {
	d := &builtDoc{}
	doc, args, err := advertisedInput(g, c, flatten, trees)
	if err != nil {
		d.err = err
		return d
	}
	if strict {
		doc = strictSchema(doc)
	}
	doc = objectFalse(doc)
	d.bytes, d.digest, d.err = graph.SchemaDigest(doc)
	d.tree, d.args = doc, args
	return d
}

// docOptions are the union flattening and strictness of transport t's
// advertised documents.
func (p *preparer) docOptions(t graph.Transport) (flatten, strict bool) {
	flatten = (t == graph.MCP && p.g.Policy.MCP.FlattenUnionInput) || (t == graph.AGENT && p.g.Policy.Agent.FlattenUnionInput)
	strict = t == graph.AGENT && p.g.Policy.Agent.Strict
	return flatten, strict
}

// minParallelDocs is the fewest new documents worth a second goroutine.
const minParallelDocs = 16

// prefetch builds the documents cands will need that are not built yet,
// half of them on a second goroutine when there are enough: the documents
// are pure functions of the graph, so which goroutine builds one does not
// change it, and document then finds them in p.docs.
func (p *preparer) prefetch(t graph.Transport, cands []candidate) {
	if runtime.GOMAXPROCS(0) < 2 {
		return
	}
	flatten, strict := p.docOptions(t)
	var todo []candidate
	var keys []docKey
	seen := map[docKey]bool{}
	for _, c := range cands {
		k := docKeyOf(c, flatten, strict)
		if _, ok := p.docs[k]; ok || seen[k] {
			continue
		}
		seen[k] = true
		todo = append(todo, c)
		keys = append(keys, k)
	}
	if len(todo) < minParallelDocs {
		return
	}
	docs := make([]*builtDoc, len(todo))
	half := len(todo) / 2
	var wg sync.WaitGroup
	var panicked any
	wg.Add(1)
	go func() {
		defer wg.Done()
		// A panic belongs to the caller (check.Run turns it into a
		// diagnostic), not to the process.
		defer func() { panicked = recover() }()
		trees := map[graph.Digest]any{}
		for i := half; i < len(todo); i++ {
			docs[i] = buildDoc(p.g, todo[i], flatten, strict, trees)
		}
	}()
	for i := 0; i < half; i++ {
		docs[i] = buildDoc(p.g, todo[i], flatten, strict, p.trees)
	}
	wg.Wait()
	if panicked != nil {
		panic(panicked)
	}
	for i, k := range keys {
		p.docs[k] = docs[i]
	}
}

type inputKey struct {
	id        string
	transport graph.Transport
}

// prepared is the outcome of preparing one tool's input for one transport.
type prepared struct {
	doc      json.RawMessage
	digest   graph.Digest
	args     argSplitter
	drop     bool     // dropped by schemaValidation warn|skip
	warnings []string // non-fatal findings
	err      error
}

func (p *preparer) surface(t graph.Transport, name string, sel *graph.Selection) Surface {
	s := Surface{Transport: t, Name: name, Tools: []Tool{}}
	cands, errs := selectCandidates(p.g, t, name, sel)
	p.errs = append(p.errs, errs...)
	p.prefetch(t, cands)
	for _, c := range cands {
		tool, ok := p.tool(t, name, c)
		if ok {
			s.Tools = append(s.Tools, tool)
		}
	}
	toolOrder := func(a, b Tool) int {
		return cmp.Or(graph.CompareUTF16(a.Name, b.Name), graph.CompareUTF16(a.Service, b.Service),
			graph.CompareUTF16(a.Action, b.Action), graph.CompareUTF16(string(a.Kind), string(b.Kind)))
	}
	// Tools usually come in name order already; a stable sort of them
	// would still move every (large) Tool.
	if !slices.IsSortedFunc(s.Tools, toolOrder) {
		slices.SortStableFunc(s.Tools, toolOrder)
	}
	p.checkDuplicates(&s)
	return s
}

func (p *preparer) tool(t graph.Transport, surface string, c candidate) (Tool, bool) {
	var tool Tool
	if c.op != nil {
		op := c.op
		tool = Tool{Kind: KindContract, Service: op.Service, Action: op.Action, Method: op.Method,
			Scope: op.Scope, Description: op.Desc, Op: op, OutputDigest: op.Output}
		explicit := ""
		if op.Tool != nil {
			tool.Annotations = op.Tool.Annotations
			explicit = op.Tool.Name
		}
		name, err := ResolveToolName(op.Service, op.Action, explicit, t)
		tool.Name = name
		if err != nil {
			p.toolNameError(t, surface, &tool, err)
			return Tool{}, false
		}
	} else {
		rt := c.rt
		tool = Tool{Kind: KindRuntime, Service: rt.Identity.Service, Action: rt.Identity.Action,
			Method: rt.Identity.Method, Scope: rt.Identity.Scope, Name: rt.Name, Description: rt.Desc,
			Annotations: rt.Annotations, Runtime: rt, OutputDigest: rt.Output}
		if tool.Scope == "" {
			tool.Scope = "public"
		}
		if t != graph.CLI {
			if err := ValidToolName(rt.Name); err != nil {
				p.toolNameError(t, surface, &tool, err)
				return Tool{}, false
			}
		}
	}
	tool.Output = p.g.Schema(tool.OutputDigest)
	in := p.input(t, surface, c, &tool)
	if in.err != nil {
		return Tool{}, false
	}
	for _, w := range in.warnings {
		p.warnings = append(p.warnings, Warning{Transport: t, Surface: surface, Tool: tool.Name, Node: tool.node(), Message: w})
	}
	if in.drop {
		return Tool{}, false
	}
	tool.Input, tool.InputDigest, tool.args = in.doc, in.digest, in.args
	return tool, true
}

func (p *preparer) toolNameError(t graph.Transport, surface string, tool *Tool, err error) {
	p.errs = append(p.errs, &Error{Kind: InvalidToolName, Transport: t, Surface: surface, Tool: tool.Name,
		Nodes: []string{tool.node()}, Labels: []string{tool.label()},
		Message: fmt.Sprintf("%s tool name of %s: %v", t, tool.label(), err), Err: err})
}

// inputError records a failure to prepare a tool's advertised input.
func (p *preparer) inputError(t graph.Transport, surface string, tool *Tool, cause error, format string, args ...any) error {
	e := &Error{Kind: InvalidToolInput, Transport: t, Surface: surface, Tool: tool.Name,
		Nodes: []string{tool.node()}, Labels: []string{tool.label()},
		Message: fmt.Sprintf(format, args...), Err: cause}
	p.errs = append(p.errs, e)
	return e
}

// input prepares (once per transport) the advertised input of a candidate.
// Errors are recorded once, however many surfaces show the tool.
func (p *preparer) input(t graph.Transport, surface string, c candidate, tool *Tool) *prepared {
	k := inputKey{id: c.key, transport: t}
	if in, ok := p.inputs[k]; ok {
		return in
	}
	in := &prepared{}
	p.inputs[k] = in
	flatten, strict := p.docOptions(t)
	d := p.document(c, flatten, strict)
	if d.err != nil {
		in.err = p.inputError(t, surface, tool, d.err, "%s tool %q (%s): %v", t, tool.Name, tool.label(), d.err)
		return in
	}
	if t == graph.MCP {
		pol := p.g.Policy.MCP
		res := validateMCP(tool.Name, d.tree, tool.Output, pol)
		in.warnings = res.findings
		if res.failure != "" {
			switch pol.SchemaValidation {
			case graph.ValidationWarn:
				in.drop = true
				in.warnings = append(in.warnings, res.failure+"; tool dropped from MCP (schemaValidation: warn)")
			case graph.ValidationSkip:
				in.drop = true
			default:
				in.err = p.inputError(t, surface, tool, errors.New(res.failure), "MCP tool %q (%s): %s", tool.Name, tool.label(), res.failure)
				return in
			}
		}
	}
	in.doc, in.digest, in.args = d.bytes, d.digest, d.args
	return in
}

func (p *preparer) checkDuplicates(s *Surface) {
	what := map[graph.Transport]string{graph.MCP: "MCP tool name", graph.AGENT: "agent tool name", graph.CLI: "CLI command"}[s.Transport]
	where := ""
	if s.Name != "" {
		where = fmt.Sprintf(" on MCP surface %q", s.Name)
	}
	for i := 1; i < len(s.Tools); i++ {
		a, b := &s.Tools[i-1], &s.Tools[i]
		if a.Name == b.Name {
			p.errs = append(p.errs, &Error{Kind: ToolNameCollision, Transport: s.Transport, Surface: s.Name, Tool: a.Name,
				Nodes: []string{a.node(), b.node()}, Labels: []string{a.label(), b.label()},
				Message: fmt.Sprintf("Duplicate %s %q across mounted operations%s: %s and %s", what, a.Name, where, a.label(), b.label())})
		}
	}
	if s.Transport == graph.CLI {
		for _, cmd := range p.g.CliCommands {
			if t := s.Tool(cmd.Name); t != nil {
				cl := fmt.Sprintf("CLI-only command %q", cmd.Name)
				p.errs = append(p.errs, &Error{Kind: ToolNameCollision, Transport: s.Transport, Tool: cmd.Name,
					Nodes: []string{t.node(), graph.NodePath("cliCommands", cmd.Name)}, Labels: []string{t.label(), cl},
					Message: fmt.Sprintf("Duplicate CLI command %q across mounted operations: %s and %s", cmd.Name, t.label(), cl)})
			}
		}
	}
}
