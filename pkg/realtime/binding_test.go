package realtime_test

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"sync"
	"testing"

	"stitchkit.dev/stitchkit/pkg/realtime"
)

// ownedTransport is a connection the application owns: it counts the
// subscriptions made on it and would notice any attempt to end it.
type ownedTransport struct {
	mu        sync.Mutex
	connected bool
	inbound   map[*func(realtime.Inbound)]struct{}
	changes   int
}

func (o *ownedTransport) Connected() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.connected
}

func (o *ownedTransport) Subscribe(fn func(realtime.Inbound)) func() {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := &fn
	o.inbound[k] = struct{}{}
	return func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		delete(o.inbound, k)
	}
}

func (o *ownedTransport) OnConnectionChange(func(bool)) func() {
	o.mu.Lock()
	o.changes++
	o.mu.Unlock()
	return func() {
		o.mu.Lock()
		o.changes--
		o.mu.Unlock()
	}
}

func (o *ownedTransport) Send(context.Context, string, json.RawMessage) error { return nil }

func (o *ownedTransport) SendWithAck(context.Context, string, json.RawMessage) (realtime.Reply, error) {
	return realtime.Reply{Ack: json.RawMessage(`{"n":1}`)}, nil
}

func methods(t reflect.Type) []string {
	var out []string
	for i := range t.NumMethod() {
		out = append(out, t.Method(i).Name)
	}
	return out
}

// TestBindingHasNoLifecycle (research surfaces §6, 72): a bound client
// exposes connected state, subscribe, emit, request-with-ack and the
// connection-change and rejection observers, and no way to connect or
// disconnect; binding and unbinding an application's connection leaves it
// as it was, with none of the binding's subscriptions left. Only the
// client Dial made owns its connection (Close).
func TestBindingHasNoLifecycle(t *testing.T) {
	want := []string{"Connected", "Emit", "On", "OnConnectionChange", "OnRejected", "Request"}
	if got := methods(reflect.TypeFor[realtime.Binding]()); !slices.Equal(got, want) {
		t.Fatalf("Binding has %v, want exactly %v", got, want)
	}
	lifecycle := func(name string) bool {
		return slices.Contains([]string{"Close", "Connect", "Disconnect", "Dial", "Open", "Reconnect", "Shutdown"}, name)
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[*realtime.Bound](), reflect.TypeFor[realtime.Transport]()} {
		for _, m := range methods(typ) {
			if lifecycle(m) {
				t.Errorf("%v has %s: a binding must not own the connection", typ, m)
			}
		}
	}
	if !slices.Contains(methods(reflect.TypeFor[*realtime.Client]()), "Close") {
		t.Error("*realtime.Client, which owns its connection, has no Close")
	}

	tr := &ownedTransport{connected: true, inbound: map[*func(realtime.Inbound)]struct{}{}}
	b := realtime.Bind(tr, chatContract(t), nil)
	if _, err := b.On("message", func(context.Context, realtime.Args) (any, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	unsubChange := b.OnConnectionChange(func(bool) {})
	if ack, err := b.Request(ctx5(t), 0, "say", map[string]any{"text": "hi"}); err != nil || string(ack) != `{"n":1}` {
		t.Fatalf("request: %s %v", ack, err)
	}
	unsubChange()
	b.Unbind()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if !tr.connected || len(tr.inbound) != 0 || tr.changes != 0 {
		t.Fatalf("after Unbind: connected %v, %d inbound and %d change subscriptions left", tr.connected, len(tr.inbound), tr.changes)
	}
}
