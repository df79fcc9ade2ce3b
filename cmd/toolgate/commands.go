package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// requestTimeout bounds a command's exchange with the server.
const requestTimeout = 30 * time.Second

// commandAnswer is the body of POST /api/v1/commands.
type commandAnswer struct {
	OK      bool     `json:"ok"`
	Output  string   `json:"output"`
	Methods []string `json:"methods"`
}

// runPermissions is `toolgate permissions [<level> <tool>[(<pattern>)]]`:
// the spec's /permissions (section 6), its text printed as the TUI does.
func runPermissions(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	c, rest, code := parseConn("permissions", args, stderr, getenv)
	if code != exitOK {
		return code
	}
	return runCommand(c, strings.TrimSpace("/permissions "+strings.Join(rest, " ")), stdout, stderr)
}

// runAddDir is `toolgate add-dir <path>`: the spec's /add-dir (section 7).
// A relative path is made absolute here, against the directory the person
// typed it in, since the server's working directory means nothing to them.
func runAddDir(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	c, rest, code := parseConn("add-dir", args, stderr, getenv)
	if code != exitOK {
		return code
	}
	path := strings.Join(rest, " ")
	if strings.TrimSpace(path) == "" {
		fmt.Fprintln(stderr, "toolgate add-dir: 路径不能为空。用法：toolgate add-dir <path> (the path is empty)")
		return exitError
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return failed(stderr, "toolgate add-dir", err)
	}
	warnNotADir(abs, stderr)
	return runCommand(c, "/add-dir "+abs, stdout, stderr)
}

// warnNotADir warns, without stopping, when the directory being trusted is
// not a directory on this machine: a typo would otherwise be trusted
// silently (the server may run elsewhere, so it is only a warning).
func warnNotADir(abs string, stderr io.Writer) {
	switch fi, err := os.Stat(abs); {
	case err != nil:
		fmt.Fprintf(stderr, "toolgate add-dir: warning: %s does not exist on this machine; trusting it anyway\n", abs)
	case !fi.IsDir():
		fmt.Fprintf(stderr, "toolgate add-dir: warning: %s is a file, not a directory; trusting it anyway\n", abs)
	}
}

// parseConn parses the connection flags of a command; the rest are its
// arguments.
func parseConn(name string, args []string, stderr io.Writer, getenv func(string) string) (conn, []string, int) {
	var c conn
	fs := flag.NewFlagSet("toolgate "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	addConnFlags(fs, &c, getenv)
	if err := fs.Parse(args); err != nil {
		return c, nil, exitError
	}
	return c, fs.Args(), exitOK
}

// runCommand posts one command line and prints its output, or the
// server's message (the spec's text for a bad command) on stderr.
func runCommand(c conn, text string, stdout, stderr io.Writer) int {
	token, err := c.resolve()
	if err != nil {
		return failed(stderr, "toolgate", err)
	}
	body, _ := json.Marshal(map[string]string{"text": text})
	data, err := post(c, token, "/api/v1/commands", body, requestTimeout)
	if err != nil {
		return printError(stderr, err)
	}
	var out commandAnswer
	if err := json.Unmarshal(data, &out); err != nil {
		return failed(stderr, "toolgate: the server's answer is not a command result", err)
	}
	fmt.Fprint(stdout, out.Output)
	if !strings.HasSuffix(out.Output, "\n") {
		fmt.Fprintln(stdout)
	}
	if !out.OK {
		return exitError
	}
	return exitOK
}

// printError prints a failed exchange: the server's own message for an
// API error, else what went wrong.
func printError(stderr io.Writer, err error) int {
	var se *statusError
	if errors.As(err, &se) {
		fmt.Fprintf(stderr, "toolgate: %s\n", se.msg)
		return exitError
	}
	return failed(stderr, "toolgate", err)
}

// evaluateOptions are the flags of `toolgate evaluate`.
type evaluateOptions struct {
	conn
	tool      string
	args      argList
	channel   string
	workspace string
	explain   bool
	json      bool
}

// argList collects --arg KEY=VALUE flags: each value is a string.
type argList map[string]string

func (a argList) String() string { return "" }

func (a argList) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q is not KEY=VALUE", s)
	}
	if _, dup := a[k]; dup {
		return fmt.Errorf("argument %q is given twice", k)
	}
	a[k] = v
	return nil
}

// runEvaluate is `toolgate evaluate`: one decision, from flags or from an
// evaluate request (JSON) on stdin.
func runEvaluate(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	o := evaluateOptions{args: argList{}}
	fs := flag.NewFlagSet("toolgate evaluate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addConnFlags(fs, &o.conn, getenv)
	fs.StringVar(&o.tool, "tool", "", "the tool name (without it, an evaluate request is read from stdin)")
	fs.Var(o.args, "arg", "a tool argument KEY=VALUE (a string); repeat for more")
	fs.StringVar(&o.channel, "channel", "", "channel_id")
	fs.StringVar(&o.workspace, "workspace", "", "the workspace (default: the server's)")
	fs.BoolVar(&o.explain, "explain", false, "also print the steps the engine took")
	fs.BoolVar(&o.json, "json", false, "print the server's JSON answer as it is")
	if err := fs.Parse(args); err != nil {
		return exitError
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "toolgate evaluate: unexpected argument %q\n", fs.Arg(0))
		return exitError
	}
	body, err := evaluateBody(o, stdin)
	if err != nil {
		return failed(stderr, "toolgate evaluate", err)
	}
	token, err := o.resolve()
	if err != nil {
		return failed(stderr, "toolgate", err)
	}
	data, err := post(o.conn, token, "/api/v1/evaluate", body, requestTimeout)
	if err != nil {
		return printError(stderr, err)
	}
	if o.json {
		fmt.Fprintf(stdout, "%s\n", strings.TrimSpace(string(data)))
		return exitOK
	}
	return printDecision(data, stdout, stderr)
}

// evaluateBody is the request: from the flags, or stdin as it is (the
// server checks it).
func evaluateBody(o evaluateOptions, stdin io.Reader) ([]byte, error) {
	if o.tool == "" {
		if len(o.args) > 0 || o.channel != "" || o.workspace != "" {
			return nil, errors.New("--arg, --channel and --workspace need --tool")
		}
		data, err := io.ReadAll(io.LimitReader(stdin, maxBody+1))
		if err != nil {
			return nil, err
		}
		if len(data) > maxBody {
			return nil, fmt.Errorf("the request on stdin is larger than %d bytes", maxBody)
		}
		return data, nil
	}
	return json.Marshal(evaluateRequest{ToolName: o.tool, ToolArgs: o.args, ChannelID: o.channel,
		Workspace: o.workspace, Explain: o.explain})
}

// evaluateRequest is the evaluate request of `toolgate evaluate --tool`
// (fields in the order encoding/json wrote the map it replaces).
type evaluateRequest struct {
	ChannelID string  `json:"channel_id,omitempty"`
	Explain   bool    `json:"explain,omitempty"`
	ToolArgs  argList `json:"tool_args"`
	ToolName  string  `json:"tool_name"`
	Workspace string  `json:"workspace,omitempty"`
}

// decision is the part of an evaluate answer printed.
type decision struct {
	Level         string            `json:"level"`
	MatchedRule   *string           `json:"matched_rule"`
	Reason        string            `json:"reason"`
	ExternalPaths []string          `json:"external_paths"`
	Trace         []json.RawMessage `json:"trace"`
}

// printDecision prints a decision for a person: the level, then the rule,
// the reason, any external paths and any trace.
func printDecision(data []byte, stdout, stderr io.Writer) int {
	var d decision
	if err := json.Unmarshal(data, &d); err != nil {
		return failed(stderr, "toolgate: the server's answer is not a decision", err)
	}
	rule := "-"
	if d.MatchedRule != nil {
		rule = *d.MatchedRule
	}
	fmt.Fprintf(stdout, "%s\nrule: %s\nreason: %s\n", d.Level, rule, d.Reason)
	if len(d.ExternalPaths) > 0 {
		fmt.Fprintf(stdout, "external paths: %s\n", strings.Join(d.ExternalPaths, ", "))
	}
	for _, step := range d.Trace {
		fmt.Fprintf(stdout, "  %s\n", step)
	}
	return exitOK
}
