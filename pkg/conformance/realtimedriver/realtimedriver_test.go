package realtimedriver

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"stitchkit.dev/stitchkit/internal/graphfixture"
	"stitchkit.dev/stitchkit/pkg/conformance"
	"stitchkit.dev/stitchkit/pkg/realtime"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func contract(t *testing.T, dir string) *realtime.Contract {
	t.Helper()
	g, err := graphfixture.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := realtime.NewContract(projecttest.New(t, g, nil), "chat")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A real server and client of pkg/realtime's chat contract: the driver
// binds the client per probe, the server's handlers are counted, and the
// client stays connected, with no subscription of the probes left.
func TestAgainstTheRealtimeServer(t *testing.T) {
	current := contract(t, filepath.Join("..", "..", "realtime", "testdata", "chat"))
	behind := contract(t, filepath.Join("testdata", "behind"))
	var handled atomic.Int64
	var (
		mu       sync.Mutex
		reported []string // the server's own rejections, direction/phase/reason/fault
	)
	srv, err := realtime.NewServer(current, &realtime.Options[struct{}]{OnRejected: func(_ *realtime.Conn[struct{}], r realtime.Rejection) {
		mu.Lock()
		reported = append(reported, r.Event+" "+string(r.Direction)+"/"+string(r.Phase)+"/"+string(r.Reason)+"/"+string(r.Fault))
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []string{"join"} {
		if err := srv.Handle(ev, func(context.Context, *realtime.Conn[struct{}], realtime.Args) (any, error) {
			handled.Add(1)
			return map[string]any{"ok": true}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := srv.Handle("say", func(context.Context, *realtime.Conn[struct{}], realtime.Args) (any, error) {
		handled.Add(1)
		return map[string]any{"n": 1}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := srv.Handle("typing", func(context.Context, *realtime.Conn[struct{}], realtime.Args) (any, error) {
		handled.Add(1)
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer func() {
		hs.Close()
		_ = srv.Shutdown(context.Background())
	}()
	url := "ws" + strings.TrimPrefix(hs.URL, "http")
	ctx := context.Background()
	client, err := realtime.Dial(ctx, url, current, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	old, err := realtime.Dial(ctx, url, behind, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	gone, err := realtime.Dial(ctx, url, current, nil)
	if err != nil {
		t.Fatal(err)
	}
	gone.Close()
	<-gone.Done() // never blocks: Close returns once the connection has ended

	var messages atomic.Int64
	define := func(p conformance.RealtimeProbe) conformance.Probe {
		t.Helper()
		probe, err := conformance.DefineRealtimeProbe(p)
		if err != nil {
			t.Fatal(err)
		}
		return probe
	}
	calls := func(n int) *int { return &n }
	probes := []conformance.Probe{
		define(conformance.RealtimeProbe{Name: "say is acknowledged", Scenario: conformance.ScenarioAcknowledgement,
			Fixture: Action{Binding: client, Do: func(ctx context.Context, b realtime.Binding) (any, error) {
				return b.Request(ctx, 0, "say", map[string]any{"text": "hi"})
			}},
			Expected: conformance.Observation{Outcome: conformance.OutcomeSuccess, Data: map[string]any{"n": 1}, HandlerCalls: calls(1)}}),
		define(conformance.RealtimeProbe{Name: "a message is delivered", Scenario: conformance.ScenarioEvent,
			Fixture: Action{Binding: client, Do: func(ctx context.Context, b realtime.Binding) (any, error) {
				got := make(chan realtime.Args, 1)
				// Subscribed through the tracked binding: the driver
				// removes it after the probe.
				if _, err := b.On("message", func(_ context.Context, a realtime.Args) (any, error) {
					messages.Add(1)
					got <- a
					return nil, nil
				}); err != nil {
					return nil, err
				}
				if err := srv.Emit(ctx, "message", map[string]any{"text": "hello", "from": "server"}); err != nil {
					return nil, err
				}
				select {
				case a := <-got:
					return a.JSON(), nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}},
			Expected: conformance.Observation{Outcome: conformance.OutcomeSuccess, Data: []any{map[string]any{"text": "hello", "from": "server"}}, HandlerCalls: calls(0)}}),
		define(conformance.RealtimeProbe{Name: "an older client's say is refused by the server", Scenario: conformance.ScenarioPeerRejection,
			Fixture: Action{Binding: old, Do: func(ctx context.Context, b realtime.Binding) (any, error) {
				return b.Request(ctx, 0, "say", map[string]any{"text": ""})
			}},
			Expected: conformance.Observation{Outcome: conformance.OutcomeRealtimeRejected, Code: string(conformance.CodeRealtimeContractViolation),
				Rejection:    &conformance.Rejection{Direction: conformance.ClientInbound, Phase: conformance.PhaseArguments, Reason: conformance.ReasonRejectedByPeer, Fault: conformance.FaultLocal},
				HandlerCalls: calls(0)}}),
		// Upstream keeps the exact local outcomes of unknown-event and
		// missing-acknowledgement: the older client's request for an
		// event the server has dropped is a peer rejection for it (and an
		// unknown-event for the server, checked below) ...
		define(conformance.RealtimeProbe{Name: "the server no longer knows shout", Scenario: conformance.ScenarioPeerRejection,
			Fixture: Action{Binding: old, Do: func(ctx context.Context, b realtime.Binding) (any, error) {
				return b.Request(ctx, 0, "shout", "hello?")
			}},
			Expected: conformance.Observation{Outcome: conformance.OutcomeRealtimeRejected, Code: string(conformance.CodeRealtimeContractViolation),
				Rejection:    &conformance.Rejection{Direction: conformance.ClientInbound, Phase: conformance.PhaseArguments, Reason: conformance.ReasonRejectedByPeer, Fault: conformance.FaultLocal},
				HandlerCalls: calls(0)}}),
		// ... and its join, emitted without the id the server now wants,
		// leaves it without an error (nothing can answer an event that
		// asked for nothing) while the server drops it as
		// missing-acknowledgement, before any handler.
		define(conformance.RealtimeProbe{Name: "an older client's join asks for no acknowledgement", Scenario: conformance.ScenarioEvent,
			Fixture: Action{Binding: old, Do: func(ctx context.Context, b realtime.Binding) (any, error) {
				if err := b.Emit(ctx, "join", "lobby"); err != nil {
					return nil, err
				}
				// The server handles a connection's frames in order: by this
				// ack it has dealt with the join.
				if _, err := b.Request(ctx, 0, "say", map[string]any{"text": "sync"}); err != nil {
					return nil, err
				}
				return true, nil
			}},
			Expected: conformance.Observation{Outcome: conformance.OutcomeSuccess, Data: true, HandlerCalls: calls(1)}}),
		// The current client's own mistakes are caught at the call site, as
		// client-outbound local rejections with their exact reason.
		define(conformance.RealtimeProbe{Name: "a request for an event the contract lacks", Scenario: conformance.ScenarioInvalidArguments,
			Fixture: Action{Binding: client, Do: func(ctx context.Context, b realtime.Binding) (any, error) {
				return b.Request(ctx, 0, "shout", "hello?")
			}},
			Expected: conformance.Observation{Outcome: conformance.OutcomeRealtimeRejected, Code: string(conformance.CodeRealtimeContractViolation),
				Rejection:    &conformance.Rejection{Direction: conformance.ClientOutbound, Phase: conformance.PhaseArguments, Reason: conformance.ReasonUnknownEvent, Fault: conformance.FaultLocal},
				HandlerCalls: calls(0)}}),
		define(conformance.RealtimeProbe{Name: "an emit of an event that takes an acknowledgement", Scenario: conformance.ScenarioInvalidAcknowledgement,
			Fixture: Action{Binding: client, Do: func(ctx context.Context, b realtime.Binding) (any, error) {
				return nil, b.Emit(ctx, "say", map[string]any{"text": "hi"})
			}},
			Expected: conformance.Observation{Outcome: conformance.OutcomeRealtimeRejected, Code: string(conformance.CodeRealtimeContractViolation),
				Rejection:    &conformance.Rejection{Direction: conformance.ClientOutbound, Phase: conformance.PhaseAcknowledgement, Reason: conformance.ReasonMissingAcknowledgement, Fault: conformance.FaultLocal},
				HandlerCalls: calls(0)}}),
		define(conformance.RealtimeProbe{Name: "say on a closed connection", Scenario: conformance.ScenarioDisconnected,
			Fixture: Action{Binding: gone, Do: func(ctx context.Context, b realtime.Binding) (any, error) {
				return b.Request(ctx, 0, "say", map[string]any{"text": "hi"})
			}},
			Expected: conformance.Observation{Outcome: conformance.OutcomeDisconnected, Code: string(conformance.CodeRealtimeDisconnected),
				Disconnect: &conformance.Disconnect{Phase: conformance.BeforeInvoke}, HandlerCalls: calls(0)}}),
	}
	d := New(&Options{HandlerCalls: func() int { return int(handled.Load()) }})
	if err := conformance.RunProbes(ctx, probes, conformance.Drivers{conformance.TransportREALTIME: d}, nil); err != nil {
		t.Fatal(err)
	}
	if !client.Connected() || !old.Connected() {
		t.Error("a probe disconnected the caller's client")
	}
	mu.Lock()
	got := strings.Join(reported, "\n")
	mu.Unlock()
	want := strings.Join([]string{
		"say server-inbound/arguments/invalid-arguments/peer",
		"shout server-inbound/arguments/unknown-event/peer",
		"join server-inbound/acknowledgement/missing-acknowledgement/peer",
	}, "\n")
	if got != want {
		t.Errorf("the server reported\n%s\nwant\n%s", got, want)
	}
	// The probe's message subscription is gone: another message reaches
	// no probe handler, while the client still works.
	if err := srv.Emit(ctx, "message", map[string]any{"text": "again", "from": "server"}); err != nil {
		t.Fatal(err)
	}
	if ack, err := client.Request(ctx, 0, "say", map[string]any{"text": "still here"}); err != nil || string(ack) != `{"n":1}` {
		t.Errorf("client after the probes: %s %v", ack, err)
	}
	if n := messages.Load(); n != 1 {
		t.Errorf("the probe's handler ran %d times; its subscription outlived the probe", n)
	}
}

func TestBindRefusesOtherFixtures(t *testing.T) {
	if _, err := Bind(func(conformance.RealtimeRejected) {}, conformance.RealtimeFixture{Value: 3}); err == nil || !strings.Contains(err.Error(), "realtimedriver.Action") {
		t.Errorf("non-Action fixture: %v", err)
	}
	if _, err := Bind(func(conformance.RealtimeRejected) {}, conformance.RealtimeFixture{Value: Action{}}); err == nil {
		t.Error("empty Action accepted")
	}
}

// The kit accepts exactly the one taxonomy (pkg/realtime/taxonomy): every Direction, Phase,
// Fault and every Reason a rejection can carry (ReasonRefused only travels
// in envelopes) is valid in a conformance.Rejection, and nothing else is.
// The constants are read from the taxonomy's source, so a reason added
// there fails this test until the kit knows it.
func TestEnumsAreRealtimes(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join("..", "..", "realtime", "taxonomy", "taxonomy.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string][]string{}
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			id, ok := vs.Type.(*ast.Ident)
			if !ok || len(vs.Values) != 1 {
				continue
			}
			lit, ok := vs.Values[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				continue
			}
			s, _ := strconv.Unquote(lit.Value)
			consts[id.Name] = append(consts[id.Name], s)
		}
	}
	reasons := slices.DeleteFunc(consts["Reason"], func(r string) bool { return r == string(realtime.ReasonRefused) })
	if len(consts["Direction"]) != 4 || len(consts["Phase"]) != 2 || len(consts["Fault"]) != 2 || len(reasons) < 6 {
		t.Fatalf("read %v from pkg/realtime/taxonomy/taxonomy.go", consts)
	}
	valid := conformance.Rejection{Direction: conformance.ClientInbound, Phase: conformance.PhaseArguments, Reason: conformance.ReasonInvalidArguments, Fault: conformance.FaultPeer}
	check := func(field, value string, r conformance.Rejection) {
		if err := r.Validate(); err != nil {
			t.Errorf("pkg/realtime's %s %q is not a valid conformance rejection: %v", field, value, err)
		}
	}
	for _, v := range consts["Direction"] {
		r := valid
		r.Direction = conformance.RejectionDirection(v)
		check("Direction", v, r)
	}
	for _, v := range consts["Phase"] {
		r := valid
		r.Phase = conformance.RejectionPhase(v)
		check("Phase", v, r)
	}
	for _, v := range consts["Fault"] {
		r := valid
		r.Fault = conformance.RejectionFault(v)
		check("Fault", v, r)
	}
	for _, v := range reasons {
		r := valid
		r.Reason = conformance.RejectionReason(v)
		check("Reason", v, r)
	}
	r := valid
	r.Reason = conformance.RejectionReason(realtime.ReasonRefused)
	if r.Validate() == nil {
		t.Error(`"refused" only travels in envelopes; a rejection never carries it`)
	}
}
