// Command tasks serves the tasks example contract (tasks.cue in this
// folder) on 127.0.0.1: go run ./examples/tasks [-addr 127.0.0.1:8080].
//
// The Go handlers are in package server, over an in-memory store; the
// typed bindings in tasksapi are generated from the contract:
//
//go:generate go run ../../cmd/stitch gen . -o tasksapi
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"stitchkit.dev/stitchkit/examples/tasks/server"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen on `HOST:PORT`")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "tasks:", err)
		os.Exit(1)
	}
}

// run serves on addr until ctx is done, printing the URLs to out.
func run(ctx context.Context, addr string, out io.Writer) error {
	app, err := server.New(server.NewMemoryStore(nil), nil)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(out, "tasks example listening on %s\n", base)
	fmt.Fprintf(out, "  tasks  %s%s/tasks\n", base, server.APIPrefix)
	fmt.Fprintf(out, "  files  %s%s/v1/files\n", base, server.APIPrefix)
	fmt.Fprintf(out, "  graph  %s/graph.json\n", base)
	fmt.Fprintf(out, "  board  %s/ (live, over ws://%s%s)\n", base, ln.Addr(), server.BoardPath)
	fmt.Fprintf(out, "try: curl -s -X POST %s%s/tasks -H 'Content-Type: application/json' -d '{\"title\":\"Write docs\"}'\n", base, server.APIPrefix)

	srv := &http.Server{Handler: app.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	// http.Server.Shutdown leaves hijacked connections alone: close the
	// board's WebSockets (1001).
	return app.Shutdown(sctx)
}
