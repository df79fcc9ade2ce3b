package engine

import (
	"testing"

	"github.com/toolgate/toolgate/engine/shell"
)

func TestNewCallReadsOnce(t *testing.T) {
	cases := []struct {
		note      string
		tool      string
		args      map[string]any
		command   string
		path      string
		workdir   string
		hasWD     bool
		summary   string
		remembers string
	}{
		{note: "a shell command, stripped", tool: "bash", args: map[string]any{"command": "  ls -la \n"}, command: "ls -la", summary: "ls -la", remembers: "ls -la"},
		{note: "cmd when there is no command", tool: "bash", args: map[string]any{"cmd": "make"}, command: "make", summary: "make", remembers: "make"},
		{note: "a null command is no command: cmd is read", tool: "bash", args: map[string]any{"command": nil, "cmd": "make"}, command: "make", summary: "make", remembers: "make"},
		{note: "an argv is joined with quoting", tool: "bash", args: map[string]any{"command": []any{"rm", "-rf", "my dir"}}, command: "rm -rf 'my dir'", summary: "rm -rf 'my dir'", remembers: "rm -rf 'my dir'"},
		{note: "an unreadable command stands as unknown and is not remembered", tool: "bash", args: map[string]any{"command": 42.0}, command: shell.UnknownMark, summary: shell.UnknownMark},
		{note: "workdir is stripped (and is a path value)", tool: "bash", args: map[string]any{"command": "ls", "workdir": " /tmp "}, command: "ls", path: "/tmp", workdir: "/tmp", hasWD: true, summary: "ls", remembers: "ls"},
		{note: "a cwd that is no string names a workdir but is not read", tool: "bash", args: map[string]any{"command": "ls", "cwd": 3.0}, command: "ls", hasWD: true, summary: "ls", remembers: "ls"},
		{note: "a path tool: path keys first", tool: "read_file", args: map[string]any{"zz": "/b", "path": "/a"}, path: "/a", summary: "/a", remembers: "/a"},
		{note: "a path tool with a command argument still remembers its path", tool: "write_file", args: map[string]any{"command": "x", "path": "/a"}, command: "x", path: "/a", summary: "x", remembers: "/a"},
		{note: "no arguments", tool: "read_file", args: nil},
		{note: "one path value under a list", tool: "read_file", args: map[string]any{"paths": []any{" /l "}}, path: "/l", summary: "/l", remembers: "/l"},
		{note: "one path value in a nested object", tool: "read_file", args: map[string]any{"opts": map[string]any{"path": "/o"}}, path: "/o", summary: "/o", remembers: "/o"},
		{note: "a URL in a shell command is a path value, not remembered for a shell tool", tool: "bash", args: map[string]any{"command": "curl https://example.com/x"}, command: "curl https://example.com/x", path: "?", summary: "curl https://example.com/x", remembers: "curl https://example.com/x"},
		{note: "a path in a list of objects", tool: "mcp__fs__read", args: map[string]any{"files": []any{map[string]any{"path": "/n"}}}, path: "/n", summary: "/n", remembers: "/n"},
		{note: "a value nested too deep is no first path", tool: "read_file", args: map[string]any{"a": deep(MaxArgDepth + 2)}},
		{note: "another tool remembers nothing but shows its path", tool: "some_tool", args: map[string]any{"file": "/etc/hosts"}, path: "/etc/hosts", summary: "/etc/hosts"},
	}
	for _, c := range cases {
		call := NewCall(c.tool, c.args)
		p, hasP := call.FirstPath()
		if want, ok := FirstPathValue(c.args); p != want || hasP != ok {
			t.Errorf("%s: the call's first path %q/%v is not FirstPathValue's %q/%v", c.note, p, hasP, want, ok)
		}
		_, remembered := Remembered(&Request{Call: call})
		if c.path == "?" { // whatever FirstPathValue says (checked above)
			c.path = p
		}
		if call.Tool() != c.tool || call.Command() != c.command || p != c.path || call.Workdir() != c.workdir ||
			call.HasWorkdir() != c.hasWD || call.Summary() != c.summary || remembered != c.remembers {
			t.Errorf("%s: got command %q path %q workdir %q/%v summary %q remembers %q", c.note,
				call.Command(), p, call.Workdir(), call.HasWorkdir(), call.Summary(), remembered)
		}
		if got, want := call.CommandError(), CheckShellArgs(c.args); (got == nil) != (want == nil) || got != nil && got.Error() != want.Error() {
			t.Errorf("%s: the call's command error %v is not CheckShellArgs' %v", c.note, got, want)
		}
		if call.Command() != ShellCommand(c.args) {
			t.Errorf("%s: the call's command %q is not ShellCommand's %q", c.note, call.Command(), ShellCommand(c.args))
		}
	}
}

// deep is an object holding a path n objects down.
func deep(n int) map[string]any {
	m := map[string]any{"path": "/deep"}
	for range n {
		m = map[string]any{"x": m}
	}
	return m
}

// BenchmarkNewCall measures reading a call once at the door.
func BenchmarkNewCall(b *testing.B) {
	for _, c := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"shell", "bash", map[string]any{"command": "git status --short"}},
		{"shell with a URL", "bash", map[string]any{"command": `curl -H "Authorization: Bearer abc" https://example.com/x?token=1`}},
		{"path", "write_file", map[string]any{"path": "/ws/a.go", "content": "package a"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = NewCall(c.tool, c.args)
			}
		})
	}
}
