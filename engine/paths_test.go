package engine

import (
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/toolgate/toolgate/engine/shell"
	"github.com/toolgate/toolgate/policy"
)

// d6Stricter names the reference cases where toolgate is stricter than the
// reference through the external-directory merge because of docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm,
// with the reason (README, "stricter than the contract").
var d6Stricter = map[string]string{
	"s11-c17-104": "D6: the shell's workdir (..) is judged as a path itself and lies outside the workspace",
}

// TestPathValuesAtAnyDepth: path values are found in nested objects and
// arrays with the same key rules, and a value nested past MaxArgDepth is an
// unknown path (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm).
func TestPathValuesAtAnyDepth(t *testing.T) {
	deep := map[string]any{"path": "/deep"}
	for range MaxArgDepth + 1 {
		deep = map[string]any{"next": deep}
	}
	cases := []struct {
		note string
		args map[string]any
		want []string
	}{
		{"flat path key", map[string]any{"path": "src/a.go"}, []string{"src/a.go"}},
		{"a slash under any key", map[string]any{"target": "/etc/x", "n": "plain"}, []string{"/etc/x"}},
		{"nested object", map[string]any{"args": map[string]any{"path": "/etc/shadow"}}, []string{"/etc/shadow"}},
		{"objects in an array", map[string]any{"edits": []any{map[string]any{"file_path": "a.go"}, map[string]any{"file_path": "/etc/b"}}}, []string{"/etc/b", "a.go"}},
		{"strings in an array count under its key", map[string]any{"paths": []any{"x/y", "z"}, "file": []any{"bare"}}, []string{"bare", "x/y"}},
		{"arrays in arrays", map[string]any{"dir": []any{[]any{"inner"}}}, []string{"inner"}},
		{"a bare word under a non-path key is no path", map[string]any{"args": map[string]any{"mode": "fast"}}, nil},
		{"too deep is unknown", deep, []string{tooDeepValue}},
		{"numbers and nulls are skipped", map[string]any{"path": 3.0, "dir": nil}, nil},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			var got []string
			call := NewCall("read_file", c.args)
			for i := range call.NumPaths() {
				got = append(got, call.Path(i).Value)
			}
			slices.Sort(got)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("PathValues: got %q, want %q", got, c.want)
			}
			buf := appendPathValues(nil, &call, "/home/u")
			slices.Sort(buf)
			if !reflect.DeepEqual(buf, c.want) {
				t.Errorf("appendPathValues: got %q, want %q", buf, c.want)
			}
		})
	}
}

// TestFirstPathValue: "always allow" takes the first path value by the
// contract's key order, then sorted keys, looking into lists and nested
// objects (service.Policy.AlwaysAllow uses it).
func TestFirstPathValue(t *testing.T) {
	cases := []struct {
		note string
		args map[string]any
		want string
		ok   bool
	}{
		{"path key first", map[string]any{"z": "/z/1", "file_path": "b.go", "path": "a.go"}, "a.go", true},
		{"a list under a path key", map[string]any{"paths": []any{"/p/1", "/p/2"}}, "/p/1", true},
		{"a list under path", map[string]any{"path": []any{"first.go", "second.go"}}, "first.go", true},
		{"nested object", map[string]any{"args": map[string]any{"path": "/n/x"}}, "/n/x", true},
		{"objects in a list", map[string]any{"edits": []any{map[string]any{"old": "a", "file_path": "e.go"}}}, "e.go", true},
		{"sorted other keys", map[string]any{"b": "/b", "a": "/a"}, "/a", true},
		{"none", map[string]any{"mode": "x"}, "", false},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			got, ok := FirstPathValue(c.args)
			if got != c.want || ok != c.ok {
				t.Errorf("got %q %v, want %q %v", got, ok, c.want, c.ok)
			}
		})
	}
}

// TestShellValueShapes: a command array is its argv, quoted so the analysis
// reads the same words; any other non-string command is unknown to the
// engine and an ArgError for the API (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm).
func TestShellValueShapes(t *testing.T) {
	cases := []struct {
		note     string
		args     map[string]any
		want     string
		errField string
	}{
		{"a string", map[string]any{"command": "  ls -la "}, "ls -la", ""},
		{"an argv", map[string]any{"command": []any{"cat", "/etc/shadow"}}, "cat /etc/shadow", ""},
		{"an argv word with blanks and quotes is one word", map[string]any{"command": []any{"rm", "-rf", "a b", "it's"}}, `rm -rf 'a b' "it's"`, ""},
		{"an argv with operators keeps them as text", map[string]any{"command": []any{"echo", "x;rm -rf /"}}, `echo 'x;rm -rf /'`, ""},
		{"an argv under cmd", map[string]any{"cmd": []any{"ls"}}, "ls", ""},
		{"command wins over cmd", map[string]any{"command": []any{"ls"}, "cmd": "rm -rf /"}, "ls", ""},
		{"null command falls back to cmd", map[string]any{"command": nil, "cmd": "ls"}, "ls", ""},
		{"a number is unknown", map[string]any{"command": 42.0, "cmd": "ls"}, shell.UnknownMark, "command"},
		{"an object is unknown", map[string]any{"command": map[string]any{"x": "rm"}}, shell.UnknownMark, "command"},
		{"an array with a number is unknown", map[string]any{"command": []any{"rm", 1.0}}, shell.UnknownMark, "command"},
		{"a NUL byte cannot be quoted", map[string]any{"cmd": []any{"rm", "a\x00b"}}, shell.UnknownMark, "cmd"},
		{"a bad cmd is named", map[string]any{"cmd": true}, shell.UnknownMark, "cmd"},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			if got := shellValue(c.args); got != c.want {
				t.Errorf("shellValue: got %q, want %q", got, c.want)
			}
			err := CheckShellArgs(c.args)
			var ae *ArgError
			switch {
			case c.errField == "" && err != nil:
				t.Errorf("CheckShellArgs: got %v, want nil", err)
			case c.errField != "" && (!errors.As(err, &ae) || ae.Field != c.errField):
				t.Errorf("CheckShellArgs: got %v, want an ArgError for %s", err, c.errField)
			}
		})
	}
}

// TestPathForms: drive-letter and UNC forms are paths before they could be
// URLs; file: URLs are paths; only network schemes are not (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm,
// D6).
func TestPathForms(t *testing.T) {
	e, _ := compileYAML(t, "schema: tiered_policy\ndefaults: {\"*\": allow}\nexternal_directory: {\"*\": ask}", "")
	cases := []struct {
		note     string
		req      *Request
		external []string
	}{
		{"C:// is a drive, not a URL", shellCall("bash", "type C://Windows/win.ini"), []string{"c:/Windows/win.ini"}},
		{"C:\\ in a path value", pathCall("read_file", `C:\Windows\win.ini`), []string{"c:/Windows/win.ini"}},
		{"C:/ in a path value", pathCall("read_file", "C:/Windows"), []string{"c:/Windows"}},
		{"UNC with backslashes", pathCall("read_file", `\\host\share\x`), []string{"//host/share/x"}},
		{"UNC with slashes", shellCall("bash", "cat //host/share/x"), []string{"//host/share/x"}},
		{"file:/// is a path", shellCall("bash", "curl file:///etc/shadow"), []string{"/etc/shadow"}},
		{"file: in a path value", pathCall("read_file", "file:///etc/shadow"), []string{"/etc/shadow"}},
		{"file://localhost", pathCall("read_file", "FILE://localhost/etc/passwd"), []string{"/etc/passwd"}},
		{"file: percent escapes", pathCall("read_file", "file:///etc/%73hadow"), []string{"/etc/shadow"}},
		{"file://host is UNC", pathCall("read_file", "file://evil/share"), []string{"//evil/share"}},
		{"an unknown scheme is a path", shellCall("bash", "cat ab://../../etc/passwd"), []string{"/ws/etc/passwd"}},
		{"https is not a path", shellCall("bash", "curl https://example.com/../../x"), nil},
		{"ssh is not a path", pathCall("read_file", "ssh://host/etc/x"), nil},
		{"git+ssh is not a path", shellCall("bash", "git clone git+ssh://host/../r"), nil},
		{"s3 is not a path", shellCall("bash", "aws s3 cp s3://b/k ./k"), nil},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			got := e.Evaluate(c.req)
			if !reflect.DeepEqual(got.ExternalPaths, c.external) {
				t.Errorf("external paths: got %q, want %q", got.ExternalPaths, c.external)
			}
			if len(c.external) > 0 && got.Level != policy.Ask {
				t.Errorf("level: got %s, want ask", got.Level)
			}
		})
	}
}

// TestReadsPathList: options that name a file listing paths are found in
// their long, short and clustered forms.
func TestReadsPathList(t *testing.T) {
	cases := []struct {
		note  string
		words []string
		file  string
		ok    bool
	}{
		{"xargs -a", []string{"xargs", "-a", "list.txt", "cat"}, "list.txt", true},
		{"xargs --arg-file=", []string{"xargs", "--arg-file=l", "rm"}, "l", true},
		{"xargs in a cluster", []string{"xargs", "-0a", "l", "rm"}, "l", true},
		{"xargs from stdin", []string{"xargs", "-n1", "echo"}, "", false},
		{"tar -T", []string{"tar", "czf", "out.tgz", "-T", "list"}, "list", true},
		{"tar old style", []string{"tar", "czfT", "out.tgz", "list"}, "out.tgz", true},
		{"tar --files-from", []string{"/usr/bin/tar", "--files-from", "l", "-cf", "x.tar"}, "l", true},
		{"tar without a list", []string{"tar", "czf", "out.tgz", "src"}, "", false},
		{"rsync --files-from", []string{"rsync", "-a", "--files-from=l", ".", "host:dst"}, "l", true},
		{"git --pathspec-from-file", []string{"git", "add", "--pathspec-from-file=l"}, "l", true},
		{"file -f", []string{"file", "-bf", "names.txt"}, "names.txt", true},
		{"file --files-from", []string{"file", "--files-from=names.txt"}, "names.txt", true},
		{"file of its operands", []string{"file", "-b", "a.txt"}, "", false},
		{"an unrelated program", []string{"cat", "-a", "x"}, "", false},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			file, ok := readsPathList(c.words)
			if file != c.file || ok != c.ok {
				t.Errorf("got %q %v, want %q %v", file, ok, c.file, c.ok)
			}
		})
	}
}

// TestAddDirOverrideWithoutWorkspace: with no workspace an /add-dir shell
// override still allows absolute words under its directory, and a relative
// word (which has no base to be judged against) is not covered.
func TestAddDirOverrideWithoutWorkspace(t *testing.T) {
	e, _ := compileYAMLOpts(t, `schema: tiered_policy
defaults: {"*": ask}
external_directory: {"*": ask, /data/t: allow}
approval_overrides:
  - {id: cli_trusted_shell_x, tools: [bash], match_type: command, pattern: 're:.*/data/t.*', action: allow, source: cli_add_dir}`, "", Options{HomeDir: "/home/u"})
	runDecisionCases(t, e, []decisionCase{
		{"an absolute word under the dir", shellCall("bash", "ls /data/t/x"), policy.Allow, "tiered_policy:approval_overrides:approval_overrides[cli_trusted_shell_x]"},
		{"a relative word beside it", shellCall("bash", "cp /data/t/x y/z"), policy.Ask, "tiered_policy:defaults.*"},
	})
}

// TestPlainProgram: a plain command's first word is taken by its base
// name (as the parsed path takes it), and a bare name as it is.
func TestPlainProgram(t *testing.T) {
	for _, c := range []struct{ note, word, want string }{
		{"a bare name", "grep", "grep"},
		{"a full path", "/usr/bin/grep", "grep"},
		{"a relative path", "./bin/tar", "tar"},
		{"a Windows executable", `C:\Git\usr\bin\grep.exe`, "grep"},
		{"a suffix alone", "grep.exe", "grep"},
	} {
		if got := plainProgram(c.word); got != c.want {
			t.Errorf("%s: plainProgram(%q) = %q, want %q", c.note, c.word, got, c.want)
		}
	}
}
