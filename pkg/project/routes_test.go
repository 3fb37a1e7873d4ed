package project

import (
	"errors"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// TestRouteComparisonMatchesServeMux is a differential test against the
// real net/http.ServeMux: for random pairs of route patterns, the table's
// comparison predicts a conflict exactly when ServeMux refuses to register
// the second pattern after the first.
func TestRouteComparisonMatchesServeMux(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	segs := []string{"a", "b", "{x}", "{y}", "{rest...}", "a%2Fb"}
	methods := []string{"GET", "HEAD", "POST"}
	randPath := func() string {
		n := rng.IntN(3)
		var parts []string
		used := map[string]bool{}
		for i := 0; i <= n; i++ {
			s := segs[rng.IntN(len(segs))]
			if strings.HasSuffix(s, "...}") && i != n {
				s = "c"
			}
			if used[s] && strings.HasPrefix(s, "{") {
				s = "d"
			}
			used[s] = true
			parts = append(parts, s)
		}
		if rng.IntN(8) == 0 {
			return "/"
		}
		return "/" + strings.Join(parts, "/")
	}
	noop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	conflicts := 0
	for range 3000 {
		a := Route{Method: methods[rng.IntN(len(methods))], Path: randPath()}
		b := Route{Method: methods[rng.IntN(len(methods))], Path: randPath()}
		pa, err1 := parseMuxPattern(a.Method, a.Path)
		pb, err2 := parseMuxPattern(b.Method, b.Path)
		if err1 != nil || err2 != nil {
			t.Fatalf("generated an invalid pattern: %v %v", err1, err2)
		}
		rel := combine(compareMethods(pa.method, pb.method), comparePaths(pa.segs, pb.segs))
		predicted := rel == equivalent || rel == overlaps
		mux := http.NewServeMux()
		if p := register(mux, a.MuxPattern(), noop); p != nil {
			t.Fatalf("%s alone refused: %v", a.MuxPattern(), p)
		}
		refused := register(mux, b.MuxPattern(), noop) != nil
		if predicted != refused {
			t.Fatalf("%s vs %s: predicted conflict %v, ServeMux refused %v", a.MuxPattern(), b.MuxPattern(), predicted, refused)
		}
		if predicted {
			conflicts++
			// The example path is matched by both patterns.
			ex := commonPath(pa.segs, pb.segs)
			for _, r := range []Route{a, b} {
				m := http.NewServeMux()
				m.Handle(r.MuxPattern(), noop)
				req, _ := http.NewRequest(r.Method, "http://x"+ex, nil)
				if _, pat := m.Handler(req); pat == "" {
					t.Fatalf("example %q of %s/%s is not matched by %s", ex, a.MuxPattern(), b.MuxPattern(), r.MuxPattern())
				}
			}
		}
	}
	if conflicts < 100 {
		t.Fatalf("only %d conflicting pairs generated: the test proves little", conflicts)
	}
}

func routeGraph(t *testing.T, ops ...graph.Operation) *graph.Graph {
	t.Helper()
	for i := range ops {
		ops[i].Service = "s"
		ops[i].Desc = "d"
		ops[i].Scope = "public"
		ops[i].Expose = []graph.Transport{graph.HTTP}
	}
	return &graph.Graph{Services: []graph.Service{{Name: "s", Prefix: "/s", Scope: "public", Operations: ops}}}
}

func TestRouteTable(t *testing.T) {
	g := routeGraph(t,
		graph.Operation{Action: "get", Method: "GET", Path: "/{id}"},
		graph.Operation{Action: "search", Method: "GET", Path: "/search"},
		graph.Operation{Action: "root", Method: "GET", Path: "/"},
	)
	routes, err := RouteTable(g, HTTPOptions{Prefix: "/api"})
	if err != nil {
		t.Fatal(err)
	}
	var pats []string
	for _, r := range routes {
		pats = append(pats, r.MuxPattern())
	}
	if got := strings.Join(pats, " | "); got != "GET /api/s | GET /api/s/search | GET /api/s/{id}" {
		t.Errorf("patterns %s", got)
	}
	// The root route matches only "/".
	root := Route{Method: "GET", Path: "/"}
	if root.MuxPattern() != "GET /{$}" {
		t.Errorf("root pattern %s", root.MuxPattern())
	}

	g = routeGraph(t,
		graph.Operation{Action: "a", Method: "GET", Path: "/{id}"},
		graph.Operation{Action: "b", Method: "GET", Path: "/{other}"},
		graph.Operation{Action: "c", Method: "GET", Path: "/{id}/x"},
		graph.Operation{Action: "d", Method: "GET", Path: "/y/{id}"},
		graph.Operation{Action: "e", Method: "HEAD", Path: "/{id}/z"},
		graph.Operation{Action: "f", Method: "GET", Path: "/q/z"},
		graph.Operation{Action: "g", Method: "GET", Path: "/{a}/{a}"},
		graph.Operation{Action: "h", Method: "POST", Path: "/{1x}"},
	)
	_, err = RouteTable(g, HTTPOptions{})
	var ps RouteProblems
	if !errors.As(err, &ps) {
		t.Fatalf("want RouteProblems, got %v", err)
	}
	var got []string
	for _, p := range ps {
		ids := []string{}
		for _, r := range p.Routes {
			ids = append(ids, r.Op.Action)
		}
		got = append(got, string(p.Kind)+" "+strings.Join(ids, ","))
	}
	want := []string{
		"route-invalid h", "route-invalid g",
		"route-conflict f,e",
		"route-conflict d,c",
		"route-conflict d,e", // GET /s/y/{id} answers HEAD /s/y/z too
		"duplicate-route a,b",
	}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("problems:\n%s\nwant:\n%s\n%v", strings.Join(got, "; "), strings.Join(want, "; "), err)
	}
	for _, p := range ps {
		if p.Kind == RouteConflict && p.Routes[1].Op.Action == "e" && p.Routes[0].Op.Action == "f" && !strings.Contains(p.Error(), "HEAD") {
			t.Errorf("HEAD/GET conflict not explained: %s", p.Error())
		}
		if p.Kind != RouteInvalid && p.Example == "" {
			t.Errorf("no example path: %+v", p)
		}
	}
	if ps[0].Routes[0].Node() != "services.s.operations.h" {
		t.Errorf("node %s", ps[0].Routes[0].Node())
	}
}
