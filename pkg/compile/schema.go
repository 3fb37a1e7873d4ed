package compile

import (
	"errors"
	"fmt"
	"strings"

	"cuelang.org/go/cue"

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
	if c.translator == nil {
		c.translator = cueschema.New(&cueschema.Options{DropDoc: func(doc string) bool { return c.schemaDocs[strings.TrimSpace(doc)] }})
	}
	doc, err := c.translator.Schema(v)
	if err != nil {
		var terr *cueschema.Error
		if !errors.As(err, &terr) {
			c.report(c.index.lookup(node), "json-schema", "%s: %v", node, oneLine(err))
			return ""
		}
		for _, r := range terr.Refusals {
			pos := c.relPos(r.Pos)
			if !pos.IsValid() || strings.HasPrefix(pos.File, "cue.mod/") || strings.HasPrefix(pos.File, "../") {
				pos = c.index.lookup(node)
			}
			where := node
			if r.Path != "" {
				where += "." + r.Path
			}
			msg := fmt.Sprintf("%s: %s has no exact JSON Schema 2020-12 equivalent: %s", where, r.Construct, r.Message)
			if r.Hint != "" {
				msg += "; " + r.Hint
			}
			c.report(pos, "unrepresentable", "%s", msg)
		}
		return ""
	}
	return c.store(doc, node)
}

func (c *compiler) store(doc map[string]any, node string) graph.Digest {
	d, err := c.g.AddSchema(doc)
	if err != nil {
		c.report(c.index.lookup(node), "json-schema", "%s: cannot canonicalise the JSON Schema: %v", node, err)
		return ""
	}
	return d
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
}
