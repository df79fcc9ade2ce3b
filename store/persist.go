package store

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/toolgate/toolgate/engine"
)

// Sources written into the entries the persistence operations create.
const (
	SourceUserApproval = "user_approval"
	SourceCLIAddDir    = "cli_add_dir"
)

// maxOverrideID bounds the length of an "always allow" override id.
const maxOverrideID = 120

// AlwaysAllow persists an "always allow" answer (contract 3): when the policy
// on disk decides ask for req, it appends the approval override
// {id: user_allow_<tool>_<match_type>_<pattern>, tools: [<tool>], match_type,
// pattern, action: allow, source: user_approval}. The pattern is the exact
// command of a shell tool or the first path value of a path tool. When an
// override with that id (or the same tool, match type and pattern) exists,
// it is returned with created false. ErrNotAsk when the decision is not ask;
// ErrNoPattern for a call with no command or path.
func (s *Store) AlwaysAllow(req *engine.Request) (map[string]any, bool, error) {
	return s.AlwaysAllowBy(req, "")
}

// AlwaysAllowBy is AlwaysAllow answered by a named person: the override
// also records approved_by (the token's name) and created_at (UTC, RFC
// 3339), which the overrides page shows. The engine ignores both fields.
func (s *Store) AlwaysAllowBy(req *engine.Request, by string) (map[string]any, bool, error) {
	override, err := AlwaysAllowOverride(req)
	if err != nil {
		return nil, false, err
	}
	if by = strings.TrimSpace(by); by != "" {
		override["approved_by"] = by
		override["created_at"] = time.Now().UTC().Format(time.RFC3339)
	}
	var existing map[string]any
	_, err = s.modify(func(d *configDoc) error {
		cur, _ := d.decodedPermissions()
		section, _ := cur.(map[string]any)
		if lvl := s.engineOf(d.raw, section).Evaluate(req).Level; lvl != engine.Ask {
			return fmt.Errorf("%w (it is %s)", ErrNotAsk, lvl)
		}
		seq := ensureSeq(d.permissionsMap(), "approval_overrides")
		if existing = sameOverride(seq, override); existing != nil {
			return errUnchanged
		}
		n, err := toNode(override)
		if err != nil {
			return err
		}
		seq.Content = append(seq.Content, n)
		return nil
	})
	switch {
	case errors.Is(err, errUnchanged):
		return existing, false, nil
	case err != nil:
		return nil, false, err
	}
	return override, true, nil
}

// AlwaysAllowOverride is the approval override an "always allow" answer to
// req would write (see AlwaysAllow), without writing it, so the approval
// pages can say exactly what the answer will remember. ErrNoPattern for a
// call with no command or path.
func AlwaysAllowOverride(req *engine.Request) (map[string]any, error) {
	if req == nil || strings.TrimSpace(req.ToolName) == "" {
		return nil, invalid("tool_name", "工具名不能为空。 (the tool name is empty)")
	}
	tool := req.ToolName
	matchType, pattern := rememberedPattern(req)
	if pattern == "" {
		return nil, fmt.Errorf("%s: %w", tool, ErrNoPattern)
	}
	return map[string]any{
		"id":         overrideID(tool, matchType, pattern),
		"tools":      []any{tool},
		"match_type": matchType,
		"pattern":    literalPattern(pattern),
		"action":     "allow",
		"source":     SourceUserApproval,
	}, nil
}

// literalPattern makes a remembered command or path match only itself. As a
// pattern it would otherwise mean more: `cat *` is a glob that allows any
// cat, and a command that starts with re: (`re:.*`) a regex that allows
// everything. Such values become an anchored regex of the quoted text.
func literalPattern(v string) string {
	if strings.ContainsAny(v, "*?[") || strings.HasPrefix(v, "re:") {
		return "re:^" + regexp.QuoteMeta(v) + "$"
	}
	return v
}

// errUnchanged aborts a modify that has nothing to write.
var errUnchanged = errors.New("store: nothing to change")

// rememberedPattern picks the match type and pattern of an "always allow".
func rememberedPattern(req *engine.Request) (string, string) {
	switch engine.ToolCategory(req.ToolName) {
	case engine.CategoryShell:
		// The command as the engine reads it: an argv array joined with
		// quoting; a command it cannot read (engine.UnknownMark) is not
		// remembered.
		if c := engine.ShellCommand(req.ToolArgs); c != "" && !engine.HasUnknown(c) {
			return "command", c
		}
	case engine.CategoryPath:
		// The same walk as the engine's (nested objects and lists).
		p, _ := engine.FirstPathValue(req.ToolArgs)
		return "path", p
	}
	return "", ""
}

var nonAlnum = regexp.MustCompile(`[^a-z0-9]+`)

// overrideID is user_allow_<tool>_<match_type>_<pattern>, lower-cased, runs
// of non-alphanumerics turned into _, at most 120 characters.
func overrideID(tool, matchType, pattern string) string {
	id := nonAlnum.ReplaceAllString(strings.ToLower("user_allow_"+tool+"_"+matchType+"_"+pattern), "_")
	if len(id) > maxOverrideID {
		id = id[:maxOverrideID]
	}
	return id
}

// sameOverride finds an override with the id of o, or with its tools,
// match type and pattern.
func sameOverride(seq *yaml.Node, o map[string]any) map[string]any {
	for _, e := range seq.Content {
		v, err := decodeNode(e)
		m, ok := v.(map[string]any)
		if err != nil || !ok {
			continue
		}
		if m["id"] == o["id"] || m["pattern"] == o["pattern"] && m["match_type"] == o["match_type"] && sameTools(m["tools"], o["tools"]) {
			return m
		}
	}
	return nil
}

func sameTools(a, b any) bool {
	if s, ok := a.(string); ok {
		a = []any{s}
	}
	return fmt.Sprint(a) == fmt.Sprint(b)
}

// AddDirResult is what AddTrustedDirectory did.
type AddDirResult struct {
	// Dir is the normalized directory.
	Dir string `json:"dir"`
	// Tiered tells whether the policy is tiered (and overrides were added).
	Tiered bool `json:"tiered"`
	// ExternalDirectory is the level now set for Dir (always "allow").
	ExternalDirectory string `json:"external_directory"`
	// Created are the approval overrides appended; ones already present are
	// in Existing by id.
	Created  []map[string]any `json:"created"`
	Existing []string         `json:"existing,omitempty"`
}

// AddTrustedDirectory is /add-dir (persist_cli_trusted_directory, contract
// 3): it normalizes path (~ expanded, absolute against the workspace,
// forward slashes, no trailing /), sets external_directory[<dir>] = allow
// (creating "*": ask), and when the policy is tiered appends, unless present,
// cli_trusted_path_<sha256(dir)[:16]> for the path tools and
// cli_trusted_shell_<same> for the shell tools.
func (s *Store) AddTrustedDirectory(path string) (AddDirResult, error) {
	dir, err := s.normalizeDir(path)
	if err != nil {
		return AddDirResult{}, err
	}
	var res AddDirResult
	_, err = s.modify(func(d *configDoc) error {
		res = AddDirResult{Dir: dir, ExternalDirectory: "allow"}
		perms := d.permissionsMap()
		setExternal(perms, dir, "allow")
		cur, _ := d.decodedPermissions()
		section, _ := cur.(map[string]any)
		if res.Tiered = isTiered(section); !res.Tiered {
			s.log.Info("add-dir: policy is not tiered; only external_directory is set", "dir", dir)
			return nil
		}
		seq := ensureSeq(perms, "approval_overrides")
		for _, o := range trustedOverrides(dir) {
			if findEntry(seq, o["id"].(string)) >= 0 {
				res.Existing = append(res.Existing, o["id"].(string))
				continue
			}
			n, err := toNode(o)
			if err != nil {
				return err
			}
			seq.Content = append(seq.Content, n)
			res.Created = append(res.Created, o)
		}
		return nil
	})
	if err != nil {
		return AddDirResult{}, err
	}
	return res, nil
}

// trustedOverrides are the two overrides /add-dir appends for dir.
func trustedOverrides(dir string) []map[string]any {
	sum := sha256.Sum256([]byte(dir))
	h := hex.EncodeToString(sum[:])[:16]
	quoted := regexp.QuoteMeta(dir)
	return []map[string]any{
		{
			"id": "cli_trusted_path_" + h, "tools": toolList(engine.PathTools), "match_type": "path",
			"pattern": "re:^" + quoted + "(?:$|/)", "action": "allow", "source": SourceCLIAddDir,
		},
		{
			"id": "cli_trusted_shell_" + h, "tools": toolList(engine.ShellTools), "match_type": "command",
			"pattern": "re:.*" + quoted + ".*", "action": "allow", "source": SourceCLIAddDir,
		},
	}
}

func toolList(names []string) []any {
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = n
	}
	return out
}

// isTiered applies contract 3 through the engine's own test: schema (or
// version), lower-cased without spaces, is tiered_policy, v_cc or v4.2.
func isTiered(section map[string]any) bool {
	v, ok := section["schema"]
	if !ok {
		v = section["version"]
	}
	return engine.IsTieredSchema(v)
}

// normalizeDir expands ~, makes the path absolute against the workspace (or
// the working directory), cleans it and uses forward slashes with no
// trailing /.
func (s *Store) normalizeDir(path string) (string, error) {
	p := strings.TrimSpace(path)
	if p == "" {
		return "", invalid("path", "the directory is empty")
	}
	if p == "~" || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, `~\`) {
		p = s.opts.HomeDir + p[1:]
	}
	p = strings.ReplaceAll(p, `\`, "/")
	if !filepath.IsAbs(p) && !hasDrive(p) {
		base := s.opts.Workspace
		if base == "" {
			wd, err := os.Getwd()
			if err != nil {
				return "", fmt.Errorf("store: add-dir: %w", err)
			}
			base = wd
		}
		p = filepath.Join(base, p)
	}
	p = filepath.ToSlash(filepath.Clean(p))
	if len(p) > 1 {
		p = strings.TrimRight(p, "/")
	}
	return p, nil
}

func hasDrive(p string) bool {
	return len(p) >= 2 && p[1] == ':' && (p[0] >= 'a' && p[0] <= 'z' || p[0] >= 'A' && p[0] <= 'Z')
}
