package store

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/engine/builtin"
	"github.com/toolgate/toolgate/policy"
)

// FuzzLoad: arbitrary bytes as config.yaml (and as builtin_rules.yaml) go
// through the store's own decoding and the engine's compilation without a
// panic; whatever compiles decides one of the three levels, and a document
// the store accepts renders back to text that parses again.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(DefaultConfig))
	f.Add(builtinHead(4))
	f.Add([]byte("permissions: [1, 2]\n"))
	f.Add([]byte("permissions:\n  tools: {bash: {\"*\": allow, patterns: {\"rm *\": deny}}}\n"))
	f.Add([]byte("a: &x [*x]\npermissions: *x\n"))
	f.Add([]byte("permissions: {schema: v4.2, rules: [{id: r, tools: bash, pattern: 're:(a+)+$', action: allow}]}\n"))
	f.Add([]byte("\xff\xfe: \x00\n"))
	// No built-in rules beside the fuzzed section: compiling the package
	// list costs tens of milliseconds a run (far more under coverage
	// instrumentation); the built-in path is fuzzed by decodeRuleList below.
	var rules []any
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) > maxFuzzDoc {
			return
		}
		section, _, err := decodeSection(raw)
		if err == nil {
			e, _ := engine.Compile(section, rules, engine.Options{Workspace: "/ws", HomeDir: "/home/u"})
			checkLevel(t, e)
			doc, perr := parseConfig(raw)
			if perr != nil {
				t.Fatalf("decodeSection accepted what parseConfig refuses: %v", perr)
			}
			if doc.permissions() != nil {
				out, rerr := doc.render()
				if rerr == nil {
					if _, _, err := decodeSection(out); err != nil {
						t.Fatalf("rendered config does not parse again: %v\n%q", err, out)
					}
				}
			}
		}
		if rules, err := decodeRuleList(raw); err == nil {
			e, _ := engine.Compile(map[string]any{"schema": "tiered_policy"}, rules, engine.Options{Workspace: "/ws", HomeDir: "/home/u"})
			checkLevel(t, e)
		}
	})
}

// maxFuzzDoc bounds a fuzzed document. Under coverage instrumentation a
// mutant of the whole built-in list (40 KB, a hundred regular expressions)
// took seconds a run on a loaded machine, until the fuzzing worker was
// taken for hung; the full list is compiled by the unit tests instead.
const maxFuzzDoc = 8 << 10

// builtinHead is the built-in list cut after its first n rules, a seed
// that keeps the list's shape at a tenth of its size.
func builtinHead(n int) []byte {
	doc := string(builtin.Default)
	at := 0
	for i := 0; i <= n; i++ {
		next := strings.Index(doc[at:], "\n  - id: ")
		if next < 0 {
			return builtin.Default
		}
		at += next + 1
	}
	return []byte(doc[:at])
}

// checkLevel evaluates a shell and a path call and wants a real level.
func checkLevel(t *testing.T, e *engine.Engine) {
	t.Helper()
	for _, req := range []*engine.Request{
		{Call: engine.NewCall("bash", map[string]any{"command": "rm -rf / && cat ~/.ssh/id_rsa"})},
		{Call: engine.NewCall("read_file", map[string]any{"path": "../etc/passwd"})},
	} {
		d := e.Evaluate(req)
		if d.Level != policy.Allow && d.Level != policy.Ask && d.Level != policy.Deny {
			t.Fatalf("level %d is not a decision", d.Level)
		}
	}
}

// TestBuiltinHeadSeed: the fuzz seed is a rule list of its own, of n rules.
func TestBuiltinHeadSeed(t *testing.T) {
	rules, err := decodeRuleList(builtinHead(4))
	if err != nil || len(rules) != 4 {
		t.Fatalf("builtinHead(4): %d rules, %v", len(rules), err)
	}
}
