package engine

import (
	"slices"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/policy"
)

// problemParts rank the parts of a policy in the order its problems are
// listed: the section's switches, its unknown keys, tools and defaults,
// the built-in rules, the user rules, the overrides, external_directory,
// owner_scopes and the guidance message.
var problemParts = []struct {
	prefix string
	rank   int
}{
	{"permissions.enabled", 0},
	{"permissions.permission_mode", 1},
	{"permissions.tools", 3},
	{"permissions.defaults", 4},
	{policy.PathBuiltin, 5},
	{policy.PathRules, 6},
	{policy.PathOverrides, 7},
	{policy.PathExternal, 8},
	{policy.PathOwners, 9},
	{"permissions.deny_guidance_message", 10},
}

// ruleFieldRank orders the problems of one rule as compiling one rule
// finds them: tools, pattern, level, match type, then the id.
var ruleFieldRank = map[string]int{"tools": 0, "pattern": 1, "action": 2, "severity": 2, "match_type": 3, "id": 4}

// problemKey places a problem: the part of the policy, the entry's index
// in a list, and the field inside the entry.
type problemKey struct{ part, index, field int }

func keyOf(path string) problemKey {
	k := problemKey{part: 2, index: -1, field: -1} // an unknown key of the section
	for _, p := range problemParts {
		if rest, ok := strings.CutPrefix(path, p.prefix); ok {
			k.part = p.rank
			if p.rank >= 5 && p.rank <= 7 && strings.HasPrefix(rest, "[") {
				if end := strings.IndexByte(rest, ']'); end > 0 {
					if i, err := strconv.Atoi(rest[1:end]); err == nil {
						k.index = i
					}
					if f, ok := ruleFieldRank[strings.TrimPrefix(rest[end+1:], ".")]; ok {
						k.field = f
					}
				}
			}
			break
		}
	}
	return k
}

// orderProblems sorts decoding's and compiling's problems together (stable)
// so that each part of the policy, and each rule, lists its problems in
// one place, as they are in the file.
func orderProblems(ps []policy.Problem) {
	if len(ps) < 2 {
		return
	}
	keys := make(map[string]problemKey, len(ps))
	for _, p := range ps {
		if _, ok := keys[p.Path]; !ok {
			keys[p.Path] = keyOf(p.Path)
		}
	}
	slices.SortStableFunc(ps, func(a, b policy.Problem) int {
		ka, kb := keys[a.Path], keys[b.Path]
		if ka.part != kb.part {
			return ka.part - kb.part
		}
		if ka.index != kb.index {
			return ka.index - kb.index
		}
		return ka.field - kb.field
	})
}
