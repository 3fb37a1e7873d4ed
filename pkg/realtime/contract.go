package realtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/project"
	"stitchkit.dev/stitchkit/pkg/validate"
)

// Contract is one realtime contract of a graph with the validators of its
// events compiled once. A server and any number of clients share it; it is
// safe for concurrent use.
type Contract struct {
	name string
	// s2c and c2s are the events of each direction, by name.
	s2c, c2s map[string]*eventSpec
	maxDepth int
}

// eventSpec is one event of a contract, ready to validate.
type eventSpec struct {
	name      string
	direction string // graph.ServerToClient or graph.ClientToServer
	args      *validate.Validator
	ack       *validate.Validator // nil: the event takes no acknowledgement
	examples  []eventExample
}

// eventExample is one entry of an event's examples in the graph.
type eventExample struct {
	Args json.RawMessage `json:"args"`
	Ack  json.RawMessage `json:"ack,omitempty"`
}

// NewContract prepares the realtime contract called name of the graph p
// projects. Events and their compiled validators come from the projection
// ([project.Projection.Realtime], [project.Projection.Validators]), the
// same value the manifest and the AsyncAPI export read.
func NewContract(p *project.Projection, name string) (*Contract, error) {
	if p == nil {
		return nil, errors.New("realtime: nil projection")
	}
	topo, set := p.Realtime(), p.Validators()
	if !slices.Contains(topo.Contracts, name) {
		return nil, fmt.Errorf("realtime: the graph has no realtime contract %q (it has: %s)", name, listOrNone(topo.Contracts))
	}
	c := &Contract{name: name, s2c: map[string]*eventSpec{}, c2s: map[string]*eventSpec{}, maxDepth: validate.DefaultMaxDepth}
	examples := graphExamples(p.Graph(), name)
	for _, ev := range topo.Events {
		if ev.Contract != name {
			continue
		}
		spec := &eventSpec{name: ev.Event, direction: ev.Direction, examples: examples[ev.Direction+"."+ev.Event]}
		var err error
		if spec.args, err = validator(set, ev.ArgsDigest); err != nil {
			return nil, fmt.Errorf("realtime: %s.%s.%s args: %w", name, ev.Direction, ev.Event, err)
		}
		if ev.Ack != nil {
			if spec.ack, err = validator(set, ev.AckDigest); err != nil {
				return nil, fmt.Errorf("realtime: %s.%s.%s ack: %w", name, ev.Direction, ev.Event, err)
			}
		}
		if ev.Direction == graph.ServerToClient {
			c.s2c[ev.Event] = spec
		} else {
			c.c2s[ev.Event] = spec
		}
	}
	return c, nil
}

// Contracts prepares every realtime contract of the projection, sorted by
// name.
func Contracts(p *project.Projection) ([]*Contract, error) {
	if p == nil {
		return nil, errors.New("realtime: nil projection")
	}
	out := make([]*Contract, 0, len(p.Realtime().Contracts))
	for _, name := range p.Realtime().Contracts {
		c, err := NewContract(p, name)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func validator(set *validate.Set, d graph.Digest) (*validate.Validator, error) {
	if v := set.Get(d); v != nil {
		return v, nil
	}
	return nil, fmt.Errorf("schema %s is not in the graph", d)
}

func graphExamples(g *graph.Graph, contract string) map[string][]eventExample {
	out := map[string][]eventExample{}
	for _, c := range g.Realtime {
		if c.Name != contract {
			continue
		}
		for _, dir := range []struct {
			name   string
			events []graph.Event
		}{{graph.ServerToClient, c.ServerToClient}, {graph.ClientToServer, c.ClientToServer}} {
			for _, ev := range dir.events {
				for _, raw := range ev.Examples {
					var ex eventExample
					if json.Unmarshal(raw, &ex) == nil && ex.Args != nil {
						out[dir.name+"."+ev.Name] = append(out[dir.name+"."+ev.Name], ex)
					}
				}
			}
		}
	}
	return out
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// Name returns the contract's name.
func (c *Contract) Name() string { return c.name }

// Events returns the names of the events of one direction
// (graph.ServerToClient or graph.ClientToServer), sorted.
func (c *Contract) Events(direction string) []string {
	m := c.registry(direction)
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.SortFunc(names, graph.CompareUTF16)
	return names
}

// HasAck reports whether the event of that direction takes an
// acknowledgement; ok is false when the contract has no such event.
func (c *Contract) HasAck(direction, event string) (hasAck, ok bool) {
	spec := c.registry(direction)[event]
	if spec == nil {
		return false, false
	}
	return spec.ack != nil, true
}

func (c *Contract) registry(direction string) map[string]*eventSpec {
	if direction == graph.ServerToClient {
		return c.s2c
	}
	if direction == graph.ClientToServer {
		return c.c2s
	}
	return nil
}

// Args are an event's validated arguments: one raw JSON value per element
// of the argument tuple.
type Args []json.RawMessage

// Decode unmarshals argument i into dst[i] (encoding/json); extra
// arguments are left alone, a nil dst skips its argument.
func (a Args) Decode(dst ...any) error {
	if len(dst) > len(a) {
		return fmt.Errorf("realtime: %d arguments, %d destinations", len(a), len(dst))
	}
	for i, d := range dst {
		if d == nil {
			continue
		}
		if err := json.Unmarshal(a[i], d); err != nil {
			return fmt.Errorf("realtime: argument %d: %w", i, err)
		}
	}
	return nil
}

// JSON returns the arguments as one JSON array.
func (a Args) JSON() json.RawMessage {
	b := []byte{'['}
	for i, r := range a {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, r...)
	}
	return append(b, ']')
}

// checkArgs validates a decoded argument value (nil: absent, meaning the
// empty tuple) and splits it into Args.
func (s *eventSpec) checkArgs(v any) (Args, []validate.Issue) {
	if v == nil {
		v = []any{}
	}
	if err := s.args.Validate(v); err != nil {
		return nil, issuesOf(err)
	}
	list, ok := v.([]any)
	if !ok {
		// The graph's tuple schemas say "type": "array"; a hand-built
		// graph might not, and a handler is promised a tuple.
		return nil, []validate.Issue{{Keyword: "type", Message: "the arguments must be an array"}}
	}
	out := make(Args, len(list))
	for i, el := range list {
		b, err := marshal(el)
		if err != nil {
			return nil, []validate.Issue{{Path: fmt.Sprintf("/%d", i), Message: err.Error()}}
		}
		out[i] = b
	}
	return out, nil
}

// encodeArgs marshals local arguments and validates them: the bytes that
// go on the wire are the bytes that were checked.
func (s *eventSpec) encodeArgs(args []any, maxDepth int) (json.RawMessage, []validate.Issue) {
	b := []byte{'['}
	for i, a := range args {
		if i > 0 {
			b = append(b, ',')
		}
		enc, err := marshal(a)
		if err != nil {
			return nil, []validate.Issue{{Path: fmt.Sprintf("/%d", i), Message: "not JSON: " + err.Error()}}
		}
		b = append(b, enc...)
	}
	b = append(b, ']')
	return b, checkEncoded(s.args, b, maxDepth)
}

// encodeAck marshals and validates a local acknowledgement value.
func (s *eventSpec) encodeAck(ack any, maxDepth int) (json.RawMessage, []validate.Issue) {
	b, err := marshal(ack)
	if err != nil {
		return nil, []validate.Issue{{Message: "not JSON: " + err.Error()}}
	}
	return b, checkEncoded(s.ack, b, maxDepth)
}

func checkEncoded(v *validate.Validator, b []byte, maxDepth int) []validate.Issue {
	val, err := validate.DecodeJSON(b, &validate.DecodeOptions{MaxDepth: maxDepth})
	if err != nil {
		return []validate.Issue{{Message: err.Error()}}
	}
	if err := v.Validate(val); err != nil {
		return issuesOf(err)
	}
	return nil
}

// checkAck validates a decoded acknowledgement value and re-encodes it.
func (s *eventSpec) checkAck(v any, present bool) (json.RawMessage, []validate.Issue) {
	if !present {
		return nil, []validate.Issue{{Keyword: "required", Message: `the ack frame has no "ack" value`}}
	}
	if err := s.ack.Validate(v); err != nil {
		return nil, issuesOf(err)
	}
	b, err := marshal(v)
	if err != nil {
		return nil, []validate.Issue{{Message: err.Error()}}
	}
	return b, nil
}

func issuesOf(err error) []validate.Issue {
	var ve *validate.Error
	if errors.As(err, &ve) {
		if len(ve.Issues) > maxEnvelopeIssues {
			return ve.Issues[:maxEnvelopeIssues]
		}
		return ve.Issues
	}
	return []validate.Issue{{Message: err.Error()}}
}

func (c *Contract) violation(event string, dir Direction, phase Phase, reason Reason, fault Fault, issues []validate.Issue) Rejection {
	return newRejection(c.name, event, dir, phase, reason, fault, issues, reasonMessage(reason, event))
}

// outbound checks a local send against the contract: the event exists in
// reg, and it takes an acknowledgement exactly when one is asked for.
func (c *Contract) outbound(dir Direction, reg map[string]*eventSpec, event string, wantAck bool) (*eventSpec, error) {
	spec := reg[event]
	switch {
	case spec == nil:
		return nil, c.violation(event, dir, PhaseArguments, ReasonUnknownEvent, FaultLocal, nil).Err
	case wantAck && spec.ack == nil:
		return nil, c.violation(event, dir, PhaseAcknowledgement, ReasonUnexpectedAck, FaultLocal, nil).Err
	case !wantAck && spec.ack != nil:
		return nil, c.violation(event, dir, PhaseAcknowledgement, ReasonMissingAck, FaultLocal, nil).Err
	}
	return spec, nil
}
