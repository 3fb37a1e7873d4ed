package realtime

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
)

// writeHTTPError answers a refused handshake with the HTTP error envelope
// every stitchkit transport uses ([mount.Error.HTTPEnvelope]:
// {"error":{"code","message","details"?}}) and the error's status.
func writeHTTPError(w http.ResponseWriter, e *mount.Error) {
	body := e.HTTPEnvelope()
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("X-Content-Type-Options", "nosniff")
	// RFC 6455 §4.4: a server that refuses the handshake says which
	// WebSocket version it speaks.
	h.Set("Sec-WebSocket-Version", "13")
	w.WriteHeader(e.HTTPStatus())
	_, _ = w.Write(body)
}

func registryMessage(code mount.Code) string {
	if fe, ok := graph.FrameworkError(string(code)); ok {
		return fe.Message
	}
	return string(code)
}

// handshakeError reads the error envelope of a refused handshake into a
// *mount.Error; a body that is not one still yields the status.
func handshakeError(status int, body []byte) *mount.Error {
	var env struct {
		Error struct {
			Code    mount.Code     `json:"code"`
			Message string         `json:"message"`
			Details map[string]any `json:"details"`
			Hint    string         `json:"hint"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &env) == nil && env.Error.Code != "" {
		return &mount.Error{Code: env.Error.Code, Status: status, Message: env.Error.Message, Details: env.Error.Details, Hint: env.Error.Hint}
	}
	code := codeForStatus(status)
	return &mount.Error{Code: code, Status: status, Message: fmt.Sprintf("handshake refused with HTTP %d", status)}
}

// codeForStatus picks the framework code of a bare HTTP status.
func codeForStatus(status int) mount.Code {
	for _, fe := range graph.FrameworkErrors {
		if fe.Status == status && !isRealtimeCode(fe.Code) {
			return mount.Code(fe.Code)
		}
	}
	if status >= 500 {
		return codeInternal
	}
	return mount.CodeBadRequest
}

func isRealtimeCode(code string) bool { return len(code) > 9 && code[:9] == "REALTIME_" }
