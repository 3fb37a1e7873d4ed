package realtime

import (
	"runtime"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// sweepStallCheck is how often a sweep checks that it is making progress.
const sweepStallCheck = 10 * time.Millisecond

// A sweep writes one prepared frame to many idle connections: a few
// workers (one per CPU) take connections from a shared cursor and write
// to each directly. That is the peer's loop of WritePreparedMessage calls,
// made parallel, without a goroutine per connection — and without the
// peer's flaw that one connection whose socket is full stalls everyone
// behind it: when no connection has been finished for sweepStallCheck
// while some are still waiting, another worker joins, so each stalled
// write holds up only the worker that is stuck in it (bounded by the
// write timeout).
type sweep[I any] struct {
	pm       *websocket.PreparedMessage
	conns    []*Conn[I]
	next     atomic.Int64 // index of the next connection to take
	finished atomic.Int64 // connections written (or failed)
	live     atomic.Int32 // running workers; the last one out releases the sweep
	last     int64        // finished at the previous stall check (timer goroutine only)
	srv      *Server[I]
	timer    *time.Timer
}

// sweep starts writing pm to the claimed connections and returns at once:
// the broker's delivery goroutine never waits for a socket.
func (s *Server[I]) sweep(conns []*Conn[I], pm *websocket.PreparedMessage) {
	if len(conns) == 0 {
		return
	}
	sw := &sweep[I]{pm: pm, conns: conns, srv: s}
	workers := min(runtime.GOMAXPROCS(0), len(conns))
	// The sweep holds one count of the server's WaitGroup for its whole
	// life; the claimed connections are open, so the count is above zero.
	s.wg.Add(1)
	sw.live.Store(int32(workers))
	if workers < len(conns) {
		// Armed only once the field is set: check and the workers read it.
		sw.timer = time.AfterFunc(time.Hour, sw.check)
		sw.timer.Reset(sweepStallCheck)
	}
	for range workers {
		go sw.work()
	}
}

func (sw *sweep[I]) work() {
	n := int64(len(sw.conns))
	for {
		i := sw.next.Add(1) - 1
		if i >= n {
			break
		}
		// The clock is read for every write: after a write that stalled,
		// a deadline computed earlier would already have passed.
		sw.conns[i].writeClaimed(sw.pm, time.Now().Add(sw.srv.opts.WriteTimeout))
		sw.finished.Add(1)
	}
	if sw.live.Add(-1) == 0 {
		if sw.timer != nil {
			sw.timer.Stop()
		}
		sw.srv.wg.Done()
	}
}

// check adds a worker when the sweep has stalled, and re-arms itself while
// connections are waiting.
func (sw *sweep[I]) check() {
	if sw.next.Load() >= int64(len(sw.conns)) {
		return
	}
	f := sw.finished.Load()
	if f == sw.last {
		for {
			live := sw.live.Load()
			if live == 0 {
				return // the last worker has left
			}
			if sw.live.CompareAndSwap(live, live+1) {
				go sw.work()
				break
			}
		}
	}
	sw.last = f
	sw.timer.Reset(sweepStallCheck)
}
