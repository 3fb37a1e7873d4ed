package mcp

import (
	"encoding/json"
	"slices"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// CatalogMetaKey is the `_meta` key of the catalog stamp every tools/list and
// tools/call result carries: {"digest": "<16 hex>", "tools": <count>}.
//
// MCP over stateless HTTP has no list_changed push, so a long-lived client
// holding a tool list can compare the digest of any later result with the
// one it listed under and re-list when they differ.
const CatalogMetaKey = "stitchkit/catalog"

// Catalog is the stamp of one prepared surface.
type Catalog struct {
	// Digest is the first 16 hex characters of SHA-256 over the canonical
	// JSON of the surface's tools sorted by name, each {name, description,
	// input, output, annotations} with null for an absent output or
	// annotations (research contracts §2.5.6). A changed description or
	// schema changes it; the order properties were written in does not.
	Digest graph.Digest
	// Tools is the number of tools.
	Tools int
}

// catalogEntry is one tool as the catalog digest sees it: exactly what a
// client is shown.
type catalogEntry struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Input       json.RawMessage `json:"input"`
	Output      json.RawMessage `json:"output"`
	Annotations json.RawMessage `json:"annotations"`
}

// catalogOf computes the stamp of a tool list.
func catalogOf(tools []*sdk.Tool) (Catalog, error) {
	entries := make([]catalogEntry, 0, len(tools))
	for _, t := range tools {
		e := catalogEntry{Name: t.Name, Description: t.Description, Input: rawSchema(t.InputSchema),
			Output: rawSchema(t.OutputSchema), Annotations: json.RawMessage("null")}
		if t.Annotations != nil {
			b, err := json.Marshal(t.Annotations)
			if err != nil {
				return Catalog{}, err
			}
			e.Annotations = b
		}
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b catalogEntry) int { return graph.CompareUTF16(a.Name, b.Name) })
	d, err := graph.DigestOf(entries)
	if err != nil {
		return Catalog{}, err
	}
	return Catalog{Digest: d, Tools: len(entries)}, nil
}

// rawSchema returns a tool schema as JSON; every schema the mount registers
// is a json.RawMessage, and nil is JSON null.
func rawSchema(s any) json.RawMessage {
	switch x := s.(type) {
	case nil:
		return json.RawMessage("null")
	case json.RawMessage:
		if x == nil {
			return json.RawMessage("null")
		}
		return x
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return json.RawMessage("null")
		}
		return b
	}
}

// meta returns a fresh `_meta` value for one result: at protocol 2026-07-28
// the SDK writes server info into a result's Meta in place, so results must
// never share a map.
func (c Catalog) meta() map[string]any {
	return map[string]any{"digest": string(c.Digest), "tools": c.Tools}
}
