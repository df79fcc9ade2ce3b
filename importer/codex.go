package importer

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
	"mvdan.cc/sh/v3/shell"
)

// Codex's execpolicy rules, as https://developers.openai.com/codex/exec-policy
// and codex-rs/execpolicy/README.md in openai/codex document them: a
// Starlark file of prefix_rule(pattern=[...], decision=..., justification=...,
// match=[...], not_match=[...]) calls. A pattern element is a word or a
// list of alternative words; decision is allow (the default), prompt or
// forbidden. When several rules match a command Codex applies the most
// restrictive (forbidden > prompt > allow), which is toolgate's
// strictest-wins among rules: each prefix_rule becomes rules with the same
// level and nothing else is needed to keep the order.

// codexLevels maps Codex's decisions onto toolgate's levels.
var codexLevels = map[string]string{"allow": Allow, "prompt": Ask, "forbidden": Deny}

// codexMaxExpansions bounds the rules one prefix_rule's alternatives may
// become (one per combination).
const codexMaxExpansions = 64

// codexMaxSteps bounds the Starlark a rules file may run: a rules file is
// data, and a loop that never ends must not hang the import.
const codexMaxSteps = 1_000_000

// Codex converts a Codex .rules file. The file is run as Starlark with
// only prefix_rule, network_rule and host_executable defined (no load,
// no I/O), as Codex runs it. opts gives the workspace and home the
// engine checks a rule's examples in.
func Codex(data []byte, name string, opts Options) (*Result, error) {
	r := newResult("codex")
	thread := &starlark.Thread{Name: "import"}
	thread.SetMaxExecutionSteps(codexMaxSteps)
	n := 0
	record := func(fn string, conv func(where string, kwargs []starlark.Tuple) error) *starlark.Builtin {
		return starlark.NewBuiltin(fn, func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			n++
			where := fmt.Sprintf("%s #%d", fn, n)
			if len(args) > 0 {
				return nil, fmt.Errorf("%s: give every argument by name", fn)
			}
			if err := conv(where, kwargs); err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			return starlark.None, nil
		})
	}
	predeclared := starlark.StringDict{
		"prefix_rule": record("prefix_rule", func(where string, kw []starlark.Tuple) error { return codexPrefixRule(r, where, kw, opts) }),
		"network_rule": record("network_rule", func(where string, kw []starlark.Tuple) error {
			r.problem(where+" "+kwargsText(kw), "Codex's network rules judge its sandbox's network proxy, which toolgate does not see")
			return nil
		}),
		"host_executable": record("host_executable", func(where string, kw []starlark.Tuple) error {
			r.problem(where+" "+kwargsText(kw), "toolgate matches the command as written; it does not resolve a program's path to a name")
			return nil
		}),
	}
	fileOpts := &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true}
	if _, err := starlark.ExecFileOptions(fileOpts, thread, name, data, predeclared); err != nil {
		var ee *starlark.EvalError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("the rules file does not run: %s", ee.Backtrace())
		}
		return nil, fmt.Errorf("the rules file does not parse: %w", err)
	}
	return r, nil
}

// kwargsText shows a call's arguments.
func kwargsText(kw []starlark.Tuple) string {
	var parts []string
	for _, t := range kw {
		parts = append(parts, t[0].(starlark.String).GoString()+"="+t[1].String())
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// codexPrefixRule converts one prefix_rule call. An error stops the
// import, as a rule Codex itself refuses stops Codex loading the file.
func codexPrefixRule(r *Result, where string, kw []starlark.Tuple, opts Options) error {
	var pattern *starlark.List
	decision, justification := "allow", ""
	var match, notMatch *starlark.List
	if err := starlark.UnpackArgs("prefix_rule", nil, kw, "pattern", &pattern, "decision?", &decision,
		"justification?", &justification, "match?", &match, "not_match?", &notMatch); err != nil {
		return err
	}
	level, ok := codexLevels[decision]
	if !ok {
		return fmt.Errorf("decision %q is not allow, prompt or forbidden", decision)
	}
	words, err := codexPattern(pattern)
	if err != nil {
		return err
	}
	where += " " + kwargsText(kw[:1])
	examples := func(l *starlark.List) ([]string, error) {
		var out []string
		for i := range l.Len() {
			s, err := codexExample(l.Index(i))
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	var yes, no []string
	if match != nil {
		if yes, err = examples(match); err != nil {
			return err
		}
	}
	if notMatch != nil {
		if no, err = examples(notMatch); err != nil {
			return err
		}
	}
	combos := 1
	for _, alts := range words {
		combos *= len(alts)
		if combos > codexMaxExpansions {
			r.problem(where, "its alternatives make more than %d prefixes", codexMaxExpansions)
			return nil
		}
		for _, w := range alts {
			if !plainWord(w) {
				r.problem(where, "the word %q reads differently quoted and unquoted; toolgate matches the command's text", w)
				return nil
			}
		}
	}
	desc := "Codex: " + decision
	if justification != "" {
		desc += ": " + justification
	}
	prefixes := expand(words)
	for _, e := range yes {
		if !slices.ContainsFunc(prefixes, func(p []string) bool { return startsWith(e, p) }) {
			r.problem(where, "match example %q does not start with the rule's prefix as toolgate splits it into words", e)
		}
	}
	for _, prefix := range prefixes {
		rule := Rule{Tools: []string{"bash"}, MatchType: "command", Pattern: prefixGlob(strings.Join(prefix, " ")),
			Action: level, Description: desc}
		rule.Examples = checkedExamples(r, where, rule, examplesFor(yes, prefix), no, opts)
		r.addRule(rule, "codex_"+decision+"_"+strings.Join(prefix, "_"))
	}
	return nil
}

// examplesFor keeps the match examples that start with prefix: with
// alternatives, each rule gets the examples of its own prefix.
func examplesFor(examples, prefix []string) []string {
	var out []string
	for _, e := range examples {
		if startsWith(e, prefix) {
			out = append(out, e)
		}
	}
	return out
}

// startsWith reports whether a command's words start with prefix.
func startsWith(command string, prefix []string) bool {
	w, err := shell.Fields(command, nil)
	return err == nil && len(w) >= len(prefix) && equalWords(w[:len(prefix)], prefix)
}

func equalWords(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// codexPattern reads pattern: each element a word or a non-empty list of
// alternative words.
func codexPattern(l *starlark.List) ([][]string, error) {
	if l.Len() == 0 {
		return nil, errors.New("pattern cannot be empty")
	}
	var out [][]string
	for i := range l.Len() {
		switch v := l.Index(i).(type) {
		case starlark.String:
			out = append(out, []string{v.GoString()})
		case *starlark.List:
			var alts []string
			for j := range v.Len() {
				s, ok := v.Index(j).(starlark.String)
				if !ok {
					return nil, fmt.Errorf("pattern alternative must be a string (got %s)", v.Index(j).Type())
				}
				alts = append(alts, s.GoString())
			}
			if len(alts) == 0 {
				return nil, errors.New("pattern alternatives cannot be empty")
			}
			out = append(out, alts)
		default:
			return nil, fmt.Errorf("pattern element must be a string or list of strings (got %s)", v.Type())
		}
	}
	return out, nil
}

// codexExample is one match or not_match example as a command line: a
// string as it is, a list of words joined with the words quoted where
// needed.
func codexExample(v starlark.Value) (string, error) {
	switch v := v.(type) {
	case starlark.String:
		return v.GoString(), nil
	case *starlark.List:
		var words []string
		for i := range v.Len() {
			s, ok := v.Index(i).(starlark.String)
			if !ok {
				return "", fmt.Errorf("example tokens must be strings (got %s)", v.Index(i).Type())
			}
			words = append(words, shellQuote(s.GoString()))
		}
		return strings.Join(words, " "), nil
	}
	return "", fmt.Errorf("example must be a string or list of strings (got %s)", v.Type())
}

// shellQuote quotes a word for a POSIX shell when it needs it.
func shellQuote(w string) string {
	if plainWord(w) {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// expand lists every combination of alternatives, in order.
func expand(words [][]string) [][]string {
	out := [][]string{nil}
	for _, alts := range words {
		var next [][]string
		for _, prefix := range out {
			for _, a := range alts {
				next = append(next, append(append([]string(nil), prefix...), a))
			}
		}
		out = next
	}
	return out
}
