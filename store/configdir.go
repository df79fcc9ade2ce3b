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
// path: it walks from the root with one lstat per component, follows the
// symlinks it meets and appends the part below the first component that
// does not exist. A dangling symlink is followed to where it points, since
// writing through it would create its target. The result uses forward
// slashes. It is the engine's Options.ResolvePath for a real filesystem.
//
// On Linux one openat2 call that refuses symlinks answers first: when it
// finds none (or a missing component before any), p is its own resolution
// and the walk is skipped.
func ResolvePath(p string) string {
	if p == "" {
		return p
	}
	if path.Clean(p) == p && strings.HasPrefix(p, "/") && filepath.Separator == '/' && noSymlinkLookup(p) {
		return p
	}
	return resolvePath(p, 0, nil)
}

// PathResolver resolves paths as ResolvePath does, remembering what each
// lstat and readlink found. One is made per batch of calls decided as one
// snapshot (POST /api/v1/evaluate/batch), so calls that share directories
// look each one up once; it is never kept beyond that batch, since the
// filesystem may change between requests. It is not safe for concurrent use.
type PathResolver struct {
	seen map[string]pathEntry
}

// pathEntry is what one lstat (and, for a symlink, readlink) found.
type pathEntry struct {
	missing bool
	link    bool
	target  string
	linkErr bool
}

// NewPathResolver returns an empty PathResolver.
func NewPathResolver() *PathResolver {
	return &PathResolver{seen: make(map[string]pathEntry)}
}

// newBatchResolver is the engine's Options.BatchResolvePath for a real
// filesystem: a fresh PathResolver per batch.
func newBatchResolver() func(string) string { return NewPathResolver().Resolve }

// Resolve is ResolvePath with r's memory of the filesystem.
func (r *PathResolver) Resolve(p string) string {
	if p == "" {
		return p
	}
	return resolvePath(p, 0, r)
}

// look lstats name (and reads the link, if it is one), through r's memory
// when r is not nil.
func (r *PathResolver) look(name string) pathEntry {
	if r != nil {
		if e, ok := r.seen[name]; ok {
			return e
		}
	}
	var e pathEntry
	fi, err := os.Lstat(name)
	switch {
	case err != nil:
		e.missing = true
	case fi.Mode()&os.ModeSymlink != 0:
		e.link = true
		target, err := os.Readlink(name)
		e.target, e.linkErr = target, err != nil
	}
	if r != nil {
		r.seen[name] = e
	}
	return e
}

// maxLinkHops bounds dangling-symlink chains (as the kernel's ELOOP does).
const maxLinkHops = 40

func resolvePath(p string, hops int, r *PathResolver) string {
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
		e := r.look(next)
		if e.missing {
			return path.Join(append([]string{resolved}, parts[i:]...)...)
		}
		if !e.link {
			resolved = next
			continue
		}
		target := e.target
		if e.linkErr || hops >= maxLinkHops || hasDotDot(target) {
			// Unusual links (.. inside the target, long chains) go the
			// slower way that resolves them exactly.
			return resolveByPrefix(p, hops)
		}
		if !path.IsAbs(target) {
			target = path.Join(resolved, target) // resolved holds no symlinks
		}
		return resolvePath(path.Join(append([]string{target}, parts[i+1:]...)...), hops+1, r)
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
					return resolvePath(filepath.ToSlash(filepath.Join(target, rest)), hops+1, nil)
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
