// Package mcpgate stands between an MCP client and an MCP server that speak
// the stdio transport (one JSON-RPC message per line): every tools/call
// request is put to a Decider first, and only an allowed one reaches the
// server; a refused one is answered as a tool result with isError and the
// reason, which the model reads. Every other message passes through byte
// for byte, but for the answers to tools/list, which leave out the tools
// the Decider hides. It owns the relay and its fail-closed reading of
// messages; it does not own the policy, how a decision is asked for (the
// toolgate CLI asks the server's /api/v1/check) or the server's process.
package mcpgate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
)

// Verdict is a Decider's answer for one call.
type Verdict struct {
	Allow bool
	// Reason says why, for a refused call the model reads it.
	Reason string
}

// Decider decides the tool calls of one MCP server.
type Decider interface {
	// Decide decides a call of the server's tool with its arguments (raw
	// JSON, "{}" when the call has none). It waits for a person when the
	// policy asks, and returns when ctx ends (the client cancelled the
	// call): the answer is then not used. It must fail closed: an error
	// is a refusal with its reason.
	Decide(ctx context.Context, tool string, args json.RawMessage) Verdict
	// Hidden reports whether every call of the tool is refused, so that
	// tools/list leaves it out.
	Hidden(ctx context.Context, tool string) bool
}

// maxLine bounds one message; a longer line is refused (the server is
// never sent what the gate could not read).
const maxLine = 16 << 20

// Gate is one relay.
type Gate struct {
	Decider Decider
	Log     *slog.Logger

	toClient lockedWriter
	toServer lockedWriter

	mu      sync.Mutex
	calls   map[string]context.CancelFunc // tools/call requests being decided, by id
	listIDs map[string]bool               // tools/list requests whose answer is filtered
	wg      sync.WaitGroup
}

// lockedWriter writes whole lines from several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) line(b []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.w.Write(b); err != nil {
		return err
	}
	_, err := l.w.Write([]byte{'\n'})
	return err
}

// Run relays until the client's input ends (then the server's input is
// closed by the caller) and the server's output ends. client and server
// are the two sides' output; toClient and toServer their input.
func (g *Gate) Run(ctx context.Context, client io.Reader, toClient io.Writer, server io.Reader, toServer io.Writer) error {
	if g.Log == nil {
		g.Log = slog.New(slog.DiscardHandler)
	}
	g.toClient.w, g.toServer.w = toClient, toServer
	g.calls, g.listIDs = map[string]context.CancelFunc{}, map[string]bool{}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fromServer := make(chan error, 1)
	go func() { fromServer <- g.serverToClient(ctx, server) }()
	err := g.clientToServer(ctx, client)
	g.wg.Wait() // calls being decided finish (or are cancelled) first
	if c, ok := toServer.(io.Closer); ok {
		c.Close()
	}
	if serr := <-fromServer; err == nil {
		err = serr
	}
	return err
}

// clientToServer reads the client's messages: tools/call is decided,
// tools/list remembered, a cancellation of a call being decided ends its
// decision, the rest goes on unchanged.
func (g *Gate) clientToServer(ctx context.Context, client io.Reader) error {
	sc := bufio.NewScanner(client)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		line := bytes.Clone(sc.Bytes())
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err := g.fromClient(ctx, line); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			g.toClient.line(parseError("a message is longer than the gate reads"))
		}
		return fmt.Errorf("reading the client: %w", err)
	}
	return nil
}

// fromClient handles one line of the client.
func (g *Gate) fromClient(ctx context.Context, line []byte) error {
	msg, err := readMessage(line)
	switch {
	case errors.Is(err, errBatch):
		// A batch is passed on only when it holds no call to decide.
		if batchHasCall(line) {
			return g.toClient.line(invalidRequest(nil, "a batch with tools/call is refused; send each call on its own"))
		}
		return g.toServer.line(line)
	case err != nil:
		// What the gate cannot read is never passed on: the server might
		// read it as a call.
		g.Log.Warn("mcp: unreadable message refused", "err", err)
		return g.toClient.line(parseError("the gate could not read the message: " + err.Error()))
	}
	switch msg.method {
	case "tools/call":
		if msg.id == nil {
			// A call sent as a notification gets no answer; it is not
			// run either.
			return nil
		}
		g.decide(ctx, line, msg)
		return nil
	case "tools/list":
		if msg.id != nil {
			g.mu.Lock()
			g.listIDs[string(msg.id)] = true
			g.mu.Unlock()
		}
	case "notifications/cancelled":
		if id, ok := cancelledID(msg.params); ok && g.cancel(id) {
			return nil // the server never saw the call
		}
	}
	return g.toServer.line(line)
}

// decide asks the Decider about one call, in its own goroutine so that
// other messages flow while a person answers.
func (g *Gate) decide(ctx context.Context, line []byte, msg message) {
	tool, args, err := callOf(msg.params)
	if err != nil {
		g.toClient.line(invalidRequest(msg.id, err.Error()))
		return
	}
	key := string(msg.id)
	callCtx, cancel := context.WithCancel(ctx)
	g.mu.Lock()
	if _, dup := g.calls[key]; dup {
		g.mu.Unlock()
		cancel()
		g.toClient.line(invalidRequest(msg.id, "a call with this id is being decided"))
		return
	}
	g.calls[key] = cancel
	g.mu.Unlock()
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		v := g.Decider.Decide(callCtx, tool, args)
		cancelled := callCtx.Err() != nil
		g.mu.Lock()
		_, live := g.calls[key]
		delete(g.calls, key)
		g.mu.Unlock()
		cancel()
		if !live || cancelled {
			return // cancelled by the client, or the gate is closing: no answer is due
		}
		if !v.Allow {
			g.Log.Info("mcp: call refused", "tool", tool, "reason", v.Reason)
			g.toClient.line(refusal(msg.id, v.Reason))
			return
		}
		g.toServer.line(line)
	}()
}

// cancel ends the decision of a call being decided; it reports whether
// there was one.
func (g *Gate) cancel(id json.RawMessage) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	c, ok := g.calls[string(id)]
	if ok {
		delete(g.calls, string(id))
		c()
	}
	return ok
}

// serverToClient passes the server's messages on, filtering the answers
// to tools/list.
func (g *Gate) serverToClient(ctx context.Context, server io.Reader) error {
	sc := bufio.NewScanner(server)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		line := sc.Bytes()
		if out, ok := g.filterList(ctx, line); ok {
			line = out
		}
		if err := g.toClient.line(line); err != nil {
			return err
		}
	}
	return sc.Err()
}

// filterList leaves out of a tools/list answer the tools the Decider
// hides; ok is false for any other message.
func (g *Gate) filterList(ctx context.Context, line []byte) ([]byte, bool) {
	msg, err := readMessage(line)
	if err != nil || msg.id == nil || msg.method != "" {
		return nil, false
	}
	g.mu.Lock()
	listed := g.listIDs[string(msg.id)]
	delete(g.listIDs, string(msg.id))
	g.mu.Unlock()
	if !listed {
		return nil, false
	}
	out, changed, err := withoutHidden(line, func(name string) bool { return g.Decider.Hidden(ctx, name) })
	if err != nil || !changed {
		return nil, false
	}
	return out, true
}
