package check

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"stitchkit.dev/stitchkit/pkg/compile"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/project"
)

// routes reports two HTTP operations with the same method and route shape
// ({a} and {b} in one position are the same), then every route the HTTP
// mount could not serve beside another.
func (k *checker) routes() {
	g := k.g
	routes := map[string]*graph.Operation{}
	for _, op := range g.Operations() {
		if !op.Exposed(graph.HTTP) {
			continue
		}
		full := project.JoinPath(g.Service(op.Service).Prefix, op.Path)
		key := op.Method + " " + graph.PathShape(full)
		first, ok := routes[key]
		if !ok {
			routes[key] = op
			continue
		}
		node, other := opNode(op)+".path", opNode(first)+".path"
		firstFull := project.JoinPath(g.Service(first.Service).Prefix, first.Path)
		k.add(compile.Diagnostic{
			Pos: k.r.Pos(node), Rule: "duplicate-route", Path: node,
			Message: fmt.Sprintf("%s: route %s %s is also served by %s (%s %s); change the path or the method",
				op.ID(), op.Method, full, first.ID(), first.Method, firstFull),
			Related: []compile.Related{{Pos: k.r.Pos(other), Path: other,
				Message: fmt.Sprintf("%s serves %s %s", first.ID(), first.Method, firstFull)}},
		})
	}
	k.serveMux(routes)
}

// uncleanSegment returns the first "." or ".." segment of p, or "".
func uncleanSegment(p string) string {
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." {
			return seg
		}
	}
	return ""
}

// headGetPair reports whether one of a and b is a HEAD and the other a
// GET operation.
func headGetPair(a, b *graph.Operation) bool {
	return a.Method == "HEAD" && b.Method == "GET" || a.Method == "GET" && b.Method == "HEAD"
}

// conflictRE finds the other pattern in a net/http.ServeMux conflict panic.
var (
	conflictRE = regexp.MustCompile(`conflicts with pattern ("(?:[^"\\]|\\.)*")`)
	likeRE     = regexp.MustCompile(`like ("(?:[^"\\]|\\.)*")`)
)

// serveMux registers every HTTP route of the graph (the projection the
// HTTP mount serves, project.HTTPRoutes) in a fresh net/http.ServeMux —
// the oracle for what the mount can serve — and reports each pattern the
// mux refuses: two routes that match some of the same requests with
// neither more specific (GET /{id}/b and GET /a/{id}), or an unclean path.
// Routes already reported as duplicates (not in keep, by method and
// shape) are not registered twice.
func (k *checker) serveMux(keep map[string]*graph.Operation) {
	mux := http.NewServeMux()
	byPattern := map[string]*graph.Operation{}
	noop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for _, r := range project.HTTPRoutes(k.g, project.HTTPOptions{}) {
		names := graph.PathNames(r.Path)
		if keep[r.Method+" "+graph.PathShape(r.Path)] != r.Op || uncleanSegment(r.Path) != "" ||
			len(slices.Compact(slices.Sorted(slices.Values(names)))) != len(names) {
			continue // a duplicate route or parameter, or an unclean path: reported already
		}
		pattern := r.Pattern()
		msg := func() (msg string) {
			defer func() {
				if p := recover(); p != nil {
					msg = fmt.Sprint(p)
				}
			}()
			mux.Handle(pattern, noop)
			return ""
		}()
		if msg == "" {
			byPattern[pattern] = r.Op
			continue
		}
		np := opNode(r.Op)
		if m := conflictRE.FindStringSubmatch(msg); m != nil {
			other, _ := strconv.Unquote(m[1])
			if o := byPattern[other]; o != nil {
				why := ""
				if m := likeRE.FindStringSubmatch(msg); m != nil {
					why = " such as " + m[1]
				}
				if headGetPair(r.Op, o) {
					// HEAD /x/{id} next to GET /x/search: GET routes
					// also answer HEAD, so a HEAD request for /x/search
					// matches both and the mount would panic.
					why += " (GET routes also answer HEAD requests; give the HEAD operation a path no GET route can match, or drop it: the GET route already answers HEAD)"
				}
				// Report at the operation written last, naming both.
				this, that, thisPat, thatPat := r.Op, o, pattern, other
				onp := opNode(o)
				if posLess(k.r.Pos(np+".path"), k.r.Pos(onp+".path")) {
					this, that, thisPat, thatPat, np, onp = o, r.Op, other, pattern, onp, np
				}
				k.add(compile.Diagnostic{
					Pos: k.r.Pos(np + ".path"), Rule: "route-conflict", Path: np + ".path",
					Message: fmt.Sprintf("%s: route %s of %s conflicts with route %s of %s: both match some paths%s and neither is more specific, so net/http.ServeMux refuses them; change one path or method",
						np, thisPat, this.ID(), thatPat, that.ID(), why),
					Related: []compile.Related{{Pos: k.r.Pos(onp + ".path"), Path: onp + ".path",
						Message: fmt.Sprintf("%s: route %s of %s", onp, thatPat, that.ID())}},
				})
				continue
			}
		}
		k.add(compile.Diagnostic{Pos: k.r.Pos(np + ".path"), Rule: "route-conflict", Path: np + ".path",
			Message: fmt.Sprintf("%s: net/http.ServeMux refuses route %s of %s: %s", np, pattern, r.Op.ID(), strings.ReplaceAll(msg, "\n", " "))})
	}
}
