// Command tasks serves the tasks example contract (tasks.cue in this
// folder) on 127.0.0.1: go run ./examples/tasks [-addr 127.0.0.1:8080] —
// the HTTP API under /api and MCP at /mcp/member and /mcp/admin. With
// -stdio it serves one MCP surface (-surface, "member" by default) on
// standard input and output instead, for a host that starts it as a child
// process (Claude Desktop, the MCP Inspector).
//
// The Go handlers are in package server, over an in-memory store; the
// typed bindings in tasksapi are generated from the contract:
//
//go:generate go run ../../cmd/stitch gen . -o tasksapi
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"

	"stitchkit.dev/stitchkit/examples/tasks/server"
	"stitchkit.dev/stitchkit/pkg/httpserver"
	mcpmount "stitchkit.dev/stitchkit/pkg/mount/mcp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen on `HOST:PORT`")
	stdio := flag.Bool("stdio", false, "serve one MCP surface on standard input and output instead of HTTP")
	surface := flag.String("surface", "member", "the MCP `SURFACE` -stdio serves (member or admin)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	if *stdio {
		err = runStdio(ctx, *surface)
	} else {
		err = run(ctx, *addr, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tasks:", err)
		os.Exit(1)
	}
}

// newApp is the example app with its MCP mount beside the API: every
// named surface, through the app's one runner.
func newApp() (*server.App, *mcpmount.Handler, error) {
	app, err := server.New(server.NewMemoryStore(nil), nil)
	if err != nil {
		return nil, nil, err
	}
	mcp, err := mcpmount.New(app.Runner(), &mcpmount.Options{Prefix: "/mcp"})
	if err != nil {
		return nil, nil, err
	}
	app.Handle("/mcp", mcp)
	app.Handle("/mcp/", mcp)
	return app, mcp, nil
}

// runStdio serves one MCP surface over standard input and output until
// the client disconnects or ctx is done. Nothing else writes to stdout.
func runStdio(ctx context.Context, surface string) error {
	_, mcp, err := newApp()
	if err != nil {
		return err
	}
	return mcp.ServeStdio(ctx, surface)
}

// run serves on addr until ctx is done, printing the URLs to out.
func run(ctx context.Context, addr string, out io.Writer) error {
	app, mcp, err := newApp()
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
	for _, name := range mcp.Surfaces() {
		fmt.Fprintf(out, "  mcp    %s%s\n", base, mcp.Path(name))
	}
	fmt.Fprintf(out, "try: curl -s -X POST %s%s/tasks -H 'Content-Type: application/json' -d '{\"title\":\"Write docs\"}'\n", base, server.APIPrefix)

	// httpserver bounds what a client can make the server spend (header,
	// body and answer times, idle connections, header size; see
	// docs/limits.md) and, once ctx ends, closes the board's WebSockets
	// (1001) beside the HTTP shutdown — http.Server.Shutdown leaves
	// hijacked connections alone — returning nil whatever is in flight.
	return httpserver.Run(ctx, httpserver.New(app.Handler(), nil), ln, &httpserver.Options{ShutdownTimeout: shutdownTimeout}, app.Shutdown)
}

// shutdownTimeout is how long requests in flight may finish once the
// server is told to stop (a variable, so a test can shorten it).
var shutdownTimeout = httpserver.DefaultShutdownTimeout
