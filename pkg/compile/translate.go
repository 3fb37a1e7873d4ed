package compile

import (
	"strings"

	"cuelang.org/go/cue"

	"stitchkit.dev/stitchkit/pkg/compile/internal/cueschema"
	"stitchkit.dev/stitchkit/pkg/graph"
)

// translation is the outcome of translating one schema node.
type translation struct {
	doc      map[string]any // nil when err is set
	err      error          // from Translator.Schema
	warnings []*cueschema.Warning
	// bytes and digest are the canonical form of doc (digestErr when it
	// has none).
	bytes     []byte
	digest    graph.Digest
	digestErr error
}

// translate runs t on v and canonicalises the result.
func translate(t *cueschema.Translator, warn *[]*cueschema.Warning, v cue.Value) translation {
	*warn = nil
	doc, err := t.Schema(v)
	r := translation{doc: doc, err: err, warnings: *warn}
	if err == nil {
		r.bytes, r.digest, r.digestErr = graph.SchemaDigest(doc)
	}
	return r
}

// newTranslator returns a translator configured for this compilation whose
// warnings are appended to *warn.
func (c *compiler) newTranslator(warn *[]*cueschema.Warning) *cueschema.Translator {
	docs := c.schemaDocs
	return cueschema.New(&cueschema.Options{
		DropDoc:             func(doc string) bool { return docs[strings.TrimSpace(doc)] },
		Warn:                func(w *cueschema.Warning) { *warn = append(*warn, w) },
		NoStructValidators:  !c.structValidators,
		NoConditionalFields: !c.comprehensions,
	})
}
