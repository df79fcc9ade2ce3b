package engine_test

import (
	"fmt"
	"testing"

	"github.com/toolgate/toolgate/engine"
)

func TestZZProbe(t *testing.T) {
	perms := map[string]any{"enabled": true, "schema": "tiered_policy", "permission_mode": "normal",
		"defaults": map[string]any{"*": "ask"}, "tools": map[string]any{"bash": "allow"},
		"rules": []any{
			map[string]any{"id": "py", "tools": []any{"bash"}, "pattern": "python3 *", "action": "allow"},
			map[string]any{"id": "aw", "tools": []any{"bash"}, "pattern": "awk *", "action": "allow"},
			map[string]any{"id": "gi", "tools": []any{"bash"}, "pattern": "git *", "action": "allow"},
		},
		"external_directory": map[string]any{"*": "allow"}}
	e, _ := engine.Compile(perms, packageBuiltin(t), engine.Options{Workspace: "/ws", HomeDir: "/home/u"})
	for _, c := range []string{
		`python3 -c 'import os; os.system("id")'`,
		`python3 -c 'open("x","w").write("y")'`,
		`python3 -c 'print(1+1)'`,
		`perl -e 'system("id")'`,
		`perl -e 'print 1'`,
		`node -e 'require("child_process").execSync("id")'`,
		`node -e 'console.log(1)'`,
		`ruby -e 'system("id")'`,
		`php -r 'system("id");'`,
		`awk 'BEGIN{system("id")}'`,
		`awk '{print $1}' f.txt`,
		`awk 'BEGIN{print "x" > "/tmp/y"}'`,
		`sed -n '1e id' f.txt`,
		`sed 's/a/b/w out.txt' f.txt`,
		`sed -n 1p f.txt`,
		`vim -c ':!id' -c ':q'`,
		`gdb -batch -ex 'shell id'`,
		`git -c alias.x='!id' x`,
		`git -c core.pager='id' log`,
		`git log --oneline`,
		`python3 -m http.server`,
		`python3 script.py`,
		`env python3 -c 'import os; os.system("id")'`,
		`python3 -c "__import__('os').system('id')"`,
		`python3 -c 'exec(chr(105))'`,
		`python3 -c 'import subprocess'`,
		`perl -E 'say 1'`,
		`perl -ne 'print if /x/' f`,
		`jq '.a' f.json`,
		`bash -c 'id'`,
		`find . -name x -fprint out`,
		`tar -xf a.tar --to-command=sh`,
		`rsync -e 'sh -c id' a b`,
		`less -f x`,
		`xargs -a f id`,
		`busybox sh -c id`,
		`nsenter -t 1 id`,
		`certutil -decode a b`,
		`killall -9 systemd`,
		`pkill -9 init`,
		`find / -delete`,
		`find . -type f -delete`,
		`del /s /q C:\\Users`,
		`rmdir /s /q C:\\`,
		`Remove-Item -Recurse -Force C:\\Users\\me`,
		`grep -r KEY .env`,
		`grep -h API_KEY .env.local`,
		`cat .env.production`,
		`python3 -c 'import pty; pty.spawn("/bin/sh")'`,
		`perl -e 'exec "/bin/sh";'`,
		`ruby -e 'exec "/bin/sh"'`,
		`lua -e 'os.execute("/bin/sh")'`,
	} {
		d := e.Evaluate(&engine.Request{ToolName: "bash", ToolArgs: map[string]any{"command": c}, ChannelID: "web"})
		fmt.Printf("%-60q %s %s\n", c, d.Level, d.MatchedRule)
	}
}
