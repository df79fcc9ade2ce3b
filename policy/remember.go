package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"regexp"
	"slices"
	"strings"
)

// Sources written into the entries the persistence operations create.
const (
	SourceUserApproval = "user_approval"
	SourceCLIAddDir    = "cli_add_dir"
)

// Match types of a rule. command and path say what the rule's tools
// match anyway (informative); args makes the rule match the call's
// arguments as canonical JSON (docs/decisions.md#args-rules).
const (
	MatchCommand = "command"
	MatchPath    = "path"
	MatchArgs    = "args"
)

// ValidMatchType reports whether s is a match type a rule may name.
func ValidMatchType(s string) bool { return s == MatchCommand || s == MatchPath || s == MatchArgs }

// MaxOverrideID bounds the length of an "always allow" override id.
const MaxOverrideID = 120

var (
	// ErrNoTool is an "always allow" for a call without a tool name.
	ErrNoTool = errors.New("policy: the tool name is empty")
	// ErrNothingToRemember is an "always allow" for a call with no command
	// or path to remember (a network tool, a call without arguments, a
	// command the engine cannot read).
	ErrNothingToRemember = errors.New("policy: no command or path to remember")
)

// AlwaysAllow is the approval override an "always allow" answer writes
// (docs/decisions.md): {id: user_allow_<tool>_<match_type>_<pattern>, tools:
// [<tool>], match_type, pattern, action: allow, source: user_approval}.
// matchType and pattern are what the engine says the call is
// (engine.Remembered: the exact command of a shell tool, the first path
// value of a path tool); pattern is made literal (LiteralPattern).
func AlwaysAllow(tool, matchType, pattern string) (Override, error) {
	if strings.TrimSpace(tool) == "" {
		return Override{}, &FieldError{Field: "tool_name", Message: "工具名不能为空。 (the tool name is empty)", Err: ErrNoTool}
	}
	if pattern == "" {
		return Override{}, ErrNothingToRemember
	}
	return Override{
		ID:        OverrideID(tool, matchType, pattern),
		Tools:     []string{tool},
		MatchType: matchType,
		Pattern:   LiteralPattern(pattern),
		Action:    Allow,
		Source:    SourceUserApproval,
	}, nil
}

// LiteralPattern makes a remembered command or path match only itself. As a
// pattern it would otherwise mean more: `cat *` is a glob that allows any
// cat, and a command that starts with re: (`re:.*`) a regex that allows
// everything. Such values become an anchored regex of the quoted text.
func LiteralPattern(v string) string {
	if strings.ContainsAny(v, "*?[") || strings.HasPrefix(v, "re:") {
		return "re:^" + regexp.QuoteMeta(v) + "$"
	}
	return v
}

var nonAlnum = regexp.MustCompile(`[^a-z0-9]+`)

// OverrideID is user_allow_<tool>_<match_type>_<pattern>, lower-cased, runs
// of non-alphanumerics turned into _, at most MaxOverrideID characters.
func OverrideID(tool, matchType, pattern string) string {
	id := nonAlnum.ReplaceAllString(strings.ToLower("user_allow_"+tool+"_"+matchType+"_"+pattern), "_")
	if len(id) > MaxOverrideID {
		id = id[:MaxOverrideID]
	}
	return id
}

// SameOverride reports whether an existing override is the one o would
// add: the same id, or the same tools, match type and pattern.
func SameOverride(existing, o *Override) bool {
	if existing.ID == o.ID {
		return true
	}
	return existing.Pattern == o.Pattern && existing.MatchType == o.MatchType && slices.Equal(existing.Tools, o.Tools)
}

// TrustedDirOverrides are the two overrides /add-dir appends for a
// normalized directory (docs/decisions.md): cli_trusted_path_<sha256(dir)[:16]>
// for the path tools and cli_trusted_shell_<same> for the shell tools.
func TrustedDirOverrides(dir string, pathTools, shellTools []string) [2]Override {
	sum := sha256.Sum256([]byte(dir))
	h := hex.EncodeToString(sum[:])[:16]
	quoted := regexp.QuoteMeta(dir)
	return [2]Override{
		{ID: "cli_trusted_path_" + h, Tools: slices.Clone(pathTools), MatchType: MatchPath,
			Pattern: "re:^" + quoted + "(?:$|/)", Action: Allow, Source: SourceCLIAddDir},
		{ID: "cli_trusted_shell_" + h, Tools: slices.Clone(shellTools), MatchType: MatchCommand,
			Pattern: "re:.*" + quoted + ".*", Action: Allow, Source: SourceCLIAddDir},
	}
}
