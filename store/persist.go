package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolgate/toolgate/policy"
)

// Sources written into the entries the persistence operations create
// (policy owns them).
const (
	SourceUserApproval = policy.SourceUserApproval
	SourceCLIAddDir    = policy.SourceCLIAddDir
)

// AddDirResult is what AddTrustedDirectory did.
type AddDirResult struct {
	// Dir is the normalized directory.
	Dir string
	// Tiered tells whether the policy is tiered (and overrides were added).
	Tiered bool
	// ExternalDirectory is the level now set for Dir (always "allow").
	ExternalDirectory string
	// Created are the approval overrides appended; ones already present are
	// in Existing by id.
	Created  []policy.Override
	Existing []string
}

// AddTrustedDirectory is /add-dir (persist_cli_trusted_directory,
// docs/decisions.md#approval-overrides-always-allow-and-add-dir): it normalizes path (~ expanded, absolute against the workspace,
// forward slashes, no trailing /), sets external_directory[<dir>] = allow
// (creating "*": ask), and when the policy is tiered appends, unless present,
// cli_trusted_path_<sha256(dir)[:16]> for the path tools and
// cli_trusted_shell_<same> for the shell tools.
func (s *Store) AddTrustedDirectory(path string, tools DirTools) (AddDirResult, error) {
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
		for _, o := range policy.TrustedDirOverrides(dir, tools.Path, tools.Shell) {
			if findEntry(seq, o.ID) >= 0 {
				res.Existing = append(res.Existing, o.ID)
				continue
			}
			n, err := ruleNode(&o)
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

// DirTools are the tools the two overrides of /add-dir name: the engine's
// path tools and shell tools (engine.PathTools, engine.ShellTools), which
// the caller passes so that storage need not know the tool tables.
type DirTools struct {
	Path, Shell []string
}

// isTiered applies docs/decisions.md through the engine's own test
// (policy.IsTieredSchema): schema (or
// version), lower-cased without spaces, is tiered_policy, v_cc or v4.2.
func isTiered(section map[string]any) bool {
	v, ok := section["schema"]
	if !ok {
		v = section["version"]
	}
	return policy.IsTieredSchema(v)
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
