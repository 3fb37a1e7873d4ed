package project

import (
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
	"unicode"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// The route table: the HTTP routes of a graph as net/http.ServeMux
// patterns, checked for the conflicts ServeMux would refuse. The HTTP mount
// registers exactly these patterns and `stitch vet` reports exactly these
// conflicts, so a contract that vets clean always mounts.
//
// Conflicts are found by comparing patterns the way ServeMux's
// documentation defines it (a request matched by two patterns must have a
// most specific one), not by reading ServeMux's panic text. After the
// comparison, RouteTable registers every route in a scratch ServeMux as an
// oracle, so a case the comparison missed is still reported (as
// [RouteInvalid]) rather than surfacing as a panic in a mount.

// MuxPattern returns the net/http.ServeMux pattern the HTTP mount registers
// r under: "METHOD PATH", with the root path written "/{$}" so that it
// matches "/" only (a bare "/" pattern would match every path).
func (r Route) MuxPattern() string {
	if r.Path == "/" {
		return r.Method + " /{$}"
	}
	return r.Method + " " + r.Path
}

// Node returns the graph node path of the route's operation
// ("services.S.operations.A"), for positioning a diagnostic.
func (r Route) Node() string {
	return graph.NodePath("services", r.Op.Service, "operations", r.Op.Action)
}

// RouteProblemKind classifies a [RouteProblem]; the values are the rule
// names `stitch vet` prints.
type RouteProblemKind string

// Kinds of route problems.
const (
	// RouteDuplicate: two routes with one method and one path shape
	// (/tasks/{id} and /tasks/{taskId}).
	RouteDuplicate RouteProblemKind = "duplicate-route"
	// RouteConflict: two routes that both match some requests, neither
	// more specific than the other (GET /{id}/b and GET /a/{id}; also a
	// HEAD route against a GET route, which answers HEAD too).
	RouteConflict RouteProblemKind = "route-conflict"
	// RouteInvalid: a route ServeMux cannot register at all (a wildcard
	// name that is not a Go identifier, one name twice, a "." or ".."
	// segment).
	RouteInvalid RouteProblemKind = "route-invalid"
)

// RouteProblem is one route, or pair of routes, the table cannot serve.
type RouteProblem struct {
	Kind RouteProblemKind
	// Routes are the routes involved: one for RouteInvalid, two otherwise
	// (in route order).
	Routes []Route
	// Example is a request path both routes match ("" for RouteInvalid).
	Example string
	// Reason says why, in words (for RouteInvalid: what is wrong).
	Reason string
}

func (p RouteProblem) Error() string {
	switch p.Kind {
	case RouteInvalid:
		r := p.Routes[0]
		return fmt.Sprintf("route %s of %s cannot be served: %s", r.MuxPattern(), r.Op.ID(), p.Reason)
	case RouteDuplicate:
		a, b := p.Routes[0], p.Routes[1]
		return fmt.Sprintf("route %s of %s and route %s of %s match the same requests; change the path or the method",
			a.MuxPattern(), a.Op.ID(), b.MuxPattern(), b.Op.ID())
	default:
		a, b := p.Routes[0], p.Routes[1]
		return fmt.Sprintf("route %s of %s conflicts with route %s of %s: both match some paths such as %q and neither is more specific%s; change one path or method",
			a.MuxPattern(), a.Op.ID(), b.MuxPattern(), b.Op.ID(), p.Example, p.Reason)
	}
}

// RouteProblems is every problem of a route table; it is an error.
type RouteProblems []RouteProblem

func (ps RouteProblems) Error() string {
	msgs := make([]string, len(ps))
	for i, p := range ps {
		msgs[i] = p.Error()
	}
	return strings.Join(msgs, "\n")
}

// RouteTable returns the HTTP routes of g ([HTTPRoutes]) when net/http's
// ServeMux can serve all of them together, and otherwise the routes with
// every problem found, as [RouteProblems]. Each pair of routes is reported
// once; a route that is itself invalid is not compared with others.
func RouteTable(g *graph.Graph, opts HTTPOptions) ([]Route, error) {
	routes := HTTPRoutes(g, opts)
	var problems RouteProblems
	pats := make([]*muxPattern, len(routes))
	for i, r := range routes {
		p, err := parseMuxPattern(r.Method, r.Path)
		if err != nil {
			problems = append(problems, RouteProblem{Kind: RouteInvalid, Routes: []Route{r}, Reason: err.Error()})
			continue
		}
		pats[i] = p
	}
	clash := map[int]bool{}
	for i := range routes {
		for j := i + 1; j < len(routes); j++ {
			if pats[i] == nil || pats[j] == nil {
				continue
			}
			mrel := compareMethods(pats[i].method, pats[j].method)
			if mrel == disjoint {
				continue
			}
			prel := comparePaths(pats[i].segs, pats[j].segs)
			switch combine(mrel, prel) {
			case equivalent:
				problems = append(problems, RouteProblem{Kind: RouteDuplicate, Routes: []Route{routes[i], routes[j]},
					Example: commonPath(pats[i].segs, pats[j].segs)})
				clash[i], clash[j] = true, true
			case overlaps:
				reason := ""
				if prel != overlaps {
					reason = " (a GET route also answers HEAD requests: give the HEAD operation a path no GET route matches, or drop it — the GET route already answers HEAD)"
				}
				problems = append(problems, RouteProblem{Kind: RouteConflict, Routes: []Route{routes[i], routes[j]},
					Example: commonPath(pats[i].segs, pats[j].segs), Reason: reason})
				clash[i], clash[j] = true, true
			}
		}
	}
	// The oracle: what the comparison accepted must register.
	mux := http.NewServeMux()
	noop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for i, r := range routes {
		if pats[i] == nil || clash[i] {
			continue
		}
		if refused := register(mux, r.MuxPattern(), noop); refused != nil {
			problems = append(problems, RouteProblem{Kind: RouteInvalid, Routes: []Route{r},
				Reason: fmt.Sprintf("net/http.ServeMux refuses it (%v)", refused)})
		}
	}
	if len(problems) > 0 {
		return routes, problems
	}
	return routes, nil
}

// register registers pattern, returning what ServeMux panicked with, if
// anything. Only whether it panicked is used for decisions; the value is
// quoted for the reader.
func register(mux *http.ServeMux, pattern string, h http.Handler) (refused any) {
	defer func() { refused = recover() }()
	mux.Handle(pattern, h)
	return nil
}

// muxPattern is a parsed route pattern: a method and its path segments.
type muxPattern struct {
	method string
	segs   []segment
}

// segment is a path segment: a literal (s, unescaped; "/" for a final
// {$}), a single wildcard, or a final multi wildcard.
type segment struct {
	s           string
	raw         string // the literal as written (escaped), for example paths
	wild, multi bool
}

// parseMuxPattern parses a route path with the rules of ServeMux patterns.
func parseMuxPattern(method, p string) (*muxPattern, error) {
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("path %q does not start with /", p)
	}
	if clean := path.Clean(p); clean != p {
		return nil, fmt.Errorf("path %q is not clean (requests are cleaned to %q before matching)", p, clean)
	}
	mp := &muxPattern{method: method}
	if p == "/" {
		mp.segs = []segment{{s: "/"}}
		return mp, nil
	}
	seen := map[string]bool{}
	parts := strings.Split(p[1:], "/")
	for i, part := range parts {
		if !strings.Contains(part, "{") && !strings.Contains(part, "}") {
			lit := part
			if u, err := url.PathUnescape(part); err == nil {
				lit = u
			}
			mp.segs = append(mp.segs, segment{s: lit, raw: part})
			continue
		}
		if !strings.HasPrefix(part, "{") || !strings.HasSuffix(part, "}") {
			return nil, fmt.Errorf("segment %q: a wildcard must be a whole segment {name}", part)
		}
		name, multi := strings.CutSuffix(part[1:len(part)-1], "...")
		if name == "$" && !multi {
			return nil, fmt.Errorf("segment {$} is not allowed in a contract path")
		}
		if multi && i != len(parts)-1 {
			return nil, fmt.Errorf("wildcard {%s...} must be the final segment", name)
		}
		if !isGoIdentifier(name) {
			return nil, fmt.Errorf("wildcard name %q is not a Go identifier", name)
		}
		if seen[name] {
			return nil, fmt.Errorf("wildcard name %q appears twice", name)
		}
		seen[name] = true
		mp.segs = append(mp.segs, segment{s: name, wild: true, multi: multi})
	}
	return mp, nil
}

func isGoIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !unicode.IsLetter(c) && c != '_' && (i == 0 || !unicode.IsDigit(c)) {
			return false
		}
	}
	return true
}

// relation is how the requests two patterns match relate.
type relation int

const (
	equivalent   relation = iota // the same requests
	moreGeneral                  // a matches every request b does, and more
	moreSpecific                 // the inverse
	overlaps                     // some requests in common, neither contains the other
	disjoint                     // no request in common
)

func inverse(r relation) relation {
	switch r {
	case moreGeneral:
		return moreSpecific
	case moreSpecific:
		return moreGeneral
	}
	return r
}

// combine joins the relations of two independent parts of a pattern.
func combine(a, b relation) relation {
	switch a {
	case equivalent:
		return b
	case disjoint:
		return disjoint
	case overlaps:
		if b == disjoint {
			return disjoint
		}
		return overlaps
	}
	// a is moreGeneral or moreSpecific.
	switch b {
	case equivalent:
		return a
	case inverse(a):
		return overlaps
	}
	return b
}

// compareMethods: a GET route also answers HEAD.
func compareMethods(a, b string) relation {
	switch {
	case a == b:
		return equivalent
	case a == http.MethodGet && b == http.MethodHead:
		return moreGeneral
	case a == http.MethodHead && b == http.MethodGet:
		return moreSpecific
	}
	return disjoint
}

func comparePaths(a, b []segment) relation {
	lastMulti := func(s []segment) bool { return s[len(s)-1].multi }
	if len(a) != len(b) && !lastMulti(a) && !lastMulti(b) {
		return disjoint
	}
	rel := equivalent
	n := min(len(a), len(b))
	for i := range n {
		if rel = combine(rel, compareSegments(a[i], b[i])); rel == disjoint {
			return disjoint
		}
	}
	switch {
	case len(a) == len(b):
		return rel
	case len(a) < len(b) && lastMulti(a):
		return combine(rel, moreGeneral)
	case len(b) < len(a) && lastMulti(b):
		return combine(rel, moreSpecific)
	}
	return disjoint
}

func compareSegments(a, b segment) relation {
	switch {
	case a.multi && b.multi:
		return equivalent
	case a.multi:
		return moreGeneral
	case b.multi:
		return moreSpecific
	case a.wild && b.wild:
		return equivalent
	case a.wild:
		if b.s == "/" {
			return disjoint // a single wildcard never matches the trailing slash
		}
		return moreGeneral
	case b.wild:
		if a.s == "/" {
			return disjoint
		}
		return moreSpecific
	case a.s == b.s:
		return equivalent
	}
	return disjoint
}

// commonPath builds a request path two overlapping patterns both match.
func commonPath(a, b []segment) string {
	var sb strings.Builder
	write := func(s segment) {
		sb.WriteByte('/')
		if !s.wild && s.s != "/" {
			sb.WriteString(s.raw)
		} else if s.wild && !s.multi {
			sb.WriteString(s.s)
		}
	}
	n := min(len(a), len(b))
	for i := range n {
		switch {
		case !a[i].wild:
			write(a[i])
		case !b[i].wild, a[i].multi && !b[i].multi:
			write(b[i])
		default:
			write(a[i])
		}
	}
	rest := a[n:]
	if len(b) > n {
		rest = b[n:]
	}
	for _, s := range rest {
		write(s)
	}
	return sb.String()
}
