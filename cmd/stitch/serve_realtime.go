package main

import (
	"fmt"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/realtime"
)

func init() { serveMounts = append(serveMounts, serveRealtime) }

// serveRealtime mounts every realtime contract at /realtime/{contract}
// (realtime.ServeExamples: valid clientToServer events are acked with
// their example ack, or refused with NOT_IMPLEMENTED; invalid frames are
// rejected as by any server; an unknown contract is 404, a foreign Origin
// 403), and the ES module client at /realtime.js.
func serveRealtime(s *serveState) error {
	mux, err := realtime.ServeExamples(s.p, realtime.DefaultPrefix, nil)
	if err != nil {
		return err
	}
	s.shutdown = append(s.shutdown, mux.Shutdown)
	contracts := mux.Contracts()
	s.handle(realtime.DefaultPrefix, mux, "realtime", realtime.DefaultPrefix+"/{contract}",
		fmt.Sprintf("%d contracts, WebSocket subprotocol %s", len(contracts), realtime.Subprotocol))
	cs, err := realtime.Contracts(s.p)
	if err != nil {
		return err
	}
	for _, c := range cs {
		note := fmt.Sprintf("%d events from the server, %d from clients", len(c.Events(graph.ServerToClient)), len(c.Events(graph.ClientToServer)))
		s.listing = append(s.listing, serveListing{label: "  WS", path: mux.Path(c.Name()), note: note})
	}
	s.handle("/realtime.js", realtime.JSHandler(), "client", "", "realtime.js, the ES module client")
	return nil
}
