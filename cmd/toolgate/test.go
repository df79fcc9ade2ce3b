package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/engine/builtin"
	"github.com/toolgate/toolgate/fsview"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/store"
)

// testCase is one line of a decisions file: a call and the level it must
// get (and, when given, the rule that must decide it).
type testCase struct {
	// Request is the call, made from the fields below once decoded.
	Request     engine.Request `json:"-"`
	ToolName    string         `json:"tool_name"`
	ToolArgs    map[string]any `json:"tool_args"`
	ChannelID   string         `json:"channel_id,omitempty"`
	Workspace   string         `json:"workspace,omitempty"`
	Scope       *engine.Scope  `json:"scope,omitempty"`
	Explain     bool           `json:"explain,omitempty"`
	Want        string         `json:"want"`
	MatchedRule string         `json:"matched_rule,omitempty"`
	Note        string         `json:"note,omitempty"`
}

// runTest is toolgate test [--config-dir DIR] [--workspace DIR] [--filesystem] [FILE]: a
// policy's CI test, run without a server. It compiles the config dir's
// policy as the server would, prints every validation problem (a rule
// example that does not hold among them), then decides each call of FILE
// (JSON lines: {"tool_name", "tool_args", "want"}) and prints each miss.
// It exits 0 when all hold and 1 on any problem or miss.
func runTest(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("toolgate test", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("config-dir", "", "the config dir whose config.yaml and builtin_rules.yaml are tested (default $JIUWENSWARM_CONFIG_DIR, else ~/.jiuwenswarm/config)")
	workspace := fs.String("workspace", "", "the workspace calls are decided in (default: the current directory)")
	lookups := fs.Bool("filesystem", false, "look at the workspace's files as the server does (symlinks resolved, bare words and globs looked up), so that the answers are the server's on this machine; without it the answers are the same on every machine")
	if err := fs.Parse(args); err != nil {
		return exitError
	}
	if fs.NArg() > 1 {
		fmt.Fprintf(stderr, "toolgate test: one decisions file at most, got %q\n", fs.Args())
		return exitError
	}
	e, problems, examples, err := compileConfigDir(*dir, *workspace, *lookups, getenv)
	if err != nil {
		return failed(stderr, "toolgate test", err)
	}
	for _, p := range problems {
		fmt.Fprintf(stdout, "problem: %s: %s\n", p.Path, p.Message)
	}
	cases, misses := 0, 0
	if fs.NArg() == 1 {
		cases, misses, err = runCases(e, fs.Arg(0), stdout)
		if err != nil {
			return failed(stderr, "toolgate test", err)
		}
	}
	fmt.Fprintf(stdout, "%d rule examples, %d problems; %d calls, %d missed\n", examples, len(problems), cases, misses)
	if len(problems) > 0 || misses > 0 {
		return exitError
	}
	return exitOK
}

// compileConfigDir compiles a config dir's policy as the server would and
// counts the rules' examples. Without lookups the engine looks at no file
// (paths are cleaned as written, so the test decides the same on every
// machine); with them it looks at the workspace as the server does.
func compileConfigDir(dir, workspace string, lookups bool, getenv func(string) string) (*engine.Engine, []policy.Problem, int, error) {
	if dir == "" {
		dir = getenv("JIUWENSWARM_CONFIG_DIR")
	}
	dir, err := store.ResolveConfigDir(dir)
	if err != nil {
		return nil, nil, 0, err
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, nil, 0, fmt.Errorf("config dir %s: not a directory", dir)
	}
	perms, builtinRules, problems, err := store.ReadPolicy(dir, builtin.Default)
	if err != nil {
		return nil, nil, 0, err
	}
	if workspace == "" {
		if workspace, err = os.Getwd(); err != nil {
			return nil, nil, 0, err
		}
	}
	home, _ := os.UserHomeDir()
	opts := engine.Options{Workspace: workspace, HomeDir: home}
	if lookups {
		opts = fsview.Lookups(opts)
	}
	e, compiled := engine.Compile(perms, builtinRules, opts)
	problems = append(problems, compiled...)
	sec := policy.DecodeSection(perms)
	examples := 0
	for _, list := range [][]policy.Rule{sec.Rules, sec.Overrides} {
		for _, r := range list {
			if r.Examples != nil {
				examples += len(r.Examples.Match) + len(r.Examples.NoMatch)
			}
		}
	}
	return e, problems, examples, nil
}

// runCases decides each call of a decisions file and prints each miss.
func runCases(e *engine.Engine, file string, stdout io.Writer) (cases, misses int, err error) {
	f, err := os.Open(file)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		c, err := decodeCase(line)
		if err != nil {
			return cases, misses, fmt.Errorf("%s:%d: %w", file, n, err)
		}
		cases++
		d := e.Evaluate(&c.Request)
		if d.Level.String() == c.Want && (c.MatchedRule == "" || c.MatchedRule == d.MatchedRule) {
			continue
		}
		misses++
		args, _ := json.Marshal(c.ToolArgs)
		fmt.Fprintf(stdout, "miss: %s:%d: %s %s: got %s (%s), want %s", file, n, c.ToolName, args, d.Level, d.MatchedRule, c.Want)
		if c.MatchedRule != "" {
			fmt.Fprintf(stdout, " (%s)", c.MatchedRule)
		}
		if c.Note != "" {
			fmt.Fprintf(stdout, " [%s]", c.Note)
		}
		fmt.Fprintln(stdout)
	}
	return cases, misses, sc.Err()
}

// decodeCase reads one line: the call, and want as a level.
func decodeCase(line []byte) (testCase, error) {
	var c testCase
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("not a call with want: %w", err)
	}
	if c.ToolName == "" {
		return c, fmt.Errorf("tool_name is required")
	}
	level, ok := policy.ParseLevel(c.Want)
	if !ok {
		return c, fmt.Errorf("want must be allow, ask or deny, not %q", c.Want)
	}
	c.Want = level.String()
	if c.ToolArgs == nil {
		c.ToolArgs = map[string]any{}
	}
	c.Request = engine.Request{Call: engine.NewCall(c.ToolName, c.ToolArgs), ChannelID: c.ChannelID,
		Workspace: c.Workspace, Scope: c.Scope, Explain: c.Explain}
	return c, nil
}
