// Package server is the tasks example app: the handlers of every
// operation of examples/tasks/tasks.cue over a [Store], bound through the
// generated package tasksapi and served by the shared runner and HTTP
// mount.
//
//	app, err := server.New(server.NewMemoryStore(nil), nil)
//	ln, err := net.Listen("tcp", "127.0.0.1:8080")
//	srv := httpserver.New(app.Handler(), nil) // /api/tasks, /api/v1/files, /graph.json
//	err = httpserver.Run(ctx, srv, ln, nil, app.Shutdown)
//
// (httpserver bounds what clients can make the server spend and closes
// the board's WebSockets on shutdown; see docs/limits.md.)
//
// The board realtime contract is served at /realtime/board: watching a
// board (watch {board: "main"}) gets taskChanged for every task created
// or changed (board "main") or for the tasks with that tag (any other
// board name); / is a page that shows the main board live with the ES
// module client (/realtime.js). [App.Shutdown] closes the WebSockets.
//
// The seams other transports plug into: [App.Runner] is the one runner
// every mount must share (MCP and agent tools call the same handlers),
// [App.Handle] adds routes beside /api (an MCP endpoint), and
// Options.OnChange observes every created or changed task, after the
// board's watchers have been sent taskChanged.
package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"stitchkit.dev/stitchkit/examples/tasks/tasksapi"
	"stitchkit.dev/stitchkit/pkg/mount"
	httpmount "stitchkit.dev/stitchkit/pkg/mount/http"
	"stitchkit.dev/stitchkit/pkg/project"
	"stitchkit.dev/stitchkit/pkg/realtime"
)

// APIPrefix is where the HTTP API is mounted.
const APIPrefix = "/api"

// Options configures [New]. A nil *Options means defaults.
type Options struct {
	// Hooks are the runner's hooks, e.g. Authorize to give the "user" and
	// "admin" scopes a meaning (without one, every scope is open).
	Hooks mount.Hooks
	// Logger receives the causes of internal errors (nil: slog.Default()).
	Logger *slog.Logger
	// Now is the clock purge compares against (nil: time.Now).
	Now func() time.Time
	// Notify sends a reminder; nil accepts every reminder without sending
	// anything (the example has no mail or SMS gateway).
	Notify func(ctx context.Context, n Notification) error
	// OnChange is called after a task was created or changed, with the
	// task as stored. It runs on the request's goroutine: keep it short.
	OnChange func(ctx context.Context, t tasksapi.Task)
	// HTTP configures the HTTP mount; its Prefix is always APIPrefix.
	HTTP *httpmount.Options
}

// App is the running example: the store, the runner and the HTTP routes.
// It is safe for concurrent use.
type App struct {
	store  Store
	opts   Options
	runner *mount.Runner
	api    http.Handler
	extra  *http.ServeMux
	board  *realtime.Server[struct{}]
}

// New binds the example's handlers over store and builds the runner and the
// HTTP mount.
func New(store Store, opts *Options) (*App, error) {
	a := &App{store: store, extra: http.NewServeMux()}
	if opts != nil {
		a.opts = *opts
	}
	impl, err := tasksapi.Register(tasksapi.Services{Tasks: tasks{app: a}, Files: files{app: a}, Runtime: runtime{app: a}})
	if err != nil {
		return nil, err
	}
	// The one projection: the HTTP prefix is stated here, once; the HTTP
	// mount, the realtime board and the manifest test read it.
	p, err := project.New(tasksapi.Graph(), &project.Options{HTTPPrefix: APIPrefix})
	if err != nil {
		return nil, err
	}
	// RequireAll: the example implements its whole contract; a contract
	// change that adds an operation must fail here, not answer 501.
	a.runner, err = mount.New(impl, &mount.Options{Projection: p, Hooks: a.opts.Hooks, Logger: a.opts.Logger, RequireAll: true})
	if err != nil {
		return nil, err
	}
	hopts := httpmount.Options{}
	if a.opts.HTTP != nil {
		hopts = *a.opts.HTTP
	}
	if a.api, err = httpmount.New(a.runner, &hopts); err != nil {
		return nil, err
	}
	graphJSON, err := tasksapi.Graph().Encode()
	if err != nil {
		return nil, err
	}
	a.extra.HandleFunc("GET /graph.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(graphJSON)
	})
	if err := a.newBoard(); err != nil {
		return nil, err
	}
	return a, nil
}

// Runner returns the runner every transport of the app must share.
func (a *App) Runner() *mount.Runner { return a.runner }

// Handle adds a route beside the API (a net/http ServeMux pattern that is
// not under APIPrefix), e.g. an MCP endpoint.
func (a *App) Handle(pattern string, h http.Handler) {
	if _, path, _ := strings.Cut(pattern, " "); strings.HasPrefix(path, APIPrefix+"/") || strings.HasPrefix(pattern, APIPrefix+"/") {
		panic(fmt.Sprintf("server: %s is under %s, which the HTTP mount owns", pattern, APIPrefix))
	}
	a.extra.Handle(pattern, h)
}

// Handler returns the app's HTTP handler: the API under APIPrefix (the HTTP
// mount judges those paths itself: unclean ones are 404, never redirected),
// the compiled graph at /graph.json, and whatever Handle added.
func (a *App) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; p == APIPrefix || strings.HasPrefix(p, APIPrefix+"/") {
			a.api.ServeHTTP(w, r)
			return
		}
		a.extra.ServeHTTP(w, r)
	})
}

func (a *App) now() time.Time {
	if a.opts.Now != nil {
		return a.opts.Now()
	}
	return time.Now()
}

func (a *App) changed(ctx context.Context, t tasksapi.Task) {
	a.emitChanged(ctx, t)
	if a.opts.OnChange != nil {
		a.opts.OnChange(ctx, t)
	}
}

func (a *App) logger() *slog.Logger {
	if a.opts.Logger != nil {
		return a.opts.Logger
	}
	return slog.Default()
}

func (a *App) notify(ctx context.Context, n Notification) error {
	if a.opts.Notify != nil {
		return a.opts.Notify(ctx, n)
	}
	return nil
}
