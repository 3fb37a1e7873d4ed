package compile

import (
	"fmt"
	"slices"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
)

// Unknown definition fields.
//
// CUE lets every struct, closed or not, take new definitions, so a
// misspelt schema field (#ouptut, #Output, #akc) passes plain `cue vet`
// and the operation silently has no output. The contract language's
// nodes that carry schemas (operations, runtime tools, CLI commands,
// events) take exactly the definitions their schema declares; every other
// visible definition on them is a mistake. Hidden definitions (_#helper)
// stay allowed: they are how a node keeps a private helper.

// schemaNode is one kind of contract node whose definitions are its
// schemas.
type schemaNode struct {
	what string   // "an operation"
	path []string // the node path with "*" for names, e.g. services.*.operations.*
}

var schemaNodes = []schemaNode{
	{"an operation", []string{"services", "*", "operations", "*"}},
	{"a runtime tool", []string{"runtimeTools", "*"}},
	{"a CLI command", []string{"cliCommands", "*"}},
	{"an event", []string{"realtime", "*", "serverToClient", "*"}},
	{"an event", []string{"realtime", "*", "clientToServer", "*"}},
}

// allowedDefinitions returns the definitions (with "#") the contract
// language declares for nodes at path (a path with "*" for names), read
// from schema.#Contract itself so the list cannot drift from it.
func (c *compiler) allowedDefinitions(path []string) []string {
	sels := make([]cue.Selector, len(path))
	for i, p := range path {
		if p == "*" {
			p = "probe" // a name every key pattern of the language accepts
		}
		sels[i] = cue.Str(p)
	}
	p := cue.MakePath(sels...)
	iter, err := c.contract.FillPath(p, struct{}{}).LookupPath(p).Fields(cue.Definitions(true), cue.Optional(true))
	if err != nil {
		return nil
	}
	var out []string
	for iter.Next() {
		if name, ok := definitionName(iter.Selector()); ok {
			out = append(out, name)
		}
	}
	return out
}

// definitionName is the name ("#input") of a visible definition label.
func definitionName(sel cue.Selector) (string, bool) {
	if sel.LabelType() != cue.DefinitionLabel {
		return "", false
	}
	return strings.TrimRight(sel.String(), "?!"), true
}

// checkDefinitionFields reports every visible definition of a schema
// node that the contract language does not declare for it.
func (c *compiler) checkDefinitionFields() {
	if !c.contract.Exists() {
		return
	}
	for _, kind := range schemaNodes {
		allowed := c.allowedDefinitions(kind.path)
		if len(allowed) == 0 {
			continue
		}
		if c.nestedDefs != nil && !c.nestedDefs.beyond(allowed) {
			continue // no label in the sources can be an unknown definition here
		}
		c.eachNode(c.root, kind.path, nil, func(names []string, v cue.Value) {
			iter, err := v.Fields(cue.Definitions(true), cue.Optional(true))
			if err != nil {
				return
			}
			np := join(names...)
			for iter.Next() {
				name, ok := definitionName(iter.Selector())
				if !ok || slices.Contains(allowed, name) {
					continue
				}
				why := fmt.Sprintf("the schemas of %s are %s; CUE accepts any definition, so a misspelt one is silently ignored", kind.what, andList(allowed))
				if best := closest(name, allowed); best != "" {
					c.reportAt(join(np, name), "unknown-definition", "%s: %s is not a schema field: did you mean %s? (%s)", np, name, best, why)
					continue
				}
				c.reportAt(join(np, name), "unknown-definition", "%s: %s is not a schema field (%s): rename it, or make a helper definition hidden (_%s) or move it to the package root", np, name, why, name)
			}
		})
	}
}

// eachNode calls f for every value at the name pattern path below v
// ("*" matches every regular field), with the concrete path.
func (c *compiler) eachNode(v cue.Value, path, at []string, f func(names []string, v cue.Value)) {
	if len(path) == 0 {
		f(at, v)
		return
	}
	if path[0] != "*" {
		if fv := field(v, path[0]); fv.Exists() {
			c.eachNode(fv, path[1:], append(slices.Clip(at), path[0]), f)
		}
		return
	}
	for _, k := range keys(v) {
		c.eachNode(field(v, k), path[1:], append(slices.Clip(at), k), f)
	}
}

// definitionHint returns the definition the contract language declares on
// the node v whose name, without "#", is nearest to the regular field bad
// ("output" for #output), or "".
func definitionHint(v cue.Value, bad string) string {
	iter, err := v.Fields(cue.Definitions(true), cue.Optional(true))
	if err != nil {
		return ""
	}
	var defs []string
	for iter.Next() {
		if name, ok := definitionName(iter.Selector()); ok {
			defs = append(defs, name)
		}
	}
	return closest("#"+bad, defs)
}

// closest returns the candidate nearest to name (case-insensitive edit
// distance, at most about a third of its length), or "".
func closest(name string, candidates []string) string {
	best, bestDist := "", 3
	ln := strings.ToLower(name)
	for _, cand := range candidates {
		lc := strings.ToLower(cand)
		if d := editDistance(ln, lc); d < bestDist && d*3 <= len(cand) {
			best, bestDist = cand, d
		}
	}
	return best
}

// andList joins names as "a, b and c".
func andList(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// definitionLabels is the set of visible definition labels ("#input") the
// contract's sources declare anywhere a schema node could take them from:
// below the top level of the contract package's files (a file's own
// top-level definitions, #Task, are fields of the package root, never of
// a node), and at every level of the user packages it imports (a node may
// embed such a package whole). The contract language's own package is
// left out: the definitions it declares for a node are the allowed ones.
type definitionLabels map[string]bool

// beyond reports whether a label of the set is not in allowed: only then
// can a node hold an unknown definition, and checkDefinitionFields must
// look (Value.Fields on every node costs a sort of its features).
func (d definitionLabels) beyond(allowed []string) bool {
	for name := range d {
		if !slices.Contains(allowed, name) {
			return true
		}
	}
	return false
}

// sourceDefinitionLabels collects the definitionLabels of inst.
func sourceDefinitionLabels(inst *build.Instance) definitionLabels {
	out := definitionLabels{}
	collect := func(n ast.Node) {
		ast.Walk(n, func(n ast.Node) bool {
			if f, ok := n.(*ast.Field); ok {
				if id, ok := f.Label.(*ast.Ident); ok && strings.HasPrefix(id.Name, "#") {
					out[id.Name] = true
				}
			}
			return true
		}, nil)
	}
	seen := map[*build.Instance]bool{}
	var visit func(bi *build.Instance, root bool)
	visit = func(bi *build.Instance, root bool) {
		if seen[bi] {
			return
		}
		seen[bi] = true
		if !root && (len(bi.Files) == 0 || ast.ParseImportPath(bi.ImportPath).Unqualified().String() == schemaImportPath) {
			return // a builtin package, or the contract language
		}
		for _, file := range bi.Files {
			if !root {
				collect(file)
				continue
			}
			for _, d := range file.Decls {
				if f, ok := d.(*ast.Field); ok {
					collect(f.Value)
					continue
				}
				collect(d)
			}
		}
		for _, imp := range bi.Imports {
			visit(imp, false)
		}
	}
	visit(inst, true)
	return out
}
