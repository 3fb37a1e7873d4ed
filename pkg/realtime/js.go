package realtime

import (
	_ "embed"
	"net/http"
	"strconv"

	"stitchkit.dev/stitchkit/pkg/mount"
)

// jsModule is the ES module client (js/realtime.js): the wire protocol
// for browsers and node, with no dependencies.
//
//go:embed js/realtime.js
var jsModule []byte

// JSModule returns the source of the ES module client, realtime.js.
func JSModule() []byte { return append([]byte(nil), jsModule...) }

// JSHandler serves the ES module client (GET or HEAD), for example at
// "/realtime.js":
//
//	http.Handle("GET /realtime.js", realtime.JSHandler())
//
// and in a page: import { connect } from "/realtime.js".
func JSHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeHTTPError(w, mount.NewError(mount.CodeMethodNotAllowed, ""))
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/javascript; charset=utf-8")
		h.Set("Content-Length", strconv.Itoa(len(jsModule)))
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-cache")
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(jsModule)
	})
}
