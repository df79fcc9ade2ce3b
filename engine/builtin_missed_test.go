package engine_test

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
)

// TestBuiltinRulesForMissedCategories: the built-in rules for the
// categories a held-out corpus found missing (inline interpreter code, awk
// and sed programs, find -delete over a tree, recursive Windows deletes,
// certutil decoding, killing system processes, grepping for secrets) ask
// under a policy that allows the shell outright, and leave their ordinary
// neighbours alone. Spellings are from GTFOBins' "shell", "command" and
// "file write" entries (gtfobins.github.io: python, perl, ruby, node, php,
// lua, awk, sed, find) and LOLBAS' certutil page (lolbas-project.github.io).
func TestBuiltinRulesForMissedCategories(t *testing.T) {
	perms := map[string]any{"enabled": true, "schema": "tiered_policy", "permission_mode": "normal",
		"defaults": map[string]any{"*": "allow"}, "tools": map[string]any{"bash": "allow"},
		"rules":              []any{map[string]any{"id": "py", "tools": []any{"bash"}, "pattern": "python3 *", "action": "allow"}},
		"external_directory": map[string]any{"*": "allow"}}
	e, problems := engine.Compile(perms, packageBuiltin(t), engine.Options{Workspace: "/ws", HomeDir: "/home/u"})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	caught := []struct{ rule, cmd string }{
		{"inline_code_runs_programs", `python3 -c 'import pty; pty.spawn("/bin/sh")'`},
		{"inline_code_runs_programs", `python3 -c "__import__('os').system('id')"`},
		{"inline_code_runs_programs", `python -c 'import os as o; o.system("id")'`},
		{"inline_code_runs_programs", `python3 -c 'exec(chr(105)+chr(100))'`},
		{"inline_code_runs_programs", `python3 -c 'open("x.sh","w").write("id")'`},
		{"inline_code_runs_programs", `python3 -c 'from subprocess import run; run(["id"])'`},
		{"inline_code_runs_programs", `perl -e 'exec "/bin/sh";'`},
		{"inline_code_runs_programs", "perl -e 'print `id`'"},
		{"inline_code_runs_programs", `perl -e 'open(F, ">x"); print F "y"'`},
		{"inline_code_runs_programs", `ruby -e 'exec "/bin/sh"'`},
		{"inline_code_runs_programs", `ruby -e 'File.write("x", "y")'`},
		{"inline_code_runs_programs", `node -e 'require("child_process").spawn("/bin/sh", {stdio: [0, 1, 2]})'`},
		{"inline_code_runs_programs", `node -e 'require("fs").writeFileSync("x", "y")'`},
		{"inline_code_runs_programs", `php -r 'system("id");'`},
		{"inline_code_runs_programs", `php -r 'file_put_contents("x", "y");'`},
		{"inline_code_runs_programs", `lua -e 'os.execute("/bin/sh")'`},
		{"inline_code_runs_programs", `Rscript -e 'system("id")'`},
		{"inline_code_runs_programs", `osascript -e 'do shell script "id"'`},
		{"awk_sed_run_or_write", `awk 'BEGIN {system("/bin/sh")}'`},
		{"awk_sed_run_or_write", `awk 'BEGIN { print "x" > "/tmp/y" }'`},
		{"awk_sed_run_or_write", `awk '{ print | "sh" }' cmds.txt`},
		{"awk_sed_run_or_write", `sed -n '1e id' notes.txt`},
		{"awk_sed_run_or_write", `sed 's/a/b/w out.txt' notes.txt`},
		{"awk_sed_run_or_write", `sed -n '1w /tmp/copy' notes.txt`},
		{"find_delete_tree", `find . -delete`},
		{"find_delete_tree", `find . -type f -delete`},
		{"find_delete_tree", `find ~ -mindepth 1 -delete`},
		{"find_delete_tree", `find .. -type f -exec rm -f {} +`},
		{"windows_delete_recursive", `del /s /q *`},
		{"windows_delete_recursive", `rmdir /s /q ..`},
		{"windows_delete_recursive", `Remove-Item -Recurse -Force $HOME\Documents`},
		{"windows_delete_recursive", `Remove-Item -Recurse -Force .`},
		{"windows_delete_recursive", `rd /s /q %APPDATA%`},
		{"windows_certutil_decode", `certutil -decode payload.b64 payload.exe`},
		{"windows_certutil_decode", `certutil.exe -decodehex x.hex x.bin`},
		{"shutdown_reboot", `kill -9 -1`},
		{"shutdown_reboot", `kill 1`},
		{"kill_system_processes", `killall5 -9`},
		{"kill_system_processes", `killall -9 systemd`},
		{"kill_system_processes", `pkill -9 sshd`},
		{"kill_system_processes", `pkill -u root`},
		{"kill_system_processes", `taskkill /f /im explorer.exe`},
		{"grep_secrets", `grep -rh API_KEY --include='.env*' .`},
		{"grep_secrets", `rg -uu -g '.env*' SECRET`},
		{"grep_secrets", `grep -rn AWS_SECRET_ACCESS_KEY ~`},
	}
	for _, c := range caught {
		d := decideShell(e, c.cmd)
		if d.Level == policy.Allow || !strings.Contains(d.MatchedRule, c.rule) {
			t.Errorf("%q is %s (%s), want an ask from builtin[%s]", c.cmd, d.Level, d.MatchedRule, c.rule)
		}
	}
	for _, cmd := range []string{
		`python3 -c 'print(1+1)'`,
		`python3 -c "print(sum(range(10)))"`,
		`python3 -c "import os, sys, json, shutil"`,
		`python3 -c "print(open('package.json').read())"`,
		`python3 script.py --out build`,
		`perl -ne 'print if /TODO/' main.go`,
		`perl -pe 's/foo/bar/' notes.txt`,
		`node -e 'console.log(require("./package.json").version)'`,
		`node -p 'process.versions.node'`,
		`ruby -e 'puts RUBY_VERSION'`,
		`awk '{print $1}' access.log`,
		`awk -F: '{ sum += $3 } END { print sum }' data.txt`,
		`sed -n '1,20p' main.go`,
		`sed 's/foo/bar/g' notes.txt`,
		`sed -e 's/x/y/' -e 's/a/b/' f.txt`,
		`find . -name '*.pyc' -delete`,
		`find build -type f -name '*.o' -delete`,
		`find . -type f -name '*.go'`,
		`kill -1 12345`,
		`kill -9 4242`,
		`pkill -f 'node server.js'`,
		`grep -rn TODO .`,
		`grep -rn password src/`,
		`rg -n API_KEY docs/`,
		`certutil -hashfile setup.exe SHA256`,
		`del build\out.txt`,
		`Remove-Item build\out.txt`,
	} {
		if d := decideShell(e, cmd); d.Level != policy.Allow {
			t.Errorf("%q is %s (%s), want allow", cmd, d.Level, d.MatchedRule)
		}
	}
}

// TestBuiltinWords: the words an agent and a person read for a decision
// name what the built-in rules in its matched_rule guard against.
func TestBuiltinWords(t *testing.T) {
	e, _ := engine.Compile(map[string]any{"enabled": true, "schema": "tiered_policy", "tools": map[string]any{"bash": "allow"}},
		packageBuiltin(t), engine.Options{Workspace: "/ws", HomeDir: "/home/u"})
	d := e.Evaluate(&engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "rm -rf /"}), ChannelID: "web"})
	if words := e.BuiltinWords(d.MatchedRule); d.Level != policy.Deny || !strings.Contains(words, "Deleting") {
		t.Errorf("rm -rf /: %s %s, words %q; want a deny whose words say what the rule guards", d.Level, d.MatchedRule, words)
	}
	if words := e.BuiltinWords("tools.bash"); words != "" {
		t.Errorf("a tool level has no rule words, got %q", words)
	}
}
