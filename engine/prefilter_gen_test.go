package engine

import (
	"fmt"
	"math/rand/v2"
)

// generatedRules builds n realistic user rules with a fixed seed: globs like
// "npm run <name> *", re: rules with words, path globs "/srv/<proj>/**".
func generatedRules(n int) []any {
	r := rand.New(rand.NewPCG(uint64(n), 9))
	verbs := []string{"npm run", "make", "cargo", "git", "docker compose", "kubectl", "pnpm", "python -m"}
	actions := []string{"allow", "ask", "deny"}
	out := make([]any, 0, n)
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("task%d", i)
		var rule map[string]any
		switch i % 4 {
		case 0, 1:
			rule = map[string]any{"tools": []any{"bash"}, "pattern": verbs[r.IntN(len(verbs))] + " " + name + " *"}
		case 2:
			rule = map[string]any{"tools": []any{"bash"}, "pattern": fmt.Sprintf(`re:^(%s|%s-ci)\s+--target=\w+`, name, name)}
		default:
			rule = map[string]any{"tools": []any{"read_file", "write_file", "edit_file"}, "pattern": fmt.Sprintf("/srv/proj%d/**", i)}
		}
		rule["id"] = fmt.Sprintf("gen_%d", i)
		rule["action"] = actions[r.IntN(3)]
		out = append(out, rule)
	}
	return out
}
