package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"stitchkit.dev/stitchkit/examples/tasks/server"
	"stitchkit.dev/stitchkit/examples/tasks/tasksapi"
	"stitchkit.dev/stitchkit/pkg/check"
	"stitchkit.dev/stitchkit/pkg/conformance"
	"stitchkit.dev/stitchkit/pkg/conformance/conformancetest"
	"stitchkit.dev/stitchkit/pkg/conformance/realtimedriver"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
	"stitchkit.dev/stitchkit/pkg/realtime"
)

// observeRealtime discovers the board server's topology from the live
// server: the clientToServer events it serves are those it does not refuse
// as unknown (asked with the previous generation's client, which knows an
// event the server dropped), the serverToClient events those it delivers
// to a watcher when a task is created.
func observeRealtime(t *testing.T, l *live, current, previous *realtime.Contract) conformance.ObservedRealtime {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wsURL := "ws" + strings.TrimPrefix(l.srv.URL, "http") + server.BoardPath
	old, err := realtime.Dial(ctx, wsURL, previous, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	obs := conformance.ObservedRealtime{ServerToClient: []string{}, ClientToServer: []string{}}
	for _, ev := range previous.Events(graph.ClientToServer) {
		_, err := old.Request(ctx, 0, ev, map[string]any{"board": server.MainBoard})
		if e, ok := mount.AsError(err); ok && e.Code == conformance.CodeRealtimeRejected && e.Details["reason"] == string(realtime.ReasonUnknownEvent) {
			continue
		}
		obs.ClientToServer = append(obs.ClientToServer, ev)
	}
	if len(obs.ClientToServer) == len(previous.Events(graph.ClientToServer)) {
		t.Errorf("the server served every event of the previous generation, %v: the probe cannot tell served from unknown", obs.ClientToServer)
	}

	watcher, err := realtime.Dial(ctx, wsURL, current, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Close()
	seen := make(chan string, 16)
	for _, ev := range current.Events(graph.ServerToClient) {
		if _, err := watcher.On(ev, func(context.Context, realtime.Args) (any, error) { seen <- ev; return nil, nil }); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := watcher.Request(ctx, 0, "watch", map[string]any{"board": server.MainBoard}); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, "POST", l.srv.URL+server.APIPrefix+"/tasks", strings.NewReader(`{"title":"Discover the board"}`))
	req.Header.Set("Content-Type", "application/json")
	res, err := l.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	select {
	case ev := <-seen:
		obs.ServerToClient = append(obs.ServerToClient, ev)
	case <-ctx.Done():
		t.Fatal("no serverToClient event after creating a task")
	}
	return obs
}

// realtimeScenarios runs the eight realtime probe scenarios against the
// app's board server. handlerCalls counts the calls of the probe clients'
// own taskChanged handlers: the application code a rejected inbound event
// must never reach.
func realtimeScenarios(t *testing.T, l *live) {
	ctx := context.Background()
	wsURL := "ws" + strings.TrimPrefix(l.srv.URL, "http") + server.BoardPath
	current := boardContract(t, "")
	generation := func(name string) *realtime.Contract { return boardContract(t, name) }
	dial := func(url string, c *realtime.Contract) *realtime.Client {
		cl, err := realtime.Dial(ctx, url, c, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cl.Close() })
		return cl
	}
	client := dial(wsURL, current)
	nextTags := dial(wsURL, generation("next-tags"))
	nextAck := dial(wsURL, generation("next-ack"))
	previous := dial(wsURL, generation("previous"))
	closed := dial(wsURL, current)
	stalled := newFaultyLink(t, l.srv.Listener.Addr().String())
	stalledClient := dial("ws://"+stalled.Addr()+server.BoardPath, current)
	dropped := newFaultyLink(t, l.srv.Listener.Addr().String())
	droppedClient := dial("ws://"+dropped.Addr()+server.BoardPath, current)

	var handled atomic.Int64
	// onChanged subscribes a counting taskChanged handler (through the
	// probe's binding, so the driver removes it) and returns the channel
	// the delivered arguments arrive on.
	onChanged := func(b realtime.Binding) (<-chan realtime.Args, error) {
		got := make(chan realtime.Args, 1)
		_, err := b.On("taskChanged", func(_ context.Context, a realtime.Args) (any, error) {
			handled.Add(1)
			got <- a
			return nil, nil
		})
		return got, err
	}
	watch := func(ctx context.Context, b realtime.Binding, timeout time.Duration, board string) (any, error) {
		ack, err := b.Request(ctx, timeout, "watch", map[string]any{"board": board})
		if err != nil {
			return nil, err
		}
		return ack, nil
	}
	createTask := func(ctx context.Context, title string) error {
		req, err := http.NewRequestWithContext(ctx, "POST", l.srv.URL+server.APIPrefix+"/tasks", strings.NewReader(`{"title":"`+title+`"}`))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		res, err := l.srv.Client().Do(req)
		if err != nil {
			return err
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return &httpStatusError{res.Status}
		}
		return nil
	}
	zero, one := 0, 1
	rejected := func(code string, dir conformance.RejectionDirection, phase conformance.RejectionPhase, reason conformance.RejectionReason, fault conformance.RejectionFault) conformance.Observation {
		return conformance.Observation{Outcome: conformance.OutcomeRealtimeRejected, Code: code, HandlerCalls: &zero,
			Rejection: &conformance.Rejection{Direction: dir, Phase: phase, Reason: reason, Fault: fault}}
	}
	scenarios := []conformance.RealtimeProbe{{
		Name: "a created task reaches the main board", Scenario: conformance.ScenarioEvent,
		Fixture: realtimedriver.Action{Binding: client, Do: func(ctx context.Context, b realtime.Binding) (any, error) {
			got, err := onChanged(b)
			if err != nil {
				return nil, err
			}
			if _, err := watch(ctx, b, 0, server.MainBoard); err != nil {
				return nil, err
			}
			if err := createTask(ctx, "Watch the board"); err != nil {
				return nil, err
			}
			select {
			case a := <-got:
				return a.JSON(), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}},
		Expected: conformance.Observation{Outcome: conformance.OutcomeSuccess, HandlerCalls: &one,
			Data: []any{map[string]any{"id": "t_1", "title": "Watch the board", "done": false}}},
	}, {
		Name: "watch is acknowledged", Scenario: conformance.ScenarioAcknowledgement,
		Fixture: realtimedriver.Action{Binding: client, Do: func(ctx context.Context, b realtime.Binding) (any, error) {
			return watch(ctx, b, 0, server.MainBoard)
		}},
		Expected: conformance.Observation{Outcome: conformance.OutcomeSuccess, Data: map[string]any{"ok": true}, HandlerCalls: &zero},
	}, {
		Name: "a task the next generation refuses never reaches its handler", Scenario: conformance.ScenarioInvalidArguments,
		Fixture: realtimedriver.Action{Binding: nextTags, Do: func(ctx context.Context, b realtime.Binding) (any, error) {
			if _, err := onChanged(b); err != nil {
				return nil, err
			}
			refused := make(chan struct{}, 1)
			b.OnRejected(func(r realtime.Rejection) {
				if r.Event == "taskChanged" {
					select {
					case refused <- struct{}{}:
					default:
					}
				}
			})
			if _, err := watch(ctx, b, 0, server.MainBoard); err != nil {
				return nil, err
			}
			if err := createTask(ctx, "Untagged"); err != nil {
				return nil, err
			}
			select {
			case <-refused:
				return nil, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}},
		Expected: rejected(string(conformance.CodeRealtimeContractViolation), conformance.ClientInbound, conformance.PhaseArguments, conformance.ReasonInvalidArguments, conformance.FaultPeer),
	}, {
		Name: "an acknowledgement the next generation refuses", Scenario: conformance.ScenarioInvalidAcknowledgement,
		Fixture: realtimedriver.Action{Binding: nextAck, Do: func(ctx context.Context, b realtime.Binding) (any, error) {
			return watch(ctx, b, 0, server.MainBoard)
		}},
		Expected: rejected(string(conformance.CodeRealtimeInvalidAcknowledgment), conformance.ClientInbound, conformance.PhaseAcknowledgement, conformance.ReasonInvalidAcknowledgement, conformance.FaultPeer),
	}, {
		Name: "the server refuses the previous generation's empty board name", Scenario: conformance.ScenarioPeerRejection,
		Fixture: realtimedriver.Action{Binding: previous, Do: func(ctx context.Context, b realtime.Binding) (any, error) {
			return watch(ctx, b, 0, "")
		}},
		Expected: rejected(string(conformance.CodeRealtimeContractViolation), conformance.ClientInbound, conformance.PhaseArguments, conformance.ReasonRejectedByPeer, conformance.FaultLocal),
	}, {
		Name: "watch on a closed connection", Scenario: conformance.ScenarioDisconnected,
		// The caller owns the connection: its setup closes it.
		Setup: func(ctx context.Context) error {
			closed.Close()
			select {
			case <-closed.Done():
				return nil
			case <-ctx.Done():
				return fmt.Errorf("the closed connection did not end: %w", ctx.Err())
			}
		},
		Fixture: realtimedriver.Action{Binding: closed, Do: func(ctx context.Context, b realtime.Binding) (any, error) {
			return watch(ctx, b, 0, server.MainBoard)
		}},
		Expected: conformance.Observation{Outcome: conformance.OutcomeDisconnected, Code: string(conformance.CodeRealtimeDisconnected),
			Disconnect: &conformance.Disconnect{Phase: conformance.BeforeInvoke}, HandlerCalls: &zero},
	}, {
		Name: "the connection drops while watch waits for its ack", Scenario: conformance.ScenarioInFlightDisconnect,
		Fixture: realtimedriver.Action{Binding: droppedClient, Do: func(ctx context.Context, b realtime.Binding) (any, error) {
			dropped.Hold()
			sent := dropped.Sent()
			go func() {
				// Cut the link once the watch frame has gone out.
				select {
				case <-sent:
					dropped.Cut()
				case <-ctx.Done():
				}
			}()
			return watch(ctx, b, 0, server.MainBoard)
		}},
		Expected: conformance.Observation{Outcome: conformance.OutcomeDisconnected, Code: string(conformance.CodeRealtimeDisconnected),
			Disconnect: &conformance.Disconnect{Phase: conformance.InFlight}, HandlerCalls: &zero},
	}, {
		Name: "watch times out when the answer never arrives", Scenario: conformance.ScenarioTimeout,
		Fixture: realtimedriver.Action{Binding: stalledClient, Do: func(ctx context.Context, b realtime.Binding) (any, error) {
			stalled.Hold()
			return watch(ctx, b, 50*time.Millisecond, server.MainBoard)
		}},
		Teardown: func(context.Context) error { stalled.Release(); return nil },
		Expected: conformance.Observation{Outcome: conformance.OutcomeTimeout, Code: string(conformance.CodeRealtimeTimeout), HandlerCalls: &zero},
	}}
	var probes []conformance.Probe
	for _, s := range scenarios {
		p, err := conformance.DefineRealtimeProbe(s)
		if err != nil {
			t.Fatal(err)
		}
		probes = append(probes, p)
	}
	d := realtimedriver.New(&realtimedriver.Options{HandlerCalls: func() int { return int(handled.Load()) }})
	conformancetest.RunProbes(t, probes, conformance.Drivers{conformance.TransportREALTIME: d}, &conformance.RunOptions{Timeout: 5 * time.Second})
	if !client.Connected() || !nextTags.Connected() || !nextAck.Connected() || !previous.Connected() {
		t.Error("a probe disconnected a client the test owns")
	}
}

// boardContract is the board contract of the current graph (generation
// "") or of a generation under testdata/generations.
func boardContract(t *testing.T, generation string) *realtime.Contract {
	t.Helper()
	g := tasksapi.Graph()
	if generation != "" {
		var err error
		if g, err = check.Compile(context.Background(), filepath.Join("testdata", "generations", generation)); err != nil {
			t.Fatal(err)
		}
	}
	c, err := realtime.NewContract(projecttest.New(t, g, nil), "board")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type httpStatusError struct{ status string }

func (e *httpStatusError) Error() string { return "create task: " + e.status }

// faultyLink is a loopback TCP proxy to the server: a network the test
// controls. Hold stops delivering the server's bytes to the client (a
// request then waits for an answer that never comes) until Release; Cut
// closes every connection through it.
type faultyLink struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	held  chan struct{} // closed on Release; nil when not held
	sent  chan struct{} // signalled on client bytes sent while held
	conns []net.Conn
	cut   bool
	wg    sync.WaitGroup
}

func newFaultyLink(t *testing.T, target string) *faultyLink {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &faultyLink{ln: ln, target: target}
	f.wg.Add(1)
	go f.accept()
	t.Cleanup(func() {
		ln.Close()
		f.Cut()
		f.wg.Wait()
	})
	return f
}

func (f *faultyLink) Addr() string { return f.ln.Addr().String() }

// Hold starts holding the server's bytes back.
func (f *faultyLink) Hold() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.held == nil {
		f.held = make(chan struct{})
		f.sent = make(chan struct{}, 1)
	}
}

// Sent is signalled when the client sends bytes while the link is held.
func (f *faultyLink) Sent() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sent
}

// Release delivers what was held and stops holding.
func (f *faultyLink) Release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.held != nil {
		close(f.held)
		f.held = nil
	}
}

// Cut closes every connection through the link and releases held bytes
// (into closed connections).
func (f *faultyLink) Cut() {
	f.mu.Lock()
	f.cut = true
	conns := f.conns
	f.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
	f.Release()
}

func (f *faultyLink) accept() {
	defer f.wg.Done()
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", f.target)
		if err != nil {
			c.Close()
			continue
		}
		f.mu.Lock()
		if f.cut {
			f.mu.Unlock()
			c.Close()
			s.Close()
			continue
		}
		f.conns = append(f.conns, c, s)
		f.mu.Unlock()
		f.wg.Add(2)
		go func() { defer f.wg.Done(); f.pipe(s, c, false) }()
		go func() { defer f.wg.Done(); f.pipe(c, s, true) }()
	}
}

// pipe copies src to dst. Server bytes (toClient) wait while the link is
// held; client bytes sent while it is held are signalled on sent.
func (f *faultyLink) pipe(dst, src net.Conn, toClient bool) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			f.mu.Lock()
			held, sent := f.held, f.sent
			f.mu.Unlock()
			switch {
			case toClient && held != nil:
				<-held // the test's Release or Cut closes it
			case !toClient && held != nil:
				select {
				case sent <- struct{}{}:
				default:
				}
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
