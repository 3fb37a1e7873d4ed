package mount

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// TestCallContext: the context a handler gets carries its call and is its
// parent in every other respect — values, deadline, cancellation and its
// cause — also through contexts derived from it.
func TestCallContext(t *testing.T) {
	type key struct{}
	cause := errors.New("client went away")
	parent, cancel := context.WithCancelCause(context.WithValue(context.Background(), key{}, "parent value"))
	deadline := time.Now().Add(time.Hour)
	parent, cancelDeadline := context.WithDeadline(parent, deadline)
	defer cancelDeadline()

	im := NewImplementation(testGraph(t))
	bind(t, im, "tasks.purge", func(ctx context.Context, c *Call) (json.RawMessage, error) {
		if CallFrom(ctx) != c {
			t.Error("CallFrom(ctx) is not the call")
		}
		if ctx.Value(key{}) != "parent value" {
			t.Errorf("parent value: %v", ctx.Value(key{}))
		}
		if d, ok := ctx.Deadline(); !ok || !d.Equal(deadline) {
			t.Errorf("deadline %v %v", d, ok)
		}
		child, stop := context.WithCancel(ctx)
		defer stop()
		if CallFrom(child) != c {
			t.Error("CallFrom(child) is not the call")
		}
		if ctx.Err() != nil || child.Err() != nil {
			t.Error("cancelled early")
		}
		cancel(cause)
		select { // the parent's cancellation reaches a derived context
		case <-child.Done():
		case <-time.After(10 * time.Second):
			t.Error("the parent's cancellation did not reach a derived context in 10s")
			return nil, nil
		}
		if !errors.Is(ctx.Err(), context.Canceled) || context.Cause(child) != cause {
			t.Errorf("err %v, cause %v", ctx.Err(), context.Cause(child))
		}
		return nil, nil
	})
	r := newRunner(t, im, nil)
	if res := r.Endpoint("tasks", "purge").Call(parent, &Request{Source: SourceInternal}); res.Err != nil {
		t.Fatal(res.Err)
	}
	if CallFrom(parent) != nil {
		t.Error("the caller's context carries a call")
	}
}
