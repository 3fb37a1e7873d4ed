package mcp

import (
	"encoding/json"
	"net/http"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
)

// writeHTTPError answers a request the SDK never sees (unknown surface,
// refused origin or host, missing credentials, oversized body) with the
// HTTP error envelope {"error":{"code","message","details"?}}. Only
// framework codes are answered here.
func writeHTTPError(w http.ResponseWriter, e *mount.Error) {
	fe, _ := graph.FrameworkError(e.Code)
	status := e.Status
	if status == 0 {
		status = fe.Status
	}
	if status == 0 {
		status = http.StatusInternalServerError
	}
	msg := e.Message
	if msg == "" {
		msg = fe.Message
	}
	body := map[string]any{"code": e.Code, "message": msg}
	if len(e.Details) > 0 {
		body["details"] = e.Details
	}
	b, _ := json.Marshal(map[string]any{"error": body})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
