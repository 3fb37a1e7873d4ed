package mcp

import (
	"net/http"
	"strconv"
)

// writeHTTPError answers a request the SDK never sees (unknown surface,
// refused origin or host, missing credentials, oversized body) with the
// HTTP error envelope {"error":{"code","message","details"?}}, normalised
// by the runner so it carries a registry code.
func (h *Handler) writeHTTPError(w http.ResponseWriter, r *http.Request, err error) {
	e := h.runner.Normalize(r.Context(), nil, err)
	b := append(e.HTTPEnvelope(), '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(e.HTTPStatus())
	w.Write(b)
}
