package engine

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// The property: for random policies and calls built from pieces that stress
// the prefilter (globs, re: alternations, (?i), anchors, classes, Windows
// separators, non-ASCII case folds), the indexed evaluation gives exactly
// the hits and the decision of the plain scan.

// propWords are the words rules and calls are built from; some differ only
// in case, in separators, or by a Unicode fold (K is the Kelvin sign, ſ the
// long s).
var propWords = []string{
	"npm", "run", "build", "test", "git", "push", "status", "rm", "-rf", "ls", "-la",
	"sudo", "su", "curl", "wget", "sh", "bash", "make", "ssh", "id_rsa", ".env", "Kube", "kube",
	"KUBECTL", "kubectl", "ſecret", "secret", "SECRET", "Ünïcode", "ünïcode", "a", "s", "k",
	"/srv", "/home/u", "~", "$HOME", "C:", "srv", "proj1", "proj2", "x.txt", "src", "*", "?",
	"[", "]", "(", ")", "|", "^", "$", ".", "\\", "/", "//", " ", "-", "_", ":", "\"", "'",
}

// propFragments are regexp pieces with their own syntax.
var propFragments = []string{
	`\b`, `\s+`, `\s*`, `.*`, `[a-z]+`, `[rf]`, `(?:-[a-z]*\s+)*`, `\d+`, `$`, `^`, `(^|\s)`,
	`(\s|$)`, `[/\\]`, `\.`, `\\`, `.`, `x?`, `(ab)+`, `(?:s|k)`, `[^;&]*`, `\$HOME`, `[Kk]`,
}

func propWord(r *rand.Rand) string { return propWords[r.IntN(len(propWords))] }

// propGlob builds a glob from words, wildcards and separators.
func propGlob(r *rand.Rand) string {
	var b strings.Builder
	for n := 1 + r.IntN(4); n > 0; n-- {
		switch r.IntN(6) {
		case 0:
			b.WriteString("*")
		case 1:
			b.WriteString("?")
		case 2:
			b.WriteString("**/")
		default:
			b.WriteString(propWord(r))
		}
		if r.IntN(3) == 0 {
			b.WriteString([]string{" ", "/", `\`, "-"}[r.IntN(4)])
		}
	}
	if r.IntN(4) == 0 {
		b.WriteString(" *")
	}
	return b.String()
}

// propRegex builds a re: pattern: words (quoted or raw), fragments,
// alternations, groups, flags.
func propRegex(r *rand.Rand) string {
	var b strings.Builder
	if r.IntN(3) == 0 {
		b.WriteString("(?i)")
	}
	if r.IntN(4) == 0 {
		b.WriteString("^")
	}
	alts := 1 + r.IntN(3)
	group := alts > 1 && r.IntN(2) == 0
	if group {
		b.WriteString("(")
	}
	for a := 0; a < alts; a++ {
		if a > 0 {
			b.WriteString("|")
		}
		for n := 1 + r.IntN(3); n > 0; n-- {
			switch r.IntN(5) {
			case 0, 1:
				b.WriteString(propFragments[r.IntN(len(propFragments))])
			case 2:
				b.WriteString("(?i:" + strings.ToUpper(propWord(r)) + ")")
			default:
				w := propWord(r)
				if r.IntN(2) == 0 {
					w = regexpQuote(w)
				}
				b.WriteString(w)
			}
		}
	}
	if group {
		b.WriteString(")")
	}
	if r.IntN(4) == 0 {
		b.WriteString("$")
	}
	return "re:" + b.String()
}

func regexpQuote(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

var propShellTools = []any{"bash", "mcp_exec_command", "create_terminal"}
var propPathTools = []any{"read_file", "write_file", "grep", "edit_file"}

// propRule builds one rule map for a shell or path tool set.
func propRule(r *rand.Rand, i int) map[string]any {
	rule := map[string]any{"id": "r" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)}
	if r.IntN(2) == 0 {
		rule["tools"] = []any{propShellTools[r.IntN(3)]}
		if r.IntN(4) == 0 {
			rule["tools"] = propShellTools
		}
	} else {
		rule["tools"] = []any{propPathTools[r.IntN(len(propPathTools))]}
	}
	if r.IntN(2) == 0 {
		rule["pattern"] = propGlob(r)
	} else {
		rule["pattern"] = propRegex(r)
	}
	rule["action"] = []string{"allow", "ask", "deny"}[r.IntN(3)]
	return rule
}

// propCommand builds a command from words, operators, paths and cases.
func propCommand(r *rand.Rand) string {
	var parts []string
	for n := 1 + r.IntN(6); n > 0; n-- {
		w := propWord(r)
		switch r.IntN(8) {
		case 0:
			w = strings.ToUpper(w)
		case 1:
			w = []string{";", "&&", "|", "$(", ")", ">", "\n"}[r.IntN(7)]
		case 2:
			w = "/srv/" + propWord(r) + "/" + propWord(r)
		case 3:
			w = `C:\Users\` + propWord(r) + `\` + propWord(r)
		}
		parts = append(parts, w)
	}
	sep := " "
	if r.IntN(5) == 0 {
		sep = ""
	}
	return strings.Join(parts, sep)
}

// propPath builds a path value: POSIX, Windows, home-relative, relative.
func propPath(r *rand.Rand) string {
	seps := []string{"/", `\`}
	sep := seps[r.IntN(2)]
	var b strings.Builder
	switch r.IntN(4) {
	case 0:
		b.WriteString("C:")
	case 1:
		b.WriteString("~")
	case 2:
		b.WriteString("")
	}
	for n := 1 + r.IntN(4); n > 0; n-- {
		b.WriteString(sep)
		b.WriteString(strings.Trim(propWord(r), `/\`))
	}
	return b.String()
}

// propCall builds a call for one of the tools rules name.
func propCall(r *rand.Rand) *Request {
	if r.IntN(2) == 0 {
		key := "command"
		if r.IntN(5) == 0 {
			key = "cmd"
		}
		return &Request{Call: NewCall(propShellTools[r.IntN(3)].(string), map[string]any{key: propCommand(r)})}
	}
	args := map[string]any{"path": propPath(r)}
	if r.IntN(3) == 0 {
		args["new_path"] = propPath(r)
	}
	return &Request{Call: NewCall(propPathTools[r.IntN(len(propPathTools))].(string), args)}
}

// TestPrefilterMatchesScanOnRandomPolicies is the property test: 1,000
// random policies of up to 40 rules, 5 calls each, plus calls built from
// each policy's own patterns (so that many calls do hit).
func TestPrefilterMatchesScanOnRandomPolicies(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 2026))
	for p := 0; p < 1000; p++ {
		var rules, builtinRules []any
		var pats []string
		for i, n := 0, r.IntN(40); i < n; i++ {
			rule := propRule(r, i)
			pats = append(pats, rule["pattern"].(string))
			if r.IntN(4) == 0 {
				builtinRules = append(builtinRules, rule)
			} else {
				rules = append(rules, rule)
			}
		}
		var overrides []any
		for i, n := 0, r.IntN(4); i < n; i++ {
			o := propRule(r, i)
			o["action"] = "allow"
			overrides = append(overrides, o)
		}
		perms := map[string]any{"schema": "tiered_policy", "rules": rules, "approval_overrides": overrides,
			"tools": map[string]any{"bash": "ask", "read_file": "allow"}}
		e, _ := Compile(perms, builtinRules, Options{Workspace: "/srv/proj1", HomeDir: "/home/u"})
		plain := plainEngine(e)
		for c := 0; c < 5; c++ {
			checkAgainstScan(t, "random", e, plain, propCall(r))
		}
		for _, pat := range pats {
			// The pattern's own text (with wildcards filled) as a command and a path.
			text := strings.NewReplacer("re:", "", "*", propWord(r), "?", "x", "(?i)", "").Replace(pat)
			checkAgainstScan(t, "own pattern", e, plain, &Request{Call: NewCall("bash", map[string]any{"command": text})})
			checkAgainstScan(t, "own pattern", e, plain, &Request{Call: NewCall("read_file", map[string]any{"path": text})})
		}
		if t.Failed() {
			t.Fatalf("policy %d: rules %v builtin %v overrides %v", p, rules, builtinRules, overrides)
		}
	}
}
