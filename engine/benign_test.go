package engine_test

import (
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// benignRow is an ordinary workspace call that a policy means to allow.
type benignRow struct {
	note   string
	policy string
	tool   string
	args   map[string]any
}

func benignShell(note, cmd string) benignRow {
	return benignRow{note: note, policy: policyDeveloper, tool: "bash", args: cmdArgs(cmd)}
}

func benignPath(note, tool string, args map[string]any) benignRow {
	return benignRow{note: note, policy: policyDeveloper, tool: tool, args: args}
}

// benignRows are everyday developer commands and file calls inside the
// workspace. None chains commands or redirects (`;`, `&`, `|`, `<`, `>`,
// `$(`, `${`, newlines): docs/decisions.md escalates an allowed shell command with
// those to ask, so a pipe or `git commit -m "a; b"` is ask by the contract.
func benignRows() []benignRow {
	return []benignRow{
		benignShell("parallel make", "make -j4"),
		benignShell("make with targets", "make lint test"),
		benignShell("prettier on a quoted glob", "npx prettier --write 'src/**/*.ts'"),
		benignShell("eslint on a quoted brace glob", "npx eslint 'src/**/*.{ts,tsx}'"),
		benignShell("project script", "./scripts/run.sh"),
		benignShell("env with an assignment", "env GOOS=linux go build ./..."),
		benignShell("leading assignment", "CGO_ENABLED=0 go build ./..."),
		benignShell("brace backup copy", "cp a.go{,.bak}"),
		benignShell("brace backup of a directory", "cp -r src{,.orig}"),
		benignShell("brace list of workspace dirs", "ls {src,docs}"),
		benignShell("go test", "go test ./..."),
		benignShell("go vet", "go vet ./..."),
		benignShell("gofmt", "gofmt -l ."),
		benignShell("go mod tidy", "go mod tidy"),
		benignShell("go build to bin", "go build -o bin/app ./cmd/app"),
		benignShell("git commit with a quoted message", `git commit -m "fix: handle empty input"`),
		benignShell("git status", "git status"),
		benignShell("git diff of a path", "git diff HEAD~1 -- src"),
		benignShell("git log", "git log --oneline -20"),
		benignShell("git branch", "git checkout -b feature/x"),
		benignShell("git add", "git add -A"),
		benignShell("git show a blob", "git show HEAD:go.mod"),
		benignShell("git grep", "git grep -n Evaluate"),
		benignShell("ls -la", "ls -la"),
		benignShell("ls a subdirectory", "ls -la ./src/"),
		benignShell("cat a file", "cat README.md"),
		benignShell("head", "head -n 20 main.go"),
		benignShell("grep with single quotes", "grep -rn 'TODO' src"),
		benignShell("grep with a double-quoted regex", `grep -rn "foo.*bar" src`),
		benignShell("find by name", "find . -name '*.go' -type f"),
		benignShell("wc over a glob", "wc -l src/*.go"),
		benignShell("echo with quotes and braces", `echo "building {a,b} with 'quotes'"`),
		benignShell("sed print range", "sed -n '1,20p' main.go"),
		benignShell("printf with an escape in quotes", `printf '%s\n' hello`),
		benignShell("npm test", "npm test"),
		benignShell("npm run build", "npm run build"),
		benignShell("pytest", "pytest -q tests"),
		benignShell("cargo build", "cargo build --release"),
		benignShell("python venv", "python3 -m venv .venv"),
		benignShell("mkdir -p", "mkdir -p build/out"),
		benignShell("touch", "touch src/new.go"),
		benignShell("rm a build file", "rm -f build/out.o"),
		benignShell("rm -rf a build dir", "rm -rf build"),
		benignShell("mv inside the workspace", "mv src/old.go src/new.go"),
		benignShell("tar a build dir", "tar czf dist.tgz build"),
		benignShell("diff two files", "diff -u a.go a.go.bak"),
		benignShell("chmod a script", "chmod +x scripts/run.sh"),
		benignShell("jq a field", "jq .version package.json"),
		benignShell("ripgrep", "rg -n 'func main' --type go"),
		benignShell("$PWD inside the workspace", "cat $PWD/README.md"),
		benignShell("~+ is the workspace", "ls ~+/src"),
		benignShell("docker build of the workspace", "docker build -t app:dev ."),
		benignPath("read a source file", "read_file", pathArgs("src/main.go")),
		benignPath("read with ./", "read_file", pathArgs("./docs/guide.md")),
		benignPath("read by absolute workspace path", "read_file", pathArgs("{{ws}}/README.md")),
		benignPath("write a new file", "write_file", map[string]any{"path": "src/new.go", "content": "package main\n"}),
		benignPath("write under a new directory", "write_file", map[string]any{"file_path": "build/out/report.txt", "content": "ok"}),
		benignPath("edit a file", "edit_file", map[string]any{"file_path": "main.go", "old_string": "a", "new_string": "b"}),
		benignPath("multi-edit inside the workspace", "edit_file", map[string]any{"edits": []any{
			map[string]any{"file_path": "src/app.ts", "old_string": "a", "new_string": "b"},
			map[string]any{"file_path": "src/main.go", "old_string": "c", "new_string": "d"},
		}}),
		benignPath("grep a directory", "grep", map[string]any{"pattern": "TODO", "path": "src"}),
		benignPath("glob", "glob", map[string]any{"pattern": "**/*.go"}),
		benignPath("list the workspace", "list_dir", pathArgs(".")),
		{note: "careful: ls", policy: policyCareful, tool: "bash", args: cmdArgs("ls -la src")},
		{note: "careful: git status", policy: policyCareful, tool: "bash", args: cmdArgs("git status --short")},
		{note: "careful: git log", policy: policyCareful, tool: "bash", args: cmdArgs("git log --oneline -5")},
		{note: "careful: cat", policy: policyCareful, tool: "bash", args: cmdArgs("cat docs/guide.md")},
		{note: "careful: echo", policy: policyCareful, tool: "bash", args: cmdArgs(`echo "done"`)},
		{note: "careful: ls the trusted dir", policy: policyCareful, tool: "bash", args: cmdArgs("ls {{trusted}}")},
		{note: "careful: read in the trusted dir", policy: policyCareful, tool: "read_file", args: pathArgs("{{trusted}}/data.csv")},
		{note: "careful: write in the trusted dir", policy: policyCareful, tool: "write_file", args: pathArgs("{{trusted}}/out.csv")},
		benignShell("systemctl status", "systemctl status nginx"),
		benignShell("container without mounts", "docker run --rm alpine echo hi"),
		benignShell("download into the workspace", "curl -fsSL https://example.com/api -o status.json"),
		benignShell("inline python that prints", "python3 -c 'print(1)'"),
		benignShell("inline node that prints", "node -e 'console.log(1)'"),
		benignShell("list the crontab", "crontab -l"),
		benignShell("plain git push", "git push origin main"),
		benignShell("git fetch", "git fetch --all --prune"),
		benignShell("go run", "go run ./cmd/server --help"),
		benignShell("npm install", "npm install"),
		benignShell("pip editable install", "pip install -e ."),
		benignShell("find -delete inside the workspace", "find . -name '*.tmp' -delete"),
		benignShell("find -exec grep", "find src -type f -exec grep -l TODO {} +"),
		benignShell("sed -i inside the workspace", "sed -i 's/foo/bar/g' src/main.go"),
		benignShell("rm -rf build outputs", "rm -rf node_modules dist"),
		benignShell("recursive chmod of a build dir", "chmod -R u+w build"),
		benignShell("tar extract into the workspace", "tar xzf vendor.tgz -C vendor"),
		benignShell("bash running a project script", "bash scripts/run.sh --fast"),
		benignShell("sh -c of a workspace command", "sh -c 'go test ./...'"),
		benignShell("timeout wrapper", "timeout 60 go test ./..."),
		benignShell("env with two assignments", "env CGO_ENABLED=0 GOOS=linux go build -o bin/app ."),
		benignShell("nice wrapper", "nice -n 10 make -j2"),
		benignShell("cat a glob of docs", "cat ./docs/*.md"),
		benignShell("copy a tree", "cp -r src/. build/"),
		benignShell("bare ~+", "ls ~+"),
		benignShell("git diff stat of a range", "git diff --stat HEAD~3..HEAD"),
		benignShell("ps", "ps aux"),
		benignShell("du of the workspace", "du -sh ."),
		{note: "careful: git log -p", policy: policyCareful, tool: "bash", args: cmdArgs("git log -p")},
		{note: "careful: git log --stat", policy: policyCareful, tool: "bash", args: cmdArgs("git log --stat -3")},
		{note: "careful: git log of a path", policy: policyCareful, tool: "bash", args: cmdArgs("git log --oneline -- src/main.go")},
		{note: "careful: git status -sb", policy: policyCareful, tool: "bash", args: cmdArgs("git status -sb")},
		{note: "careful: ls -R", policy: policyCareful, tool: "bash", args: cmdArgs("ls -R src")},
		{note: "careful: cat -n", policy: policyCareful, tool: "bash", args: cmdArgs("cat -n main.go")},
		{note: "path-only: read", policy: policyPathOnly, tool: "read_file", args: pathArgs("src/main.go")},
		{note: "path-only: write", policy: policyPathOnly, tool: "write_file", args: pathArgs("build/x.txt")},
	}
}

// TestBenignStaysAllowed: ordinary workspace calls stay allow under the
// policies meant to allow them; a design that asks about everything is not
// a fix for an obfuscation bypass.
func TestBenignStaysAllowed(t *testing.T) {
	f := newIssueFixture(t)
	rows := benignRows()
	if len(rows) < 40 {
		t.Fatalf("%d benign rows, want at least 40", len(rows))
	}
	per := map[string]int{}
	for _, row := range rows {
		per[row.policy]++
		t.Run(row.note, func(t *testing.T) {
			args := f.fill(row.args).(map[string]any)
			d := f.evaluate(row.policy, row.tool, args)
			if d.Level != policy.Allow {
				t.Errorf("%s %s under %s: got %s (rule %q, reason %q), want allow",
					row.tool, clipArgs(args), row.policy, d.Level, d.MatchedRule, d.Reason)
			}
		})
	}
	t.Logf("%d benign calls decided (per policy %v)", len(rows), per)
}
