package realtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"stitchkit.dev/stitchkit/pkg/mount"
	"stitchkit.dev/stitchkit/pkg/realtime/taxonomy"
	"stitchkit.dev/stitchkit/pkg/validate"
)

// Subprotocol is the WebSocket subprotocol (Sec-WebSocket-Protocol) of
// version 1 of the wire protocol (docs/realtime-protocol.md). Clients of
// this package offer it, and treat a server that does not select it as
// not speaking this protocol. A server selects it when offered, serves a
// request that offers no subprotocol at all as version 1, and refuses one
// that offers only others with 400.
const Subprotocol = "stitchkit.realtime.v1"

// Frame types of the wire protocol. A frame of any other type is ignored
// (a newer peer may send types this version does not know).
const (
	FrameEvent     = "event"
	FrameAck       = "ack"
	FrameRejection = "rejection"
)

// WebSocket close codes the protocol uses (RFC 6455 §7.4.1, IANA registry).
const (
	CloseNormal          = 1000 // a peer closes on purpose
	CloseGoingAway       = 1001 // the server shuts down
	CloseProtocolError   = 1002 // a frame whose envelope is not the protocol's
	CloseUnsupportedData = 1003 // a binary frame
	CloseInvalidPayload  = 1007 // a text frame that is not acceptable JSON
	ClosePolicyViolation = 1008 // slow consumer, when so configured
	CloseMessageTooBig   = 1009 // a frame beyond the read limit
	CloseInternalError   = 1011 // the server failed
	CloseTryAgainLater   = 1013 // slow consumer (default)
)

// The rejection taxonomy is package taxonomy's, stated once; these names
// are aliases, so realtime and conformance values are one type.
type (
	// Direction says which side saw a rejected frame, and whether it was
	// going out or coming in.
	Direction = taxonomy.Direction
	// Phase says which part of an exchange was rejected.
	Phase = taxonomy.Phase
	// Reason says why a frame was rejected (see [taxonomy.Reason]).
	Reason = taxonomy.Reason
	// Fault says whose data was wrong: the peer's or our own.
	Fault = taxonomy.Fault
)

// The taxonomy's values, by their realtime names.
const (
	ClientInbound          = taxonomy.ClientInbound
	ClientOutbound         = taxonomy.ClientOutbound
	ServerInbound          = taxonomy.ServerInbound
	ServerOutbound         = taxonomy.ServerOutbound
	PhaseArguments         = taxonomy.PhaseArguments
	PhaseAcknowledgement   = taxonomy.PhaseAcknowledgement
	ReasonUnknownEvent     = taxonomy.UnknownEvent
	ReasonInvalidArguments = taxonomy.InvalidArguments
	ReasonInvalidAck       = taxonomy.InvalidAck
	ReasonMissingAck       = taxonomy.MissingAck
	ReasonUnexpectedAck    = taxonomy.UnexpectedAck
	ReasonRefused          = taxonomy.Refused
	ReasonRejectedByPeer   = taxonomy.RejectedByPeer
	FaultPeer              = taxonomy.FaultPeer
	FaultLocal             = taxonomy.FaultLocal
)

const (
	maxEnvelopeIssues       = 20
	maxEnvelopeMessageRunes = 1024
	maxFrameID              = 1<<53 - 1
	// frameDepthOverArgs is the nesting a frame adds around its args or
	// ack value: the frame object itself.
	frameDepthOverArgs = 1
)

// Envelope is the body of a rejection frame: the answer to an event that
// asked for an acknowledgement and was not admitted.
type Envelope struct {
	Event   string `json:"event"`
	Reason  Reason `json:"reason"`
	Message string `json:"message"`
	// Code is the registry code of a refusal (ReasonRefused), e.g.
	// NOT_IMPLEMENTED; empty for contract violations.
	Code mount.Code `json:"code,omitempty"`
	// Issues locate invalid values: JSON Pointers into the argument tuple
	// (invalid-arguments) or the acknowledgement value. At most 20.
	Issues []validate.Issue `json:"issues,omitempty"`
}

// frame is one decoded wire frame.
type frame struct {
	typ   string
	id    int64 // 0: no acknowledgement wanted (event) / absent
	event string
	// args is the decoded argument value (nil: absent, meaning []).
	args any
	// ack is the decoded acknowledgement value; hasAck reports presence.
	ack    any
	hasAck bool
	// rejection is the decoded envelope of a rejection frame.
	rejection Envelope
}

// frameError is a frame the protocol cannot accept; the connection closes
// with code.
type frameError struct {
	code   int
	reason string
}

func (e *frameError) Error() string { return fmt.Sprintf("close %d: %s", e.code, e.reason) }

// parseFrame decodes one text frame. Unknown members are ignored; an
// unknown type yields a frame whose typ the caller does not handle.
func parseFrame(data []byte, argDepth int) (frame, *frameError) {
	var f frame
	v, err := validate.DecodeJSON(data, &validate.DecodeOptions{MaxDepth: argDepth + frameDepthOverArgs})
	if err != nil {
		return f, &frameError{CloseInvalidPayload, err.Error()}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return f, &frameError{CloseProtocolError, "a frame is a JSON object"}
	}
	if f.typ, ok = m["type"].(string); !ok {
		return f, &frameError{CloseProtocolError, `"type" must be a string`}
	}
	switch f.typ {
	case FrameEvent, FrameAck, FrameRejection:
	default:
		return f, nil
	}
	if raw, present := m["id"]; present {
		id, ok := frameID(raw)
		if !ok {
			return f, &frameError{CloseProtocolError, `"id" must be an integer from 1 to 2^53-1`}
		}
		f.id = id
	} else if f.typ != FrameEvent {
		return f, &frameError{CloseProtocolError, "an " + f.typ + ` frame needs "id"`}
	}
	switch f.typ {
	case FrameEvent:
		if f.event, ok = m["event"].(string); !ok || f.event == "" {
			return f, &frameError{CloseProtocolError, `"event" must be a non-empty string`}
		}
		f.args = m["args"]
	case FrameAck:
		f.ack, f.hasAck = m["ack"]
	case FrameRejection:
		env, ok := m["rejection"].(map[string]any)
		if !ok {
			return f, &frameError{CloseProtocolError, `"rejection" must be an object`}
		}
		f.rejection = parseEnvelope(env)
	}
	return f, nil
}

// frameID accepts a JSON integer written without sign, fraction or
// exponent, from 1 to 2^53-1 (exact in every JavaScript engine).
func frameID(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	s := string(n)
	if s == "" || s[0] < '1' || s[0] > '9' || len(s) > 16 {
		return 0, false
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id > maxFrameID {
		return 0, false
	}
	return id, true
}

// parseEnvelope reads a peer's envelope leniently: a refusal is a refusal
// whatever shape its details take, so wrong member types are dropped, not
// fatal, and sizes are capped.
func parseEnvelope(m map[string]any) Envelope {
	var e Envelope
	e.Event, _ = m["event"].(string)
	r, _ := m["reason"].(string)
	e.Reason = Reason(r)
	e.Message, _ = m["message"].(string)
	e.Message = truncateRunes(e.Message, maxEnvelopeMessageRunes)
	code, _ := m["code"].(string)
	e.Code = mount.Code(code)
	if list, ok := m["issues"].([]any); ok {
		for _, it := range list {
			if len(e.Issues) == maxEnvelopeIssues {
				break
			}
			im, ok := it.(map[string]any)
			if !ok {
				continue
			}
			var is validate.Issue
			is.Path, _ = im["path"].(string)
			is.Keyword, _ = im["keyword"].(string)
			is.Message, _ = im["message"].(string)
			is.Message = truncateRunes(is.Message, maxEnvelopeMessageRunes)
			e.Issues = append(e.Issues, is)
		}
	}
	return e
}

func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// appendEventFrame appends {"type":"event","id":N?,"event":E,"args":A}.
func appendEventFrame(b []byte, id int64, event string, args []byte) []byte {
	b = append(b, `{"type":"event"`...)
	if id != 0 {
		b = append(b, `,"id":`...)
		b = strconv.AppendInt(b, id, 10)
	}
	b = append(b, `,"event":`...)
	b = appendString(b, event)
	b = append(b, `,"args":`...)
	b = append(b, args...)
	return append(b, '}')
}

// appendAckFrame appends {"type":"ack","id":N,"ack":V}.
func appendAckFrame(b []byte, id int64, ack []byte) []byte {
	b = append(b, `{"type":"ack","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"ack":`...)
	b = append(b, ack...)
	return append(b, '}')
}

// appendRejectionFrame appends {"type":"rejection","id":N,"rejection":E}.
func appendRejectionFrame(b []byte, id int64, env Envelope) []byte {
	if len(env.Issues) > maxEnvelopeIssues {
		env.Issues = env.Issues[:maxEnvelopeIssues]
	}
	body, err := marshal(env)
	if err != nil {
		// An Envelope holds only strings; it always marshals.
		panic(err)
	}
	b = append(b, `{"type":"rejection","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"rejection":`...)
	b = append(b, body...)
	return append(b, '}')
}

func appendString(b []byte, s string) []byte {
	q, err := marshal(s)
	if err != nil {
		panic(err) // a string always marshals
	}
	return append(b, q...)
}

// marshal is json.Marshal without HTML escaping and without the trailing
// newline of json.Encoder.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
