// Package natsbroker is a [realtime.Broker] over NATS: it lets several
// instances of a realtime server share rooms and broadcasts, so that an
// event emitted to a room on one instance reaches the room's members
// connected to any instance.
//
// Start with [Connect], and give the broker to every server of the
// instance:
//
//	b, err := natsbroker.Connect("nats://127.0.0.1:4222", nil)
//	if err != nil { … }
//	defer b.Close()
//	srv, err := realtime.NewServer(contract, &realtime.Options[User]{Broker: b})
//
// Each topic of the server (one per room with local members, one for
// broadcasts) is one NATS subscription; subjects are
// "<prefix>.<base64url(topic)>", so any room name is a valid subject.
// NATS delivers at most once and keeps no history: a frame published
// while an instance is disconnected from NATS does not reach it.
//
// An outage is never silent: while the connection is down, Publish and
// Subscribe fail at once (and the server turns that into a
// SERVICE_UNAVAILABLE error from Emit or Join), and [Options.OnError]
// hears the disconnect. Subscriptions survive a reconnect: nats.go
// re-establishes them, so room membership needs no rejoin.
package natsbroker

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// DefaultSubjectPrefix starts every subject when Options.SubjectPrefix is
// empty.
const DefaultSubjectPrefix = "stitchkit.rt"

// ErrUnavailable is wrapped by Publish and Subscribe errors while the
// NATS connection is down.
var ErrUnavailable = errors.New("natsbroker: NATS connection unavailable")

// Options configures a broker; nil means defaults.
type Options struct {
	// SubjectPrefix starts every subject (default "stitchkit.rt"). Give
	// each application its own when they share a NATS server.
	SubjectPrefix string
	// OnError hears what no caller would: the connection going down or
	// coming back (with Connect), and messages NATS dropped because this
	// instance could not keep up.
	OnError func(error)
	// FlushTimeout bounds the round trip that makes a new subscription
	// live before Subscribe returns (default 2 s).
	FlushTimeout time.Duration
	// Buffer is how many received messages may wait for delivery to local
	// connections (default 4096); beyond it NATS drops and OnError hears
	// of it.
	Buffer int
}

// Broker is a realtime.Broker over one NATS connection. It is safe for
// concurrent use.
type Broker struct {
	nc      *nats.Conn
	ownsNC  bool
	prefix  string
	flush   time.Duration
	onError func(error)
	ch      chan *nats.Msg
	stop    chan struct{}
	done    chan struct{}

	mu     sync.RWMutex
	subs   map[*nats.Subscription]func([]byte)
	closed bool
}

// Connect connects to NATS at url and returns a broker that owns the
// connection (Close closes it). The connection reconnects forever, and
// buffers nothing while reconnecting (so a publish during an outage
// fails instead of being held back); natsOpts are applied after those
// defaults.
func Connect(url string, opts *Options, natsOpts ...nats.Option) (*Broker, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	report := func(err error) {
		if o.OnError != nil {
			o.OnError(err)
		}
	}
	all := []nats.Option{
		nats.Name("stitchkit realtime"),
		nats.MaxReconnects(-1),
		nats.ReconnectBufSize(-1),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			report(fmt.Errorf("%w: disconnected: %v", ErrUnavailable, err))
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			report(fmt.Errorf("natsbroker: reconnected to %s", nc.ConnectedUrlRedacted()))
		}),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			report(fmt.Errorf("natsbroker: %w", err))
		}),
	}
	nc, err := nats.Connect(url, append(all, natsOpts...)...)
	if err != nil {
		return nil, fmt.Errorf("natsbroker: %w", err)
	}
	b, err := New(nc, opts)
	if err != nil {
		nc.Close()
		return nil, err
	}
	b.ownsNC = true
	return b, nil
}

// New returns a broker on an existing connection, which the caller keeps
// owning. Configure it with nats.ReconnectBufSize(-1) so that publishes
// fail during an outage rather than wait in a buffer (Publish checks the
// connection first either way), and route its error handlers to your
// logs.
func New(nc *nats.Conn, opts *Options) (*Broker, error) {
	if nc == nil {
		return nil, errors.New("natsbroker: New needs a connection")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.SubjectPrefix == "" {
		o.SubjectPrefix = DefaultSubjectPrefix
	}
	if o.FlushTimeout <= 0 {
		o.FlushTimeout = 2 * time.Second
	}
	if o.Buffer <= 0 {
		o.Buffer = 4096
	}
	b := &Broker{nc: nc, prefix: o.SubjectPrefix, flush: o.FlushTimeout, onError: o.OnError,
		ch: make(chan *nats.Msg, o.Buffer), stop: make(chan struct{}), done: make(chan struct{}), subs: map[*nats.Subscription]func([]byte){}}
	go b.dispatch()
	return b, nil
}

// Conn returns the NATS connection.
func (b *Broker) Conn() *nats.Conn { return b.nc }

// Subject returns the NATS subject of a topic.
func (b *Broker) Subject(topic string) string {
	return b.prefix + "." + base64.RawURLEncoding.EncodeToString([]byte(topic))
}

// Publish publishes msg on the topic's subject. While the connection is
// down it fails with ErrUnavailable.
func (b *Broker) Publish(ctx context.Context, topic string, msg []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if b.isClosed() {
		return fmt.Errorf("%w: broker closed", ErrUnavailable)
	}
	if !b.nc.IsConnected() {
		return fmt.Errorf("%w: %s", ErrUnavailable, b.nc.Status())
	}
	if err := b.nc.Publish(b.Subject(topic), msg); err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return nil
}

// Subscribe subscribes deliver to the topic and waits (FlushTimeout) until
// the NATS server has the subscription, so that a publish from any
// instance after Subscribe returns is delivered.
func (b *Broker) Subscribe(topic string, deliver func([]byte)) (func() error, error) {
	if b.isClosed() {
		return nil, fmt.Errorf("%w: broker closed", ErrUnavailable)
	}
	if !b.nc.IsConnected() {
		return nil, fmt.Errorf("%w: %s", ErrUnavailable, b.nc.Status())
	}
	b.mu.Lock()
	sub, err := b.nc.ChanSubscribe(b.Subject(topic), b.ch)
	if err != nil {
		b.mu.Unlock()
		return nil, fmt.Errorf("natsbroker: subscribe: %w", err)
	}
	// NATS limits a channel subscription by the channel; the per
	// subscription pending limits would drop earlier than the channel.
	_ = sub.SetPendingLimits(-1, -1)
	b.subs[sub] = deliver
	b.mu.Unlock()
	unsubscribe := func() error {
		b.mu.Lock()
		_, live := b.subs[sub]
		delete(b.subs, sub)
		b.mu.Unlock()
		if !live {
			return nil
		}
		if err := sub.Unsubscribe(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) && !errors.Is(err, nats.ErrBadSubscription) {
			return fmt.Errorf("natsbroker: unsubscribe: %w", err)
		}
		return nil
	}
	if err := b.nc.FlushTimeout(b.flush); err != nil {
		_ = unsubscribe()
		return nil, fmt.Errorf("%w: subscribe: %v", ErrUnavailable, err)
	}
	return unsubscribe, nil
}

// dispatch delivers received messages, one at a time, to their
// subscriber.
func (b *Broker) dispatch() {
	defer close(b.done)
	for {
		select {
		case <-b.stop:
			return
		case msg := <-b.ch:
			b.mu.RLock()
			deliver := b.subs[msg.Sub]
			b.mu.RUnlock()
			if deliver != nil {
				b.safely(deliver, msg.Data)
			}
		}
	}
}

func (b *Broker) safely(deliver func([]byte), data []byte) {
	defer func() {
		if p := recover(); p != nil && b.onError != nil {
			b.onError(fmt.Errorf("natsbroker: delivery panicked: %v", p))
		}
	}()
	deliver(data)
}

func (b *Broker) isClosed() bool {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.closed
}

// Close unsubscribes everything, stops delivering, and closes the
// connection if Connect made it.
func (b *Broker) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	subs := make([]*nats.Subscription, 0, len(b.subs))
	for s := range b.subs {
		subs = append(subs, s)
	}
	clear(b.subs)
	b.mu.Unlock()
	var errs []error
	for _, s := range subs {
		if err := s.Unsubscribe(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) && !errors.Is(err, nats.ErrBadSubscription) {
			errs = append(errs, err)
		}
	}
	if b.ownsNC {
		b.nc.Close()
	}
	// b.ch is never closed: a subscription whose Unsubscribe failed could
	// still send on it. The dispatcher stops instead.
	close(b.stop)
	<-b.done
	return errors.Join(errs...)
}
