package realtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"golang.org/x/sync/errgroup"

	"stitchkit.dev/stitchkit/pkg/realtime"
)

// TestLoad is the bounded loopback load test: 500 clients each send 50
// acknowledged events to one server, 8 in flight per connection. Every
// client must get back exactly the acks 1..200 of its own connection's
// counter, each once, for its own request ids — no ack lost, duplicated
// or crossed between connections — and TestMain's goleak check proves
// nothing is left running afterwards. The run is bounded by a deadline.
//
// The clients are raw gorilla connections that pipeline pre-encoded
// frames, so that the server, not 500 validating clients in the same
// process, is what is loaded; the Go client's own request path is covered
// by the client tests and by 50 realtime.Client connections run alongside.
//
// What it proves is concurrency (500 connections, 8 requests each in
// flight), not throughput, so the work is sized to finish with a wide
// margin under -race on a loaded 2-core machine: 200 events per client
// (100,000 in all) outlasted the 2-minute deadline there. For the same
// reason the server neither pings nor cuts slow writes within the run (a
// client goroutine the machine has not run for a while is not a dead
// peer here; TestPing and TestWriteDeadline cover those).
func TestLoad(t *testing.T) {
	const (
		clients   = 500
		goClients = 50 // of which realtime.Client
		requests  = 50
		inFlight  = 8
	)
	h := newHarness(t, chatContract(t), &realtime.Options[string]{SendQueue: 2 * inFlight, PingInterval: -1, WriteTimeout: 5 * time.Minute})
	var counters sync.Map // conn ID → *int (touched only by that connection's handler goroutine)
	h.handle("say", func(_ context.Context, c *realtime.Conn[string], _ realtime.Args) (any, error) {
		v, _ := counters.LoadOrStore(c.ID(), new(int))
		n := v.(*int)
		*n++
		return map[string]any{"n": *n}, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()

	var dial errgroup.Group
	dial.SetLimit(64) // dial in waves, as a fleet reconnecting would
	raws := make([]*websocket.Conn, clients-goClients)
	gos := make([]*realtime.Client, goClients)
	d := websocket.Dialer{Subprotocols: []string{realtime.Subprotocol}, HandshakeTimeout: 30 * time.Second}
	for i := range raws {
		dial.Go(func() (err error) {
			ws, _, err := d.DialContext(ctx, h.url, nil)
			if err != nil {
				return err
			}
			// The server pings every 30 s, and a loaded run lasts longer.
			// gorilla's own pong handler gives the pong one second and
			// then fails the read loop, which a busy machine can miss; the
			// test's peers answer as realtime.Client does.
			ws.SetPingHandler(func(data string) error {
				_ = ws.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(30*time.Second))
				return nil
			})
			raws[i] = ws
			return nil
		})
	}
	for i := range gos {
		dial.Go(func() (err error) {
			gos[i], err = realtime.Dial(ctx, h.url, h.srv.Contract(), nil)
			return err
		})
	}
	if err := dial.Wait(); err != nil {
		t.Fatal(err)
	}
	dialed := time.Since(start)

	var run errgroup.Group
	for i, ws := range raws {
		run.Go(func() error { return pipeline(ctx, ws, i, requests, inFlight) })
	}
	for i, cl := range gos {
		run.Go(func() error { return viaClient(ctx, cl, i, requests, inFlight) })
	}
	err := run.Wait()
	elapsed := time.Since(start)
	for _, ws := range raws {
		_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(1000, ""), time.Now().Add(time.Second))
		_ = ws.Close()
	}
	for _, cl := range gos {
		_ = cl.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := h.callCount("say"); got != clients*requests {
		t.Fatalf("handler ran %d times, want %d", got, clients*requests)
	}
	waitFor(t, func() bool { return h.srv.Stats().Connections == 0 })
	s := h.srv.Stats()
	if s.Rejected != 0 || s.SlowConsumers != 0 || s.LateAnswers != 0 || s.ProtocolErrors != 0 {
		t.Fatalf("stats %+v", s)
	}
	t.Logf("%d clients × %d acked events: dialled in %s, done in %s (%.0f acks/s)", clients, requests,
		dialed.Round(time.Millisecond), elapsed.Round(time.Millisecond), float64(clients*requests)/elapsed.Seconds())
}

// pipeline keeps inFlight requests outstanding on one raw connection and
// checks every answer.
func pipeline(ctx context.Context, ws *websocket.Conn, client, requests, inFlight int) error {
	if dl, ok := ctx.Deadline(); ok {
		_ = ws.SetReadDeadline(dl)
		_ = ws.SetWriteDeadline(dl)
	}
	slots := make(chan struct{}, inFlight)
	writeErr := make(chan error, 1)
	go func() {
		for id := 1; id <= requests; id++ {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				writeErr <- ctx.Err()
				return
			}
			frame := `{"type":"event","id":` + strconv.Itoa(id) + `,"event":"say","args":[{"text":"c` + strconv.Itoa(client) + `"}]}`
			if err := ws.WriteMessage(websocket.TextMessage, []byte(frame)); err != nil {
				writeErr <- err
				return
			}
		}
		writeErr <- nil
	}()
	seenID := make([]bool, requests+1)
	seenN := make([]bool, requests+1)
	for got := 0; got < requests; got++ {
		_, data, err := ws.ReadMessage()
		if err != nil {
			return fmt.Errorf("client %d after %d acks: %w", client, got, err)
		}
		var f struct {
			Type string
			ID   int
			Ack  struct{ N int }
		}
		if err := json.Unmarshal(data, &f); err != nil || f.Type != "ack" || f.ID < 1 || f.ID > requests || f.Ack.N < 1 || f.Ack.N > requests {
			return fmt.Errorf("client %d: frame %s", client, data)
		}
		if seenID[f.ID] || seenN[f.Ack.N] {
			return fmt.Errorf("client %d: answered twice: %s", client, data)
		}
		seenID[f.ID], seenN[f.Ack.N] = true, true
		<-slots // never blocks: this request's writer filled a slot before sending it
	}
	// Bounded: the writer has sent every request (each was answered), and
	// its writes carry ctx's deadline.
	return <-writeErr
}

// viaClient does the same through realtime.Client.Request.
func viaClient(ctx context.Context, cl *realtime.Client, client, requests, inFlight int) error {
	var mu sync.Mutex
	seen := make([]bool, requests+1)
	var g errgroup.Group
	g.SetLimit(inFlight)
	for r := 0; r < requests; r++ {
		g.Go(func() error {
			ack, err := cl.Request(ctx, time.Minute, "say", map[string]any{"text": "go" + strconv.Itoa(client)})
			if err != nil {
				return fmt.Errorf("go client %d request %d: %w", client, r, err)
			}
			var v struct{ N int }
			if err := json.Unmarshal(ack, &v); err != nil || v.N < 1 || v.N > requests {
				return fmt.Errorf("go client %d: ack %s", client, ack)
			}
			mu.Lock()
			defer mu.Unlock()
			if seen[v.N] {
				return fmt.Errorf("go client %d: ack n=%d twice", client, v.N)
			}
			seen[v.N] = true
			return nil
		})
	}
	return g.Wait()
}
