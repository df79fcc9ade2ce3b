package pg

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// Channels toolgate notifies on. A payload is short (an id or a version);
// a subscriber re-reads the tables for the rest.
const (
	ChannelPolicy    = "toolgate_policy"
	ChannelApprovals = "toolgate_approvals"
	ChannelTokens    = "toolgate_tokens"
	ChannelSessions  = "toolgate_sessions"
	// ChannelGrants carries a notice each time a grant is added or
	// revoked, so that every replica reloads its live grants
	// (docs/grants.md#storage).
	ChannelGrants = "toolgate_grants"
)

// Reconnect backoff of the Listener: doubling from the first to the last,
// with jitter.
const (
	listenBackoffMin = 100 * time.Millisecond
	listenBackoffMax = 5 * time.Second
)

// Listener is the one LISTEN connection of a process. It dispatches each
// notification to the subscribers of its channel, in order, from its own
// goroutine; it reconnects with backoff when the connection is lost, and
// every time it has (re)established LISTEN on a channel it calls that
// channel's resync callbacks, so that a subscriber re-reads the tables and
// nothing sent while it was not listening is lost. It is safe for
// concurrent use.
//
// It is a small loop of its own rather than github.com/jackc/pgxlisten,
// whose reconnect delay is fixed and which cannot add a channel to a live
// connection; here the backoff grows, and Subscribe works at any time.
type Listener struct {
	conf      *pgx.ConnConfig
	log       *slog.Logger
	opTimeout time.Duration

	mu        sync.Mutex
	pingEvery time.Duration
	subs      map[string][]*subscription
	// live are the channels LISTENed on over the current connection.
	live map[string]bool
	// wake interrupts a wait so that a newly subscribed channel is LISTENed.
	wake chan struct{}

	connected  atomic.Bool
	pid        atomic.Uint32
	reconnects atomic.Int64
}

type subscription struct {
	fn     func(payload string)
	resync func()
}

// listenPingEvery is how long the Listener waits for a notification before
// it checks that its connection still answers: a peer gone without a word
// (a partition) would otherwise leave it waiting forever, deaf.
const listenPingEvery = 10 * time.Second

func newListener(conf *pgx.ConnConfig, log *slog.Logger, opTimeout time.Duration) *Listener {
	return &Listener{conf: conf, log: log, opTimeout: opTimeout, pingEvery: listenPingEvery,
		subs: map[string][]*subscription{}, live: map[string]bool{}, wake: make(chan struct{}, 1)}
}

// Subscribe makes fn receive the payload of every notification on channel
// and resync (may be nil) run each time LISTEN on channel is established:
// soon after Subscribe when connected, and after every reconnect. Both run
// on the Listener's goroutine and must not block for long. unsubscribe
// stops both.
func (l *Listener) Subscribe(channel string, fn func(payload string), resync func()) (unsubscribe func()) {
	s := &subscription{fn: fn, resync: resync}
	l.mu.Lock()
	l.subs[channel] = append(l.subs[channel], s)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		list := l.subs[channel]
		for i, x := range list {
			if x == s {
				l.subs[channel] = append(list[:i:i], list[i+1:]...)
				return
			}
		}
	}
}

// Connected reports whether the listening connection is up.
func (l *Listener) Connected() bool { return l.connected.Load() }

// Watch subscribes to channel at once and returns run, which calls
// changed on every notification on channel and after every (re)connect of
// the Listener (one may have been missed) until ctx ends, then
// unsubscribes and returns ctx's error. changed runs on run's goroutine,
// one call at a time; signals that arrive during a call fold into one
// more call, so a slow reader never holds up the Listener.
func (l *Listener) Watch(ctx context.Context, channel string, changed func()) (run func() error) {
	signal := make(chan struct{}, 1)
	poke := func() { Poke(signal) }
	unsubscribe := l.Subscribe(channel, func(string) { poke() }, poke)
	return func() error {
		defer unsubscribe()
		for {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-signal:
				changed()
			}
		}
	}
}

// Poke sends on signal, a channel of one slot, unless a send is already
// waiting there: signals that come before the reader wakes fold into one.
func Poke(signal chan<- struct{}) {
	select {
	case signal <- struct{}{}:
	default:
	}
}

// WaitConnected waits until the Listener is connected or ctx ends, and
// reports whether it is connected.
func (l *Listener) WaitConnected(ctx context.Context) bool {
	for !l.Connected() {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(10 * time.Millisecond):
		}
	}
	return true
}

// Reconnects counts the times the listening connection was lost or could
// not be made (for metrics).
func (l *Listener) Reconnects() int64 { return l.reconnects.Load() }

// PID is the server process id of the listening connection, 0 while there
// is none: what pg_terminate_backend takes to cut it (a test of a store's
// resync after a reconnect).
func (l *Listener) PID() uint32 { return l.pid.Load() }

// run connects, listens and dispatches until ctx ends.
func (l *Listener) run(ctx context.Context) {
	backoff := listenBackoffMin
	for ctx.Err() == nil {
		conn, err := pgx.ConnectConfig(ctx, l.conf)
		if err == nil {
			backoff = listenBackoffMin
			err = l.serve(ctx, conn)
			l.connected.Store(false)
			l.pid.Store(0)
			closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = conn.Close(closeCtx)
			cancel()
		}
		if ctx.Err() != nil {
			return
		}
		l.reconnects.Add(1)
		l.log.Warn("pg listener: connection lost, reconnecting", "err", err, "in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff + rand.N(backoff/2)):
		}
		backoff = min(2*backoff, listenBackoffMax)
	}
}

// serve runs one connection: LISTEN on every subscribed channel not yet
// listened on, resync their subscribers, wait for a notification or a new
// subscription, repeat. It returns when the connection fails.
func (l *Listener) serve(ctx context.Context, conn *pgx.Conn) error {
	l.mu.Lock()
	clear(l.live)
	l.mu.Unlock()
	l.pid.Store(conn.PgConn().PID())
	for {
		if err := l.listenNew(ctx, conn); err != nil {
			return err
		}
		l.connected.Store(true)
		n, err := l.wait(ctx, conn)
		if err != nil {
			return err
		}
		if n != nil {
			l.dispatch(n.Channel, n.Payload)
		}
	}
}

// listenNew LISTENs on the subscribed channels the connection does not yet
// listen on, then runs their resync callbacks.
func (l *Listener) listenNew(ctx context.Context, conn *pgx.Conn) error {
	l.mu.Lock()
	var todo []string
	for ch, list := range l.subs {
		if !l.live[ch] && len(list) > 0 {
			todo = append(todo, ch)
		}
	}
	l.mu.Unlock()
	for _, ch := range todo {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
			return err
		}
		l.mu.Lock()
		l.live[ch] = true
		subs := append([]*subscription(nil), l.subs[ch]...)
		l.mu.Unlock()
		for _, s := range subs {
			if s.resync != nil {
				s.resync()
			}
		}
	}
	return nil
}

// wait returns the next notification, or nil without error when a new
// subscription interrupted the wait or pingEvery passed and the connection
// answered a ping.
func (l *Listener) wait(ctx context.Context, conn *pgx.Conn) (*pgNotification, error) {
	l.mu.Lock()
	every := l.pingEvery
	l.mu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, every)
	defer cancel()
	woken := make(chan struct{})
	stopWatch := make(chan struct{})
	defer close(stopWatch)
	go func() {
		select {
		case <-l.wake:
			close(woken)
			cancel()
		case <-stopWatch:
		}
	}()
	n, err := conn.WaitForNotification(wctx)
	if err == nil {
		return &pgNotification{Channel: n.Channel, Payload: n.Payload}, nil
	}
	if ctx.Err() != nil || conn.IsClosed() {
		return nil, err
	}
	select {
	case <-woken:
		return nil, nil
	default:
	}
	if wctx.Err() == nil {
		return nil, err
	}
	pctx, pcancel := context.WithTimeout(ctx, l.opTimeout)
	defer pcancel()
	return nil, conn.Ping(pctx)
}

type pgNotification struct{ Channel, Payload string }

// dispatch calls the subscribers of channel with payload.
func (l *Listener) dispatch(channel, payload string) {
	l.mu.Lock()
	subs := append([]*subscription(nil), l.subs[channel]...)
	l.mu.Unlock()
	for _, s := range subs {
		s.fn(payload)
	}
}
