package engine_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/engine/builtin"
	"github.com/toolgate/toolgate/fsview"
	"github.com/toolgate/toolgate/store"
)

// Benchmarks: the indexed engine against the plain in-order scan
// (PlainEngine) in the same run, on the default config that store writes
// plus generated user rules. Run:
//
//	go test ./engine/ -run '^$' -bench . -benchmem

var ruleCounts = []int{0, 10, 100, 1000, 10000, 100000}

// defaultPolicy decodes the permissions section of store.DefaultConfig and
// the package built-in rules, then appends n generated user rules.
func defaultPolicy(tb testing.TB, n int) (map[string]any, []any) {
	tb.Helper()
	var cfg struct {
		Permissions map[string]any `yaml:"permissions"`
	}
	if err := yaml.Unmarshal([]byte(store.DefaultConfig), &cfg); err != nil {
		tb.Fatal(err)
	}
	var b struct {
		Rules []any `yaml:"rules"`
	}
	if err := yaml.Unmarshal(builtin.Default, &b); err != nil {
		tb.Fatal(err)
	}
	if n > 0 {
		cfg.Permissions["rules"] = engine.GeneratedRules(n)
	}
	return cfg.Permissions, b.Rules
}

func compileDefault(tb testing.TB, n int) *engine.Engine {
	perms, b := defaultPolicy(tb, n)
	e, _ := engine.Compile(perms, b, engine.Options{Workspace: "/ws/project", HomeDir: "/home/u", ResolvePath: func(p string) string { return p }})
	return e
}

// matchingCommand is a command that the first generated rule matches (a
// glob "<verb> task0 *"), or a built-in rule when there are none.
func matchingCommand(n int) string {
	if n == 0 {
		return "sudo apt-get install jq"
	}
	p := engine.GeneratedRules(1)[0].(map[string]any)["pattern"].(string)
	return strings.TrimSuffix(p, " *") + " --verbose"
}

func calls(n int) []struct {
	name string
	req  *engine.Request
} {
	return []struct {
		name string
		req  *engine.Request
	}{
		{"benign", &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": "npm run build --silent"})}},
		{"match", &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": matchingCommand(n)})}},
		{"path", &engine.Request{Call: engine.NewCall("read_file", map[string]any{"path": "/ws/project/src/main.go"})}},
	}
}

// BenchmarkEvaluate: rules=<user rules>/<call>/<indexed|plain>.
func BenchmarkEvaluate(b *testing.B) {
	for _, n := range ruleCounts {
		e := compileDefault(b, n)
		plain := engine.PlainEngine(e)
		for _, c := range calls(n) {
			for _, v := range []struct {
				name string
				e    *engine.Engine
			}{{"indexed", e}, {"plain", plain}} {
				b.Run(fmt.Sprintf("rules=%d/%s/%s", n, c.name, v.name), func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						v.e.Evaluate(c.req)
					}
				})
			}
		}
	}
}

// BenchmarkCommandLength: cost against command length at 10,000 rules.
func BenchmarkCommandLength(b *testing.B) {
	e := compileDefault(b, 10000)
	for _, size := range []int{16, 256, 4096} {
		cmd := strings.Repeat("npm run build ", size/14+1)[:size]
		req := &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": cmd})}
		b.Run(fmt.Sprintf("len=%d", size), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				e.Evaluate(req)
			}
		})
	}
}

// BenchmarkCompile: the time and allocation of compiling n user rules,
// with the heap the compiled engine keeps (MB-live).
func BenchmarkCompile(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		perms, rules := defaultPolicy(b, n)
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var live float64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				e, _ := engine.Compile(perms, rules, engine.Options{Workspace: "/ws/project"})
				runtime.GC()
				runtime.ReadMemStats(&after)
				live = float64(after.HeapAlloc-before.HeapAlloc) / (1 << 20)
				runtime.KeepAlive(e)
			}
			b.ReportMetric(live, "MB-live")
		})
	}
}

// BenchmarkDefaultPolicyShell is the default policy's speed check: with the default
// config, the package built-in rules and the external-directory check (the
// server's fsview.ResolvePath on a real filesystem), a benign simple command
// takes the fast path (no full shell parse), and a compound command of five
// parts is parsed with mvdan.cc/sh.
func BenchmarkDefaultPolicyShell(b *testing.B) {
	perms, rules := defaultPolicy(b, 0)
	ws := b.TempDir()
	e, _ := engine.Compile(perms, rules, engine.Options{Workspace: ws, HomeDir: "/home/u", ResolvePath: fsview.ResolvePath, KindOf: fsview.KindOf, Glob: fsview.Glob})
	for _, c := range []struct{ name, cmd string }{
		{"git_status", "git status"},
		{"ls_la_src", "ls -la src"},
		{"git_force_push", "git push --force origin main"},
		{"npm_build", "npm run build --silent"},
		{"compound_5", "cd src && go vet ./... | tee vet.log; echo done > status.txt || true"},
		// a wrapped command goes through the full analysis and
		// its normalized forms meet the rules too.
		{"wrapped", "nice -n 5 timeout 60 npm run build --silent"},
	} {
		req := &engine.Request{Call: engine.NewCall("bash", map[string]any{"command": c.cmd}), ChannelID: "web"}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				_ = e.Evaluate(req)
			}
		})
	}
}

// mcpPolicy is the default policy with n generated user rules and, for
// each of 100 MCP servers, a path rule on one tool, a path rule on every
// tool (mcp__SERVER__*) and an args rule on every tool.
func mcpPolicy(tb testing.TB, n int) *engine.Engine {
	perms, b := defaultPolicy(tb, n)
	rules, _ := perms["rules"].([]any)
	for i := range 100 {
		s := fmt.Sprintf("srv%d", i)
		rules = append(rules,
			map[string]any{"id": s + "_read", "tools": []any{"mcp__" + s + "__read"}, "pattern": "/ws/project/" + s + "/**", "action": "allow"},
			map[string]any{"id": s + "_all", "tools": []any{"mcp__" + s + "__*"}, "match_type": "path", "pattern": "/ws/project/secret" + s + "/**", "action": "deny"},
			map[string]any{"id": s + "_args", "tools": []any{"mcp__" + s + "__*"}, "match_type": "args", "pattern": `re:"query":"[^"]*drop table` + s, "action": "deny"})
	}
	perms["rules"] = rules
	e, problems := engine.Compile(perms, b, engine.Options{Workspace: "/ws/project", HomeDir: "/home/u", ResolvePath: func(p string) string { return p }})
	if len(problems) > 0 {
		tb.Fatalf("problems: %v", problems)
	}
	return e
}

// BenchmarkMCPTools: an MCP call against the default policy with n user
// rules, without MCP rules (none) and with 300 MCP rules over 100 servers
// (mcp): a tool a rule names, a tool only its server's rules cover, and a
// tool of a server no rule names. The MCP lookups cost one map lookup more
// at most; an args rule writes the arguments' JSON once per call.
func BenchmarkMCPTools(b *testing.B) {
	reqs := []struct {
		name string
		req  *engine.Request
	}{
		{"named", &engine.Request{Call: engine.NewCall("mcp__srv7__read", map[string]any{"path": "/ws/project/srv7/a.txt"})}},
		{"server", &engine.Request{Call: engine.NewCall("mcp__srv7__write", map[string]any{"path": "/ws/project/srv7/a.txt", "content": "hello"})}},
		{"unnamed", &engine.Request{Call: engine.NewCall("mcp__other__read", map[string]any{"path": "/ws/project/srv7/a.txt"})}},
		{"path_tool", &engine.Request{Call: engine.NewCall("read_file", map[string]any{"path": "/ws/project/src/main.go"})}},
	}
	for _, n := range []int{0, 10000} {
		for _, pol := range []struct {
			name string
			e    *engine.Engine
		}{{"none", compileDefault(b, n)}, {"mcp", mcpPolicy(b, n)}} {
			for _, c := range reqs {
				b.Run(fmt.Sprintf("rules=%d/%s/%s", n, pol.name, c.name), func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						pol.e.Evaluate(c.req)
					}
				})
			}
		}
	}
}
