package fsview

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/toolgate/toolgate/engine"
)

// ResolvePath resolves an absolute, forward-slash path as the kernel would
// (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm) and is the engine's Options.ResolvePath for a real
// filesystem. The path may hold . and .. components: each .. is applied to
// the directory that the components before it resolve to, symlinks
// followed, so a workspace link to / plus link/../.. leads to the root, as
// it does for open(2). Symlink chains are followed up to maxLinkHops. The
// part below the first component that does not exist is appended as
// written, a .. in it taking back the component before (the command may
// create that one as a directory first); a dangling symlink is followed to
// where it points, since writing through it creates its target.
//
// It returns "" when the answer cannot be known: a .. that follows a
// component that could not be looked at (a directory that may not be
// searched, a link chain past the bound). The engine counts such a path as
// external. A relative path is returned as it is.
//
// On Linux one openat2 call that refuses symlinks answers first for a path
// with no .. (and for the part before the first ..): when it meets none,
// the path is its own resolution and no walk is needed.
func ResolvePath(p string) string {
	if p == "" || !strings.HasPrefix(p, "/") {
		return p
	}
	if filepath.Separator != '/' {
		return resolveByPrefix(path.Clean(p), 0)
	}
	return resolveWalk(p, nil)
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
	missing bool // ENOENT or ENOTDIR: nothing is there
	failed  bool // any other error: whether something is there is unknown
	link    bool
	target  string
	linkErr bool
}

// NewPathResolver returns an empty PathResolver.
func NewPathResolver() *PathResolver {
	return &PathResolver{seen: make(map[string]pathEntry)}
}

// NewBatchResolver is the engine's Options.BatchResolvePath for a real
// filesystem: a fresh PathResolver per batch.
func NewBatchResolver() func(string) string { return NewPathResolver().Resolve }

// Resolve is ResolvePath with r's memory of the filesystem.
func (r *PathResolver) Resolve(p string) string {
	if p == "" || !strings.HasPrefix(p, "/") {
		return p
	}
	if filepath.Separator != '/' {
		return resolveByPrefix(path.Clean(p), 0)
	}
	return resolveWalk(p, r)
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
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		e.missing = true
	case err != nil:
		e.failed = true
	case fi.Mode()&os.ModeSymlink != 0:
		e.link = true
		target, err := os.Readlink(name)
		e.target, e.linkErr = target, err != nil || target == ""
	}
	if r != nil {
		r.seen[name] = e
	}
	return e
}

// maxLinkHops bounds the symlinks followed for one path, as the kernel's
// ELOOP does.
const maxLinkHops = 40

// resolveWalk resolves an absolute path: the one-call check first (without
// r, whose answers must come from its memory), then the walk.
func resolveWalk(p string, r *PathResolver) string {
	clean := path.Clean(p)
	dd := dotDotIndex(p)
	if dd < 0 {
		if r == nil && noSymlinkLookup(clean) != lookupUnknown {
			return clean
		}
		return r.walk("/", splitPath(clean))
	}
	// The part before the first .. needs no .. handling: when it exists
	// without symlinks, the walk starts there.
	if r == nil {
		if prefix := path.Clean(p[:dd]); noSymlinkLookup(prefix) == lookupExists {
			return r.walk(prefix, splitPath(p[dd:]))
		}
	}
	return r.walk("/", splitPath(p))
}

// dotDotIndex returns the offset of the first .. component of p, or -1.
func dotDotIndex(p string) int {
	for i := 0; i+1 < len(p); i++ {
		if p[i] == '.' && p[i+1] == '.' && (i == 0 || p[i-1] == '/') && (i+2 == len(p) || p[i+2] == '/') {
			return i
		}
	}
	return -1
}

// splitPath returns the components of p that are not empty or ".".
func splitPath(p string) []string {
	parts := strings.Split(p, "/")
	out := parts[:0]
	for _, c := range parts {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// walk resolves comps below resolved (an existing directory with no
// symlinks in its path), one lstat per component, as described at
// ResolvePath.
func (r *PathResolver) walk(resolved string, comps []string) string {
	var tail []string // components below the first missing one, as written
	unsure := false   // a component could not be looked at
	hops := 0
	fastFrom := lastDotDot(comps) + 1
	for i := 0; i < len(comps); i++ {
		if i == fastFrom && i > 0 && r == nil && !unsure && len(tail) == 0 {
			// No .. remains: one openat2 may settle the rest.
			rest := path.Join(append([]string{resolved}, comps[i:]...)...)
			if noSymlinkLookup(rest) != lookupUnknown {
				return rest
			}
		}
		c := comps[i]
		if c == ".." {
			switch {
			case unsure:
				return ""
			case len(tail) > 0:
				tail = tail[:len(tail)-1]
			default:
				resolved = path.Dir(resolved)
			}
			continue
		}
		if unsure || len(tail) > 0 {
			tail = append(tail, c)
			continue
		}
		next := path.Join(resolved, c)
		e := r.look(next)
		switch {
		case e.missing:
			tail = append(tail, c)
		case e.failed:
			unsure = true
			tail = append(tail, c)
		case e.link && (e.linkErr || hops >= maxLinkHops):
			unsure = true
			tail = append(tail, c)
		case e.link:
			hops++
			if path.IsAbs(e.target) {
				resolved = "/"
			}
			comps = append(splitPath(filepath.ToSlash(e.target)), comps[i+1:]...)
			fastFrom = lastDotDot(comps) + 1
			i = -1
		default:
			resolved = next
		}
	}
	if len(tail) == 0 {
		return resolved
	}
	return path.Join(append([]string{resolved}, tail...)...)
}

// lastDotDot returns the index of the last .. in comps, or -1.
func lastDotDot(comps []string) int {
	for i := len(comps) - 1; i >= 0; i-- {
		if comps[i] == ".." {
			return i
		}
	}
	return -1
}

// resolveByPrefix resolves a path where the separator is not /: it finds
// the longest existing prefix and resolves it with filepath.EvalSymlinks; a
// dangling symlink is followed to where it points.
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
					return resolveByPrefix(filepath.ToSlash(filepath.Join(target, rest)), hops+1)
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

// lookupState is what the one-call check found.
type lookupState uint8

const (
	lookupUnknown lookupState = iota // the walk must decide
	lookupExists                     // p exists and no component is a symlink
	lookupMissing                    // a component is missing, with no symlink before it
)

// KindOf tells what p is (nothing, a plain file, a folder or a symbolic
// link, dangling or not), with one lstat. It is the engine's
// Options.KindOf beside ResolvePath.
func KindOf(p string) engine.FileKind { return lstatKind(p) }

// MaxGlobMatches bounds the files Glob returns for one pattern.
const MaxGlobMatches = 64

// Glob expands an absolute filename glob against the real filesystem, as
// the shell would (hidden files only for a pattern that names the dot),
// and returns at most MaxGlobMatches files; a bad pattern matches nothing.
func Glob(pattern string) []string {
	if !strings.HasPrefix(pattern, "/") {
		return nil
	}
	matches, err := filepath.Glob(pattern)
	if err != nil {
		return nil
	}
	if len(matches) > MaxGlobMatches {
		matches = matches[:MaxGlobMatches]
	}
	return matches
}
