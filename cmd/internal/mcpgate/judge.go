package mcpgate

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
)

// judge is the one place where both transports judge messages: what the
// client sends (a tools/call is decided first, a tools/list remembered, a
// cancellation ends a decision) and the server's answers to tools/list
// (filtered). The stdio relay and the HTTP proxy differ only in how they
// move messages; every decision and rewrite is made here.
type judge struct {
	decider Decider
	log     *slog.Logger

	mu    sync.Mutex
	calls map[string]context.CancelFunc // tools/call requests being decided, by key
	lists map[string]bool               // tools/list requests whose answer is filtered, by key
	// listing counts the keys of lists per scope: with none, no message
	// of the server can answer a tools/list and filter passes it unread.
	listing map[string]int
}

func newJudge(d Decider, log *slog.Logger) *judge {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &judge{decider: d, log: log, calls: map[string]context.CancelFunc{}, lists: map[string]bool{}, listing: map[string]int{}}
}

// key names a request id within a scope: the HTTP proxy serves several
// sessions whose ids may collide, the stdio relay one (scope ""). The id
// is canonical (canonicalID), so that an answer meets its request however
// either side wrote the id.
func key(scope string, id json.RawMessage) string { return scope + "\x00" + canonicalID(id) }

// step is what a transport does with one message of the client: exactly
// one of forward, answer, call is set, or none (the message is dropped).
type step struct {
	forward bool   // pass the message on as read
	answer  []byte // answer the client instead; the message goes nowhere
	call    *call  // decide it first (see judge.decide)
	id      json.RawMessage
	list    bool // a tools/list request, whose answer is to be filtered
}

// call is a tools/call being decided.
type call struct {
	ctx    context.Context
	cancel context.CancelFunc
	key    string
	id     json.RawMessage
	tool   string
	args   json.RawMessage
}

// read judges one message of the client. A tools/call comes back as a
// call already entered among those being decided (so that a cancellation
// read next finds it); the transport then runs decide.
func (j *judge) read(ctx context.Context, scope string, line []byte) step {
	msg, err := readMessage(line)
	switch {
	case errors.Is(err, errBatch):
		// A batch is passed on only when it holds no call to decide.
		if batchHasCall(line) {
			return step{answer: invalidRequest(nil, "a batch with tools/call is refused; send each call on its own")}
		}
		return step{forward: true}
	case err != nil:
		// What the gate cannot read is never passed on: the server might
		// read it as a call.
		j.log.Warn("mcp: unreadable message refused", "err", err)
		return step{answer: parseError("the gate could not read the message: " + err.Error())}
	}
	switch msg.method {
	case "tools/call":
		if msg.id == nil {
			// A call sent as a notification gets no answer; it is not
			// run either.
			return step{}
		}
		return j.enter(ctx, scope, msg)
	case "tools/list":
		if msg.id != nil {
			j.remember(key(scope, msg.id), scope)
		}
	case "notifications/cancelled":
		if id, ok := cancelledID(msg.params); ok && j.cancel(key(scope, id)) {
			return step{} // the server never saw the call
		}
	}
	return step{forward: true, id: msg.id, list: msg.method == "tools/list"}
}

// enter reads a tools/call and enters it among the calls being decided.
func (j *judge) enter(ctx context.Context, scope string, msg message) step {
	tool, args, err := callOf(msg.params)
	if err != nil {
		return step{answer: invalidRequest(msg.id, err.Error()), id: msg.id}
	}
	c := &call{key: key(scope, msg.id), id: msg.id, tool: tool, args: args}
	c.ctx, c.cancel = context.WithCancel(ctx)
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, dup := j.calls[c.key]; dup {
		c.cancel()
		return step{answer: invalidRequest(msg.id, "a call with this id is being decided"), id: msg.id}
	}
	j.calls[c.key] = c.cancel
	return step{call: c, id: msg.id}
}

// decide asks the Decider about a call read by read. It returns forward
// when the call may reach the server, else the answer to give the client
// (a refusal the model reads); neither when the client cancelled the call
// or the gate is closing, since then no answer is due.
func (j *judge) decide(c *call) (forward bool, answer []byte) {
	v := j.decider.Decide(c.ctx, c.tool, c.args)
	cancelled := c.ctx.Err() != nil
	j.mu.Lock()
	_, live := j.calls[c.key]
	delete(j.calls, c.key)
	j.mu.Unlock()
	c.cancel()
	switch {
	case !live || cancelled:
		return false, nil
	case !v.Allow:
		j.log.Info("mcp: call refused", "tool", c.tool, "reason", v.Reason)
		return false, refusal(c.id, v.Reason)
	}
	return true, nil
}

// cancel ends the decision of a call being decided; it reports whether
// there was one.
func (j *judge) cancel(k string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	c, ok := j.calls[k]
	if ok {
		delete(j.calls, k)
		c()
	}
	return ok
}

// filter rewrites one message of the server: the answer to a remembered
// tools/list leaves out the tools the Decider hides. ok is false when the
// message is to pass unchanged.
//
// Reading a message as JSON costs far more than relaying it (a 1 MiB file's
// text is read at about 150 MB/s), so filter reads only what could answer
// a pending tools/list: with none pending in the scope, nothing; else a
// message whose top-level id peekID finds, exactly, to be no pending
// one's passes unread too, and every other message is read whole.
func (j *judge) filter(ctx context.Context, scope string, line []byte) ([]byte, bool) {
	j.mu.Lock()
	none := j.listing[scope] == 0
	j.mu.Unlock()
	if none {
		return nil, false
	}
	if id, sure := peekID(line); sure && (id == nil || !j.listed(key(scope, id))) {
		return nil, false
	}
	msg, err := readMessage(line)
	if err != nil || msg.id == nil || msg.method != "" {
		return nil, false
	}
	if !j.take(key(scope, msg.id), scope) {
		return nil, false
	}
	out, changed, err := withoutHidden(line, func(name string) bool { return j.decider.Hidden(ctx, name) })
	if err != nil || !changed {
		return nil, false
	}
	return out, true
}

// remember enters a tools/list request whose answer is to be filtered.
func (j *judge) remember(k, scope string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.lists[k] {
		j.lists[k] = true
		j.listing[scope]++
	}
}

// listed reports whether a tools/list request with the key is pending.
func (j *judge) listed(k string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.lists[k]
}

// take removes a pending tools/list request; it reports whether there
// was one (its answer is then filtered).
func (j *judge) take(k, scope string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.lists[k] {
		return false
	}
	delete(j.lists, k)
	if j.listing[scope]--; j.listing[scope] <= 0 {
		delete(j.listing, scope)
	}
	return true
}

// forget drops what is remembered of a scope (an HTTP session that
// ended): its unanswered tools/list requests.
func (j *judge) forget(scope string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for k := range j.lists {
		if strings.HasPrefix(k, scope+"\x00") {
			delete(j.lists, k)
		}
	}
	delete(j.listing, scope)
}
