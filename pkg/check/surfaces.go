package check

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"stitchkit.dev/stitchkit/pkg/compile"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/project"
)

// surfaces projects the tool surfaces with pkg/project — the one
// projector, which alone decides surface membership and tool names — and
// turns every problem it reports into a positioned diagnostic: selection
// patterns that name nothing or nothing exposed, invalid tool names, tool
// name collisions within a surface (pointing at both tools), unbuildable
// tool inputs. One problem found on several surfaces (a collision on MCP
// and AGENT) is reported once, listing them.
func (k *checker) surfaces(ts *project.Tools, err error) {
	if err == nil {
		k.tools = ts
		k.policyLists(ts)
		k.advertisedSchemas(ts)
		return
	}
	var es project.Errors
	if !errors.As(err, &es) {
		k.add(compile.Diagnostic{Pos: k.r.Pos("surfaces"), Rule: "tool-surfaces", Path: "surfaces", Message: err.Error()})
		return
	}
	type group struct {
		e     *project.Error
		where []string // surfaces, or transports for per-tool problems
	}
	groups := map[string]*group{}
	var order []string
	for _, e := range es {
		if (e.Kind == project.SelectionUnknown || e.Kind == project.SelectionNotExposed) && k.skippedPattern(e.Pattern) {
			continue // names a node CUE reported errors in
		}
		cause := ""
		if e.Err != nil {
			cause = e.Err.Error()
		}
		key := strings.Join(append([]string{string(e.Kind), e.Selection, e.Field, e.Pattern, e.Tool, cause}, e.Nodes...), "\x00")
		where := project.SurfaceLabel(e.Transport, e.Surface)
		if e.Kind == project.InvalidToolName || e.Kind == project.InvalidToolInput {
			where = string(e.Transport) // the name or input is per transport
		}
		gr := groups[key]
		if gr == nil {
			gr = &group{e: e}
			groups[key] = gr
			order = append(order, key)
		}
		if !slices.Contains(gr.where, where) {
			gr.where = append(gr.where, where)
		}
	}
	for _, key := range order {
		gr := groups[key]
		e, where := gr.e, strings.Join(gr.where, ", ")
		switch e.Kind {
		case project.SelectionUnknown, project.SelectionNotExposed:
			node := k.patternNode(e.Selection, e.Field, e.Pattern)
			k.add(compile.Diagnostic{Pos: k.r.Pos(node), Rule: string(e.Kind), Path: node, Message: e.Message})
		case project.ToolNameCollision:
			what, fix := "tool name", "set a distinct tool.name on one of them"
			if e.Transport == graph.CLI {
				what, fix = "CLI command name", "set a distinct tool.name or rename the CLI-only command"
			}
			d := k.atLatest(e.Nodes, string(e.Kind), fmt.Sprintf("%s: %s both have the %s %q; %s",
				where, strings.Join(e.Labels, " and "), what, e.Tool, fix))
			for i, n := range e.Nodes {
				if n == d.Path {
					continue
				}
				d.Related = append(d.Related, compile.Related{Pos: k.toolPos(n), Path: n,
					Message: fmt.Sprintf("%s has the %s %q too", e.Labels[i], what, e.Tool)})
			}
			slices.SortStableFunc(d.Related, func(a, b compile.Related) int {
				if posLess(a.Pos, b.Pos) {
					return -1
				}
				if posLess(b.Pos, a.Pos) {
					return 1
				}
				return 0
			})
			k.add(d)
		case project.InvalidToolName, project.InvalidToolInput:
			k.add(k.atLatest(e.Nodes, string(e.Kind), fmt.Sprintf("%s on %s: %v", strings.Join(e.Labels, " and "), where, e.Err)))
		case project.MCPTopology:
			k.add(compile.Diagnostic{Pos: k.r.Pos("surfaces.mcp"), Rule: string(e.Kind), Path: "surfaces.mcp", Message: e.Message})
		default:
			k.add(k.atLatest(e.Nodes, string(e.Kind), e.Message))
		}
	}
}

// policyLists checks policy.mcp.allowUntyped: each entry a property path
// TOOL.prop[.sub] of some MCP tool's advertised input.
func (k *checker) policyLists(ts *project.Tools) {
	if len(k.g.Policy.MCP.AllowUntyped) == 0 {
		return
	}
	paths := map[string]bool{}
	for _, s := range ts.Surfaces {
		if s.Transport != graph.MCP {
			continue
		}
		for i := range s.Tools {
			for _, p := range s.Tools[i].PropertyPaths() {
				paths[p] = true
			}
		}
	}
	const list = "policy.mcp.allowUntyped"
	for i, p := range k.r.Strings(list) {
		if !paths[p] {
			node := list + "." + strconv.Itoa(i)
			k.add(compile.Diagnostic{Pos: k.r.Pos(node), Rule: "policy", Path: node,
				Message: fmt.Sprintf("policy.mcp.allowUntyped: %q names no property of an MCP tool's input; write TOOL.property (e.g. %q)", p, "create_task.title")})
		}
	}
}

// skippedPattern reports whether a literal selection pattern names a node
// left out of the graph because of CUE errors.
func (k *checker) skippedPattern(pat string) bool {
	svc, _, _ := strings.Cut(pat, ".")
	return k.r.Skipped(pat) || k.r.Skipped(svc+".*")
}

// patternNode is the CUE path of pattern in the field ("include" or
// "exclude") of the selection at node sel, as written (the graph keeps
// patterns sorted); the field itself when the pattern is not found.
func (k *checker) patternNode(sel, field, pattern string) string {
	list := sel + "." + field
	for i, p := range k.r.Strings(list) {
		if p == pattern {
			return list + "." + strconv.Itoa(i)
		}
	}
	return list
}

// toolPos is the position of the tool defined by graph node n: its
// explicit tool.name when it has one, else the node itself.
func (k *checker) toolPos(n string) graph.Pos {
	if ds := k.r.Declared(n + ".tool.name"); len(ds) > 0 {
		return ds[0]
	}
	return k.r.Pos(n)
}

// atLatest is a diagnostic positioned, among the graph nodes given, at the
// one written last in the source (for a collision: usually the one just
// added), with Path set to that node.
func (k *checker) atLatest(nodes []string, rule, msg string) compile.Diagnostic {
	d := compile.Diagnostic{Rule: rule, Message: msg}
	for _, n := range nodes {
		if p := k.toolPos(n); !d.Pos.IsValid() || posLess(d.Pos, p) {
			d.Pos, d.Path = p, n
		}
	}
	if !d.Pos.IsValid() {
		d.Pos, d.Path = k.r.Pos("surfaces"), "surfaces"
	}
	return d
}

// Warnings returns the non-fatal findings the projector makes about a
// compiled graph, sorted, positioned from g.Sources when the node is
// known: the MCP preparation findings of pkg/project (untyped properties
// under requireTypedProperties, non-portable formats under
// requirePortableFormats, tools dropped under schemaValidation "warn").
// `stitch vet` prints them as "warning: ..." and still exits 0. (This was
// compile.Warnings before the compiler stopped importing the projector.)
func Warnings(g *graph.Graph) []compile.Diagnostic {
	ts, err := project.ToolSurfaces(g)
	if err != nil {
		return nil
	}
	return warningsOf(g, ts)
}

// warningsOf is [Warnings] for surfaces already projected.
func warningsOf(g *graph.Graph, ts *project.Tools) []compile.Diagnostic {
	var out []compile.Diagnostic
	for _, w := range ts.Warnings {
		node := warningNode(g, ts, w)
		out = append(out, compile.Diagnostic{Pos: g.Source(node), Rule: "mcp-policy", Path: node, Message: w.String()})
	}
	return compile.SortDiagnostics(out)
}

// warningNode is the node of the tool a preparation warning is about: the
// tool of that name on the warning's transport, else on any surface (a
// tool dropped from MCP keeps its name on AGENT), else the policy.
func warningNode(g *graph.Graph, ts *project.Tools, w project.Warning) string {
	var found *project.Tool
	for i := range ts.Surfaces {
		s := &ts.Surfaces[i]
		if t := s.Tool(w.Tool); t != nil && (found == nil || s.Transport == w.Transport) {
			found = t
		}
	}
	switch {
	case found != nil && found.Op != nil:
		return opNode(found.Op)
	case found != nil && found.Runtime != nil:
		return graph.NodePath("runtimeTools", found.Runtime.Name)
	}
	for i := range g.RuntimeTools {
		if g.RuntimeTools[i].Name == w.Tool {
			return graph.NodePath("runtimeTools", w.Tool)
		}
	}
	return "policy"
}
