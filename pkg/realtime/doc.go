// Package realtime serves the realtime contracts of a stitchkit graph over
// WebSocket (gorilla/websocket), with every frame validated against the
// contract in both directions. The wire protocol is
// docs/realtime-protocol.md (subprotocol [Subprotocol]).
//
// A server per contract:
//
//	g, _ := graph.Load(graphJSON)                 // or check.Compile at build time
//	p, _ := project.New(g, nil)                   // the one projection (a runner's: runner.Projection())
//	board, _ := realtime.NewContract(p, "board")
//	srv, _ := realtime.NewServer(board, &realtime.Options[User]{
//		Handshake: authenticate,                  // *http.Request → (User, error)
//		Broker:    natsBroker,                    // nil: in-process
//	})
//	srv.Handle("watch", func(ctx context.Context, c *realtime.Conn[User], args realtime.Args) (any, error) {
//		var w struct{ Board string }
//		if err := args.Decode(&w); err != nil {
//			return nil, err
//		}
//		return map[string]any{"ok": true}, c.Join("board:" + w.Board)
//	})
//	http.Handle("/realtime/board", srv)
//	…
//	srv.Room("board:main").Emit(ctx, "taskChanged", task) // validated first
//	srv.Shutdown(ctx)                                   // 1001 to every client
//
// A Go client, with the same validation on its side:
//
//	cl, _ := realtime.Dial(ctx, "wss://example.com/realtime/board", board, nil)
//	cl.On("taskChanged", func(ctx context.Context, args realtime.Args) (any, error) { … })
//	ack, err := cl.Request(ctx, 0, "watch", map[string]any{"board": "main"})
//
// What a server does: a handshake hook that yields a typed identity (a
// refusal is an HTTP status with the JSON error envelope, never a hang);
// the Origin checked (same-origin unless an allow-list is given); a read
// limit; a write deadline; a bounded send queue per connection whose
// overflow closes a slow consumer (1013, or 1008); handlers that receive
// validated arguments only; rejections of invalid arguments, unknown
// events and missing acknowledgements reported with the direction /
// phase / reason / fault taxonomy to OnRejected and answered with the
// rejection envelope; emits that validate before anything is sent, to one
// connection, a room or everyone; [Conn.Request], which asks a client and
// waits for its validated acknowledgement; rooms that span instances
// through a [Broker] (package natsbroker); graceful shutdown with 1001.
//
// An idle connection costs one parked goroutine with a 2 KiB stack and
// about 3 KiB of heap (bench/run.sh measures it): writers and handler
// goroutines exist only while there is work, write buffers come from a
// pool, and the read buffer is 512 bytes.
//
// [Binding] is the client side as the conformance kit's realtime probes
// drive it: connected state, subscribe, emit, request with
// acknowledgement, connection-change and rejection observers, and no
// connect or disconnect. [*Client] implements it; [Bind] makes one from
// any [Transport] an application already has. [JSHandler] serves the ES
// module client, realtime.js, for browsers and node.
//
// The package links no CUE: a server built from graph.json needs only
// the graph, pkg/validate and gorilla/websocket.
package realtime
