package engine

import (
	"net/url"
	"path"
	"strings"

	"github.com/toolgate/toolgate/engine/shell"
)

// isNetworkURL reports whether s is a URL of a network scheme
// (shell.IsNetworkURL).
func isNetworkURL(s string) bool { return shell.IsNetworkURL(s) }

// fileURLPath returns the local path a file: URL names: file:///etc/x and
// file://localhost/etc/x are /etc/x, file:/etc/x is /etc/x, file://host/s
// is the UNC path //host/s, and file:///C:/x is C:/x. Percent escapes are
// decoded, as a tool opening the URL would. ok is false for a value that is
// not a file: URL.
func fileURLPath(s string) (p string, ok bool) {
	if len(s) < 5 || !strings.EqualFold(s[:5], "file:") {
		return "", false
	}
	rest := s[5:]
	if strings.HasPrefix(rest, "//") {
		rest = rest[2:]
		host, tail, _ := strings.Cut(rest, "/")
		tail = "/" + tail
		if host != "" && !strings.EqualFold(host, "localhost") {
			tail = "//" + host + tail
		}
		rest = tail
	}
	if dec, err := url.PathUnescape(rest); err == nil {
		rest = dec
	}
	if len(rest) >= 3 && rest[0] == '/' && shell.HasDriveLetter(rest[1:]) {
		rest = rest[1:]
	}
	if rest == "" {
		rest = "/"
	}
	return rest, true
}

// isUNC reports whether a path with forward slashes is a UNC path,
// //host/share: two slashes and a name (\\host\share once \ is /).
func isUNC(p string) bool {
	return len(p) > 2 && p[0] == '/' && p[1] == '/' && p[2] != '/'
}

// resolveWord makes a path word or value absolute against dir and resolves
// it as the kernel would (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm): a file: URL is its path; a UNC path
// (//host/share) and a drive-letter path are absolute and stay as
// written, cleaned; any other path is joined to dir and given to
// Options.ResolvePath, which applies each .. after the symlinks before it.
// Without a resolver the path is cleaned lexically.
//
// known is false when the path cannot be known: the word holds an unknown
// part (shell.UnknownMark), or the resolver could not settle a .. (it returned
// ""); such a path counts as external. abs is "" with known true when a
// relative path has no base.
func (e *Engine) resolveWord(w, dir string) (abs string, known bool) {
	if shell.HasUnknown(w) {
		return "", false
	}
	if p, ok := fileURLPath(w); ok {
		w = p
	}
	w = slashes(w)
	var raw string
	switch {
	case isUNC(w):
		return "/" + path.Clean(w), true
	case shell.HasDriveLetter(w):
		rest := w[2:]
		if !strings.HasPrefix(rest, "/") {
			rest = "/" + rest
		}
		return lowerDrive(w[:2]) + path.Clean(rest), true
	case strings.HasPrefix(w, "/"):
		raw = w
	case dir == "":
		return "", true
	case dir == "/":
		raw = "/" + w
	default:
		raw = dir + "/" + w
	}
	if e.opts.ResolvePath == nil || !strings.HasPrefix(raw, "/") {
		return path.Clean(raw), true
	}
	r := e.opts.ResolvePath(raw)
	if r == "" {
		return "", false
	}
	return path.Clean(r), true
}

// absolute is resolveWord for a path that must have an answer (the
// workspace): an unknown one is cleaned lexically.
func (e *Engine) absolute(w, dir string) string {
	abs, known := e.resolveWord(w, dir)
	if !known {
		return path.Clean(slashes(w))
	}
	return abs
}

// unknownPathLabel is how an external path that cannot be known is listed:
// its text with each unknown part shown as ${?}.
func unknownPathLabel(w string) string {
	return unknownLabels.Replace(w)
}

// unknownLabels writes each unknown part of a path as ${?}.
var unknownLabels = strings.NewReplacer(shell.InputMark, "${?}", shell.UnknownMark, "${?}")
