package compile

import (
	"hash/fnv"
	"runtime"
	"strings"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/load"

	"stitchkit.dev/stitchkit/pkg/compile/internal/cueschema"
	"stitchkit.dev/stitchkit/pkg/graph"
)

// Two translators, one of them on a second goroutine.
//
// Translating the schema nodes (and canonicalising and digesting them) is
// most of what the compiler adds to CUE's own evaluation. CUE values are
// not safe for concurrent use, but two cue.Contexts that each build the
// loaded instance share nothing but the parsed files, which evaluation
// only reads. So for a large contract a second goroutine (the prefetcher)
// builds its own copy of the contract and translates a fixed share of the
// schema nodes while the compiler validates the contract, builds the rest
// of the graph and translates the other share; the compiler takes the
// prefetcher's results as it reaches those nodes.
//
// Which translator a node goes to is a fixed function of its path (see
// sideOf), never of timing or of the number of cores: a Translator's
// output may depend on the nodes it translated before (the $defs name a
// definition gets when two packages define one name; the step budget of a
// node whose definitions an earlier node already translated), so the
// split, and the order each translator sees its nodes in, must be the same
// on every run for the graph bytes to be. For a small contract, on one
// core, or when CUE reported errors, the compiler runs the second
// translator itself, on its own values, over the same nodes in the same
// order: the bytes are the same either way.
//
// What it costs: a second evaluation of the package (CPU and memory of
// one BuildInstance) on the other core, which is why small contracts,
// where it cannot pay off, do not start one.

// prefetchMinSource is the size of the contract's own source from which
// the compiler starts a prefetcher (a variable for tests).
var prefetchMinSource = 16 << 10

// sideOf reports whether the schema node at path goes to the second
// translator: three nodes in four do, since the compiler has the rest of
// the graph to build besides its own share.
func sideOf(node string) bool {
	h := fnv.New32a()
	h.Write([]byte(node))
	return h.Sum32()%4 != 0
}

// translation is the outcome of translating one schema node.
type translation struct {
	doc      map[string]any // nil when err is set
	err      error          // from Translator.Schema
	warnings []*cueschema.Warning
	// bytes and digest are the canonical form of doc (digestErr when it
	// has none).
	bytes     []byte
	digest    graph.Digest
	digestErr error
}

// translate runs t on v and canonicalises the result.
func translate(t *cueschema.Translator, warn *[]*cueschema.Warning, v cue.Value) translation {
	*warn = nil
	doc, err := t.Schema(v)
	r := translation{doc: doc, err: err, warnings: *warn}
	if err == nil {
		r.bytes, r.digest, r.digestErr = graph.SchemaDigest(doc)
	}
	return r
}

// newTranslator returns a translator configured for this compilation whose
// warnings are appended to *warn.
func (c *compiler) newTranslator(warn *[]*cueschema.Warning) *cueschema.Translator {
	docs := c.schemaDocs
	return cueschema.New(&cueschema.Options{
		DropDoc:             func(doc string) bool { return docs[strings.TrimSpace(doc)] },
		Warn:                func(w *cueschema.Warning) { *warn = append(*warn, w) },
		NoStructValidators:  !c.structValidators,
		NoConditionalFields: !c.comprehensions,
	})
}

// prefetcher is the second translator's goroutine and its results.
type prefetcher struct {
	start chan bool       // the compiler's go (true) or stop (false)
	done  chan struct{}   // closed when the goroutine has ended
	stop  <-chan struct{} // closed when the watchdog gave up
	quit  chan struct{}   // closed when the compiler no longer waits

	mu      sync.Mutex
	results map[string]*prefetched
	ended   bool // the goroutine published everything it will
	wake    chan struct{}
}

// prefetched is one node's published translation.
type prefetched struct {
	r translation
}

// startPrefetch starts the second translator on its own evaluation of
// inst when that can pay off (see prefetchMinSource). It translates only
// after the compiler says go (Go), so that a contract CUE finds errors in
// is compiled by the compiler alone.
func (c *compiler) startPrefetch(inst *build.Instance, cfg *load.Config, size int, closed bool, stop <-chan struct{}) {
	if size < prefetchMinSource || runtime.GOMAXPROCS(0) < 2 {
		return
	}
	p := &prefetcher{
		start: make(chan bool, 1), done: make(chan struct{}), stop: stop, quit: make(chan struct{}),
		results: map[string]*prefetched{}, wake: make(chan struct{}),
	}
	c.pre = p
	go func() {
		defer close(p.done)
		defer p.finish()
		defer func() {
			// A failure here only costs the split: the compiler
			// translates what was not published itself.
			_ = recover()
		}()
		cctx := cuecontext.New()
		v := cctx.BuildInstance(inst)
		if !closed {
			contract, err := contractDefinition(cctx, inst, cfg)
			if err != nil {
				return
			}
			v = v.Unify(contract)
		}
		select {
		case ok := <-p.start:
			if !ok {
				return
			}
		case <-stop:
			return
		case <-p.quit:
			return
		}
		var warn []*cueschema.Warning
		t := c.newTranslator(&warn)
		eachSchemaNode(v, func(node string, sv cue.Value) bool {
			select {
			case <-stop:
				return false
			case <-p.quit:
				return false
			default:
			}
			if !sideOf(node) {
				return true
			}
			p.publish(node, translate(t, &warn, sv))
			return true
		})
	}()
}

// Go tells the prefetcher to translate (ok) or to stop.
func (p *prefetcher) Go(ok bool) {
	if p == nil {
		return
	}
	select {
	case p.start <- ok:
	default:
	}
}

// close stops the prefetcher and waits for it.
func (p *prefetcher) close() {
	if p == nil {
		return
	}
	close(p.quit)
	<-p.done
}

func (p *prefetcher) publish(node string, r translation) {
	p.mu.Lock()
	p.results[node] = &prefetched{r: r}
	wake := p.wake
	p.wake = make(chan struct{})
	p.mu.Unlock()
	close(wake)
}

func (p *prefetcher) finish() {
	p.mu.Lock()
	p.ended = true
	wake := p.wake
	p.wake = make(chan struct{})
	p.mu.Unlock()
	close(wake)
}

// take waits for the prefetcher's translation of node; ok is false when
// the prefetcher ended without one.
func (p *prefetcher) take(node string) (translation, bool) {
	if p == nil {
		return translation{}, false
	}
	for {
		p.mu.Lock()
		if r, ok := p.results[node]; ok {
			delete(p.results, node)
			p.mu.Unlock()
			return r.r, true
		}
		if p.ended {
			p.mu.Unlock()
			return translation{}, false
		}
		wake := p.wake
		p.mu.Unlock()
		select {
		case <-wake:
		case <-p.stop:
			return translation{}, false
		}
	}
}

// eachSchemaNode calls f with every schema node of the contract root v, in
// the order [compiler.build] translates them, until f returns false.
func eachSchemaNode(v cue.Value, f func(node string, v cue.Value) bool) {
	visit := func(holder cue.Value, np string, names ...string) bool {
		for _, name := range names {
			if d := def(holder, name); d.Exists() {
				if !f(join(np, "#"+name), d) {
					return false
				}
			}
		}
		return true
	}
	services := field(v, "services")
	for _, name := range keys(services) {
		ops := field(field(services, name), "operations")
		for _, action := range keys(ops) {
			if !visit(field(ops, action), join("services", name, "operations", action), "params", "query", "input", "output") {
				return
			}
		}
	}
	rts := field(v, "runtimeTools")
	for _, name := range keys(rts) {
		if !visit(field(rts, name), join("runtimeTools", name), "input", "output") {
			return
		}
	}
	cmds := field(v, "cliCommands")
	for _, name := range keys(cmds) {
		if !visit(field(cmds, name), join("cliCommands", name), "input", "output") {
			return
		}
	}
	rt := field(v, "realtime")
	for _, name := range keys(rt) {
		for _, dir := range []string{graph.ServerToClient, graph.ClientToServer} {
			evs := field(field(rt, name), dir)
			for _, ev := range keys(evs) {
				if !visit(field(evs, ev), join("realtime", name, dir, ev), "args", "ack") {
					return
				}
			}
		}
	}
}
