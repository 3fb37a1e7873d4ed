package project

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"stitchkit.dev/stitchkit/internal/schematree"
	"stitchkit.dev/stitchkit/pkg/graph"
)

// MCP schema validation profile (research contracts §2.5.1), applied to
// exactly the document an MCP surface advertises.

// PortableFormats are the JSON Schema formats every MCP host is expected to
// understand; policy.mcp.allowFormats extends the list.
var PortableFormats = []string{"date", "time", "date-time", "duration", "uri", "uri-reference",
	"uri-template", "email", "hostname", "ipv4", "ipv6", "regex", "uuid", "json-pointer",
	"relative-json-pointer"}

// mcpCheck is the outcome of the MCP profile for one tool.
type mcpCheck struct {
	// failure makes schemaValidation decide: throw, or drop the tool.
	failure string
	// findings are reported and never drop the tool.
	findings []string
}

// typedKeywords give a property a provable shape.
var typedKeywords = []string{"type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "not"}

func validateMCP(tool string, doc any, output json.RawMessage, pol graph.MCPPolicy) mcpCheck {
	var res mcpCheck
	root, ok := doc.(map[string]any)
	if !ok {
		res.failure = "input schema is not JSON Schema-compatible"
		return res
	}
	if obj, _ := inlineRootRef(root, root); !isPlainObject(obj) {
		res.failure = notObjectFailure(obj, root, pol.FlattenUnionInput)
	}
	if pol.RequireTypedProperties {
		var untyped []string
		walkProperties(root, tool, func(path string, s any) {
			if !isTyped(s) && !slices.Contains(pol.AllowUntyped, path) {
				untyped = append(untyped, path)
			}
		})
		slices.SortFunc(untyped, graph.CompareUTF16)
		for _, p := range untyped {
			res.findings = append(res.findings, fmt.Sprintf("untyped property %s: give it a type or list it in policy.mcp.allowUntyped", p))
		}
	}
	if pol.RequirePortableFormats {
		var bad []string
		check := func(side string, s any) {
			walkFormats(s, side, func(path, format string) {
				if !slices.Contains(PortableFormats, format) && !slices.Contains(pol.AllowFormats, format) {
					bad = append(bad, fmt.Sprintf("non-portable format %q at %s: list it in policy.mcp.allowFormats if every host supports it", format, path))
				}
			})
		}
		check("input", root)
		if output != nil {
			if out, err := decodeJSON(output); err == nil {
				check("output", out)
			} else {
				res.findings = append(res.findings, "output schema is not JSON Schema-compatible")
			}
		}
		slices.SortFunc(bad, graph.CompareUTF16)
		res.findings = append(res.findings, bad...)
	}
	return res
}

func isTyped(s any) bool {
	m, ok := s.(map[string]any)
	if !ok {
		return false
	}
	for _, k := range typedKeywords {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

// PropertyPaths returns the property paths of t's advertised input, sorted:
// the names policy.mcp.allowUntyped and the requireTypedProperties
// findings use (TOOL.prop.sub, TOOL.$defs.NAME.prop; items, pattern
// properties and combinators add no segment).
func (t *Tool) PropertyPaths() []string {
	doc, err := decodeJSON(t.Input)
	if err != nil {
		return nil
	}
	var out []string
	walkProperties(doc, t.Name, func(path string, _ any) { out = append(out, path) })
	slices.SortFunc(out, graph.CompareUTF16)
	return slices.Compact(out)
}

// walkProperties calls f for every property schema reachable from s, with a
// dotted path of property names prefixed by prefix ("tool.field.sub").
// Items, combinators and additionalProperties add no path segment; $defs
// add "$defs.NAME".
func walkProperties(s any, prefix string, f func(path string, s any)) {
	for _, c := range schematree.Children(s) {
		switch c.Keyword {
		case "properties":
			f(prefix+"."+c.Name, c.Schema)
			walkProperties(c.Schema, prefix+"."+c.Name, f)
		case "$defs", "definitions":
			walkProperties(c.Schema, prefix+".$defs."+c.Name, f)
		default:
			walkProperties(c.Schema, prefix, f)
		}
	}
}

// walkFormats calls f for every "format" keyword in a schema tree, with a
// path that names the property (input.field.sub) or the keyword
// (input.items, input.allOf[0], input.$defs.NAME) leading to it.
func walkFormats(s any, path string, f func(path, format string)) {
	if m, ok := s.(map[string]any); ok {
		if format, ok := m["format"].(string); ok {
			f(path, format)
		}
	}
	for _, c := range schematree.Children(s) {
		switch {
		case c.Keyword == "properties":
			walkFormats(c.Schema, path+"."+c.Name, f)
		case c.Index >= 0:
			walkFormats(c.Schema, path+"."+c.Keyword+"["+strconv.Itoa(c.Index)+"]", f)
		case schematree.KeywordKind(c.Keyword) == schematree.Map:
			walkFormats(c.Schema, path+"."+c.Keyword+"."+c.Name, f)
		default:
			walkFormats(c.Schema, path+"."+c.Keyword, f)
		}
	}
}

// notObjectFailure explains why an input is not an object schema and what
// to do about it. When flattenUnionInput is already on, advising it would
// be wrong: the message says why the union could not be flattened instead.
func notObjectFailure(obj, root map[string]any, flattenOn bool) string {
	union := rootUnion(obj, root)
	switch {
	case union == nil:
		what := "it is not an object"
		if t, ok := obj["type"].(string); ok && t != "object" {
			what = "it is of type " + t
		} else if _, ok := obj["$ref"]; ok {
			what = "its root $ref could not be resolved to an object"
		}
		return "input must be an object schema (type: object with properties): " + what + "; wrap the value in an object field or remove MCP from expose"
	case !flattenOn:
		return "input must be an object schema (type: object, no union at the root; a disjunction of structs and a struct with conditional fields, if … {…}, are unions of their cases); flatten the union with policy.mcp.flattenUnionInput or remove MCP from expose"
	}
	f := &flattener{root: root}
	_, why := f.flatten(union)
	if why == "" {
		why = "the union is combined with other schemas (allOf)"
	}
	return "input must be an object schema, and policy.mcp.flattenUnionInput (on) could not flatten the union at its root: " + why +
		`; make every branch an object with a required string discriminator of distinct values (e.g. kind!: "email" in one branch, kind!: "sms" in another) or remove MCP from expose`
}

// rootUnion returns the oneOf/anyOf node at the root of an input: the root
// itself, or a member of its root allOf (as when #params is merged with a
// union #input); nil when there is none.
func rootUnion(obj, root map[string]any) map[string]any {
	isUnion := func(m map[string]any) bool {
		_, one := m["oneOf"]
		_, any := m["anyOf"]
		return one || any
	}
	if isUnion(obj) {
		return obj
	}
	if l, ok := obj["allOf"].([]any); ok {
		for _, b := range l {
			if m, ok := b.(map[string]any); ok {
				if m, _ = inlineRootRef(m, root); isUnion(m) {
					return m
				}
			}
		}
	}
	return nil
}
