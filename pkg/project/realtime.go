package project

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// Realtime is the realtime topology of a graph: what the realtime hub
// serves and the manifest records.
type Realtime struct {
	// Contracts are the contract names, sorted; a contract without events
	// keeps its name.
	Contracts []string
	// Events are ordered by contract, then direction (serverToClient before
	// clientToServer), then event name.
	Events []RealtimeEvent
}

// RealtimeEvent is one event of one direction of one realtime contract.
type RealtimeEvent struct {
	Contract string
	// Direction is graph.ServerToClient or graph.ClientToServer.
	Direction string
	Event     string
	Desc      string
	// Args is the canonical tuple schema of the event's arguments.
	Args       json.RawMessage
	ArgsDigest graph.Digest
	// Ack is the canonical schema of the acknowledgement (travelling the
	// other way), nil when the event takes none.
	Ack       json.RawMessage
	AckDigest graph.Digest
}

// Errors of the realtime topology.
var (
	ErrRealtimeArgsMissing = errors.New("Realtime args schema digest missing")
	ErrRealtimeAckMissing  = errors.New("Realtime ack schema digest missing")
)

// RealtimeTopology returns the realtime contracts of g and one row per
// event. A missing args schema, an ack digest the graph does not hold, and a
// duplicated contract or event name are errors, all collected.
func RealtimeTopology(g *graph.Graph) (*Realtime, error) {
	derived("realtime")
	rt := &Realtime{Contracts: []string{}, Events: []RealtimeEvent{}}
	var errs []error
	contracts := slices.Clone(g.Realtime)
	slices.SortStableFunc(contracts, func(a, b graph.RealtimeContract) int { return graph.CompareUTF16(a.Name, b.Name) })
	for i, c := range contracts {
		if i > 0 && contracts[i-1].Name == c.Name {
			errs = append(errs, fmt.Errorf("realtime contract %q is declared twice", c.Name))
			continue
		}
		rt.Contracts = append(rt.Contracts, c.Name)
		for _, dir := range []struct {
			name   string
			events []graph.Event
		}{{graph.ServerToClient, c.ServerToClient}, {graph.ClientToServer, c.ClientToServer}} {
			events := slices.Clone(dir.events)
			slices.SortStableFunc(events, func(a, b graph.Event) int { return graph.CompareUTF16(a.Name, b.Name) })
			for j, ev := range events {
				where := c.Name + "." + dir.name + "." + ev.Name
				if j > 0 && events[j-1].Name == ev.Name {
					errs = append(errs, fmt.Errorf("realtime event %s is declared twice", where))
					continue
				}
				row := RealtimeEvent{Contract: c.Name, Direction: dir.name, Event: ev.Name, Desc: ev.Desc,
					ArgsDigest: ev.Args, Args: g.Schema(ev.Args), AckDigest: ev.Ack, Ack: g.Schema(ev.Ack)}
				if row.Args == nil {
					errs = append(errs, fmt.Errorf("%w: %s", ErrRealtimeArgsMissing, where))
					continue
				}
				if ev.Ack != "" && row.Ack == nil {
					errs = append(errs, fmt.Errorf("%w: %s", ErrRealtimeAckMissing, where))
					continue
				}
				rt.Events = append(rt.Events, row)
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return rt, nil
}
