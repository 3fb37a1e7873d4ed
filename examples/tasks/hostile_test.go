package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"stitchkit.dev/stitchkit/examples/tasks/server"
	"stitchkit.dev/stitchkit/pkg/realtime"
)

// TestShutdownWithRequestInFlight is the shutdown attack on the example:
// WebSocket clients on the board and a request that outlives the
// shutdown budget (a body that never finishes arriving). SIGTERM (ctx)
// must still close every WebSocket with 1001 and make run return nil
// (exit 0). Before, the HTTP shutdown's error returned first: exit 1 and
// 1006 for every client.
func TestShutdownWithRequestInFlight(t *testing.T) {
	defer func(d time.Duration) { shutdownTimeout = d }(shutdownTimeout)
	shutdownTimeout = 500 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &lockedBuffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, "127.0.0.1:0", out) }()
	var addr string
	for deadline := time.Now().Add(30 * time.Second); addr == ""; {
		if time.Now().After(deadline) {
			t.Fatalf("no address printed:\n%s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
		if _, rest, ok := strings.Cut(out.String(), "listening on http://"); ok {
			addr, _, _ = strings.Cut(rest, "\n")
		}
	}
	const clients = 20
	var ws []*websocket.Conn
	d := websocket.Dialer{Subprotocols: []string{realtime.Subprotocol}, HandshakeTimeout: 10 * time.Second}
	for range clients {
		c, _, err := d.Dial("ws://"+addr+server.BoardPath, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		ws = append(ws, c)
	}
	slow, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	_, _ = io.WriteString(slow, fmt.Sprintf("POST %s/tasks HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", server.APIPrefix, addr))
	time.Sleep(100 * time.Millisecond) // let the request reach its handler; the test holds without it
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run = %v after SIGTERM with a request in flight, want nil (exit 0)", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("run did not return within 60 s of SIGTERM")
	}
	took := time.Since(start)
	codes := map[int]int{}
	for _, c := range ws {
		_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
		for {
			_, _, err := c.ReadMessage()
			if err == nil {
				continue
			}
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				codes[ce.Code]++
			} else {
				codes[0]++
			}
			break
		}
	}
	t.Logf("shutdown in %s with a request in flight; close codes of %d clients: %v", took.Round(time.Millisecond), clients, codes)
	if codes[websocket.CloseGoingAway] != clients {
		t.Fatalf("close codes %v, want 1001 for all %d clients", codes, clients)
	}
}
