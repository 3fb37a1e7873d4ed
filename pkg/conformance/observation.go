package conformance

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/realtime/taxonomy"
)

// Outcome is the kind of a transport observation: what happened when a
// driver invoked a probe's fixture.
type Outcome string

// The seven outcomes of the observation union (research conformance §8).
const (
	// OutcomeSuccess: the call was admitted and answered.
	OutcomeSuccess Outcome = "success"
	// OutcomeValidationError: the call was refused because its arguments
	// broke the contract (VALIDATION_ERROR, BAD_REQUEST).
	OutcomeValidationError Outcome = "validation_error"
	// OutcomeDomainError: the call was refused with any other error code.
	OutcomeDomainError Outcome = "domain_error"
	// OutcomeAborted: the driver stopped because the probe's context was
	// done.
	OutcomeAborted Outcome = "aborted"
	// OutcomeRealtimeRejected: a realtime packet was rejected; Rejection
	// says where and why.
	OutcomeRealtimeRejected Outcome = "realtime_rejected"
	// OutcomeDisconnected: the realtime transport was disconnected;
	// Disconnect says when.
	OutcomeDisconnected Outcome = "disconnected"
	// OutcomeTimeout: the transport's own request timeout fired (not the
	// probe deadline, which fails the probe).
	OutcomeTimeout Outcome = "timeout"
)

var outcomes = []Outcome{OutcomeSuccess, OutcomeValidationError, OutcomeDomainError, OutcomeAborted,
	OutcomeRealtimeRejected, OutcomeDisconnected, OutcomeTimeout}

// Observation is one driver result, normalised so that the same
// expectation can hold on every transport. Two observations are equal when
// their canonical JSON is.
//
// Optional fields are absent when zero: Code and Diagnostic when empty,
// Data when nil (use json.RawMessage("null") for an explicit JSON null),
// HandlerCalls when nil (new(0) is "exactly zero calls"). Rejection is
// present exactly for realtime_rejected, Disconnect exactly for
// disconnected.
type Observation struct {
	Outcome Outcome `json:"outcome"`
	// Code is the registry code of an error ("VALIDATION_ERROR",
	// "TASK_NOT_FOUND", "REALTIME_REQUEST_TIMEOUT").
	Code string `json:"code,omitempty"`
	// Data is any JSON value: the output of a success, the details of an
	// error. It must marshal with encoding/json.
	Data any `json:"data,omitempty"`
	// Diagnostic is free text, capped by RunOptions.MaxDiagnosticBytes
	// before comparison.
	Diagnostic string `json:"diagnostic,omitempty"`
	// HandlerCalls counts calls of the application's handler during the
	// invocation, when the driver was given a counter.
	HandlerCalls *int        `json:"handlerCalls,omitempty"`
	Rejection    *Rejection  `json:"rejection,omitempty"`
	Disconnect   *Disconnect `json:"disconnect,omitempty"`
}

// Rejection says where a realtime packet was rejected and why.
type Rejection struct {
	Direction RejectionDirection `json:"direction"`
	Phase     RejectionPhase     `json:"phase"`
	Reason    RejectionReason    `json:"reason"`
	Fault     RejectionFault     `json:"fault"`
}

// The rejection taxonomy is package taxonomy's (pkg/realtime/taxonomy),
// stated once and shared with package realtime, which links the WebSocket
// engine this package does not; these names are aliases.
type (
	// RejectionDirection is the side and direction of a rejected packet.
	RejectionDirection = taxonomy.Direction
	// RejectionPhase is the part of a packet that was rejected.
	RejectionPhase = taxonomy.Phase
	// RejectionReason is why a packet was rejected.
	RejectionReason = taxonomy.Reason
	// RejectionFault says which side is at fault.
	RejectionFault = taxonomy.Fault
)

// The taxonomy's values, by their conformance names.
const (
	ClientInbound                   = taxonomy.ClientInbound
	ClientOutbound                  = taxonomy.ClientOutbound
	ServerInbound                   = taxonomy.ServerInbound
	ServerOutbound                  = taxonomy.ServerOutbound
	PhaseArguments                  = taxonomy.PhaseArguments
	PhaseAcknowledgement            = taxonomy.PhaseAcknowledgement
	ReasonUnknownEvent              = taxonomy.UnknownEvent
	ReasonInvalidArguments          = taxonomy.InvalidArguments
	ReasonInvalidAcknowledgement    = taxonomy.InvalidAck
	ReasonMissingAcknowledgement    = taxonomy.MissingAck
	ReasonUnexpectedAcknowledgement = taxonomy.UnexpectedAck
	ReasonRejectedByPeer            = taxonomy.RejectedByPeer
	FaultPeer                       = taxonomy.FaultPeer
	FaultLocal                      = taxonomy.FaultLocal
)

// Disconnect says when a realtime transport was found disconnected.
type Disconnect struct {
	Phase DisconnectPhase `json:"phase"`
}

// DisconnectPhase is before-invoke (the transport was already down when
// the probe invoked) or in-flight (it went down during the invocation).
type DisconnectPhase string

// Disconnect phases.
const (
	BeforeInvoke DisconnectPhase = "before-invoke"
	InFlight     DisconnectPhase = "in-flight"
)

// Validate reports whether o is a well-formed member of the observation
// union: a known outcome, a complete rejection exactly on
// realtime_rejected, a disconnect phase exactly on disconnected, a
// non-negative handler count and JSON data.
func (o Observation) Validate() error {
	known := false
	for _, k := range outcomes {
		known = known || o.Outcome == k
	}
	if !known {
		return fmt.Errorf("unknown outcome %q", o.Outcome)
	}
	if o.HandlerCalls != nil && *o.HandlerCalls < 0 {
		return fmt.Errorf("handlerCalls is %d, not a non-negative integer", *o.HandlerCalls)
	}
	switch {
	case o.Outcome == OutcomeRealtimeRejected && o.Rejection == nil:
		return errors.New(`outcome "realtime_rejected" requires a rejection`)
	case o.Outcome != OutcomeRealtimeRejected && o.Rejection != nil:
		return fmt.Errorf("outcome %q carries a rejection; only realtime_rejected does", o.Outcome)
	case o.Outcome == OutcomeDisconnected && o.Disconnect == nil:
		return errors.New(`outcome "disconnected" requires a disconnect phase`)
	case o.Outcome != OutcomeDisconnected && o.Disconnect != nil:
		return fmt.Errorf("outcome %q carries a disconnect; only disconnected does", o.Outcome)
	}
	if r := o.Rejection; r != nil {
		if err := r.Validate(); err != nil {
			return err
		}
	}
	if d := o.Disconnect; d != nil && d.Phase != BeforeInvoke && d.Phase != InFlight {
		return fmt.Errorf("unknown disconnect phase %q", d.Phase)
	}
	if _, err := o.Canonical(); err != nil {
		return err
	}
	return nil
}

// Validate reports whether every field of r is a member of its enum.
func (r Rejection) Validate() error {
	switch {
	case !r.Direction.Valid():
		return fmt.Errorf("unknown rejection direction %q", r.Direction)
	case !r.Phase.Valid():
		return fmt.Errorf("unknown rejection phase %q", r.Phase)
	case !r.Reason.Reported():
		return fmt.Errorf("unknown rejection reason %q", r.Reason)
	case !r.Fault.Valid():
		return fmt.Errorf("unknown rejection fault %q", r.Fault)
	}
	return nil
}

// Canonical returns the canonical JSON of o, the bytes probes compare.
func (o Observation) Canonical() ([]byte, error) {
	b, err := graph.Canonical(o)
	if err != nil {
		return nil, fmt.Errorf("observation data is not JSON: %w", err)
	}
	return b, nil
}

// Equal reports whether o and other have the same canonical JSON.
func (o Observation) Equal(other Observation) bool {
	a, errA := o.Canonical()
	b, errB := other.Canonical()
	return errA == nil && errB == nil && bytes.Equal(a, b)
}

// truncateUTF8 cuts s to at most max bytes, on a rune boundary, so a capped
// diagnostic is valid UTF-8 and never longer than the cap. (Upstream decodes
// the cut bytes leniently, so its result can exceed the cap by the two extra
// bytes of U+FFFD; here the cut backs up to the previous whole rune.)
func truncateUTF8(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
