package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"stitchkit.dev/stitchkit/internal/projecttest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"stitchkit.dev/stitchkit/pkg/check"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/realtime"
)

const fanoutClients = 1000

// benchTask is the taskChanged payload both sides send.
var benchTask = map[string]any{"id": "t_1", "title": "Write docs", "done": false, "tags": []string{"docs", "v1"}}

func boardContract(tb testing.TB) *realtime.Contract {
	tb.Helper()
	g, err := check.Compile(context.Background(), "../examples/tasks")
	if err != nil {
		tb.Fatal(err)
	}
	c, err := realtime.NewContract(projecttest.New(tb, g, nil), "board")
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// readers is a set of loopback client connections that each read frames
// forever; wait returns once every connection has read one more frame.
type readers struct {
	remaining atomic.Int64
	done      chan struct{}
	conns     []*websocket.Conn
	last      atomic.Value // []byte: a frame as a client saw it
	wg        sync.WaitGroup
}

func dialReaders(tb testing.TB, url string, n int, subprotocols []string) *readers {
	tb.Helper()
	r := &readers{done: make(chan struct{}, 1)}
	d := websocket.Dialer{Subprotocols: subprotocols, HandshakeTimeout: 30 * time.Second}
	for i := 0; i < n; i++ {
		ws, _, err := d.Dial(url, nil)
		if err != nil {
			tb.Fatalf("client %d: %v", i, err)
		}
		r.conns = append(r.conns, ws)
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			for {
				_, data, err := ws.ReadMessage()
				if err != nil {
					return
				}
				r.last.Store(data)
				if r.remaining.Add(-1) == 0 {
					r.done <- struct{}{}
				}
			}
		}()
	}
	return r
}

func (r *readers) arm() { r.remaining.Store(int64(len(r.conns))) }

func (r *readers) wait(tb testing.TB) {
	select {
	case <-r.done:
	case <-time.After(30 * time.Second):
		tb.Fatalf("%d clients did not read the frame", r.remaining.Load())
	}
}

func (r *readers) close() {
	for _, ws := range r.conns {
		_ = ws.Close()
	}
	r.wg.Wait()
}

// BenchmarkRealtimeFanoutVsGorilla is the realtime-fanout-vs-gorilla row
// of bench/run.sh: one serverToClient event (tasks' board.taskChanged) to
// 1,000 connected loopback clients, until all have read it. Ours is
// Server.Emit: validate the arguments against the contract, encode the
// frame, publish it through the (in-process) broker, queue it on every
// connection. The peer is what a hand-written gorilla hub does: one
// PreparedMessage of the same bytes, written to each connection in a loop.
func BenchmarkRealtimeFanoutVsGorilla(b *testing.B) {
	c := boardContract(b)

	srv, err := realtime.NewServer[struct{}](c, nil)
	if err != nil {
		b.Fatal(err)
	}
	ours := httptest.NewServer(srv)
	oursR := dialReaders(b, "ws"+strings.TrimPrefix(ours.URL, "http"), fanoutClients, []string{realtime.Subprotocol})
	waitUntil(b, "every client registered", func() bool { return srv.Stats().Connections >= fanoutClients })
	ctx := context.Background()
	oursR.arm()
	if err := srv.Emit(ctx, "taskChanged", benchTask); err != nil {
		b.Fatal(err)
	}
	oursR.wait(b)
	frame := oursR.last.Load().([]byte) // the peer sends exactly these bytes

	var (
		mu    sync.Mutex
		conns []*websocket.Conn
	)
	up := websocket.Upgrader{}
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		mu.Lock()
		conns = append(conns, ws)
		mu.Unlock()
		go func() { // a hub reads to notice closes
			for {
				if _, _, err := ws.ReadMessage(); err != nil {
					return
				}
			}
		}()
	}))
	peerR := dialReaders(b, "ws"+strings.TrimPrefix(peer.URL, "http"), fanoutClients, nil)
	waitUntil(b, "every peer connection upgraded", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(conns) == fanoutClients
	})
	b.Cleanup(func() {
		_ = srv.Shutdown(ctx)
		oursR.close()
		ours.Close()
		for _, ws := range conns {
			_ = ws.Close()
		}
		peerR.close()
		peer.Close()
	})

	sideBySide(b, func(b *testing.B) {
		defer reportCPU(b)()
		for i := 0; i < b.N; i++ {
			oursR.arm()
			if err := srv.Emit(ctx, "taskChanged", benchTask); err != nil {
				b.Fatal(err)
			}
			oursR.wait(b)
		}
	}, func(b *testing.B) {
		defer reportCPU(b)()
		for i := 0; i < b.N; i++ {
			peerR.arm()
			pm, err := websocket.NewPreparedMessage(websocket.TextMessage, frame)
			if err != nil {
				b.Fatal(err)
			}
			mu.Lock()
			for _, ws := range conns {
				if err := ws.WritePreparedMessage(pm); err != nil {
					b.Fatal(err)
				}
			}
			mu.Unlock()
			peerR.wait(b)
		}
	})
}

// reportCPU reports the process's CPU time (user + system, all threads:
// server, clients and runtime) per operation as cpu-ns/op, beside the wall
// time: on a loaded machine the wall time says how long the fan-out took,
// the CPU time how much work it was.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
	}
}

func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkRealtimeIdleConnMemory reports the server-side memory of one
// idle connection (B/idle-conn): live heap plus goroutine stacks, measured
// after GC, with 1,000 connections that each received one event and then
// went quiet. The server runs in a child process built like a production
// one (the graph loaded from graph.json, no CUE, no clients), so what is
// measured is everything a server keeps per connection and nothing else:
// gorilla's connection and read buffer, the net.Conn, our Conn, registry
// entries, the reader goroutine's stack, and what a burst of writes left
// behind. The clients run here. bench/run.sh prints it against the 8 KiB
// goal.
func BenchmarkRealtimeIdleConnMemory(b *testing.B) {
	m := measureIdleConn(b, fanoutClients)
	b.ReportMetric(m.heap+m.stack, "B/idle-conn")
	b.ReportMetric(m.heap, "heap-B/idle-conn")
	b.ReportMetric(m.stack, "stack-B/idle-conn")
	b.ReportMetric(m.goroutines, "goroutines/idle-conn")
}

// idleConnGoal is the goal for the server-side memory of one idle
// connection.
const idleConnGoal = 8 << 10

// TestRealtimeIdleConnMemory holds the goal BenchmarkRealtimeIdleConnMemory
// reports: an idle connection costs at most 8 KiB of heap and stack and
// one goroutine, server side, all per-connection state included (measured
// as the benchmark does, with 1,000 connections). The race detector's
// bookkeeping inflates both, so the goal is checked without it: .ci/run
// runs this test again in a step without -race.
func TestRealtimeIdleConnMemory(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation is not what a connection costs")
	}
	m := measureIdleConn(t, fanoutClients)
	t.Logf("per idle connection: %.0f B heap + %.0f B stack, %.3f goroutines", m.heap, m.stack, m.goroutines)
	if m.heap+m.stack > idleConnGoal {
		t.Errorf("an idle connection costs %.0f bytes, over the %d-byte goal", m.heap+m.stack, idleConnGoal)
	}
	if m.goroutines > 1.01 {
		t.Errorf("an idle connection keeps %.3f goroutines, want 1 (its reader)", m.goroutines)
	}
}

type idleConnMemory struct{ heap, stack, goroutines float64 }

// measureIdleConn measures, per connection, what a server process holds
// for n idle connections (see BenchmarkRealtimeIdleConnMemory).
func measureIdleConn(tb testing.TB, n int) idleConnMemory {
	tb.Helper()
	g, err := check.Compile(context.Background(), "../examples/tasks")
	if err != nil {
		tb.Fatal(err)
	}
	graphJSON, err := graph.CanonicalIndent(g)
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(tb.TempDir(), "graph.json")
	if err := os.WriteFile(path, graphJSON, 0o644); err != nil {
		tb.Fatal(err)
	}
	// The deadline ends a child that hangs, which ends its stdout and so
	// any wait below on what it prints.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	child := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestRealtimeServerProcess$")
	child.Env = append(os.Environ(), "STITCHKIT_RT_SERVER="+path+" "+strconv.Itoa(n))
	stdin, err := child.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		tb.Fatal(err)
	}
	defer func() { stdin.Close(); _ = child.Wait() }()
	lines := bufio.NewScanner(stdout)
	next := func(prefix string) string {
		for lines.Scan() {
			if rest, ok := strings.CutPrefix(lines.Text(), prefix); ok {
				return rest
			}
		}
		tb.Fatalf("server process ended before %q: %v", prefix, lines.Err())
		return ""
	}
	url := next("url ")
	d := websocket.Dialer{Subprotocols: []string{realtime.Subprotocol}, HandshakeTimeout: 30 * time.Second}
	conns := make([]*websocket.Conn, n)
	for i := range conns {
		if conns[i], _, err = d.Dial(url, nil); err != nil {
			tb.Fatal(err)
		}
	}
	defer func() {
		for _, ws := range conns {
			_ = ws.Close()
		}
	}()
	var wg sync.WaitGroup
	for _, ws := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = ws.SetReadDeadline(time.Now().Add(time.Minute)) // bounds wg.Wait
			if _, _, err := ws.ReadMessage(); err != nil {
				tb.Error(err)
			}
		}()
	}
	wg.Wait()
	if _, err := io.WriteString(stdin, "read\n"); err != nil {
		tb.Fatal(err)
	}
	var m idleConnMemory
	if _, err := fmt.Sscan(next("per-conn "), &m.heap, &m.stack, &m.goroutines); err != nil {
		tb.Fatal(err)
	}
	return m
}

// TestRealtimeServerProcess is the server of
// BenchmarkRealtimeIdleConnMemory, run in a child process; without its
// environment variable it does nothing. It prints "url URL", waits for
// the connections, emits one event to all, waits for "read" on stdin,
// and prints "per-conn HEAP STACK GOROUTINES".
func TestRealtimeServerProcess(t *testing.T) {
	spec := os.Getenv("STITCHKIT_RT_SERVER")
	if spec == "" {
		return
	}
	path, count, _ := strings.Cut(spec, " ")
	n, err := strconv.Atoi(count)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	g, err := graph.Load(raw)
	if err != nil {
		t.Fatal(err)
	}
	c, err := realtime.NewContract(projecttest.New(t, g, nil), "board")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := realtime.NewServer[struct{}](c, &realtime.Options[struct{}]{PingInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	defer srv.Shutdown(context.Background())
	heap0, stack0 := memory()
	goroutines0 := runtime.NumGoroutine()
	fmt.Println("url", "ws"+strings.TrimPrefix(hs.URL, "http"))
	waitUntil(t, "every connection registered", func() bool { return srv.Stats().Connections >= n })
	if err := srv.Emit(context.Background(), "taskChanged", benchTask); err != nil {
		t.Fatal(err)
	}
	in := bufio.NewReader(os.Stdin)
	if line, _ := in.ReadString('\n'); line != "read\n" {
		t.Fatalf("stdin: %q", line)
	}
	// The writes that delivered the event end on their own goroutines;
	// measure once only the readers are left (or, if more stay, after 10 s,
	// and the parent's check fails on the count).
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine()-goroutines0 > n && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	heap1, stack1 := memory()
	fmt.Printf("per-conn %.0f %.0f %.3f\n", float64(heap1-heap0)/float64(n), float64(stack1-stack0)/float64(n),
		float64(runtime.NumGoroutine()-goroutines0)/float64(n))
	_, _ = in.ReadString('\n') // until the parent closes stdin
}

// memory is the heap in use by live objects and the stack memory, after
// collecting garbage twice (so that what finalizers free goes too).
// waitUntil polls cond until it holds, failing after a minute.
func waitUntil(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatalf("waited a minute for %s", what)
		}
	}
}

func memory() (heap, stack uint64) {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc, m.StackInuse
}
