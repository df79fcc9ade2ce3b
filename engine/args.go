package engine

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/toolgate/toolgate/engine/shell"
	"github.com/toolgate/toolgate/policy"
)

// shellValue is the command of a shell tool call (docs/decisions.md#shell-escalation):
// tool_args.command, else tool_args.cmd, stripped. A command given as an
// array of strings is that argv, joined with shell quoting so that the
// analysis sees the same words. Any other value (a number, an object, an
// array holding a non-string) is not a command the engine can read: it
// stands as shell.UnknownMark, an unknown command that no allow rule or override
// allows; the API refuses such a call with a 400 (ShellArgsError).
func shellValue(args map[string]any) string {
	s, _ := readCommand(args)
	return s
}

// readCommand is shellValue and CheckShellArgs in one pass: the command,
// and the error that names an argument holding no readable command.
func readCommand(args map[string]any) (string, *ArgError) {
	for _, k := range commandKeys {
		v, ok := args[k]
		if !ok || v == nil {
			continue // a null command is no command, as in the reference
		}
		if s, ok := v.(string); ok {
			return strings.TrimSpace(s), nil
		}
		if s, ok := argvCommand(v); ok {
			return s, nil
		}
		return shell.UnknownMark, &ArgError{Field: k, Message: "must be a string or an array of strings (an argv), got " + jsonKind(v)}
	}
	return "", nil
}

// commandKeys are the arguments that hold a shell tool's command, in the
// order they are read.
var commandKeys = [...]string{"command", "cmd"}

// isPathKey reports whether k is a path key (policy.PathKeys).
func isPathKey(k string) bool { return policy.IsPathKey(k) }

// isPathValue reports whether a stripped, non-blank string under key k is a
// path value (policy.IsPathValue).
func isPathValue(k, v string) bool { return policy.IsPathValue(k, v) }

// MaxArgDepth is how deep path values are looked for in nested objects and
// arrays of tool_args. A value nested deeper stands as tooDeepValue, an
// unknown path: it counts as external and no override covers the call.
const MaxArgDepth = 16

// tooDeepValue stands in for the values nested deeper than MaxArgDepth.
const tooDeepValue = shell.UnknownMark + "(tool_args nested too deep)"

// visitObject walks the values of one object of the arguments at any
// depth of nested objects and arrays (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm): a string is
// passed to fn with the key of the object that holds it (strings in arrays
// count under the array's key) when keep says so; a value nested deeper
// than MaxArgDepth stands as tooDeepValue. Map order is used. It stops when
// fn returns false.
func visitObject(args map[string]any, keep func(k, v string) bool, fn func(k, v string) bool, depth int) bool {
	for k, v := range args {
		if !visitPathValue(k, v, keep, fn, depth) {
			return false
		}
	}
	return true
}

// eachKeyedString calls fn with every non-empty string value of the
// arguments (trimmed) and its key, path or not, walked as the path values
// are (visitObject).
func eachKeyedString(args map[string]any, fn func(k, v string)) {
	visitObject(args, func(string, string) bool { return true }, func(k, v string) bool { fn(k, v); return true }, 0)
}

func visitPathValue(k string, v any, keep func(k, v string) bool, fn func(k, v string) bool, depth int) bool {
	switch s := v.(type) {
	case string:
		if t := strings.TrimSpace(s); t != "" && keep(k, t) {
			return fn(k, t)
		}
	case []any:
		if depth >= MaxArgDepth {
			return fn(k, tooDeepValue)
		}
		for _, item := range s {
			if !visitPathValue(k, item, keep, fn, depth+1) {
				return false
			}
		}
	case []string:
		for _, item := range s {
			if !visitPathValue(k, item, keep, fn, depth+1) {
				return false
			}
		}
	case map[string]any:
		if depth >= MaxArgDepth {
			return fn(k, tooDeepValue)
		}
		return visitObject(s, keep, fn, depth+1)
	}
	return true
}

// appendPathValues appends every path value of a call (Call.Path),
// its ~ / $HOME expansion and the path of a file: URL when they differ. It
// takes no callback so that buf, on the caller's stack, stays there, and a
// call allocates nothing.
func appendPathValues(buf []string, c *Call, home string) []string {
	for i := range c.NumPaths() {
		p := c.Path(i)
		buf = append(buf, p.Value)
		if x := shell.ExpandHome(p.Value, home); x != p.Value {
			buf = append(buf, x)
		}
		if u, ok := fileURLPath(p.Value); ok && u != p.Value {
			buf = append(buf, u)
		}
	}
	return buf
}

// FirstPathValue returns the first path value of the arguments, as "always
// allow" records it (docs/decisions.md): the path keys in the contract's order,
// then the other keys in sorted order, each value looked into as
// visitObject does (lists, nested objects in the same order); the first
// string of a list comes first.
func FirstPathValue(args map[string]any) (string, bool) {
	var first string
	found := false
	take := func(_, v string) bool {
		if shell.HasUnknown(v) {
			return true // nothing to remember in a value nested too deep
		}
		first, found = v, true
		return false
	}
	firstInObject(args, take, 0)
	return first, found
}

// firstInObject visits the values of one object in FirstPathValue's order;
// it returns false once take has its value.
func firstInObject(args map[string]any, take func(k, v string) bool, depth int) bool {
	visit := func(k string) bool {
		v := args[k]
		if m, ok := v.(map[string]any); ok && depth < MaxArgDepth {
			return firstInObject(m, take, depth+1)
		}
		if list, ok := v.([]any); ok && depth < MaxArgDepth {
			for _, item := range list {
				if m, ok := item.(map[string]any); ok {
					if !firstInObject(m, take, depth+2) {
						return false
					}
					continue
				}
				if !visitPathValue(k, item, isPathValue, take, depth+1) {
					return false
				}
			}
			return true
		}
		return visitPathValue(k, v, isPathValue, take, depth)
	}
	for _, k := range policy.PathKeys {
		if _, ok := args[k]; ok && !visit(k) {
			return false
		}
	}
	var stack [8]string // most calls have a few keys: no allocation
	others := stack[:0]
	for k := range args {
		if !isPathKey(k) {
			others = append(others, k)
		}
	}
	slices.Sort(others)
	for _, k := range others {
		if !visit(k) {
			return false
		}
	}
	return true
}

// ShellCommand returns the command of a shell tool call as the engine
// matches it: an argv array is joined with shell quoting.
func ShellCommand(args map[string]any) string { return shellValue(args) }

// argvCommand joins a command given as an array of strings (an argv) into
// one script, each word quoted for bash (syntax.Quote) so that the analysis
// reads exactly those words. ok is false for anything else, or a word that
// cannot be quoted (a NUL byte).
func argvCommand(v any) (string, bool) {
	var words []string
	switch list := v.(type) {
	case []string:
		words = list
	case []any:
		words = make([]string, len(list))
		for i, item := range list {
			s, ok := item.(string)
			if !ok {
				return "", false
			}
			words[i] = s
		}
	default:
		return "", false
	}
	var b strings.Builder
	for i, w := range words {
		q, err := syntax.Quote(w, syntax.LangBash)
		if err != nil {
			return "", false
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(q)
	}
	return b.String(), true
}

// ArgError is a tool argument the engine cannot read, such as a command
// that is neither a string nor an array of strings. Field names the
// argument (command or cmd).
type ArgError struct {
	Field   string
	Message string
}

func (e *ArgError) Error() string { return e.Field + ": " + e.Message }

// CheckShellArgs reports, for the arguments of a shell tool, a command or
// cmd that is neither a string nor an array of strings (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm): the
// API refuses such a call with a 400 naming the field, where the engine
// alone would count it as an unknown command.
func CheckShellArgs(args map[string]any) error {
	if _, err := readCommand(args); err != nil {
		return err
	}
	return nil
}

// jsonKind names the JSON kind of a decoded value, for messages that must
// not echo the value itself.
func jsonKind(v any) string {
	switch l := v.(type) {
	case bool:
		return "a boolean"
	case float64, int, int64:
		return "a number"
	case map[string]any:
		return "an object"
	case []any:
		if len(l) == 0 {
			return "an empty array"
		}
		return "an array holding a non-string"
	}
	return "a value of another type"
}

// Remembered is what an "always allow" answer to req remembers
// (docs/decisions.md#approval-overrides-always-allow-and-add-dir): the match type and pattern of the call as the engine reads it. A
// shell tool gives its command (an argv array joined with quoting; a
// command the engine cannot read, shell.UnknownMark, gives nothing); a path tool
// gives its first path value (FirstPathValue: lists and nested objects
// too); any other tool gives "", "". policy.AlwaysAllow turns the result
// into the override.
func Remembered(req *Request) (matchType, pattern string) {
	if req == nil {
		return "", ""
	}
	switch ToolCategory(req.Call.Tool()) {
	case CategoryShell:
		if c := req.Call.Command(); c != "" && !shell.HasUnknown(c) {
			return policy.MatchCommand, c
		}
	case CategoryPath:
		if p, ok := req.Call.FirstPath(); ok {
			return policy.MatchPath, p
		}
	}
	return "", ""
}

// AlwaysAllowOverride is the approval override an "always allow" answer
// to req writes: policy.AlwaysAllow of what Remembered finds. Its errors
// are policy's: a *policy.FieldError (ErrNoTool) for a call without a
// tool name, policy.ErrNothingToRemember for one with no command or path.
func AlwaysAllowOverride(req *Request) (policy.Override, error) {
	if req == nil {
		return policy.AlwaysAllow("", "", "")
	}
	mt, pat := Remembered(req)
	return policy.AlwaysAllow(req.Call.Tool(), mt, pat)
}

// RememberAsked is what an "always allow" answer to req would write, asked
// of the engine that decides req now: when e still asks req, the override
// AlwaysAllowOverride makes of it (with its errors); otherwise the level e
// decides, and no override. The caller refuses a call that is no longer
// asked: a rule added since the ask may have decided it meanwhile, and an
// override must never widen what the policy already settled.
func (e *Engine) RememberAsked(req *Request) (policy.Override, policy.Level, error) {
	if lvl := e.Evaluate(req).Level; lvl != policy.Ask {
		return policy.Override{}, lvl, nil
	}
	o, err := AlwaysAllowOverride(req)
	return o, policy.Ask, err
}
