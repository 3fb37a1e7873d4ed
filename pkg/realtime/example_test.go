package realtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"sync"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/mount"
	"stitchkit.dev/stitchkit/pkg/project"
	"stitchkit.dev/stitchkit/pkg/realtime"
)

// exampleGraph loads the compiled board contract (testdata/board: the
// graph.json that `stitch compile` made from board.cue), as a server does:
// graph.Load needs no CUE.
func exampleGraph() *graph.Graph {
	data, err := os.ReadFile("testdata/board/graph.json")
	if err != nil {
		panic(err)
	}
	g, err := graph.Load(data)
	if err != nil {
		panic(err)
	}
	return g
}

// A server for one contract and a Go client: the client watches a board,
// the server puts it in the board's room and pushes a change to the room.
func ExampleNewServer() {
	ctx := context.Background()
	proj, err := project.New(exampleGraph(), nil) // the one projection
	if err != nil {
		fmt.Println(err)
		return
	}
	board, err := realtime.NewContract(proj, "board")
	if err != nil {
		panic(err)
	}
	srv, err := realtime.NewServer[string](board, nil)
	if err != nil {
		panic(err)
	}
	_ = srv.Handle("watch", func(ctx context.Context, c *realtime.Conn[string], args realtime.Args) (any, error) {
		var w struct{ Board string }
		if err := args.Decode(&w); err != nil {
			return nil, err
		}
		return map[string]any{"ok": true}, c.Join("board:" + w.Board)
	})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	defer srv.Shutdown(ctx)

	cl, err := realtime.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http"), board, nil)
	if err != nil {
		panic(err)
	}
	defer cl.Close()
	changed := make(chan string, 1)
	_, _ = cl.On("taskChanged", func(_ context.Context, args realtime.Args) (any, error) {
		changed <- string(args.JSON())
		return nil, nil
	})
	ack, err := cl.Request(ctx, 0, "watch", map[string]any{"board": "main"})
	fmt.Println("ack:", string(ack), err)

	// Emits are validated before anything is sent.
	err = srv.Room("board:main").Emit(ctx, "taskChanged", map[string]any{"id": "t_1"})
	me, _ := mount.AsError(err)
	fmt.Println(me.Code, me.Details["reason"])

	_ = srv.Room("board:main").Emit(ctx, "taskChanged", map[string]any{"id": "t_1", "done": true})
	fmt.Println("pushed:", <-changed)
	// Output:
	// ack: {"ok":true} <nil>
	// REALTIME_CONTRACT_VIOLATION invalid-arguments
	// pushed: [{"done":true,"id":"t_1"}]
}

// loopback is a Transport over nothing: every event it sends is answered
// by a function. An application binds its own connection the same way.
type loopback struct {
	mu     sync.Mutex
	answer func(event string, args json.RawMessage) realtime.Reply
}

func (l *loopback) Connected() bool                                     { return true }
func (l *loopback) Subscribe(func(realtime.Inbound)) func()             { return func() {} }
func (l *loopback) OnConnectionChange(func(bool)) func()                { return func() {} }
func (l *loopback) Send(context.Context, string, json.RawMessage) error { return nil }
func (l *loopback) SendWithAck(_ context.Context, event string, args json.RawMessage) (realtime.Reply, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.answer(event, args), nil
}

// Bind validates a contract over a connection the application owns: here
// a peer that answers watch with an acknowledgement the contract does not
// allow, which the binding reports and refuses.
func ExampleBind() {
	proj, err := project.New(exampleGraph(), nil) // the one projection
	if err != nil {
		fmt.Println(err)
		return
	}
	board, err := realtime.NewContract(proj, "board")
	if err != nil {
		panic(err)
	}
	t := &loopback{answer: func(string, json.RawMessage) realtime.Reply {
		return realtime.Reply{Ack: json.RawMessage(`{"ok":"yes"}`)}
	}}
	b := realtime.Bind(t, board, nil)
	defer b.Unbind()
	b.OnRejected(func(r realtime.Rejection) {
		fmt.Println("rejected:", r.Direction, r.Phase, r.Reason, r.Fault)
	})
	_, err = b.Request(context.Background(), 0, "watch", map[string]any{"board": "main"})
	me, _ := mount.AsError(err)
	fmt.Println(me.Code)
	// Output:
	// rejected: client-inbound acknowledgement invalid-acknowledgement-value peer
	// REALTIME_REQUEST_INVALID_ACKNOWLEDGEMENT
}

// ServeExamples serves every realtime contract of a graph with no
// application code, answering from the contract's examples: what
// `stitch serve` mounts under /realtime.
func ExampleServeExamples() {
	ctx := context.Background()
	g := exampleGraph()
	proj, err := project.New(g, nil) // the one projection
	if err != nil {
		fmt.Println(err)
		return
	}
	mux, err := realtime.ServeExamples(proj, "/realtime", nil)
	if err != nil {
		panic(err)
	}
	hs := httptest.NewServer(mux)
	defer hs.Close()
	defer mux.Shutdown(ctx)
	board, _ := realtime.NewContract(proj, "board")
	cl, err := realtime.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http")+mux.Path("board"), board, nil)
	if err != nil {
		panic(err)
	}
	defer cl.Close()
	ack, err := cl.Request(ctx, 0, "watch", map[string]any{"board": "main"})
	fmt.Println(mux.Contracts(), string(ack), err)
	// Output:
	// [board] {"ok":true} <nil>
}
