package server

import (
	"context"
	_ "embed"
	"net/http"

	"stitchkit.dev/stitchkit/examples/tasks/tasksapi"
	"stitchkit.dev/stitchkit/pkg/realtime"
)

// BoardPath is where the board realtime contract's WebSocket endpoint is
// served (the path `stitch serve` and the AsyncAPI export use).
const BoardPath = realtime.DefaultPrefix + "/board"

// MainBoard is the board that shows every task. Any other board name is a
// tag: watching board "docs" shows the tasks tagged docs.
const MainBoard = "main"

//go:embed board.html
var boardPage []byte

// boardRoom is the room of a board's watchers.
func boardRoom(board string) string { return "board:" + board }

// newBoard serves the board contract: watch puts the connection into its
// board's room, and every created or changed task is emitted to the main
// board and to the board of each of its tags.
func (a *App) newBoard() error {
	c, err := realtime.NewContract(a.runner.Projection(), "board")
	if err != nil {
		return err
	}
	logger := a.logger()
	a.board, err = realtime.NewServer(c, &realtime.Options[struct{}]{
		OnError: func(_ *realtime.Conn[struct{}], err error) { logger.Error("realtime", "err", err) },
	})
	if err != nil {
		return err
	}
	if err := tasksapi.HandleBoardWatch(a.board, func(_ context.Context, conn *realtime.Conn[struct{}], w tasksapi.BoardWatchArgsItem0) (tasksapi.BoardWatchAck, error) {
		if err := conn.Join(boardRoom(w.Board)); err != nil {
			return tasksapi.BoardWatchAck{}, err
		}
		return tasksapi.BoardWatchAck{OK: true}, nil
	}); err != nil {
		return err
	}
	a.extra.Handle(BoardPath, a.board)
	a.extra.Handle("GET /realtime.js", realtime.JSHandler())
	a.extra.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write(boardPage)
	})
	return nil
}

// emitChanged tells the watchers of every board the task is on. A failed
// emit (the broker is down, say) is logged: the HTTP request that changed
// the task has succeeded and must not fail because a watcher missed it.
func (a *App) emitChanged(ctx context.Context, t tasksapi.Task) {
	rooms := []string{boardRoom(MainBoard)}
	for _, tag := range t.Tags {
		if string(tag) != MainBoard {
			rooms = append(rooms, boardRoom(string(tag)))
		}
	}
	for _, room := range rooms {
		if err := tasksapi.EmitBoardTaskChanged(context.WithoutCancel(ctx), a.board.Room(room), t); err != nil {
			a.logger().Error("realtime: taskChanged", "room", room, "err", err)
		}
	}
}

// Shutdown closes the board's WebSockets (1001, after what is queued) and
// waits for them, or for ctx. Call it beside the HTTP server's Shutdown
// (httpserver.Run does), which does not close hijacked connections.
func (a *App) Shutdown(ctx context.Context) error { return a.board.Shutdown(ctx) }
