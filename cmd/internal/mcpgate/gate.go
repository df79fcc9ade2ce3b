// Package mcpgate stands between an MCP client and an MCP server: every
// tools/call request is put to a Decider first, and only an allowed one
// reaches the server; a refused one is answered as a tool result with
// isError and the reason, which the model reads. Every other message
// passes through byte for byte, but for the answers to tools/list, which
// leave out the tools the Decider hides. The judge (judge.go) makes every
// such decision and rewrite for both transports: Gate relays the stdio
// transport (one JSON-RPC message per line), Proxy the Streamable HTTP
// one (http.go). It owns the relays and their fail-closed reading of
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

// Gate is one relay over stdio.
type Gate struct {
	Decider Decider
	Log     *slog.Logger

	toClient lockedWriter
	toServer lockedWriter
	judge    *judge
	wg       sync.WaitGroup
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
//
// When the server's output ends first (it crashed or exited), Run returns
// at once, the calls being decided cancelled, without waiting for the
// client's input: nothing can answer the calls the server was given, and
// the caller's exit closes the client's side, which is how the client
// learns of a server's end without a gate. Waiting on would leave the
// client waiting forever for those answers.
func (g *Gate) Run(ctx context.Context, client io.Reader, toClient io.Writer, server io.Reader, toServer io.Writer) error {
	g.toClient.w, g.toServer.w = toClient, toServer
	g.judge = newJudge(g.Decider, g.Log)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fromServer := make(chan error, 1)
	go func() { fromServer <- g.serverToClient(ctx, server) }()
	fromClient := make(chan error, 1)
	go func() { fromClient <- g.clientToServer(ctx, client) }()
	var err error
	select {
	case err = <-fromClient:
	case err = <-fromServer:
		cancel()
		g.wg.Wait()
		return err
	}
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

// fromClient handles one line of the client as the judge says.
func (g *Gate) fromClient(ctx context.Context, line []byte) error {
	st := g.judge.read(ctx, "", line)
	switch {
	case st.call != nil:
		g.decide(line, st.call)
		return nil
	case st.answer != nil:
		return g.toClient.line(st.answer)
	case st.forward:
		return g.toServer.line(line)
	}
	return nil
}

// decide has the judge decide one call, in its own goroutine so that
// other messages flow while a person answers.
func (g *Gate) decide(line []byte, c *call) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		forward, answer := g.judge.decide(c)
		switch {
		case forward:
			g.toServer.line(line)
		case answer != nil:
			g.toClient.line(answer)
		}
	}()
}

// serverToClient passes the server's messages on, filtering the answers
// to tools/list.
func (g *Gate) serverToClient(ctx context.Context, server io.Reader) error {
	sc := bufio.NewScanner(server)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		line := sc.Bytes()
		if out, ok := g.judge.filter(ctx, "", line); ok {
			line = out
		}
		if err := g.toClient.line(line); err != nil {
			return err
		}
	}
	return sc.Err()
}
