package graph

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// MaxGraphBytes bounds the size of a graph.json that [Load] accepts.
const MaxGraphBytes = 64 << 20

// Encode returns the graph.json bytes of g: the canonical JSON of g, indented
// with two spaces for reviewable diffs, and a final newline. Key order and
// number forms are canonical, so the bytes depend only on the graph's
// content.
func (g *Graph) Encode() ([]byte, error) { return CanonicalIndent(g) }

// CanonicalIndent returns the canonical JSON of v indented with two spaces
// and ending in a newline: the reviewable, byte-stable form of every
// document stitch writes (graph.json, manifests, OpenAPI, AsyncAPI).
// Indentation changes no key order or number form, so digests taken over
// [Canonical] bytes describe the same content.
func CanonicalIndent(v any) ([]byte, error) {
	c, err := Canonical(v)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, c, "", "  "); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// Load parses graph.json, recomputes the digest of every schema and checks
// every reference, refusing a file whose schemas were edited after
// compilation or that refers to schemas it does not hold.
func Load(data []byte) (*Graph, error) {
	if len(data) > MaxGraphBytes {
		return nil, fmt.Errorf("graph.json: %d bytes exceeds the %d byte limit", len(data), MaxGraphBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var g Graph
	if err := dec.Decode(&g); err != nil {
		return nil, fmt.Errorf("graph.json: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("graph.json: trailing data after the graph")
	}
	if g.GraphVersion != GraphVersion {
		return nil, fmt.Errorf("graph.json: graphVersion %d; this build reads %d: recompile the contract with `stitch compile`", g.GraphVersion, GraphVersion)
	}
	if g.DigestVersion != DigestVersion {
		return nil, fmt.Errorf("graph.json: digestVersion %d; this build computes %d: recompile the contract with `stitch compile`", g.DigestVersion, DigestVersion)
	}
	if err := g.verifySchemas(); err != nil {
		return nil, err
	}
	if err := g.canonicalizeValues(); err != nil {
		return nil, err
	}
	if err := g.Validate(); err != nil {
		return nil, err
	}
	return &g, nil
}

// ReadFrom reads and loads graph.json from r (bounded by MaxGraphBytes).
func ReadFrom(r io.Reader) (*Graph, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxGraphBytes+1))
	if err != nil {
		return nil, err
	}
	return Load(data)
}

// verifySchemas recomputes each schema digest and replaces the stored bytes
// by their canonical form.
func (g *Graph) verifySchemas() error {
	keys := make([]string, 0, len(g.Schemas))
	for d := range g.Schemas {
		keys = append(keys, string(d))
	}
	slices.Sort(keys)
	for _, k := range keys {
		d := Digest(k)
		raw := g.Schemas[d]
		canon, got, err := SchemaDigest(raw)
		if err != nil {
			return fmt.Errorf("graph.json: schema %s: %w", d, err)
		}
		if got != d {
			return fmt.Errorf("graph.json: schema %s has digest %s: the file was edited after compilation; recompile the contract with `stitch compile`", d, got)
		}
		g.Schemas[d] = canon
	}
	return nil
}

// canonicalizeValues rewrites the free-form JSON values (meta, examples) in
// canonical form, so a loaded graph equals the compiled one byte for byte
// whatever indentation graph.json was written with.
func (g *Graph) canonicalizeValues() error {
	canon := func(where string, raw *json.RawMessage) error {
		if len(*raw) == 0 {
			return nil
		}
		c, err := Canonical(*raw)
		if err != nil {
			return fmt.Errorf("graph.json: %s: %w", where, err)
		}
		*raw = c
		return nil
	}
	all := func(where string, raws []json.RawMessage) error {
		for i := range raws {
			if err := canon(where, &raws[i]); err != nil {
				return err
			}
		}
		return nil
	}
	for si := range g.Services {
		for oi := range g.Services[si].Operations {
			op := &g.Services[si].Operations[oi]
			if err := canon(op.ID()+" meta", &op.Meta); err != nil {
				return err
			}
			if err := all(op.ID()+" examples", op.Examples); err != nil {
				return err
			}
		}
	}
	for i := range g.RuntimeTools {
		rt := &g.RuntimeTools[i]
		if err := canon(rt.Name+" meta", &rt.Meta); err != nil {
			return err
		}
		if err := all(rt.Name+" examples", rt.Examples); err != nil {
			return err
		}
	}
	for i := range g.Realtime {
		for _, evs := range [][]Event{g.Realtime[i].ServerToClient, g.Realtime[i].ClientToServer} {
			for j := range evs {
				if err := all(g.Realtime[i].Name+"."+evs[j].Name+" examples", evs[j].Examples); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Validate checks the graph's internal consistency: known methods and
// transports, unique and sorted names, and that every schema reference
// resolves. Compile produces valid graphs; Validate guards hand-edited or
// foreign ones.
func (g *Graph) Validate() error {
	var errs []string
	bad := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	ref := func(where string, d Digest, required bool) {
		if d == "" {
			if required {
				bad("%s: schema reference is missing", where)
			}
			return
		}
		if _, ok := g.Schemas[d]; !ok {
			bad("%s: schema %s is not in the graph", where, d)
		}
	}
	transports := func(where string, ts []Transport) {
		seen := map[Transport]bool{}
		for _, t := range ts {
			if !slices.Contains(Transports, t) {
				bad("%s: unknown transport %q", where, t)
			}
			if seen[t] {
				bad("%s: transport %q listed twice", where, t)
			}
			seen[t] = true
		}
	}
	if g.Name == "" {
		bad("contract name is empty")
	}
	sortedUnique := func(what string, names []string) {
		for i := 1; i < len(names); i++ {
			if CompareUTF16(names[i-1], names[i]) >= 0 {
				bad("%s %q is duplicated or out of order", what, names[i])
			}
		}
	}
	var names []string
	for _, s := range g.Services {
		names = append(names, s.Name)
		var actions []string
		for _, op := range s.Operations {
			where := "operation " + op.ID()
			actions = append(actions, op.Action)
			if op.Service != s.Name {
				bad("%s: listed under service %q", where, s.Name)
			}
			if !slices.Contains(Methods, op.Method) {
				bad("%s: unknown method %q", where, op.Method)
			}
			if !strings.HasPrefix(op.Path, "/") {
				bad("%s: path %q does not start with /", where, op.Path)
			}
			if strings.TrimSpace(op.Desc) == "" {
				bad("%s: empty description", where)
			}
			transports(where, op.Expose)
			ref(where+" params", op.Params, len(op.PathNames()) > 0)
			ref(where+" query", op.Query, false)
			ref(where+" input", op.Input, false)
			ref(where+" output", op.Output, false)
		}
		sortedUnique("operation "+s.Name+".", actions)
	}
	sortedUnique("service", names)
	names = names[:0]
	for _, rt := range g.RuntimeTools {
		names = append(names, rt.Name)
		where := "runtime tool " + rt.Name
		if !slices.Contains(Methods, rt.Identity.Method) {
			bad("%s: unknown method %q", where, rt.Identity.Method)
		}
		if len(rt.Transports) == 0 {
			bad("%s: exposes no transport", where)
		}
		transports(where, rt.Transports)
		if slices.Contains(rt.Transports, HTTP) {
			bad("%s: runtime tools have no HTTP route", where)
		}
		ref(where+" input", rt.Input, true)
		ref(where+" output", rt.Output, false)
	}
	sortedUnique("runtime tool", names)
	names = names[:0]
	for _, c := range g.CliCommands {
		names = append(names, c.Name)
		ref("CLI command "+c.Name+" input", c.Input, false)
		ref("CLI command "+c.Name+" output", c.Output, false)
	}
	sortedUnique("CLI command", names)
	names = names[:0]
	for _, rc := range g.Realtime {
		names = append(names, rc.Name)
		for _, dir := range []struct {
			name   string
			events []Event
		}{{ServerToClient, rc.ServerToClient}, {ClientToServer, rc.ClientToServer}} {
			var evs []string
			for _, ev := range dir.events {
				evs = append(evs, ev.Name)
				where := "realtime " + rc.Name + "." + dir.name + "." + ev.Name
				ref(where+" args", ev.Args, true)
				ref(where+" ack", ev.Ack, false)
			}
			sortedUnique("realtime event "+rc.Name+"."+dir.name+".", evs)
		}
	}
	sortedUnique("realtime contract", names)
	if m := g.Surfaces.MCP; m != nil && m.Default != nil && len(m.Named) > 0 {
		bad("surfaces.mcp has both default and named surfaces")
	}
	switch g.Policy.MCP.SchemaValidation {
	case ValidationThrow, ValidationWarn, ValidationSkip:
	default:
		bad("policy.mcp.schemaValidation %q is not throw, warn or skip", g.Policy.MCP.SchemaValidation)
	}
	if len(errs) > 0 {
		return fmt.Errorf("graph.json is inconsistent:\n  %s", strings.Join(errs, "\n  "))
	}
	return nil
}
