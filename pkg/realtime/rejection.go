package realtime

import (
	"fmt"
	"time"

	"stitchkit.dev/stitchkit/pkg/mount"
	"stitchkit.dev/stitchkit/pkg/validate"
)

// SourceRealtime is the mount.Source of a realtime handshake at the edge
// ([mount.EdgeRequest]).
const SourceRealtime mount.Source = "realtime"

// Registry codes this package answers with: the framework registry's
// (package mount defines each once), named here for realtime callers.
const (
	CodeContractViolation  = mount.CodeRealtimeViolation
	CodeRequestTimeout     = mount.CodeRealtimeTimeout
	CodeRequestDisconnect  = mount.CodeRealtimeDisconnected
	CodeRequestInvalidAck  = mount.CodeRealtimeInvalidAck
	CodeRequestRejected    = mount.CodeRealtimeRejected
	codeNotImplemented     = mount.CodeNotImplemented
	codeInternal           = mount.CodeInternal
	codeServiceUnavailable = mount.CodeServiceUnavailable
)

// Rejection is one frame that was not admitted, as reported to an
// OnRejected hook: which side saw it going which way (Direction), which
// part of the exchange (Phase), why (Reason) and whose data was wrong
// (Fault).
type Rejection struct {
	Contract  string
	Event     string
	Direction Direction
	Phase     Phase
	Reason    Reason
	Fault     Fault
	// Issues locate invalid values (JSON Pointers into the argument tuple
	// or the acknowledgement value), at most 20.
	Issues []validate.Issue
	// Peer is the envelope the peer answered with (ReasonRejectedByPeer).
	Peer *Envelope
	// Err is the REALTIME_CONTRACT_VIOLATION error whose Details carry the
	// fields above (contract, event, direction, phase, reason, fault,
	// issues).
	Err *mount.Error
}

func newRejection(contract, event string, dir Direction, phase Phase, reason Reason, fault Fault, issues []validate.Issue, msg string) Rejection {
	r := Rejection{Contract: contract, Event: event, Direction: dir, Phase: phase, Reason: reason, Fault: fault, Issues: issues}
	details := map[string]any{
		"contract":  contract,
		"event":     event,
		"direction": string(dir),
		"phase":     string(phase),
		"reason":    string(reason),
		"fault":     string(fault),
	}
	if len(issues) > 0 {
		details["issues"] = issues
	}
	r.Err = &mount.Error{Code: CodeContractViolation, Message: msg, Details: details}
	return r
}

// envelope is the rejection envelope that answers the peer. A local fault
// is scrubbed: the peer learns that we failed, not how.
func (r Rejection) envelope() Envelope {
	if r.Fault == FaultLocal {
		return Envelope{Event: r.Event, Reason: r.Reason, Message: "the receiver failed to produce a valid answer"}
	}
	return Envelope{Event: r.Event, Reason: r.Reason, Message: r.Err.Message, Issues: r.Issues}
}

func reasonMessage(reason Reason, event string) string {
	switch reason {
	case ReasonUnknownEvent:
		return fmt.Sprintf("unknown event %q", event)
	case ReasonInvalidArguments:
		return fmt.Sprintf("invalid arguments for %q", event)
	case ReasonInvalidAck:
		return fmt.Sprintf("invalid acknowledgement value for %q", event)
	case ReasonMissingAck:
		return fmt.Sprintf("event %q requires an acknowledgement id", event)
	case ReasonUnexpectedAck:
		return fmt.Sprintf("event %q takes no acknowledgement", event)
	case ReasonRejectedByPeer:
		return fmt.Sprintf("the peer rejected %q", event)
	}
	return string(reason)
}

func requestTimeout(event string, d time.Duration) *mount.Error {
	return &mount.Error{Code: CodeRequestTimeout, Message: fmt.Sprintf("no acknowledgement of %q within %s", event, d),
		Details: map[string]any{"event": event, "timeoutMs": d.Milliseconds()}}
}

// requestDisconnected: sent says whether the frame had been handed to the
// connection (in flight) or not (refused before sending).
func requestDisconnected(event string, sent bool) *mount.Error {
	msg := fmt.Sprintf("not connected: %q was not sent", event)
	if sent {
		msg = fmt.Sprintf("disconnected while awaiting the acknowledgement of %q", event)
	}
	return &mount.Error{Code: CodeRequestDisconnect, Message: msg, Details: map[string]any{"event": event, "sent": sent}}
}

func requestInvalidAck(event string, issues []validate.Issue) *mount.Error {
	return &mount.Error{Code: CodeRequestInvalidAck, Message: fmt.Sprintf("the acknowledgement of %q does not match its schema", event),
		Details: map[string]any{"event": event, "issues": issues}}
}

func requestRejected(event string, env Envelope) *mount.Error {
	d := map[string]any{"event": event, "reason": string(env.Reason), "message": env.Message}
	if env.Code != "" {
		d["code"] = string(env.Code)
	}
	if len(env.Issues) > 0 {
		d["issues"] = env.Issues
	}
	msg := fmt.Sprintf("the peer rejected %q (%s)", event, env.Reason)
	if env.Code != "" {
		msg = fmt.Sprintf("the peer refused %q: %s", event, env.Code)
	}
	return &mount.Error{Code: CodeRequestRejected, Message: msg, Details: d}
}

// peerRejection is what the requester reports when the peer answers with
// a rejection envelope: rejected-by-peer, local (the data we sent was
// refused), before any schema is consulted.
func peerRejection(contract, event string, dir Direction, env Envelope) Rejection {
	phase := PhaseArguments
	switch env.Reason {
	case ReasonInvalidAck, ReasonMissingAck, ReasonUnexpectedAck:
		phase = PhaseAcknowledgement
	}
	r := newRejection(contract, event, dir, phase, ReasonRejectedByPeer, FaultLocal, env.Issues, reasonMessage(ReasonRejectedByPeer, event))
	r.Peer = &env
	r.Err.Details["peer"] = env
	return r
}

// refusal turns a handler's error into the envelope the peer gets: the
// error's registry code and client-safe message; anything that is not a
// *mount.Error is INTERNAL_SERVER_ERROR with the registry message.
func refusal(event string, err error) Envelope {
	if me, ok := mount.AsError(err); ok {
		msg := me.Message
		if msg == "" {
			msg = registryMessage(me.Code)
		}
		return Envelope{Event: event, Reason: ReasonRefused, Code: me.Code, Message: msg}
	}
	return Envelope{Event: event, Reason: ReasonRefused, Code: codeInternal, Message: registryMessage(codeInternal)}
}
