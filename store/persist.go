package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
)

// Sources written into the entries the persistence operations create
// (policy owns them).
const (
	SourceUserApproval = policy.SourceUserApproval
	SourceCLIAddDir    = policy.SourceCLIAddDir
)

// AlwaysAllow persists an "always allow" answer (docs/decisions.md): when the policy
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
// pages can say exactly what the answer will remember. What is remembered
// is engine.Remembered and policy.AlwaysAllow, the one place that decides
// it. ErrNoPattern for a call with no command or path; a ValidationError
// naming tool_name for a call without a tool.
func AlwaysAllowOverride(req *engine.Request) (map[string]any, error) {
	o, err := engine.AlwaysAllowOverride(req)
	var fe *policy.FieldError
	switch {
	case errors.As(err, &fe):
		return nil, invalid(fe.Field, fe.Message)
	case errors.Is(err, policy.ErrNothingToRemember):
		return nil, fmt.Errorf("%s: %w", req.ToolName, ErrNoPattern)
	case err != nil:
		return nil, err
	}
	return o.Map(), nil
}

// errUnchanged aborts a modify that has nothing to write.
var errUnchanged = errors.New("store: nothing to change")

// sameOverride finds an override with the id of o, or with its tools,
// match type and pattern (policy.SameOverride), and returns it decoded.
func sameOverride(seq *yaml.Node, o map[string]any) map[string]any {
	want, _, _ := policy.DecodeRule(o, "")
	for _, e := range seq.Content {
		v, err := decodeNode(e)
		m, ok := v.(map[string]any)
		if err != nil || !ok {
			continue
		}
		if got, _, _ := policy.DecodeRule(m, ""); policy.SameOverride(&got, &want) {
			return m
		}
	}
	return nil
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

// trustedOverrides are the two overrides /add-dir appends for dir
// (policy.TrustedDirOverrides).
func trustedOverrides(dir string) []map[string]any {
	pair := policy.TrustedDirOverrides(dir, engine.PathTools, engine.ShellTools)
	return []map[string]any{pair[0].Map(), pair[1].Map()}
}

// isTiered applies docs/decisions.md through the engine's own test: schema (or
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
