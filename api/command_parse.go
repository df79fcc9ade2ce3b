package api

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/toolgate/toolgate/service"
)

// CommandKind is what a command line asks for.
type CommandKind int

// The kinds of command of docs/agents.md#editing-the-policy-over-the-api and 7.
const (
	CommandView      CommandKind = iota + 1 // /permissions
	CommandToolLevel                        // /permissions <level> <tool>
	CommandRule                             // /permissions <level> <tool>(<pattern>)
	CommandAddDir                           // /add-dir <path>
)

// Command is a parsed command line.
type Command struct {
	Kind    CommandKind
	Level   string // allow, ask or deny
	Tool    string // lower-cased (docs/agents.md#editing-the-policy-over-the-api)
	Pattern string // kept exactly as written
	Path    string // of /add-dir
}

// The messages of docs/agents.md#editing-the-policy-over-the-api and the others of the parser.
const (
	msgEmptyTool = "工具名不能为空。"
	msgUsage     = "用法：/permissions [<allow|ask|deny> <tool_name>[(<pattern>)]] (usage)"
)

// ErrCommand is the class of every parse error; the message is what a
// terminal prints.
var ErrCommand = errors.New("command")

// commandError is a parse error with the terminal's text.
type commandError struct{ msg string }

func (e *commandError) Error() string { return e.msg }
func (e *commandError) Is(t error) bool {
	return t == ErrCommand
}

func cmdErr(format string, args ...any) error {
	return &commandError{msg: fmt.Sprintf(format, args...)}
}

// ParseCommand parses one `/permissions ...` or `/add-dir <path>` line
// (docs/agents.md#editing-the-policy-over-the-api and 7). It is pure and never panics.
func ParseCommand(text string) (Command, error) {
	line := strings.TrimSpace(text)
	if strings.ContainsFunc(line, func(r rune) bool { return r == '\n' || r == '\r' || r == 0 }) {
		return Command{}, cmdErr("a command is one line")
	}
	name, rest, _ := strings.Cut(line, " ")
	rest = strings.TrimSpace(rest)
	switch name {
	case "/permissions":
		return parsePermissions(rest)
	case "/add-dir":
		if rest == "" {
			return Command{}, cmdErr("路径不能为空。用法：/add-dir <path> (the path is empty)")
		}
		return Command{Kind: CommandAddDir, Path: rest}, nil
	}
	return Command{}, cmdErr("未知命令 %q：仅支持 /permissions 与 /add-dir (unknown command)", name)
}

// parsePermissions parses what follows /permissions.
func parsePermissions(rest string) (Command, error) {
	if rest == "" {
		return Command{Kind: CommandView}, nil
	}
	level, target, _ := strings.Cut(rest, " ")
	level = strings.ToLower(level)
	if level != "allow" && level != "ask" && level != "deny" {
		return Command{}, cmdErr("无效级别 %q，仅允许：allow、ask、deny", level)
	}
	target = strings.TrimSpace(target)
	tool, pattern, hasPattern := strings.Cut(target, "(")
	tool = strings.ToLower(strings.TrimSpace(tool))
	if tool == "" {
		return Command{}, cmdErr(msgEmptyTool)
	}
	if strings.ContainsFunc(tool, unicode.IsSpace) {
		return Command{}, cmdErr("无效工具名 %q：工具名不能含空格 (a tool name is one word)", tool)
	}
	if !hasPattern {
		return Command{Kind: CommandToolLevel, Level: level, Tool: tool}, nil
	}
	pattern, ok := strings.CutSuffix(pattern, ")")
	if !ok {
		return Command{}, cmdErr("缺少右括号 \")\"：%s (the pattern must end with \")\")", msgUsage)
	}
	if strings.TrimSpace(pattern) == "" {
		return Command{}, cmdErr("规则模式不能为空。 (the pattern is empty)")
	}
	return Command{Kind: CommandRule, Level: level, Tool: tool, Pattern: pattern}, nil
}

// CLIRuleID is the id of a rule made by /permissions (docs/agents.md#editing-the-policy-over-the-api); the ids
// live together in service (service.CLIRuleID).
func CLIRuleID(tool, pattern string) string { return service.CLIRuleID(tool, pattern) }
