package realtime

import (
	"context"
	"errors"
	"sync"
)

// Broker carries room and broadcast frames between the instances of an
// application, so that an event emitted to a room on one instance reaches
// the room's members on every instance. A [Server] publishes each room or
// broadcast frame once and subscribes to the topics its own connections
// need; it delivers to local connections only what comes back from the
// broker, so a frame published on one instance reaches every instance
// through the same path.
//
// Topics are opaque strings chosen by the server (they contain the
// contract name and the room name, which may be any string); a broker maps
// them to its own naming. Messages are complete wire frames.
//
// The default is an in-process broker ([NewMemoryBroker]); package
// natsbroker spans instances over NATS.
type Broker interface {
	// Publish sends msg to every subscriber of topic on every instance,
	// this one included. An error means the frame may not have reached
	// other instances (the broker is unavailable, for instance); it is
	// returned to the caller of Emit, never swallowed.
	Publish(ctx context.Context, topic string, msg []byte) error
	// Subscribe calls deliver with every message published on topic until
	// the returned function is called. When Subscribe returns, messages
	// published afterwards on any instance are delivered. deliver must not
	// block for long; it is called from one goroutine per broker.
	Subscribe(topic string, deliver func(msg []byte)) (unsubscribe func() error, err error)
}

// ErrBrokerClosed is returned by a closed [MemoryBroker].
var ErrBrokerClosed = errors.New("realtime: broker closed")

// MemoryBroker is the in-process [Broker]: Publish delivers synchronously
// to the subscribers of this process. Servers sharing one MemoryBroker
// behave like instances sharing a NATS server; the zero value is not
// usable, call [NewMemoryBroker].
type MemoryBroker struct {
	mu     sync.RWMutex
	subs   map[string]map[*memorySub]struct{}
	closed bool
}

type memorySub struct{ deliver func([]byte) }

// NewMemoryBroker returns an empty in-process broker.
func NewMemoryBroker() *MemoryBroker {
	return &MemoryBroker{subs: map[string]map[*memorySub]struct{}{}}
}

// Publish delivers msg to the topic's subscribers before it returns.
func (b *MemoryBroker) Publish(ctx context.Context, topic string, msg []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b.mu.RLock()
	if b.closed {
		b.mu.RUnlock()
		return ErrBrokerClosed
	}
	// Copy so that a deliver function may subscribe or unsubscribe.
	subs := make([]*memorySub, 0, len(b.subs[topic]))
	for s := range b.subs[topic] {
		subs = append(subs, s)
	}
	b.mu.RUnlock()
	for _, s := range subs {
		s.deliver(msg)
	}
	return nil
}

// Subscribe registers deliver for topic.
func (b *MemoryBroker) Subscribe(topic string, deliver func([]byte)) (func() error, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, ErrBrokerClosed
	}
	s := &memorySub{deliver: deliver}
	if b.subs[topic] == nil {
		b.subs[topic] = map[*memorySub]struct{}{}
	}
	b.subs[topic][s] = struct{}{}
	var once sync.Once
	return func() error {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			delete(b.subs[topic], s)
			if len(b.subs[topic]) == 0 {
				delete(b.subs, topic)
			}
		})
		return nil
	}, nil
}

// Close makes every later Publish and Subscribe fail with
// [ErrBrokerClosed]: an outage, as far as the servers can tell.
func (b *MemoryBroker) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	return nil
}

// topics a server uses: one for everyone, one per room. The separator
// cannot occur in a contract name; room names are free text and come last.
func topicAll(contract string) string        { return "stitchkit.rt/" + contract + "/all" }
func topicRoom(contract, room string) string { return "stitchkit.rt/" + contract + "/room/" + room }
