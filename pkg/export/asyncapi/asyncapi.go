// Package asyncapi exports the realtime contracts of a stitchkit contract as
// an AsyncAPI 3.0.0 document.
//
// Start with [Generate]:
//
//	g, err := check.Compile(ctx, "./contracts") // or graph.Load(graphJSON)
//	p, err := project.New(g, nil)               // the one projection
//	doc, err := asyncapi.Generate(p, nil)
//	os.WriteFile("asyncapi.json", doc, 0o644)
//
// Events come from the projection's realtime topology
// ([project.Projection.Realtime]), the value the realtime hub and the
// surface manifest read. The document describes the application
// that serves the contracts (the server side of the WebSocket):
//
//   - One channel per realtime contract, keyed by the contract name, with
//     address "<prefix>/<contract>" ("/realtime/board" by default, the route
//     `stitch serve` uses). A contract without events keeps its channel,
//     with an empty message map.
//
//   - One message per event and direction, keyed "<direction>.<event>"
//     (e.g. "serverToClient.taskChanged"); its payload is the event's
//     argument tuple schema. An event with an ack adds a message keyed
//     "<direction>.<event>.ack" whose payload is the ack schema. The dot
//     cannot occur in a contract or event name, so keys never collide.
//
//   - One operation per event, keyed "<contract>.<direction>.<event>":
//     serverToClient events are "send" (the server sends), clientToServer
//     events are "receive". An ack is the operation's reply: its own
//     message, on the same channel, travelling the other way.
//
//   - Payloads are JSON Schema 2020-12, exactly as in the graph. AsyncAPI's
//     default schema format is a draft-07 superset, which cannot express
//     2020-12 keywords such as prefixItems, so every payload is a Multi
//     Format Schema Object with schemaFormat
//     "application/schema+json;version=2020-12" (see [SchemaFormat]).
//     "$defs" are hoisted into components.schemas, each also a Multi Format
//     Schema Object; references point at the inner schema
//     ("#/components/schemas/Task/schema"). Names follow the same rule as
//     the OpenAPI exporter: "Task", or "<label>_Task" when two different
//     definitions share the name, label being
//     "<contract>_<direction>_<event>_args" (or "_ack").
//
//   - The document's "x-stitchkit-subprotocol" names the WebSocket
//     subprotocol a client offers ([Subprotocol]); the frames that carry
//     the payloads are described in docs/realtime-protocol.md (a message's
//     payload is the "args" of an event frame, an ack message's payload
//     the "ack" of an ack frame).
//
// The bytes are deterministic: canonical JSON (keys in UTF-16 code-unit
// order) indented with two spaces and ending in a newline.
package asyncapi

import (
	"errors"
	"fmt"
	"strings"

	"stitchkit.dev/stitchkit/pkg/export/internal/schemas"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/project"
)

// Version is the AsyncAPI version of the documents this package writes.
const Version = "3.0.0"

// SchemaFormat is the schemaFormat of every payload and component schema:
// JSON Schema 2020-12, the dialect the graph holds.
const SchemaFormat = "application/schema+json;version=2020-12"

// Subprotocol is the WebSocket subprotocol of the realtime wire protocol
// (package realtime's Subprotocol; a test holds the two together).
const Subprotocol = "stitchkit.realtime.v1"

// DefaultPrefix is the path realtime contracts are served under when
// [Options.Prefix] is empty.
const DefaultPrefix = "/realtime"

// Options configures [Generate]. A nil *Options means defaults.
type Options struct {
	// Prefix is the path under which each contract's WebSocket endpoint
	// lives: a contract's channel address is Prefix + "/" + name. Empty
	// means [DefaultPrefix]; "/" serves contracts at the root.
	Prefix string
	// Servers are listed in the document's "servers" map, keyed by name.
	Servers []Server
}

// Server is one entry of the document's "servers" map.
type Server struct {
	// Name is the server's key in the map.
	Name string
	// Host is host[:port], e.g. "api.example.com".
	Host string
	// Protocol is "ws" or "wss".
	Protocol    string
	Description string
}

// Generate returns the AsyncAPI 3.0.0 JSON document of the realtime
// contracts of the projection p. A graph without realtime contracts yields
// a document without channels.
func Generate(p *project.Projection, opts *Options) ([]byte, error) {
	if p == nil {
		return nil, errors.New("asyncapi: nil projection")
	}
	if opts == nil {
		opts = &Options{}
	}
	doc, err := build(p, opts)
	if err != nil {
		return nil, err
	}
	out, err := graph.CanonicalIndent(doc)
	if err != nil {
		return nil, fmt.Errorf("asyncapi: %w", err)
	}
	return out, nil
}

func build(p *project.Projection, opts *Options) (map[string]any, error) {
	g, rt := p.Graph(), p.Realtime()
	var err error
	prefix := opts.Prefix
	if prefix == "" {
		prefix = DefaultPrefix
	}

	h := schemas.NewHoister("#/components/schemas/", "/schema")
	type eventUses struct{ args, ack *schemas.Use }
	uses := make([]eventUses, len(rt.Events))
	for i, ev := range rt.Events {
		label := ev.Contract + "_" + ev.Direction + "_" + ev.Event
		if uses[i].args, err = h.Add(label+"_args", ev.Args); err != nil {
			return nil, fmt.Errorf("asyncapi: %s: %w", eventID(ev), err)
		}
		if ev.Ack != nil {
			if uses[i].ack, err = h.Add(label+"_ack", ev.Ack); err != nil {
				return nil, fmt.Errorf("asyncapi: %s: %w", eventID(ev), err)
			}
		}
	}
	if err := h.Resolve(); err != nil {
		return nil, fmt.Errorf("asyncapi: %w", err)
	}

	channels := map[string]any{}
	messagesOf := map[string]map[string]any{}
	for _, c := range rt.Contracts {
		msgs := map[string]any{}
		messagesOf[c] = msgs
		channels[c] = map[string]any{
			"address":  project.JoinPath(prefix, c),
			"title":    c,
			"messages": msgs,
		}
	}
	operations := map[string]any{}
	for i, ev := range rt.Events {
		msgs := messagesOf[ev.Contract]
		channelRef := map[string]any{"$ref": "#/channels/" + ev.Contract}
		key := ev.Direction + "." + ev.Event
		m := map[string]any{
			"name":                   ev.Event,
			"contentType":            "application/json",
			"payload":                multiFormat(uses[i].args.Schema()),
			"x-stitchkit-direction":  ev.Direction,
			"x-stitchkit-event-kind": "args",
		}
		if ev.Desc != "" {
			m["summary"] = ev.Desc
		}
		msgs[key] = m
		action := "send"
		if ev.Direction == graph.ClientToServer {
			action = "receive"
		}
		op := map[string]any{
			"action":   action,
			"channel":  channelRef,
			"messages": []any{map[string]any{"$ref": "#/channels/" + ev.Contract + "/messages/" + key}},
		}
		if ev.Desc != "" {
			op["summary"] = ev.Desc
		}
		if uses[i].ack != nil {
			ackKey := key + ".ack"
			msgs[ackKey] = map[string]any{
				"name":                   ev.Event + ".ack",
				"summary":                "Acknowledgement of " + ev.Event,
				"contentType":            "application/json",
				"payload":                multiFormat(uses[i].ack.Schema()),
				"x-stitchkit-direction":  opposite(ev.Direction),
				"x-stitchkit-event-kind": "ack",
			}
			op["reply"] = map[string]any{
				"channel":  channelRef,
				"messages": []any{map[string]any{"$ref": "#/channels/" + ev.Contract + "/messages/" + ackKey}},
			}
		}
		operations[eventID(ev)] = op
	}

	title := g.Info.Title
	if title == "" {
		title = g.Name
	}
	version := g.Version
	if version == "" {
		// info.version is required; a contract always declares one, a
		// hand-built graph may not.
		version = "0.0.0"
	}
	info := map[string]any{"title": title, "version": version}
	if g.Info.Description != "" {
		info["description"] = g.Info.Description
	}
	doc := map[string]any{
		"asyncapi":                Version,
		"info":                    info,
		"defaultContentType":      "application/json",
		"x-stitchkit-subprotocol": Subprotocol,
		"channels":                channels,
		"operations":              operations,
	}
	if len(opts.Servers) > 0 {
		servers := map[string]any{}
		for _, s := range opts.Servers {
			if _, dup := servers[s.Name]; dup || s.Name == "" {
				return nil, fmt.Errorf("asyncapi: server name %q is empty or repeated", s.Name)
			}
			srv := map[string]any{"host": s.Host, "protocol": s.Protocol}
			if s.Description != "" {
				srv["description"] = s.Description
			}
			servers[s.Name] = srv
		}
		doc["servers"] = servers
	}
	if c := h.Components(); len(c) > 0 {
		wrapped := make(map[string]any, len(c))
		for name, s := range c {
			wrapped[name] = multiFormat(s)
		}
		doc["components"] = map[string]any{"schemas": wrapped}
	}
	return doc, nil
}

func multiFormat(schema any) map[string]any {
	return map[string]any{"schemaFormat": SchemaFormat, "schema": schema}
}

func eventID(ev project.RealtimeEvent) string {
	return strings.Join([]string{ev.Contract, ev.Direction, ev.Event}, ".")
}

func opposite(dir string) string {
	if dir == graph.ServerToClient {
		return graph.ClientToServer
	}
	return graph.ServerToClient
}
