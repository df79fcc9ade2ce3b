package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
)

// probeCommand is the command of the last rule written by writeConfig: its
// action tells which version of the file is in force (see waitForAction).
const probeCommand = "memstart-probe now"

// writeConfig writes a config.yaml whose permissions section holds n user
// rules and n/10 approval overrides, the last rule being the probe (a glob
// for probeCommand with probeAction). The mix follows the engine's own
// benchmark generator (engine/prefilter_gen_test.go), so figures compare:
// half shell globs ("<verb> taskN *"), a quarter shell regexes, a quarter
// path globs for the file tools; the overrides are what "always allow" and
// /add-dir write (quoted command regexes, literal commands, directory
// regexes). The same seed gives the same file.
func writeConfig(w io.Writer, n int, probeAction string) error {
	var b strings.Builder
	b.Grow(n * 140)
	b.WriteString(configHead)
	b.WriteString("  rules:\n")
	r := rand.New(rand.NewPCG(uint64(n), 9))
	verbs := []string{"npm run", "make", "cargo", "git", "docker compose", "kubectl", "pnpm", "python -m"}
	actions := []string{"allow", "ask", "deny"}
	for i := 0; i < n-1; i++ {
		name := fmt.Sprintf("task%d", i)
		fmt.Fprintf(&b, "    - id: gen_%d\n", i)
		switch i % 4 {
		case 0, 1:
			fmt.Fprintf(&b, "      tools: [bash]\n      pattern: %q\n", verbs[r.IntN(len(verbs))]+" "+name+" *")
		case 2:
			fmt.Fprintf(&b, "      tools: [bash]\n      pattern: %q\n", fmt.Sprintf(`re:^(%s|%s-ci)\s+--target=\w+`, name, name))
		default:
			fmt.Fprintf(&b, "      tools: [read_file, write_file, edit_file]\n      match_type: path\n      pattern: %q\n", fmt.Sprintf("/srv/proj%d/**", i))
		}
		fmt.Fprintf(&b, "      action: %s\n", actions[r.IntN(3)])
	}
	fmt.Fprintf(&b, "    - id: memstart_probe\n      tools: [bash]\n      pattern: %q\n      action: %s\n", probeCommand+"*", probeAction)
	b.WriteString("  approval_overrides:\n")
	for i := 0; i < n/10; i++ {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, "    - id: user_allow_bash_command_make_build%d\n      tools: [bash]\n      match_type: command\n      pattern: %q\n", i, fmt.Sprintf(`re:^make build%d \*$`, i))
		case 1:
			fmt.Fprintf(&b, "    - id: user_allow_bash_command_go_test%d\n      tools: [bash]\n      match_type: command\n      pattern: %q\n", i, fmt.Sprintf("go test ./pkg%d/...", i))
		default:
			fmt.Fprintf(&b, "    - id: cli_trusted_path_%016x\n      tools: [read_file, write_file]\n      match_type: path\n      pattern: %q\n", i, fmt.Sprintf(`re:^/data/share%d(/.*)?$`, i))
		}
		b.WriteString("      action: allow\n      source: user_approval\n")
	}
	b.WriteString(configTail)
	_, err := io.WriteString(w, b.String())
	return err
}

const configHead = `# config.yaml written by cmd/memstart (memory figures)
permissions:
  enabled: true
  schema: tiered_policy
  permission_mode: normal
  defaults:
    "*": ask
  tools:
    read_file: allow
    grep: allow
    bash: ask
    write_file: ask
    edit_file: ask
`

const configTail = `  external_directory:
    "*": ask
`
