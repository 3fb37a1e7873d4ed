package main

import (
	"fmt"

	mcpmount "stitchkit.dev/stitchkit/pkg/mount/mcp"
)

// stitch serve's MCP mount: the contract's MCP surfaces over stateless
// streamable HTTP, answering through the same example runner as /api.
func init() { serveMounts = append(serveMounts, serveMCP) }

// serveMCP serves the default surface at /mcp or each named one at
// /mcp/{surface}; any other path under /mcp is the MCP mount's 404.
func serveMCP(s *serveState) error {
	h, err := mcpmount.New(s.runner, &mcpmount.Options{Prefix: "/mcp"})
	if err != nil {
		return err
	}
	s.routes = append(s.routes, serveRoute{prefix: "/mcp", h: h})
	for _, name := range h.Surfaces() {
		cat, _ := h.Catalog(name)
		what := "MCP, default surface"
		if name != "" {
			what = fmt.Sprintf("MCP surface %q", name)
		}
		s.listing = append(s.listing, serveListing{label: "MCP", path: h.Path(name), note: fmt.Sprintf("%s, %d tools", what, cat.Tools)})
	}
	return nil
}
