package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store/auth"
)

// HubPrincipal is who is on the other end of a websocket: the principal
// REST and JSON-RPC know (its role decides whether it may connect: agents,
// which ask and never answer, and unknown roles may not; its channels and
// sessions limit the asks it sees and may answer) and how it connected.
type HubPrincipal struct {
	auth.Principal
	// Bearer is true when the request was authenticated by an
	// "Authorization: Bearer" token rather than a browser session cookie.
	// Only such clients may connect without an Origin header.
	Bearer bool
	// Valid reports whether the credential the client connected with still
	// holds: the token not revoked, the session not ended or expired. The
	// hub asks before every answer and drops clients for which it turns
	// false. Nil means the credential never ends.
	Valid func() bool
}

// stillValid reports whether p's credential still holds.
func (p HubPrincipal) stillValid() bool { return p.Valid == nil || p.Valid() }

// HubAuthenticator authenticates a websocket request before the upgrade.
type HubAuthenticator interface {
	Authenticate(r *http.Request) (HubPrincipal, bool)
}

// HubAuthFunc adapts a function to HubAuthenticator.
type HubAuthFunc func(r *http.Request) (HubPrincipal, bool)

// Authenticate calls f.
func (f HubAuthFunc) Authenticate(r *http.Request) (HubPrincipal, bool) { return f(r) }

// wsClient is one connection. Only the hub goroutine touches send (and
// closes it); only writePump writes to conn.
type wsClient struct {
	hub       *Hub
	conn      *websocket.Conn
	send      chan *websocket.PreparedMessage
	principal HubPrincipal
	// filter is principal's channels and sessions: the events it is sent.
	filter approval.Filter
}

// ServeHTTP is GET /ws: it authenticates, checks the role and the Origin,
// and only then upgrades.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		wsError(w, http.StatusMethodNotAllowed, "method_not_allowed", "use GET")
		return
	}
	p, ok := h.auth.Authenticate(r)
	if !ok {
		wsError(w, http.StatusUnauthorized, "unauthorized", "a session cookie or bearer token is required")
		return
	}
	if !service.Allowed(p.Role, service.RightApprove) {
		wsError(w, http.StatusForbidden, "forbidden", "this role may not receive approvals")
		return
	}
	if !h.originAllowed(r, p) {
		wsError(w, http.StatusForbidden, "forbidden_origin", "the Origin of this request is not allowed")
		return
	}
	if !h.waitRunning(h.opts.WriteWait) {
		wsError(w, http.StatusServiceUnavailable, "unavailable", "the websocket hub is not running")
		return
	}
	up := h.upgrader
	// Checked above with the principal in hand; repeated so the upgrader can
	// never be left open by a future edit.
	up.CheckOrigin = func(r *http.Request) bool { return h.originAllowed(r, p) }
	conn, err := up.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader has answered with an error status
	}
	c := &wsClient{hub: h, conn: conn, send: make(chan *websocket.PreparedMessage, h.opts.SendBuffer), principal: p, filter: p.ApprovalFilter()}
	select {
	case h.register <- c:
	case <-h.stopped:
		conn.Close()
		return
	}
	go c.writePump()
	c.readPump()
}

// waitRunning waits up to d for Run to start, which covers a request that
// arrives just as the server starts; it is false once Run has ended.
func (h *Hub) waitRunning(d time.Duration) bool {
	select {
	case <-h.stopped:
		return false
	default:
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-h.running:
		return true
	case <-t.C:
		return false
	}
}

// originAllowed is the explicit Origin check: a browser's Origin must name
// this server's host or one of the configured origins. No Origin at all is
// a non-browser client, allowed only with a bearer token.
func (h *Hub) originAllowed(r *http.Request, p HubPrincipal) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return p.Bearer && strings.HasPrefix(strings.ToLower(r.Header.Get("Authorization")), "bearer ")
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	self := u.Scheme + "://" + u.Host
	for _, a := range h.opts.AllowedOrigins {
		if strings.EqualFold(strings.TrimRight(a, "/"), self) {
			return true
		}
	}
	return false
}

// wsError answers a refused upgrade in the API's error shape.
func wsError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	var body struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	body.Error.Code, body.Error.Message = code, msg
	json.NewEncoder(w).Encode(body)
}

// writePump is the connection's only writer: queued messages and pings.
func (c *wsClient) writePump() {
	ping := time.NewTicker(c.hub.opts.PingPeriod)
	defer func() {
		ping.Stop()
		c.conn.Close()
	}()
	for {
		select {
		case msg, ok := <-c.send:
			c.conn.SetWriteDeadline(time.Now().Add(c.hub.opts.WriteWait))
			if !ok {
				c.conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, ""))
				return
			}
			if err := c.conn.WritePreparedMessage(msg); err != nil {
				return
			}
		case <-ping.C:
			c.conn.SetWriteDeadline(time.Now().Add(c.hub.opts.WriteWait))
			if err := c.conn.WriteMessage(websocket.PingMessage, nil); err != nil {
				return
			}
		}
	}
}

// readPump reads the client's messages until the connection fails or falls
// silent for PongWait, then unregisters it.
func (c *wsClient) readPump() {
	ctx, cancel := context.WithCancel(context.Background())
	defer func() {
		cancel()
		select {
		case c.hub.unregister <- c:
		case <-c.hub.stopped:
		}
		c.conn.Close()
	}()
	c.conn.SetReadLimit(c.hub.opts.MaxMessageSize)
	c.conn.SetReadDeadline(time.Now().Add(c.hub.opts.PongWait))
	c.conn.SetPongHandler(func(string) error {
		return c.conn.SetReadDeadline(time.Now().Add(c.hub.opts.PongWait))
	})
	for {
		kind, data, err := c.conn.ReadMessage()
		if err != nil {
			return
		}
		if !c.principal.stillValid() {
			// Revoked or signed out: this connection answers nothing more.
			return
		}
		if kind != websocket.TextMessage {
			c.reply(errorMsg("", "bad_request", "messages are JSON text"))
			continue
		}
		c.reply(c.handle(ctx, data))
	}
}

// reply hands a message for this client to the hub goroutine, which owns
// the queue.
func (c *wsClient) reply(msg *websocket.PreparedMessage) {
	select {
	case c.hub.direct <- directMsg{c: c, msg: msg}:
	case <-c.hub.stopped:
	}
}

type inMsg struct {
	Type    string          `json:"type"`
	ID      string          `json:"id"`
	Choice  approval.Choice `json:"choice"`
	Comment string          `json:"comment"`
	// TTLSeconds is how long an allow_for answer's grant holds; nil when
	// not given.
	TTLSeconds *int `json:"ttl_seconds,omitempty"`
}

type decidedMsg struct {
	Type     string            `json:"type"`
	ID       string            `json:"id"`
	Approval approval.Approval `json:"approval"`
}

type errMsg struct {
	Type    string `json:"type"`
	ID      string `json:"id,omitempty"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

func errorMsg(id, code, message string) *websocket.PreparedMessage {
	return prepare(errMsg{Type: MsgError, ID: id, Code: code, Message: message})
}

// handle answers one client message.
func (c *wsClient) handle(ctx context.Context, data []byte) *websocket.PreparedMessage {
	var in inMsg
	if err := json.Unmarshal(data, &in); err != nil {
		return errorMsg("", "bad_request", "invalid JSON: "+err.Error())
	}
	if in.Type != MsgDecide {
		return errorMsg(in.ID, "bad_request", "unknown message type "+quote(in.Type))
	}
	if in.ID == "" {
		return errorMsg("", "bad_request", "id is required")
	}
	// The same use case as REST and JSON-RPC: the same checks of who may
	// answer which ask with which choice, and the same refusals.
	ttl, err := service.TTLSeconds(in.TTLSeconds)
	if err != nil {
		return decideError(in.ID, err)
	}
	a, err := c.hub.approvals.DecideFor(ctx, c.principal.Principal, in.ID, in.Choice, ttl, in.Comment)
	if err != nil {
		return decideError(in.ID, err)
	}
	return prepare(decidedMsg{Type: MsgDecided, ID: a.ID, Approval: shownApproval(a)})
}

// decideError answers a failed approval.decide with the server's one
// classification of the error (service.Classify): its code and message.
func decideError(id string, err error) *websocket.PreparedMessage {
	e := service.Classify(err)
	if e.Code == service.CodeInternal {
		return errorMsg(id, e.Code, "the answer could not be saved; the approval is still pending")
	}
	return errorMsg(id, e.Code, e.Message)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
