package peers

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/toolgate/toolgate/policy"
)

// Rule is one user rule of the shared policy: a glob over a shell command
// or a path, the tools it applies to and the level it gives.
type Rule struct {
	ID      string
	Tools   []string
	Pattern string
	Action  policy.Level
}

// Workspace is the workspace of every call: a path tool call outside it is
// asked (toolgate's external_directory "*": ask).
const Workspace = "/ws/project"

// shellTools and pathTools are the tools the policy names; the rules of a
// shell tool match the command, those of a path tool match the path.
var (
	shellTools = []string{"bash"}
	pathTools  = []string{"read_file", "write_file"}
)

// toolLevels are the whole-tool levels of the policy, as in the default
// config that the store writes; defaultLevel is the level of any other tool.
var toolLevels = map[string]policy.Level{"bash": policy.Ask, "read_file": policy.Allow, "write_file": policy.Ask}

const defaultLevel = policy.Ask

// headRules are the rules every policy starts with, one for each way a
// shell call can be decided by a rule, as in toolgate's decision matrix.
var headRules = []Rule{
	{ID: "allow_deploy", Tools: shellTools, Pattern: "make deploy *", Action: policy.Allow},
	{ID: "ask_push", Tools: shellTools, Pattern: "git push *", Action: policy.Ask},
	{ID: "deny_delete", Tools: shellTools, Pattern: "kubectl delete *", Action: policy.Deny},
}

// verbs are the command words of the generated shell rules.
var verbs = []string{"npm run", "make", "cargo", "git", "kubectl", "pnpm", "docker compose", "python -m"}

// Rules is the policy of n user rules: the head rules, then generated ones
// with a fixed seed. Three in four are shell globs "<verb> taskN *", one in
// four a path glob "/srv/projN/**" for the path tools; the levels are
// spread over allow, ask and deny. There are no regular expressions: Cedar
// has none, and all three engines must decide the same policy.
func Rules(n int) []Rule {
	r := rand.New(rand.NewPCG(29, 9)) // one seed: rule i is the same at every size
	levels := []policy.Level{policy.Allow, policy.Ask, policy.Deny}
	out := append(make([]Rule, 0, max(n, len(headRules))), headRules...)
	for i := 0; len(out) < n; i++ {
		rule := Rule{ID: fmt.Sprintf("gen_%d", i), Action: levels[r.IntN(len(levels))]}
		if i%4 == 3 {
			rule.Tools, rule.Pattern = pathTools, fmt.Sprintf("/srv/proj%d/**", i)
		} else {
			rule.Tools, rule.Pattern = shellTools, fmt.Sprintf("%s task%d *", verbs[r.IntN(len(verbs))], i)
		}
		out = append(out, rule)
	}
	return out
}

// isShell says whether a tool's rules match a command (else a path).
func isShell(tool string) bool { return tool == "bash" }

// separator is what splits a tool's value into the parts a rule is indexed
// by: words of a command, segments of a path.
func separator(tool string) string {
	if isShell(tool) {
		return " "
	}
	return "/"
}

// maxKeyParts is how many leading parts of a value index a rule in the peer
// engines: three words ("docker compose task7", "make deploy") or three
// path parts ("", "srv", "proj7").
const maxKeyParts = 3

// IndexKey is the key a rule is filed under in the peer engines: the
// leading parts of its pattern before the first one with a glob character,
// at most maxKeyParts of them (indexParts), joined. A call looks its
// value's leading 0 to maxKeyParts parts up, so it finds every rule whose
// literal prefix it has.
func IndexKey(tool, pattern string) string {
	return strings.Join(indexParts(tool, pattern), separator(tool))
}

// indexParts are the parts IndexKey joins.
func indexParts(tool, pattern string) []string {
	parts := strings.Split(pattern, separator(tool))
	n := 0
	for n < len(parts) && n < maxKeyParts && !strings.ContainsAny(parts[n], "*?[") {
		n++
	}
	return parts[:n]
}
