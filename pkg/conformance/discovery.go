package conformance

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// Observed is what a caller discovered from the running system. Only the
// categories it supplies are compared: a nil slice or map is "not observed",
// while an empty non-nil one is observed and must match an empty manifest
// category.
type Observed struct {
	// OpenAPI is the served OpenAPI document: raw JSON ([]byte or
	// json.RawMessage), a decoded map, or any value that marshals to a
	// document with "paths". Only the get/post/put/patch/delete/head keys of
	// each path item are read.
	OpenAPI any
	// MCP, AGENT and CLI are the tool (command) names of each transport's
	// default surface.
	MCP, AGENT, CLI []string
	// ToolSurfaces are the names listed by specific surfaces, e.g. a named
	// MCP surface.
	ToolSurfaces []ObservedSurface
	// Realtime maps a contract name to the event names observed per
	// direction.
	Realtime map[string]ObservedRealtime
	// CliOnly are the CLI-only command names.
	CliOnly []string
	// Extensions maps a transport (HTTP, MCP, AGENT, CLI, REALTIME) to the
	// extension names observed on it.
	Extensions map[string][]string
}

// ObservedSurface is the tool list of one surface.
type ObservedSurface struct {
	Transport string
	// Surface is the named surface, "" for the default.
	Surface string
	Names   []string
}

// ObservedRealtime is the observed topology of one realtime contract.
type ObservedRealtime struct {
	ServerToClient []string
	ClientToServer []string
}

// openAPIMethods are the path-item keys HTTP discovery reads.
var openAPIMethods = []string{"get", "post", "put", "patch", "delete", "head"}

// AssertDiscovery compares m with what a client observed, in this order,
// returning the first mismatch: HTTP/OpenAPI, the MCP, AGENT and CLI default
// surfaces, the listed tool surfaces, realtime contracts per direction,
// CLI-only commands, extensions per transport. Lists are compared as sorted
// multisets; a mismatch reads
//
//	<label> mismatch
//	expected: a, b
//	actual: (empty)
func AssertDiscovery(m *Manifest, obs Observed) error {
	if obs.OpenAPI != nil {
		actual, err := openAPIRoutes(obs.OpenAPI)
		if err != nil {
			return fmt.Errorf("HTTP/OpenAPI discovery: %w", err)
		}
		var expected []string
		for _, op := range m.Operations {
			for _, r := range op.HTTP {
				expected = append(expected, r.Method+":"+r.Path)
			}
		}
		if err := compareNames("HTTP/OpenAPI", expected, actual); err != nil {
			return err
		}
	}
	for _, def := range []struct {
		transport string
		names     []string
	}{{TransportMCP, obs.MCP}, {TransportAGENT, obs.AGENT}, {TransportCLI, obs.CLI}} {
		if def.names == nil {
			continue
		}
		s := m.surface(def.transport, "")
		if s == nil {
			return notDeclared(def.transport, "")
		}
		if err := compareNames(def.transport+" discovery", toolNames(s), def.names); err != nil {
			return err
		}
	}
	for _, o := range obs.ToolSurfaces {
		s := m.surface(o.Transport, o.Surface)
		if s == nil {
			return notDeclared(o.Transport, o.Surface)
		}
		label := fmt.Sprintf("%s surface %q discovery", o.Transport, surfaceLabel(o.Surface))
		if err := compareNames(label, toolNames(s), o.Names); err != nil {
			return err
		}
	}
	contracts := make([]string, 0, len(obs.Realtime))
	for c := range obs.Realtime {
		contracts = append(contracts, c)
	}
	slices.SortFunc(contracts, graph.CompareUTF16)
	for _, c := range contracts {
		if !slices.Contains(m.RealtimeContracts, c) {
			return fmt.Errorf("REALTIME contract %q is not declared in the manifest", c)
		}
		o := obs.Realtime[c]
		for _, dir := range []struct {
			name string
			seen []string
		}{{graph.ServerToClient, o.ServerToClient}, {graph.ClientToServer, o.ClientToServer}} {
			var expected []string
			for _, ev := range m.Realtime {
				if ev.Contract == c && ev.Direction == dir.name {
					expected = append(expected, ev.Event)
				}
			}
			if err := compareNames("REALTIME "+c+"."+dir.name+" discovery", expected, dir.seen); err != nil {
				return err
			}
		}
	}
	if obs.CliOnly != nil {
		var expected []string
		for _, c := range m.CliOnly {
			expected = append(expected, c.Name)
		}
		if err := compareNames("CLI-only discovery", expected, obs.CliOnly); err != nil {
			return err
		}
	}
	for _, t := range []string{TransportHTTP, TransportMCP, TransportAGENT, TransportCLI, TransportREALTIME} {
		seen, ok := obs.Extensions[t]
		if !ok {
			continue
		}
		var expected []string
		for _, e := range m.Extensions {
			if e.Transport == t {
				expected = append(expected, e.Name)
			}
		}
		if err := compareNames(t+" extension discovery", expected, seen); err != nil {
			return err
		}
	}
	return nil
}

func (m *Manifest) surface(transport, name string) *ToolSurface {
	for i := range m.ToolSurfaces {
		if m.ToolSurfaces[i].Transport == transport && m.ToolSurfaces[i].Surface == name {
			return &m.ToolSurfaces[i]
		}
	}
	return nil
}

func toolNames(s *ToolSurface) []string {
	names := make([]string, len(s.Tools))
	for i, t := range s.Tools {
		names[i] = t.Name
	}
	return names
}

func surfaceLabel(name string) string {
	if name == "" {
		return "(default)"
	}
	return name
}

func notDeclared(transport, surface string) error {
	return fmt.Errorf("%s surface %q is not declared in the manifest", transport, surfaceLabel(surface))
}

// compareNames compares two lists as sorted multisets.
func compareNames(label string, expected, actual []string) error {
	e, a := slices.Clone(expected), slices.Clone(actual)
	slices.SortFunc(e, graph.CompareUTF16)
	slices.SortFunc(a, graph.CompareUTF16)
	if slices.Equal(e, a) {
		return nil
	}
	return fmt.Errorf("%s mismatch\nexpected: %s\nactual: %s", label, joinNames(e), joinNames(a))
}

func joinNames(names []string) string {
	if len(names) == 0 {
		return "(empty)"
	}
	return strings.Join(names, ", ")
}

// openAPIRoutes reads METHOD:path pairs from an OpenAPI document.
func openAPIRoutes(doc any) ([]string, error) {
	var raw []byte
	switch d := doc.(type) {
	case []byte:
		raw = d
	case json.RawMessage:
		raw = d
	case string:
		raw = []byte(d)
	default:
		b, err := json.Marshal(doc)
		if err != nil {
			return nil, err
		}
		raw = b
	}
	var parsed struct {
		Paths map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw, &parsed); err != nil {
		return nil, err
	}
	routes := []string{}
	for path, rawItem := range parsed.Paths {
		// "^x-" keys of the Paths Object are specification extensions,
		// not paths: their value may be anything (OpenAPI 3.1 §4.8.8).
		if strings.HasPrefix(path, "x-") {
			continue
		}
		var item map[string]json.RawMessage
		if err := json.Unmarshal(rawItem, &item); err != nil {
			return nil, fmt.Errorf("paths[%q] is not a Path Item Object: %w", path, err)
		}
		for _, method := range openAPIMethods {
			if _, ok := item[method]; ok {
				routes = append(routes, strings.ToUpper(method)+":"+path)
			}
		}
	}
	return routes, nil
}
