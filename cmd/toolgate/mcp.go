package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/toolgate/toolgate/cmd/internal/mcpgate"
)

// maxMCPWait is the longest a call waits for a person (the server's cap on
// wait_seconds).
const maxMCPWait = 600

// mcpOptions are toolgate mcp's flags.
type mcpOptions struct {
	conn
	name    string
	wait    int
	session string
	channel string
	http    httpOptions
}

// runMCP is toolgate mcp [--name NAME] -- COMMAND [ARGS...]: it starts the
// MCP server COMMAND and relays between it and the client on stdin and
// stdout, deciding every tools/call as mcp__NAME__TOOL first
// (cmd/internal/mcpgate). With --upstream URL it is the same gateway in
// front of a Streamable HTTP MCP server, serving on --listen (mcp_http.go).
func runMCP(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	var o mcpOptions
	fs := flag.NewFlagSet("toolgate mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addConnFlags(fs, &o.conn, getenv)
	fs.StringVar(&o.name, "name", "", "the server's name in tool names mcp__NAME__TOOL (default: the command's base name, or the --upstream URL's host)")
	fs.IntVar(&o.wait, "wait", maxMCPWait, "seconds a call waits for a person when the policy asks (at most 600)")
	fs.StringVar(&o.session, "session", "", "session_id of the calls (default: mcp-NAME-PID)")
	fs.StringVar(&o.channel, "channel", "", "channel_id of the calls (default: the server's)")
	addHTTPFlags(fs, &o.http)
	if err := fs.Parse(args); err != nil {
		return exitError
	}
	command := fs.Args()
	if msg := o.http.check(command); msg != "" {
		fmt.Fprintln(stderr, "toolgate mcp: "+msg)
		return exitError
	}
	if len(command) == 0 && o.http.upstream == "" {
		fmt.Fprintln(stderr, "toolgate mcp: name the MCP server to start after --, as in: toolgate mcp --name fs -- npx @modelcontextprotocol/server-filesystem DIR, or its URL with --upstream")
		return exitError
	}
	if o.wait < 0 || o.wait > maxMCPWait {
		fmt.Fprintf(stderr, "toolgate mcp: --wait must be from 0 to %d\n", maxMCPWait)
		return exitError
	}
	switch {
	case o.name != "":
	case o.http.upstream != "":
		o.name = o.http.defaultName()
	default:
		o.name = strings.TrimSuffix(filepath.Base(command[0]), filepath.Ext(command[0]))
	}
	if o.session == "" {
		o.session = fmt.Sprintf("mcp-%s-%d", o.name, os.Getpid())
	}
	token, err := o.resolve()
	if err != nil {
		return failed(stderr, "toolgate", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.http.upstream != "" {
		return serveMCPHTTP(ctx, &o, token, stderr)
	}
	return serveMCP(ctx, &o, token, command, stdin, stdout, stderr)
}

// serveMCP starts the server and runs the gate until the client is done.
func serveMCP(ctx context.Context, o *mcpOptions, token string, command []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := exec.CommandContext(ctx, command[0], command[1:]...)
	cmd.Env = upstreamEnv(os.Environ())
	cmd.Stderr = stderr
	toServer, err := cmd.StdinPipe()
	if err != nil {
		return failed(stderr, "toolgate mcp", err)
	}
	fromServer, err := cmd.StdoutPipe()
	if err != nil {
		return failed(stderr, "toolgate mcp", err)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "toolgate mcp: starting %s: %v\n", command[0], err)
		return exitError
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	gate := &mcpgate.Gate{Decider: &checkDecider{o: o, token: token}, Log: log}
	runErr := gate.Run(ctx, stdin, stdout, fromServer, toServer)
	waitErr := cmd.Wait()
	if runErr != nil && !errors.Is(runErr, os.ErrClosed) {
		fmt.Fprintf(stderr, "toolgate mcp: %v\n", runErr)
		return exitError
	}
	var exit *exec.ExitError
	if errors.As(waitErr, &exit) {
		return exit.ExitCode()
	}
	return exitOK
}

// upstreamEnv is the gateway's environment without toolgate's token: the
// MCP server is the program the gateway stands in front of, and with the
// token it could ask toolgate for decisions itself, or answer asks with a
// token that has that right.
func upstreamEnv(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		if name, _, _ := strings.Cut(kv, "="); name != "TOOLGATE_TOKEN" {
			out = append(out, kv)
		}
	}
	return out
}

// checkDecider decides through the server's /api/v1/check, waiting for a
// person when the policy asks; anything but an answer refuses the call.
type checkDecider struct {
	o     *mcpOptions
	token string
}

// Decide implements mcpgate.Decider.
func (d *checkDecider) Decide(ctx context.Context, tool string, args json.RawMessage) mcpgate.Verdict {
	body, err := json.Marshal(checkRequest{ToolName: d.toolName(tool), ToolArgs: args,
		SessionID: d.o.session, ChannelID: d.o.channel, WaitSeconds: d.o.wait})
	if err != nil {
		return mcpgate.Verdict{Reason: err.Error()}
	}
	data, err := postContext(ctx, d.o.conn, d.token, "/api/v1/check", body, time.Duration(d.o.wait)*time.Second+30*time.Second)
	if err != nil {
		return mcpgate.Verdict{Reason: err.Error()}
	}
	var out checkAnswer
	if err := json.Unmarshal(data, &out); err != nil {
		return mcpgate.Verdict{Reason: "toolgate's answer could not be read"}
	}
	switch out.Decision {
	case "allow":
		return mcpgate.Verdict{Allow: true, Reason: out.Reason}
	case "pending":
		return mcpgate.Verdict{Reason: fmt.Sprintf("no one answered within %d seconds (%s)", d.o.wait, out.Reason)}
	}
	return mcpgate.Verdict{Reason: out.refusal()}
}

// checkRequest is the /api/v1/check request of a call; its arguments go
// as the MCP client sent them, and wait_seconds even when 0 (no wait).
// Fields are in the order encoding/json wrote the map it replaces.
type checkRequest struct {
	ChannelID   string          `json:"channel_id"`
	SessionID   string          `json:"session_id"`
	ToolArgs    json.RawMessage `json:"tool_args"`
	ToolName    string          `json:"tool_name"`
	WaitSeconds int             `json:"wait_seconds"`
}

// probeRequest is the /api/v1/evaluate request Hidden sends: the tool
// with no arguments.
type probeRequest struct {
	ChannelID string          `json:"channel_id"`
	ToolArgs  json.RawMessage `json:"tool_args"`
	ToolName  string          `json:"tool_name"`
}

// checkAnswer is what the gateway reads of a /api/v1/check answer.
type checkAnswer struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	// Approval is set when the policy asked: the ask as a person (or the
	// timeout) settled it.
	Approval *struct {
		ID        string `json:"id"`
		Status    string `json:"status"`
		DecidedBy string `json:"decided_by"`
		Comment   string `json:"comment"`
	} `json:"approval"`
}

// refusal words a refused call for the model. A policy's deny gives the
// policy's reason; an ask that ended refused says how it ended, since the
// ask's own reason ("Approval required for ...") would read as if no one
// had been asked: a person's refusal names who refused and their comment,
// as the hook answers do.
func (c checkAnswer) refusal() string {
	a := c.Approval
	switch {
	case a == nil:
		return c.Reason
	case a.Status == "denied":
		msg := fmt.Sprintf("%s refused it when asked (approval %s)", a.DecidedBy, a.ID)
		if a.Comment != "" {
			msg += ": " + a.Comment
		}
		return msg
	case a.Status == "expired":
		return fmt.Sprintf("approval %s expired unanswered (%s)", a.ID, c.Reason)
	case a.Status == "cancelled":
		return fmt.Sprintf("approval %s was cancelled (the server is shutting down)", a.ID)
	}
	return c.Reason
}

// Hidden implements mcpgate.Decider: a tool whose level denies it is left
// out of tools/list. An error hides nothing; its calls are still decided.
func (d *checkDecider) Hidden(ctx context.Context, tool string) bool {
	name := d.toolName(tool)
	body, _ := json.Marshal(probeRequest{ToolName: name, ToolArgs: json.RawMessage(`{}`), ChannelID: d.o.channel})
	data, err := postContext(ctx, d.o.conn, d.token, "/api/v1/evaluate", body, requestTimeout)
	if err != nil {
		return false
	}
	var out struct {
		Level       string `json:"level"`
		MatchedRule string `json:"matched_rule"`
	}
	return json.Unmarshal(data, &out) == nil && out.Level == "deny" && strings.HasPrefix(out.MatchedRule, "tools.")
}

// toolName is the name toolgate decides a tool of this server as.
func (d *checkDecider) toolName(tool string) string { return "mcp__" + d.o.name + "__" + tool }
