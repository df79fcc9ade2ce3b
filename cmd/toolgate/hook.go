package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// agents are the hook routes: the name on the command line is the route's.
var agents = map[string]bool{"claude-code": true, "codex": true, "gemini": true}

// maxWait is the server's longest wait for a person (openapi.yaml: 0-600 s).
const maxWait = 600

// hookOptions are the flags of `toolgate hook`.
type hookOptions struct {
	conn
	wait        int
	printConfig bool
	command     bool
	bin         string
	// askMode is --hook-ask: wait or agent; empty leaves it to the server.
	askMode string
	// workspace pins the workspace of every call of this hook.
	workspace string
}

// runHook is `toolgate hook <agent>`: one event from stdin to the server,
// the agent's answer to stdout. Every failure exits 2 with the reason on
// stderr, which Claude Code, Codex and Gemini CLI all read as a block.
func runHook(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	var o hookOptions
	fs := flag.NewFlagSet("toolgate hook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addConnFlags(fs, &o.conn, getenv)
	fs.IntVar(&o.wait, "wait", -1, "seconds an ask waits for a person (0-600; default: the server's --hook-wait)")
	fs.BoolVar(&o.printConfig, "print-config", false, "print the agent's settings snippet for this server instead of running the hook")
	fs.BoolVar(&o.command, "command", false, "with --print-config for claude-code: the command hook instead of the http hook")
	fs.StringVar(&o.bin, "bin", "toolgate", "with --print-config: how the agent runs this command")
	fs.StringVar(&o.askMode, "hook-ask", "", "what an ask becomes: wait (for a person in toolgate, then allow or deny; the server's default) or agent (handed to the agent's own prompt: weaker, an agent in a bypass mode runs it)")
	fs.StringVar(&o.workspace, "workspace", "", "the agent's workspace, pinned (an absolute directory); default: the server's --workspace, else the session's first cwd")
	agent, err := parseAgentArgs(fs, args)
	if err != nil {
		fmt.Fprintf(stderr, "toolgate hook: %v\n", err)
		return exitBlock
	}
	if o.askMode != "" && o.askMode != "wait" && o.askMode != "agent" {
		fmt.Fprintf(stderr, "toolgate hook: --hook-ask must be wait or agent, not %q\n", o.askMode)
		return exitBlock
	}
	if o.workspace != "" && !filepath.IsAbs(o.workspace) {
		fmt.Fprintln(stderr, "toolgate hook: --workspace must be an absolute directory")
		return exitBlock
	}
	if o.wait > maxWait {
		fmt.Fprintf(stderr, "toolgate hook: --wait must be from 0 to %d\n", maxWait)
		return exitBlock
	}
	if o.printConfig {
		return printConfig(agent, o, stdout, stderr)
	}
	if err := hook(agent, o, stdin, stdout, getenv); err != nil {
		fmt.Fprintf(stderr, "toolgate: %v; the call is blocked (the hook fails closed)\n", err)
		return exitBlock
	}
	return exitOK
}

// parseAgentArgs reads `<agent> [flags]` (or the flags first).
func parseAgentArgs(fs *flag.FlagSet, args []string) (string, error) {
	var agent string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		agent, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	if agent == "" && fs.NArg() > 0 {
		agent = fs.Arg(0)
	} else if fs.NArg() > 0 {
		return "", fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if !agents[agent] {
		return "", fmt.Errorf("the agent must be claude-code, codex or gemini, not %q", agent)
	}
	return agent, nil
}

// hook posts one event and prints the answer. The answer must be a JSON
// object: anything else would be read by the agent as no decision.
func hook(agent string, o hookOptions, stdin io.Reader, stdout io.Writer, getenv func(string) string) error {
	token, err := o.resolve()
	if err != nil {
		return err
	}
	event, err := io.ReadAll(io.LimitReader(stdin, maxBody+1))
	if err != nil {
		return fmt.Errorf("reading the hook event from stdin: %w", err)
	}
	if len(event) > maxBody {
		return fmt.Errorf("the hook event is larger than %d bytes", maxBody)
	}
	query := url.Values{}
	timeout := time.Duration(maxWait+30) * time.Second
	if o.wait >= 0 {
		query.Set("wait_seconds", strconv.Itoa(o.wait))
		timeout = time.Duration(o.wait+30) * time.Second
	}
	if o.askMode != "" {
		query.Set("ask", o.askMode)
	}
	if o.workspace != "" {
		query.Set("workspace", filepath.Clean(o.workspace))
	}
	// ~ and $HOME in the agent's calls name the agent's home, not the
	// server's: send the home and user this hook runs as.
	if home := getenv("HOME"); filepath.IsAbs(home) {
		query.Set("home", filepath.Clean(home))
	}
	if user := firstNonEmpty(getenv("USER"), getenv("LOGNAME")); user != "" {
		query.Set("user", user)
	}
	path := "/api/v1/hooks/" + agent
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	answer, err := post(o.conn, token, path, event, timeout)
	if err != nil {
		return err
	}
	var obj struct{} // only read to check that the answer is a JSON object
	if err := json.Unmarshal(answer, &obj); err != nil {
		return fmt.Errorf("toolgate's answer is not a JSON object: %w", err)
	}
	_, err = stdout.Write(answer)
	return err
}

// firstNonEmpty returns the first of vs that is not empty.
func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
