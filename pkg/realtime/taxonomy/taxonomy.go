// Package taxonomy is the realtime rejection taxonomy, stated once: which
// side saw a rejected frame going which way (Direction), which part of the
// exchange (Phase), why (Reason) and whose data was wrong (Fault).
//
// Package realtime (the WebSocket server and client) reports rejections
// with these values and package conformance records them in observations;
// both name these types (as aliases), so the two can never disagree. The
// package imports nothing, so conformance links no WebSocket engine.
package taxonomy

// Direction says which side saw a rejected frame, and whether it was going
// out or coming in.
type Direction string

// The four directions.
const (
	ClientInbound  Direction = "client-inbound"
	ClientOutbound Direction = "client-outbound"
	ServerInbound  Direction = "server-inbound"
	ServerOutbound Direction = "server-outbound"
)

// Phase says which part of an exchange was rejected.
type Phase string

// The phases.
const (
	PhaseArguments       Phase = "arguments"
	PhaseAcknowledgement Phase = "acknowledgement"
)

// Reason says why a frame was rejected. The first five travel in
// rejection envelopes and are reported locally; Refused only travels (a
// handler said no, which is not a contract violation); RejectedByPeer is
// only reported locally (the peer answered with a rejection envelope).
type Reason string

// The reasons.
const (
	UnknownEvent     Reason = "unknown-event"
	InvalidArguments Reason = "invalid-arguments"
	InvalidAck       Reason = "invalid-acknowledgement-value"
	MissingAck       Reason = "missing-acknowledgement"
	UnexpectedAck    Reason = "unexpected-acknowledgement"
	Refused          Reason = "refused"
	RejectedByPeer   Reason = "rejected-by-peer"
)

// Fault says whose data was wrong: the peer's or our own.
type Fault string

// The faults.
const (
	FaultPeer  Fault = "peer"
	FaultLocal Fault = "local"
)

// Valid reports whether d is one of the four directions.
func (d Direction) Valid() bool {
	switch d {
	case ClientInbound, ClientOutbound, ServerInbound, ServerOutbound:
		return true
	}
	return false
}

// Valid reports whether p is one of the phases.
func (p Phase) Valid() bool { return p == PhaseArguments || p == PhaseAcknowledgement }

// Reported reports whether r is a reason a rejection report carries:
// every reason but Refused, which only travels in envelopes.
func (r Reason) Reported() bool {
	switch r {
	case UnknownEvent, InvalidArguments, InvalidAck, MissingAck, UnexpectedAck, RejectedByPeer:
		return true
	}
	return false
}

// Valid reports whether f is one of the faults.
func (f Fault) Valid() bool { return f == FaultPeer || f == FaultLocal }
