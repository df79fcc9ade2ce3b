// Command toolgate is the terminal client of a toolgate server. It owns
// what an agent or a person at a terminal does with toolgate:
//
//   - toolgate hook claude-code|codex|gemini reads one hook event on stdin,
//     posts it to /api/v1/hooks/<agent> and prints the agent's answer on
//     stdout. When the server cannot be reached or answers an error it
//     prints the reason on stderr and exits 2, which each of the three
//     agents reads at PreToolUse (BeforeTool) as "block this call": the
//     command hook fails closed. (At PermissionRequest, exit 2 gives no
//     decision, and the agent prompts in the terminal as it would have.)
//     With --print-config it prints the settings snippet that installs the
//     hook for the current server instead.
//   - toolgate setup claude-code|codex|gemini merges those hooks into the
//     agent's own settings file (a backup kept; Codex's trust of them
//     recorded through codex app-server), and toolgate doctor checks the
//     wiring by running each hook as the agent would with a call toolgate
//     must deny.
//   - toolgate permissions [<level> <tool>[(<pattern>)]] and
//     toolgate add-dir <path> run the spec's /permissions and /add-dir
//     commands (spec sections 6 and 7) through POST /api/v1/commands and
//     print their text.
//   - toolgate evaluate decides one call (from flags, or a JSON body on
//     stdin) through POST /api/v1/evaluate and prints the decision.
//   - toolgate import AGENT FILE converts an agent's permission settings
//     into toolgate's (package importer), prints them and, with --write,
//     adds what the policy lacks through the REST API.
//   - toolgate grants lists the live grants (answers remembered for a
//     session or a while, docs/grants.md) and toolgate grants revoke ID
//     takes one back.
//   - toolgate mcp -- COMMAND starts an MCP server and stands between it
//     and the agent on stdio: each tools/call is decided through
//     POST /api/v1/check as mcp__NAME__TOOL (cmd/internal/mcpgate), and a
//     refused or undecidable call never reaches the server. With
//     --upstream URL it serves the same gateway on --listen in front of
//     a Streamable HTTP MCP server.
//
// The server is $TOOLGATE_URL (default http://127.0.0.1:8765) and the
// token $TOOLGATE_TOKEN, or the --url, --token and --token-file flags.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

// Exit codes.
const (
	exitOK    = 0
	exitError = 1 // a command failed (bad arguments, an API error)
	exitBlock = 2 // a hook could not get an answer: the agent blocks the call
	// exitPartial (3, import.go): an import carried some entries over not
	// as they decide in the agent, or not at all.
)

// failed says on stderr what failed and why, "what: err", and gives the
// exit code of a failed command.
func failed(stderr io.Writer, what string, err error) int {
	fmt.Fprintf(stderr, "%s: %v\n", what, err)
	return exitError
}

const usage = `usage:
  toolgate hook claude-code|codex|gemini [--wait SECONDS]   (reads one hook event on stdin)
  toolgate hook claude-code|codex|gemini --print-config [--command] [--wait SECONDS] [--bin PATH]
  toolgate setup claude-code|codex|gemini [--project DIR] [--command] [--wait SECONDS] [--dry-run] [--remove]
  toolgate doctor [claude-code|codex|gemini ...] [--project DIR]
  toolgate permissions [<allow|ask|deny> <tool>[(<pattern>)]]
  toolgate add-dir <path>
  toolgate evaluate --tool NAME [--arg KEY=VALUE ...] [--channel ID] [--workspace DIR] [--explain] [--json]
  toolgate evaluate [--json] < request.json
  toolgate mcp [--name NAME] [--wait SECONDS] [--session ID] -- COMMAND [ARGS...]   (an MCP server over stdio)
  toolgate mcp [--name NAME] [--wait SECONDS] --upstream URL [--listen ADDR] [--allow-origin ORIGIN]   (an MCP server over HTTP)
  toolgate import claude-code|codex|gemini|opencode FILE [--write] [--project DIR] [--home DIR]
  toolgate test [--config-dir DIR] [--workspace DIR] [--filesystem] [DECISIONS.jsonl]   (the rules' examples and expected decisions, no server)
  toolgate grants [--agent AGENT] [--session ID] [--tool NAME] [--json]   (the live grants)
  toolgate grants revoke ID

Every command takes --url (default $TOOLGATE_URL, else http://127.0.0.1:8765),
--token (default $TOOLGATE_TOKEN) and --token-file.
`

// run is the command line; it returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitError
	}
	switch args[0] {
	case "hook":
		return runHook(args[1:], stdin, stdout, stderr, getenv)
	case "permissions":
		return runPermissions(args[1:], stdout, stderr, getenv)
	case "add-dir":
		return runAddDir(args[1:], stdout, stderr, getenv)
	case "evaluate":
		return runEvaluate(args[1:], stdin, stdout, stderr, getenv)
	case "setup":
		return runSetup(args[1:], stdout, stderr, getenv)
	case "doctor":
		return runDoctor(args[1:], stdout, stderr, getenv)
	case "mcp":
		return runMCP(args[1:], stdin, stdout, stderr, getenv)
	case "import":
		return runImport(args[1:], stdout, stderr, getenv)
	case "test":
		return runTest(args[1:], stdout, stderr, getenv)
	case "grants":
		return runGrants(args[1:], stdout, stderr, getenv)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "toolgate: unknown command %q\n%s", args[0], usage)
	return exitError
}
