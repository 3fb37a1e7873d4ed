package compile

import (
	"errors"
	"fmt"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/literal"
	"cuelang.org/go/cue/token"

	"stitchkit.dev/stitchkit/pkg/compile/internal/cueschema"
	"stitchkit.dev/stitchkit/pkg/graph"
)

// jsonSchemaDialect is the $schema every generated document carries at its
// root. It is kept (not stripped): a stored schema is a self-describing
// document, and the digest covers it like every other keyword.
const jsonSchemaDialect = cueschema.Dialect

// schemaFor translates the CUE value at node (a graph.NodePath such as
// "services.tasks.operations.list.#input") with the one translator
// (internal/cueschema) and stores the canonical document in the graph.
// Constructs JSON Schema cannot state exactly are reported as positioned
// "unrepresentable" diagnostics, and "" is returned.
func (c *compiler) schemaFor(v cue.Value, node string) graph.Digest {
	c.schemaNode = node
	c.mark("translating the schema", node)
	if c.translator == nil {
		c.translator = c.newTranslator(&c.warn)
	}
	r := translate(c.translator, &c.warn, v)
	for _, w := range r.warnings {
		c.schemaWarning(w)
	}
	if r.err != nil {
		var terr *cueschema.Error
		if !errors.As(r.err, &terr) {
			c.report(c.index.lookup(node), "json-schema", "%s: %v", node, oneLine(r.err))
			return ""
		}
		for _, ref := range terr.Refusals {
			pos := c.relPos(ref.Pos)
			if !pos.IsValid() || strings.HasPrefix(pos.File, "cue.mod/") || strings.HasPrefix(pos.File, "../") {
				pos = c.index.lookup(node)
			}
			where := node
			if ref.Path != "" {
				where += "." + ref.Path
			}
			msg := fmt.Sprintf("%s: %s has no exact JSON Schema 2020-12 equivalent: %s", where, ref.Construct, ref.Message)
			if ref.Hint != "" {
				msg += "; " + ref.Hint
			}
			c.report(pos, "unrepresentable", "%s", msg)
		}
		return ""
	}
	if r.digestErr != nil {
		c.report(c.index.lookup(node), "json-schema", "%s: cannot canonicalise the JSON Schema: %v", node, r.digestErr)
		return ""
	}
	c.g.Schemas[r.digest] = r.bytes
	c.keepTree(r.digest, r.doc)
	return r.digest
}

// schemaWarning reports a translator warning about the schema node being
// translated (c.schemaNode) as a positioned warning: the schema means what
// CUE means, which its author most likely did not mean.
func (c *compiler) schemaWarning(w *cueschema.Warning) {
	// One construct reached from several schema nodes warns once: keep
	// the first, in the order the graph is built.
	k := warningKey{w.Pos, w.Rule, w.Message}
	if c.warned[k] {
		return
	}
	if c.warned == nil {
		c.warned = map[warningKey]bool{}
	}
	c.warned[k] = true
	node := c.schemaNode
	pos := c.relPos(w.Pos)
	if !pos.IsValid() || strings.HasPrefix(pos.File, "cue.mod/") || strings.HasPrefix(pos.File, "../") {
		pos = c.index.lookup(node)
	}
	where := node
	if w.Path != "" {
		where += "." + w.Path
	}
	msg := fmt.Sprintf("%s: %s", where, w.Message)
	if w.Hint != "" {
		msg += "; " + w.Hint
	}
	c.warnings = append(c.warnings, Diagnostic{Pos: pos, Rule: w.Rule, Message: msg, Path: where})
}

// store adds a schema the compiler made itself (not a translation).
func (c *compiler) store(doc map[string]any, node string) graph.Digest {
	d, err := c.g.AddSchema(doc)
	if err != nil {
		c.report(c.index.lookup(node), "json-schema", "%s: cannot canonicalise the JSON Schema: %v", node, err)
		return ""
	}
	c.keepTree(d, doc)
	return d
}

// keepTree records doc as the tree of schema d, so the checks read it
// without decoding the graph's bytes (see schemaTree).
func (c *compiler) keepTree(d graph.Digest, doc map[string]any) {
	if c.trees == nil {
		c.trees = map[graph.Digest]any{}
	}
	if _, ok := c.trees[d]; !ok {
		c.trees[d] = doc
	}
}

// warningKey identifies a translator warning (see schemaWarning).
type warningKey struct {
	pos  token.Pos
	rule string
	msg  string
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
}

// scanSchemaSources reports whether a file a schema can draw on — the
// contract package's own files and those of the user packages it imports,
// not the builtin ones — calls a builtin that validates structs or lists
// (list.*, struct.*, matchN, matchIf, error), or refers to the contract
// language other than as X.#Contract (its definitions use matchN). When
// none does, no schema value can carry such a validator, and the
// translator need not search for them (cueschema.Options.NoStructValidators).
//
// It also reports whether such a file holds a comprehension, which may
// yield fields depending on an instance's values
// (cueschema.Options.NoConditionalFields).
func scanSchemaSources(inst *build.Instance) (validators, comprehensions bool) {
	seen := map[*build.Instance]bool{}
	var visit func(bi *build.Instance, root bool)
	visit = func(bi *build.Instance, root bool) {
		if seen[bi] || validators && comprehensions {
			return
		}
		seen[bi] = true
		if !root && (len(bi.Files) == 0 || ast.ParseImportPath(bi.ImportPath).Unqualified().String() == schemaImportPath) {
			return // a builtin package, or the contract language
		}
		for _, f := range bi.Files {
			if !validators && fileCallsStructValidators(f) {
				validators = true
			}
			if !comprehensions && fileHoldsComprehension(f) {
				comprehensions = true
			}
		}
		for _, imp := range bi.Imports {
			visit(imp, false)
		}
	}
	visit(inst, true)
	return validators, comprehensions
}

func fileHoldsComprehension(f *ast.File) bool {
	found := false
	ast.Walk(f, func(n ast.Node) bool {
		if _, ok := n.(*ast.Comprehension); ok {
			found = true
		}
		return !found
	}, nil)
	return found
}

func fileCallsStructValidators(f *ast.File) bool {
	imports := map[string]string{} // local name → import path
	for spec := range f.ImportSpecs() {
		ip, err := literal.Unquote(spec.Path.Value)
		if err != nil {
			return true
		}
		p := ast.ParseImportPath(ip)
		name := p.Qualifier
		if spec.Name != nil {
			name = spec.Name.Name
		}
		imports[name] = p.Unqualified().String()
	}
	found := false
	ast.Walk(f, func(n ast.Node) bool {
		if found {
			return false
		}
		switch x := n.(type) {
		case *ast.CallExpr:
			switch fn := x.Fun.(type) {
			case *ast.Ident:
				switch fn.Name {
				case "matchN", "matchIf", "error":
					found = true
				}
			case *ast.SelectorExpr:
				if id, ok := fn.X.(*ast.Ident); ok {
					switch imports[id.Name] {
					case "list", "struct":
						found = true
					}
				}
			}
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok && imports[id.Name] == schemaImportPath {
				if name, _, err := ast.LabelName(x.Sel); err != nil || name != "#Contract" {
					found = true
				}
			}
		}
		return !found
	}, nil)
	return found
}
