package engine

import (
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// TestLegacyChecker is the tool-level checker of a policy that is not tiered
// (docs/decisions.md): patterns, then the tool level, then defaults; any deny wins.
func TestLegacyChecker(t *testing.T) {
	e, _ := compileYAML(t, `defaults: {"*": ask}
tools:
  bash:
    "*": allow
    patterns:
      "git *": allow
      "re:^rm ": deny
      "re:^rm -r": ask
  read_file: allow
  write_file: {"*": deny}
external_directory: allow
rules:
  - {id: ignored, tools: [bash], pattern: "ls", action: deny}`, `
- {id: b, tools: [bash], pattern: "ls", action: deny}`)
	runDecisionCases(t, e, []decisionCase{
		{"pattern match", shellCall("bash", "git status"), policy.Allow, "tools.bash.patterns['git *']"},
		{"strictest pattern match; deny wins", shellCall("bash", "rm -rf x"), policy.Deny, "tools.bash.patterns['re:^rm ']"},
		{"tool level with *", shellCall("bash", "make"), policy.Allow, "tools.bash.*"},
		{"plain tool level", pathCall("read_file", "a.txt"), policy.Allow, "tools.read_file"},
		{"tool deny", pathCall("write_file", "a.txt"), policy.Deny, "tools.write_file.*"},
		{"defaults", pathCall("edit_file", "a.txt"), policy.Ask, "defaults.*"},
		{"rules and built-ins do not apply", shellCall("bash", "ls"), policy.Allow, "tools.bash.*"},
	})
	denyDefaults, _ := compileYAML(t, "defaults: {\"*\": deny}\ntools: {bash: allow}\nexternal_directory: allow", "")
	runDecisionCases(t, denyDefaults, []decisionCase{
		{"any deny among the candidates wins", shellCall("bash", "make"), policy.Deny, "defaults.*"},
	})
	none, _ := compileYAML(t, "external_directory: allow", "")
	runDecisionCases(t, none, []decisionCase{
		{"nothing configured", shellCall("bash", "make"), policy.Ask, "default"},
	})
}
