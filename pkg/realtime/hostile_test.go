package realtime_test

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"stitchkit.dev/stitchkit/pkg/realtime"
)

// TestSlowConsumersNeverCloseAHealthyClient is the fan-out attack: three
// clients that read a frame every 20 ms and one healthy watcher, every
// one getting each broadcast, with the default limits (SendQueue,
// WriteTimeout 10 s). The broadcasts go out at 1,000 a second, far more
// bytes than the slow clients' socket buffers hold, so sweeps stall on
// their full sockets. The healthy client must receive every frame, in
// order, and never be closed; the slow ones, and only they, are closed as
// slow consumers by their own queues.
//
// What it does not show: a publisher faster than one connection's writes
// closes even a lone healthy client (its queue is bounded); the control
// subtest runs the same pace alone.
func TestSlowConsumersNeverCloseAHealthyClient(t *testing.T) {
	// The short form (what go test runs) is a second and a half of
	// broadcasts per subtest; STITCHKIT_HOSTILE_LONG=1 runs 20 s.
	frames := 1500
	if os.Getenv("STITCHKIT_HOSTILE_LONG") != "" {
		frames = 20000
	}
	// The control: the same pace with no slow consumer, so a failure
	// below is theirs, not the pace's.
	t.Run("control", func(t *testing.T) { fanOut(t, 0, frames) })
	t.Run("3 slow consumers", func(t *testing.T) { fanOut(t, 3, frames) })
}

func fanOut(t *testing.T, nslow, frames int) {
	h := newHarness(t, chatContract(t), &realtime.Options[string]{PingInterval: -1})
	var slow []*websocket.Conn
	for range nslow {
		ws := h.raw(t)
		slow = append(slow, ws)
		// A slow consumer: a frame every 20 ms, so its socket drains a
		// little and fills again, again and again.
		go func() {
			for {
				if _, _, err := ws.ReadMessage(); err != nil {
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	healthy := h.raw(t)
	var got atomic.Int64
	sent := make([]atomic.Int64, frames) // unix ns each broadcast was emitted
	var maxLag atomic.Int64
	ended := make(chan error, 1)
	go func() {
		for {
			_, data, err := healthy.ReadMessage()
			if err != nil {
				ended <- err
				return
			}
			want := fmt.Sprintf(`"from":"%d"`, got.Load())
			if !strings.Contains(string(data), want) {
				ended <- fmt.Errorf("frame %d out of order: %.80s", got.Load(), data)
				return
			}
			if lag := time.Now().UnixNano() - sent[got.Load()].Load(); lag > maxLag.Load() {
				maxLag.Store(lag)
			}
			got.Add(1)
		}
	}()
	waitFor(t, func() bool { return h.srv.Stats().Connections == nslow+1 })
	g0 := runtime.NumGoroutine()
	text := strings.Repeat("x", 4<<10) // 1,500 frames: 6 MiB per slow socket
	start := time.Now()
	// 1,000 broadcasts a second: a healthy client may fall SendQueue
	// (256) frames behind only if it waits a quarter of a second for the
	// CPU.
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for i := range frames {
		<-tick.C
		sent[i].Store(time.Now().UnixNano())
		if err := h.srv.Emit(ctx5(t), "message", map[string]any{"text": text, "from": fmt.Sprint(i)}); err != nil {
			t.Fatalf("broadcast %d: %v", i, err)
		}
	}
	deadline := time.After(60 * time.Second)
	for got.Load() < int64(frames) {
		select {
		case err := <-ended:
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				t.Fatalf("the healthy client was closed with %d after %d of %d frames", ce.Code, got.Load(), frames)
			}
			t.Fatalf("the healthy client's connection ended after %d of %d frames: %v", got.Load(), frames, err)
		case <-deadline:
			t.Fatalf("the healthy client had %d of %d frames after 60 s", got.Load(), frames)
		case <-time.After(10 * time.Millisecond):
		}
	}
	elapsed := time.Since(start)
	st := h.srv.Stats()
	t.Logf("%d frames of 4 KiB to %d clients in %s: healthy got %d (longest wait %s); slow consumers closed %d; goroutines %d → %d",
		frames, nslow+1, elapsed.Round(time.Millisecond), got.Load(), time.Duration(maxLag.Load()).Round(time.Millisecond), st.SlowConsumers, g0, runtime.NumGoroutine())
	select {
	case err := <-ended:
		t.Fatalf("the healthy client's connection ended after it had every frame: %v", err)
	default:
	}
	if st.SlowConsumers != uint64(nslow) {
		t.Errorf("%d connections closed as slow consumers, want the %d slow ones", st.SlowConsumers, nslow)
	}
}
