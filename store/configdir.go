package store

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// EnvConfigDir names the config dir when no --config-dir flag is given.
const EnvConfigDir = "JIUWENSWARM_CONFIG_DIR"

// File names inside the config dir.
const (
	ConfigFile  = "config.yaml"
	BuiltinFile = "builtin_rules.yaml"
	lockFile    = ".config.yaml.lock"
)

// ResolveConfigDir picks the config dir of contract 2: the flag value, else
// $JIUWENSWARM_CONFIG_DIR, else ~/.jiuwenswarm/config. A leading ~ is
// expanded and the result is absolute.
func ResolveConfigDir(flagValue string) (string, error) {
	dir := strings.TrimSpace(flagValue)
	if dir == "" {
		dir = strings.TrimSpace(os.Getenv(EnvConfigDir))
	}
	home, herr := os.UserHomeDir()
	if dir == "" {
		if herr != nil {
			return "", fmt.Errorf("config dir: no --config-dir, no $%s and no home directory: %w", EnvConfigDir, herr)
		}
		return filepath.Join(home, ".jiuwenswarm", "config"), nil
	}
	if dir == "~" || strings.HasPrefix(dir, "~/") {
		if herr != nil {
			return "", fmt.Errorf("config dir %q: %w", dir, herr)
		}
		dir = filepath.Join(home, dir[1:])
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("config dir %q: %w", dir, err)
	}
	return abs, nil
}

// ResolvePath resolves the symlinks of an absolute, cleaned, forward-slash
// path: it finds the longest prefix that exists (one lstat per level, from
// the full path up), resolves that with filepath.EvalSymlinks and appends
// the rest. A dangling symlink is followed to where it points, since writing
// through it would create its target. The result uses forward slashes. It is
// the engine's Options.ResolvePath for a real filesystem.
func ResolvePath(p string) string {
	if p == "" {
		return p
	}
	return resolvePath(p, 0)
}

// maxLinkHops bounds dangling-symlink chains (as the kernel's ELOOP does).
const maxLinkHops = 40

func resolvePath(p string, hops int) string {
	if !strings.HasPrefix(p, "/") || filepath.Separator != '/' {
		return resolveByPrefix(p, hops)
	}
	// Walk from the root, one lstat per component, stopping at the first
	// one that does not exist: nothing below it can be a symlink.
	parts := strings.Split(strings.TrimPrefix(path.Clean(p), "/"), "/")
	resolved := "/"
	for i, part := range parts {
		if part == "" {
			continue
		}
		next := path.Join(resolved, part)
		fi, err := os.Lstat(next)
		if err != nil {
			return path.Join(append([]string{resolved}, parts[i:]...)...)
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			resolved = next
			continue
		}
		target, err := os.Readlink(next)
		if err != nil || hops >= maxLinkHops || hasDotDot(target) {
			// Unusual links (.. inside the target, long chains) go the
			// slower way that resolves them exactly.
			return resolveByPrefix(p, hops)
		}
		if !path.IsAbs(target) {
			target = path.Join(resolved, target) // resolved holds no symlinks
		}
		return resolvePath(path.Join(append([]string{target}, parts[i+1:]...)...), hops+1)
	}
	return resolved
}

// hasDotDot reports whether a link target has a .. component.
func hasDotDot(target string) bool {
	for _, c := range strings.Split(filepath.ToSlash(target), "/") {
		if c == ".." {
			return true
		}
	}
	return false
}

// resolveByPrefix finds the longest existing prefix of p from the full path
// up and resolves it with filepath.EvalSymlinks; a dangling symlink is
// followed to where it points.
func resolveByPrefix(p string, hops int) string {
	native := filepath.FromSlash(p)
	cur, rest := native, ""
	for {
		if fi, err := os.Lstat(cur); err == nil {
			if resolved, err := filepath.EvalSymlinks(cur); err == nil {
				return filepath.ToSlash(filepath.Join(resolved, rest))
			}
			if fi.Mode()&os.ModeSymlink != 0 && hops < maxLinkHops {
				if target, err := os.Readlink(cur); err == nil {
					if !filepath.IsAbs(target) {
						target = filepath.Join(filepath.Dir(cur), target)
					}
					return resolvePath(filepath.ToSlash(filepath.Join(target, rest)), hops+1)
				}
			}
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}
