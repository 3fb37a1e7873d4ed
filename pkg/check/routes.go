package check

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"stitchkit.dev/stitchkit/pkg/compile"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/project"
)

// routes reports every problem of the HTTP route table — the one the HTTP
// mount registers ([project.RouteTable]), so a contract that vets clean
// always mounts: two operations with the same method and route shape
// (duplicate-route), two routes that both match some requests with
// neither more specific (route-conflict), a route net/http cannot serve
// at all (route-invalid). Each points at both routes.
func (k *checker) routes(err error) {
	if err == nil {
		return
	}
	var problems project.RouteProblems
	if !errors.As(err, &problems) {
		k.add(compile.Diagnostic{Pos: k.r.Pos("services"), Rule: "route-invalid", Path: "services", Message: err.Error()})
		return
	}
	// Duplicates form classes (one method, one shape); like the graph,
	// keep the first operation of each class in graph order and report
	// every other one against it, once.
	order := map[*graph.Operation]int{}
	for i, op := range k.g.Operations() {
		order[op] = i
	}
	first := map[*graph.Operation]*graph.Operation{} // duplicate → first of its class
	root := func(op *graph.Operation) *graph.Operation {
		for first[op] != nil {
			op = first[op]
		}
		return op
	}
	for _, p := range problems {
		if p.Kind != project.RouteDuplicate {
			continue
		}
		a, b := root(p.Routes[0].Op), root(p.Routes[1].Op)
		if a == b {
			continue
		}
		if order[b] < order[a] {
			a, b = b, a
		}
		first[b] = a
	}
	dups := make([]*graph.Operation, 0, len(first))
	for op := range first {
		dups = append(dups, op)
	}
	slices.SortFunc(dups, func(a, b *graph.Operation) int { return cmp.Compare(order[a], order[b]) })
	for _, op := range dups {
		k.duplicate(op, root(op))
	}
	for _, p := range problems {
		switch p.Kind {
		case project.RouteDuplicate:
		case project.RouteConflict:
			if first[p.Routes[0].Op] != nil || first[p.Routes[1].Op] != nil {
				continue // the duplicate's first route carries the conflict
			}
			k.conflict(p)
		default:
			r := p.Routes[0]
			if pathReported(r.Path) {
				continue // path-clean or path-duplicate-param: the compiler said it
			}
			node := r.Node() + ".path"
			k.add(compile.Diagnostic{Pos: k.r.Pos(node), Rule: string(p.Kind), Path: node, Message: r.Node() + ": " + p.Error()})
		}
	}
}

// duplicate reports op, whose route has the method and shape of first's.
func (k *checker) duplicate(op, first *graph.Operation) {
	g := k.g
	full := project.JoinPath(g.Service(op.Service).Prefix, op.Path)
	firstFull := project.JoinPath(g.Service(first.Service).Prefix, first.Path)
	node, other := opNode(op)+".path", opNode(first)+".path"
	k.add(compile.Diagnostic{
		Pos: k.r.Pos(node), Rule: string(project.RouteDuplicate), Path: node,
		Message: fmt.Sprintf("%s: route %s %s is also served by %s (%s %s); change the path or the method",
			op.ID(), op.Method, full, first.ID(), first.Method, firstFull),
		Related: []compile.Related{{Pos: k.r.Pos(other), Path: other,
			Message: fmt.Sprintf("%s serves %s %s", first.ID(), first.Method, firstFull)}},
	})
}

// conflict reports a route conflict at the route written last, naming
// and pointing at both.
func (k *checker) conflict(p project.RouteProblem) {
	this, that := p.Routes[0], p.Routes[1]
	if posLess(k.r.Pos(this.Node()+".path"), k.r.Pos(that.Node()+".path")) {
		this, that = that, this
	}
	node, other := this.Node()+".path", that.Node()+".path"
	k.add(compile.Diagnostic{
		Pos: k.r.Pos(node), Rule: string(p.Kind), Path: node,
		Message: fmt.Sprintf("%s: route %s of %s conflicts with route %s of %s: both match some paths such as %q%s and neither is more specific, so net/http.ServeMux refuses them; change one path or method",
			this.Node(), this.Pattern(), this.Op.ID(), that.Pattern(), that.Op.ID(), p.Example, p.Reason),
		Related: []compile.Related{{Pos: k.r.Pos(other), Path: other,
			Message: fmt.Sprintf("%s: route %s of %s", that.Node(), that.Pattern(), that.Op.ID())}},
	})
}

// pathReported reports whether the compiler already refused route path p:
// a "." or ".." segment (path-clean) or a parameter named twice
// (path-duplicate-param).
func pathReported(p string) bool {
	names := graph.PathNames(p)
	if len(slices.Compact(slices.Sorted(slices.Values(names)))) != len(names) {
		return true
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}
