package web

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/internal/defaults"
	"github.com/toolgate/toolgate/redact"
	"github.com/toolgate/toolgate/service"
)

// Defaults of HubOptions.
const (
	DefaultPongWait       = 60 * time.Second
	DefaultWriteWait      = 10 * time.Second
	DefaultMaxMessageSize = 8 << 10
	DefaultSendBuffer     = 64
	DefaultRecheckEvery   = 5 * time.Second
	// hubEventBuffer is the hub's own subscription buffer at the manager;
	// the hub drains it at once, so it fills only under a burst.
	hubEventBuffer = 4096
)

// Websocket message types.
const (
	MsgHello          = "hello"
	MsgPolicyChanged  = "policy.changed"
	MsgDecide         = "approval.decide"
	MsgDecided        = "approval.decided"
	MsgError          = "error"
	MsgApprovalAsked  = approval.EventRequested
	MsgApprovalClosed = approval.EventResolved
)

// HubOptions tune the websocket hub; zero values take the defaults. Tests
// shorten the durations.
type HubOptions struct {
	// PongWait is how long a connection may stay silent (no pong) before it
	// is dropped as dead.
	PongWait time.Duration
	// PingPeriod is how often the server pings; 9/10 of PongWait when zero.
	// It must be shorter than PongWait.
	PingPeriod time.Duration
	// WriteWait bounds every write; a client that cannot take a frame in
	// this time is dropped.
	WriteWait time.Duration
	// MaxMessageSize is the largest message a client may send, in bytes.
	MaxMessageSize int64
	// SendBuffer is each client's queue of outgoing messages; a client whose
	// queue is full is slow and is dropped, so it never holds up the others.
	SendBuffer int
	// AllowedOrigins are extra origins ("https://host:port") a browser may
	// connect from, besides the server's own host.
	AllowedOrigins []string
	// RecheckEvery is how often the hub checks that every client's token or
	// session still holds (sessions expire and sign out without telling the
	// hub); Recheck checks at once.
	RecheckEvery time.Duration
	Logger       *slog.Logger
}

func (o *HubOptions) fill() {
	defaults.Positive(&o.PongWait, DefaultPongWait)
	if o.PingPeriod <= 0 || o.PingPeriod >= o.PongWait {
		o.PingPeriod = o.PongWait * 9 / 10
	}
	defaults.Positive(&o.WriteWait, DefaultWriteWait)
	defaults.Positive(&o.MaxMessageSize, DefaultMaxMessageSize)
	defaults.Positive(&o.SendBuffer, DefaultSendBuffer)
	defaults.Positive(&o.RecheckEvery, DefaultRecheckEvery)
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// Hub pushes approval events and policy changes to connected browsers and
// takes their answers. One goroutine (Run) owns the set of clients; every
// other goroutine talks to it over channels.
type Hub struct {
	// approvals lists and answers asks through the use cases REST and
	// JSON-RPC call, so every door refuses the same answers the same way.
	approvals *service.Approvals
	// events is the manager whose events the hub pushes.
	events   *approval.Manager
	auth     HubAuthenticator
	opts     HubOptions
	upgrader websocket.Upgrader

	register   chan *wsClient
	unregister chan *wsClient
	direct     chan directMsg
	policy     chan string
	recheck    chan struct{}
	running    chan struct{} // closed when Run starts
	stopped    chan struct{} // closed when Run ends
	startOnce  sync.Once

	clients atomic.Int64
	dropped atomic.Uint64
}

// directMsg is a message for one client, such as the answer to its decide.
type directMsg struct {
	c   *wsClient
	msg *websocket.PreparedMessage
}

// NewHub returns a hub over the approval manager. Start it with Run and
// serve it at GET /ws.
func NewHub(m *approval.Manager, auth HubAuthenticator, opts HubOptions) *Hub {
	opts.fill()
	return &Hub{
		approvals: service.NewApprovals(m),
		events:    m,
		auth:      auth,
		opts:      opts,
		upgrader: websocket.Upgrader{
			ReadBufferSize:  1024,
			WriteBufferSize: 4096,
			// Idle connections hold no write buffer.
			WriteBufferPool: &sync.Pool{},
		},
		register:   make(chan *wsClient),
		unregister: make(chan *wsClient, 64),
		direct:     make(chan directMsg, 256),
		policy:     make(chan string, 16),
		recheck:    make(chan struct{}, 1),
		running:    make(chan struct{}),
		stopped:    make(chan struct{}),
	}
}

// Clients returns the number of connected clients.
func (h *Hub) Clients() int { return int(h.clients.Load()) }

// Dropped returns how many clients were dropped for being too slow.
func (h *Hub) Dropped() uint64 { return h.dropped.Load() }

// PolicyChanged tells every connected client that the policy changed, with
// its new ETag (may be empty). It never blocks; a burst of changes beyond
// the queue collapses, which is harmless since clients reload either way.
func (h *Hub) PolicyChanged(etag string) {
	select {
	case h.policy <- etag:
	default:
	}
}

// Recheck makes the hub drop, without waiting for RecheckEvery, every
// client whose token or session no longer holds. Call it when a token is
// revoked. It never blocks; checks asked for while one is pending collapse.
func (h *Hub) Recheck() {
	select {
	case h.recheck <- struct{}{}:
	default:
	}
}

// dropInvalid removes and disconnects the clients whose credential no
// longer holds.
func (h *Hub) dropInvalid(clients map[*wsClient]struct{}) {
	for c := range clients {
		if !c.principal.stillValid() {
			h.opts.Logger.Info("web: closed a websocket whose token or session ended", "user", c.principal.Name)
			h.remove(clients, c)
			c.conn.Close()
		}
	}
}

// Run owns the clients until ctx ends or the approval manager shuts down,
// then closes every connection. Call it once.
func (h *Hub) Run(ctx context.Context) {
	first := false
	h.startOnce.Do(func() { first = true })
	if !first {
		return
	}
	close(h.running)
	defer close(h.stopped)
	clients := make(map[*wsClient]struct{})
	defer func() {
		for c := range clients {
			h.remove(clients, c)
		}
	}()
	events, cancel := h.events.SubscribeFilter(approval.Filter{}, hubEventBuffer)
	defer func() { cancel() }()
	recheck := time.NewTicker(h.opts.RecheckEvery)
	defer recheck.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.recheck:
			h.dropInvalid(clients)
		case <-recheck.C:
			h.dropInvalid(clients)
		case c := <-h.register:
			clients[c] = struct{}{}
			h.clients.Add(1)
			h.send(clients, c, h.helloFor(c))
		case c := <-h.unregister:
			h.remove(clients, c)
		case d := <-h.direct:
			if _, ok := clients[d.c]; ok {
				h.send(clients, d.c, d.msg)
			}
		case etag := <-h.policy:
			msg := prepare(map[string]string{"type": MsgPolicyChanged, "etag": etag})
			for c := range clients {
				h.send(clients, c, msg)
			}
		case ev, ok := <-events:
			if !ok {
				if h.managerDone() {
					return
				}
				// The hub lagged and the manager dropped it: subscribe
				// again and resync every client with a fresh hello.
				h.opts.Logger.Warn("web: hub lagged behind approval events; resyncing clients")
				events, cancel = h.events.SubscribeFilter(approval.Filter{}, hubEventBuffer)
				for c := range clients {
					h.send(clients, c, h.helloFor(c))
				}
				continue
			}
			h.broadcast(clients, ev)
		}
	}
}

func (h *Hub) managerDone() bool {
	select {
	case <-h.events.Done():
		return true
	default:
		return false
	}
}

// broadcast sends an event to every client that may see it, encoding it once.
func (h *Hub) broadcast(clients map[*wsClient]struct{}, ev approval.Event) {
	var msg *websocket.PreparedMessage
	for c := range clients {
		if !c.filter.Allows(ev.Approval) {
			continue
		}
		if msg == nil {
			ev.Approval = shownApproval(ev.Approval)
			msg = prepare(ev)
		}
		h.send(clients, c, msg)
	}
}

// helloFor lists every pending ask the client may see.
func (h *Hub) helloFor(c *wsClient) *websocket.PreparedMessage {
	// List fails only for a status it does not know.
	pending, _ := h.approvals.List(c.principal.Principal, approval.StatusPending)
	return prepare(helloMsg{
		Type:    MsgHello,
		User:    c.principal.Name,
		Role:    c.principal.Role,
		Pending: shownApprovals(firstPending(pending)),
	})
}

// firstPending keeps the oldest MaxShownPending asks of a list.
func firstPending(list []approval.Approval) []approval.Approval {
	if len(list) > MaxShownPending {
		return list[:MaxShownPending]
	}
	return list
}

// shownApproval is an approval as a browser is sent it: the arguments
// with secrets masked and every hiding character made visible, like the
// pages (redact.ShownArgs); the agent's own copy is untouched.
func shownApproval(a approval.Approval) approval.Approval {
	a.Request.ToolName = redact.Visible(a.Request.ToolName)
	a.Request.ToolArgs = redact.ClipArgs(redact.ShownArgs(a.Request.ToolArgs), maxShownArg)
	a.Request.SessionID = redact.Visible(a.Request.SessionID)
	a.Request.ChannelID = redact.Visible(a.Request.ChannelID)
	a.Asked.Reason = redact.Visible(a.Asked.Reason)
	return a
}

func shownApprovals(list []approval.Approval) []approval.Approval {
	out := make([]approval.Approval, len(list))
	for i, a := range list {
		out[i] = shownApproval(a)
	}
	return out
}

type helloMsg struct {
	Type    string              `json:"type"`
	User    string              `json:"user"`
	Role    string              `json:"role"`
	Pending []approval.Approval `json:"pending"`
}

// send queues a message for one client without blocking; a client whose
// queue is full is dropped.
func (h *Hub) send(clients map[*wsClient]struct{}, c *wsClient, msg *websocket.PreparedMessage) {
	select {
	case c.send <- msg:
	default:
		h.dropped.Add(1)
		h.opts.Logger.Warn("web: dropped a slow websocket client", "user", c.principal.Name)
		h.remove(clients, c)
		// Close now rather than wait for the write deadline: the client is
		// gone for us. Close is safe alongside the pumps.
		c.conn.Close()
	}
}

// remove forgets a client and closes its queue, which ends its writePump.
func (h *Hub) remove(clients map[*wsClient]struct{}, c *wsClient) {
	if _, ok := clients[c]; !ok {
		return
	}
	delete(clients, c)
	close(c.send)
	h.clients.Add(-1)
}

// prepare encodes a message once for every client that gets it.
func prepare(v any) *websocket.PreparedMessage {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{"type":"error","code":"internal","message":"encoding failed"}`)
	}
	msg, err := websocket.NewPreparedMessage(websocket.TextMessage, b)
	if err != nil {
		panic(err) // only fails for an invalid message type
	}
	return msg
}
