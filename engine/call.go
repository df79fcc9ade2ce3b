package engine

import "strings"

// Call is one tool call: the tool's name, its arguments as given, and what
// is read from them once, when the call comes in (NewCall): the shell
// command, the first path value and the working directory. Every reader
// (the engine, redaction, the approval cards, "always allow") takes these
// from the Call instead of reading the arguments again, so they all see the
// same command and path.
//
// A Call is immutable: NewCall reads everything eagerly, and nothing is
// filled in later. The decision log re-evaluates shadow decisions on
// another goroutine with the same Request, so a value computed on first use
// would be a data race. Treat Args as read-only too.
type Call struct {
	tool       string
	args       map[string]any
	command    string
	commandErr *ArgError
	path0      PathValue   // the first path value found, when npaths > 0
	paths      []PathValue // the others: most calls have one path value or none
	npaths     int
	firstPath  string
	workdir    string
	bothKeys   bool
	hasPath    bool
	hasWorkdir bool
}

// NewCall reads the call of tool with args: its command (ShellCommand),
// its first path value (FirstPathValue) and its working directory.
func NewCall(tool string, args map[string]any) Call {
	c := Call{tool: tool, args: args, hasWorkdir: hasWorkdir(args)}
	c.command, c.commandErr = readCommand(args)
	_, hasCommand := args["command"]
	_, hasCmd := args["cmd"]
	c.bothKeys = hasCommand && hasCmd
	c.collectPathValues()
	c.firstPath, c.hasPath = c.firstOf()
	if wd, ok := args["workdir"].(string); ok {
		c.workdir = strings.TrimSpace(wd)
	}
	return c
}

// Tool is the tool's name, as given.
func (c Call) Tool() string { return c.tool }

// Args are the arguments as given; nil for a call with none. Read-only.
func (c Call) Args() map[string]any { return c.args }

// Command is the command of the call as the engine matches it (tool_args
// command, else cmd; an argv array joined with shell quoting; an unreadable
// value stands as shell.UnknownMark), or "" when it names none. It is read
// whatever the tool, so that a card can show it.
func (c Call) Command() string { return c.command }

// CommandError is CheckShellArgs of the arguments: an *ArgError naming
// the argument (command or cmd) that holds no command the engine can read,
// else nil.
func (c Call) CommandError() error {
	if c.commandErr == nil {
		return nil
	}
	return c.commandErr
}

// HasBothCommandKeys reports whether the arguments hold both command and
// cmd (either may be null).
func (c Call) HasBothCommandKeys() bool { return c.bothKeys }

// PathValue is one path value of a call's arguments and the key it is
// under (a value nested deeper than MaxArgDepth stands as an unknown
// path, under the key of the object or list that holds it).
type PathValue struct {
	Key, Value string
}

// NumPaths is how many path values the arguments hold, at any depth (as
// visitObject finds them: stripped, unexpanded); Path(i) is the i-th, in
// no set order. The first is kept in the Call itself so that a call with
// one path value allocates nothing.
func (c Call) NumPaths() int { return c.npaths }

// Path is the i-th path value, 0 <= i < NumPaths().
func (c Call) Path(i int) PathValue {
	if i == 0 {
		return c.path0
	}
	return c.paths[i-1]
}

// firstOf is FirstPathValue of the arguments, without its walk when the
// path values already say it: FirstPathValue visits the same values in a
// set order, never deeper, so with no path value there is none, and when
// the one path value is a string right under its key, it is that one.
func (c *Call) firstOf() (string, bool) {
	switch {
	case c.npaths == 0:
		return "", false
	case c.npaths == 1:
		if s, ok := c.args[c.path0.Key].(string); ok && strings.TrimSpace(s) == c.path0.Value {
			return c.path0.Value, true
		}
	}
	return FirstPathValue(c.args)
}

// collectPathValues reads the path values of c's arguments.
func (c *Call) collectPathValues() {
	visitObject(c.args, isPathValue, func(k, v string) bool {
		if c.npaths == 0 {
			c.path0 = PathValue{Key: k, Value: v}
		} else {
			c.paths = append(c.paths, PathValue{Key: k, Value: v})
		}
		c.npaths++
		return true
	}, 0)
}

// FirstPath is the first path value of the arguments, as "always allow"
// records it (FirstPathValue), and whether there is one.
func (c Call) FirstPath() (string, bool) { return c.firstPath, c.hasPath }

// Workdir is the stripped tool_args.workdir when it is a string, else "".
func (c Call) Workdir() string { return c.workdir }

// HasWorkdir reports whether the arguments name a working directory
// (workdir or cwd), whatever its value.
func (c Call) HasWorkdir() bool { return c.hasWorkdir }

// Summary is the one line that stands for the call on a card or in a log:
// its command, else its first path value, else "".
func (c Call) Summary() string {
	if c.command != "" {
		return c.command
	}
	return c.firstPath
}
