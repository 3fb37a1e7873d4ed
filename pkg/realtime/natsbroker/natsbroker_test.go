package natsbroker_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"go.uber.org/goleak"

	"stitchkit.dev/stitchkit/pkg/check"
	"stitchkit.dev/stitchkit/pkg/mount"
	"stitchkit.dev/stitchkit/pkg/realtime"
	"stitchkit.dev/stitchkit/pkg/realtime/natsbroker"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// startNATS starts an embedded nats-server on 127.0.0.1 (port 0 picks a
// free one).
func startNATS(t *testing.T, port int) *server.Server {
	t.Helper()
	if port == 0 {
		port = server.RANDOM_PORT
	}
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	if !ns.ReadyForConnections(5 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	return ns
}

func contract(t *testing.T) *realtime.Contract {
	t.Helper()
	src, err := os.ReadFile("../testdata/chat/chat.cue")
	if err != nil {
		t.Fatal(err)
	}
	g, err := check.CompileFiles(context.Background(), map[string][]byte{"chat.cue": src})
	if err != nil {
		t.Fatal(err)
	}
	c, err := realtime.NewContract(projecttest.New(t, g, nil), "chat")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// instance is one application instance: a realtime server on its own
// loopback port, with its own NATS connection.
type instance struct {
	srv    *realtime.Server[string]
	broker *natsbroker.Broker
	url    string
	events chan error
}

func newInstance(t *testing.T, c *realtime.Contract, natsURL string) *instance {
	t.Helper()
	in := &instance{events: make(chan error, 64)}
	b, err := natsbroker.Connect(natsURL, &natsbroker.Options{OnError: func(err error) {
		select {
		case in.events <- err:
		default:
		}
	}}, nats.ReconnectWait(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	in.broker = b
	srv, err := realtime.NewServer(c, &realtime.Options[string]{Broker: b})
	if err != nil {
		t.Fatal(err)
	}
	in.srv = srv
	// join puts the connection into the room its argument names.
	if err := srv.Handle("join", func(_ context.Context, c *realtime.Conn[string], a realtime.Args) (any, error) {
		var room string
		if err := a.Decode(&room); err != nil {
			return nil, err
		}
		if err := c.Join(room); err != nil {
			return nil, err
		}
		return map[string]any{"ok": true}, nil
	}); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	in.url = "ws" + strings.TrimPrefix(hs.URL, "http")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		hs.Close()
		if err := b.Close(); err != nil {
			t.Errorf("broker close: %v", err)
		}
	})
	return in
}

// client connects to an instance and collects the messages it receives.
func client(t *testing.T, in *instance, c *realtime.Contract) (*realtime.Client, chan string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cl, err := realtime.Dial(ctx, in.url, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	got := make(chan string, 16)
	if _, err := cl.On("message", func(_ context.Context, a realtime.Args) (any, error) {
		var m struct{ Text string }
		_ = a.Decode(&m)
		got <- m.Text
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	return cl, got
}

func join(t *testing.T, cl *realtime.Client, room string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if ack, err := cl.Request(ctx, 0, "join", room); err != nil || string(ack) != `{"ok":true}` {
		t.Fatalf("join %s: %s %v", room, ack, err)
	}
}

func expect(t *testing.T, ch chan string, want string) {
	t.Helper()
	select {
	case got := <-ch:
		if got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("no %q", want)
	}
}

// expectNothing is an absence check (see pkg/realtime's): a slow machine
// can only make it miss a stray message, never fail a correct broker.
func expectNothing(t *testing.T, ch chan string) {
	t.Helper()
	select {
	case got := <-ch:
		t.Fatalf("unexpected %q", got)
	case <-time.After(100 * time.Millisecond):
	}
}

func msg(text string) map[string]any { return map[string]any{"text": text, "from": "a"} }

func ctx5(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestRoomAcrossInstances: a room broadcast issued on instance A reaches a
// member connected to instance B (and not a non-member), broadcasts reach
// everyone on every instance, and a room name that is no NATS token works.
func TestRoomAcrossInstances(t *testing.T) {
	ns := startNATS(t, 0)
	c := contract(t)
	a, b := newInstance(t, c, ns.ClientURL()), newInstance(t, c, ns.ClientURL())
	onB, gotB := client(t, b, c)
	_, gotOther := client(t, b, c)
	onA, gotA := client(t, a, c)
	room := "team *> blue.green"
	join(t, onB, room)
	join(t, onA, room)

	if err := a.srv.Room(room).Emit(ctx5(t), "message", msg("hello room")); err != nil {
		t.Fatal(err)
	}
	expect(t, gotB, "hello room")
	expect(t, gotA, "hello room")
	expectNothing(t, gotOther)

	if err := b.srv.Emit(ctx5(t), "message", msg("hello all")); err != nil {
		t.Fatal(err)
	}
	expect(t, gotA, "hello all")
	expect(t, gotB, "hello all")
	expect(t, gotOther, "hello all")

	// A validation failure on A is A's caller's error; nothing travels.
	var me *mount.Error
	if err := a.srv.Room(room).Emit(ctx5(t), "message", msg("")); !errors.As(err, &me) || me.Code != realtime.CodeContractViolation {
		t.Fatalf("invalid emit: %v", err)
	}
	expectNothing(t, gotB)

	// The last member leaving unsubscribes B from the room.
	subject := b.broker.Subject("stitchkit.rt/chat/room/" + room)
	if n := subscribers(t, ns, subject); n != 2 {
		t.Fatalf("%d subscriptions on %s, want 2 (one per instance)", n, subject)
	}
	_ = onB.Close()
	waitFor(t, func() bool { return subscribers(t, ns, subject) == 1 })
}

func subscribers(t *testing.T, ns *server.Server, subject string) int {
	t.Helper()
	sz, err := ns.Subsz(&server.SubszOptions{Subscriptions: true, Test: subject})
	if err != nil {
		t.Fatal(err)
	}
	return sz.Total
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestOutageAndReconnect: while NATS is down, emits and joins fail with
// SERVICE_UNAVAILABLE and OnError hears of the disconnect; when it comes
// back, room membership made before the outage still routes.
func TestOutageAndReconnect(t *testing.T) {
	ns := startNATS(t, 0)
	port := ns.Addr().(*net.TCPAddr).Port
	c := contract(t)
	a, b := newInstance(t, c, ns.ClientURL()), newInstance(t, c, ns.ClientURL())
	onB, gotB := client(t, b, c)
	join(t, onB, "r")

	ns.Shutdown()
	ns.WaitForShutdown()
	waitForEvent(t, a.events, "disconnected")
	waitForEvent(t, b.events, "disconnected")

	err := a.srv.Room("r").Emit(ctx5(t), "message", msg("during outage"))
	var me *mount.Error
	if !errors.As(err, &me) || me.Code != "SERVICE_UNAVAILABLE" || !errors.Is(err, natsbroker.ErrUnavailable) {
		t.Fatalf("emit during outage: %v", err)
	}
	if err := a.srv.Emit(ctx5(t), "message", msg("all, during outage")); !errors.Is(err, natsbroker.ErrUnavailable) {
		t.Fatalf("broadcast during outage: %v", err)
	}
	_, err = onB.Request(ctx5(t), 0, "join", "other")
	if !errors.As(err, &me) || me.Code != realtime.CodeRequestRejected || me.Details["code"] != "SERVICE_UNAVAILABLE" {
		t.Fatalf("join during outage: %v", err)
	}

	startNATS(t, port) // the same address: the clients reconnect to it
	waitForEvent(t, a.events, "reconnected")
	waitForEvent(t, b.events, "reconnected")
	// The reconnected connection re-sends its subscriptions before anything
	// else; a flush on B proves the server has them.
	if err := b.broker.Conn().FlushTimeout(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if err := a.srv.Room("r").Emit(ctx5(t), "message", msg("after outage")); err != nil {
		t.Fatal(err)
	}
	expect(t, gotB, "after outage")
	expectNothing(t, gotB) // nothing published during the outage turns up
}

func waitForEvent(t *testing.T, ch chan error, substr string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case err := <-ch:
			if strings.Contains(err.Error(), substr) {
				return
			}
		case <-deadline:
			t.Fatalf("OnError never heard %q", substr)
		}
	}
}

// TestBrokerDirect exercises the Broker contract without servers: a
// publish after Subscribe returns is delivered, on every broker, to each
// subscriber once; unsubscribe stops it; a closed broker refuses.
func TestBrokerDirect(t *testing.T) {
	ns := startNATS(t, 0)
	b1, err := natsbroker.Connect(ns.ClientURL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b1.Close()
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	b2, err := natsbroker.New(nc, &natsbroker.Options{SubjectPrefix: natsbroker.DefaultSubjectPrefix})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	got := map[string][]string{}
	sub := func(b *natsbroker.Broker, name, topic string) func() error {
		unsub, err := b.Subscribe(topic, func(m []byte) {
			mu.Lock()
			got[name] = append(got[name], string(m))
			mu.Unlock()
		})
		if err != nil {
			t.Fatal(err)
		}
		return unsub
	}
	u1 := sub(b1, "b1", "t")
	sub(b2, "b2", "t")
	sub(b2, "b2-other", "u")
	if err := b1.Publish(ctx5(t), "t", []byte("one")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(got["b1"]) == 1 && len(got["b2"]) == 1 })
	if err := u1(); err != nil {
		t.Fatal(err)
	}
	if err := u1(); err != nil { // idempotent
		t.Fatal(err)
	}
	if err := b2.Publish(ctx5(t), "t", []byte("two")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(got["b2"]) == 2 })
	mu.Lock()
	if len(got["b1"]) != 1 || len(got["b2-other"]) != 0 {
		t.Fatalf("%v", got)
	}
	mu.Unlock()
	if err := b2.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b2.Publish(ctx5(t), "t", nil); !errors.Is(err, natsbroker.ErrUnavailable) {
		t.Fatalf("publish after close: %v", err)
	}
	if _, err := b2.Subscribe("t", func([]byte) {}); !errors.Is(err, natsbroker.ErrUnavailable) {
		t.Fatalf("subscribe after close: %v", err)
	}
	if !nc.IsConnected() {
		t.Fatal("New's broker closed a connection it does not own")
	}
}

var _ realtime.Broker = (*natsbroker.Broker)(nil)
var _ http.Handler = (*realtime.Server[string])(nil)
