package realtime

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// sweepTick is how often a sweep's watchdog runs: it checks that the
// sweep is making progress and that no write has outlived the write
// timeout.
const sweepTick = 10 * time.Millisecond

// A sweep writes one prepared frame to many idle connections: a few
// workers (one per two CPUs) take connections from a shared cursor and
// write to each directly. That is the peer's loop of WritePreparedMessage
// calls, made parallel, without a goroutine per connection — and without
// the peer's flaw that one connection whose socket is full stalls
// everyone behind it: when no connection has been taken for a whole
// sweepTick while some are still waiting, another worker joins (enough
// when a worker merely was not scheduled), and when none has been taken
// for a second tick the sweep stops and hands each of them a writer
// goroutine of its own (Conn.handoff). A stuck write then holds up only
// its own connection, and a client behind it waits at most two ticks
// (20 ms) more than it would for its own socket. While it
// waits its queue does not count against SendQueue (Conn.waiting), so a
// slow consumer can never get another client closed: a connection is
// closed as slow only for frames its own socket did not take.
//
// Half the CPUs, not all: the writes are system calls, and a broadcast
// that took every CPU would stop the rest of the server — its readers,
// handlers and the acknowledgements they send — until it is written. On
// two CPUs (measured with realtime-fanout-vs-gorilla, 1,000 loopback
// clients) one worker beside everything else finished the fan-out sooner
// than two workers that left nothing else running.
//
// The writes carry no socket deadline. Setting one per write costs a
// runtime timer update and two clock reads per connection, the largest
// part (in a CPU profile of that benchmark) of what this loop did beyond
// the peer's. A sweep's watchdog bounds them instead:
// each worker notes the watchdog's clock when it starts a write, and a
// write older than the write timeout has its connection closed, which
// ends the write and the connection as an expired deadline would (within
// one tick past the timeout, never before it).
type sweep[I any] struct {
	pm    *websocket.PreparedMessage
	conns []*Conn[I]
	next  atomic.Int64 // index of the next connection to take
	live  atomic.Int32 // running workers; the last one out releases the sweep
	now   atomic.Int64 // the watchdog's clock (unix ns), read by workers
	srv   *Server[I]
	timer *time.Timer

	mu      sync.Mutex
	workers []*sweepWorker[I]

	// last is next at the previous tick, stalls the ticks since then
	// without progress (watchdog goroutine only).
	last   int64
	stalls int
}

// sweepWorker is what the watchdog sees of one worker: the connection it
// is writing to (nil between writes) and the watchdog clock at the write's
// start.
type sweepWorker[I any] struct {
	since atomic.Int64
	conn  atomic.Pointer[Conn[I]]
}

// sweep starts writing pm to the claimed connections and returns at once:
// the broker's delivery goroutine never waits for a socket.
func (s *Server[I]) sweep(conns []*Conn[I], pm *websocket.PreparedMessage) {
	if len(conns) == 0 {
		return
	}
	sw := &sweep[I]{pm: pm, conns: conns, srv: s}
	sw.now.Store(time.Now().UnixNano())
	workers := min(max(1, runtime.GOMAXPROCS(0)/2), len(conns))
	// The sweep holds one count of the server's WaitGroup for its whole
	// life; the claimed connections are open, so the count is above zero.
	s.wg.Add(1)
	sw.live.Store(int32(workers))
	// Armed only once the field is set: the watchdog and the workers read
	// it.
	sw.timer = time.AfterFunc(time.Hour, sw.tick)
	sw.timer.Reset(sweepTick)
	for range workers {
		go sw.work()
	}
}

func (sw *sweep[I]) work() {
	w := &sweepWorker[I]{}
	sw.mu.Lock()
	sw.workers = append(sw.workers, w)
	sw.mu.Unlock()
	n := int64(len(sw.conns))
	for {
		i := sw.next.Add(1) - 1
		if i >= n {
			break
		}
		c := sw.conns[i]
		c.waiting.Store(false)
		// since before conn: a watchdog that sees conn sees its start.
		w.since.Store(sw.now.Load())
		w.conn.Store(c)
		c.writeClaimed(sw.pm)
		w.conn.Store(nil)
	}
	if sw.live.Add(-1) == 0 {
		sw.timer.Stop()
		sw.srv.wg.Done()
	}
}

// tick is the watchdog: it closes connections whose write has outlived
// the write timeout, adds a worker when the sweep has stalled and hands
// the connections not yet taken writers of their own when it stays
// stalled, and re-arms itself while workers run.
func (sw *sweep[I]) tick() {
	if sw.live.Load() == 0 {
		return // the last worker has left
	}
	now := time.Now().UnixNano()
	sw.now.Store(now)
	// A write's noted start is at most one tick before its real start, so
	// waiting one tick more never closes a connection early.
	expired := now - int64(sw.srv.opts.WriteTimeout) - int64(sweepTick)
	// stuck: every worker is inside a write that started two ticks ago or
	// more (a worker between writes, or in a fresh one, was merely not
	// scheduled, which another worker cures).
	stuck := true
	old := now - 2*int64(sweepTick)
	sw.mu.Lock()
	for _, w := range sw.workers {
		c := w.conn.Load()
		if c != nil && w.since.Load() <= expired {
			c.writeExpired()
		}
		if c == nil || w.since.Load() > old {
			stuck = false
		}
	}
	sw.mu.Unlock()
	n := int64(len(sw.conns))
	next := sw.next.Load()
	switch {
	case next >= n || next != sw.last:
		sw.stalls = 0
	case sw.stalls == 0 || !stuck:
		// No connection taken for a tick: a worker is stuck in a write to
		// a full socket, or was not scheduled (a loaded machine). Another
		// worker joins, which is all the second case needs.
		sw.stalls++
		for {
			live := sw.live.Load()
			if live == 0 {
				return
			}
			if sw.live.CompareAndSwap(live, live+1) {
				go sw.work()
				break
			}
		}
	default:
		// Still stalled, every worker in a write two ticks old: writes are
		// stuck. Each connection not yet taken
		// gets a writer of its own, so no client waits on another's
		// socket for more than two ticks. Workers that come back find
		// nothing left.
		from := sw.next.Swap(n)
		for i := from; i < n; i++ {
			sw.conns[i].handoff(sw.pm)
		}
		next = n
	}
	sw.last = next
	sw.timer.Reset(sweepTick)
}
