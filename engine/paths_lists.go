package engine

import "strings"

// listFileOption is an option whose value names a file that lists paths
// the program then opens (xargs -a list cat, tar -T list): the paths in
// that file cannot be known statically, so the call counts as having an
// unknown, external path (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm).
type listFileOption struct {
	short byte   // the one-letter form, 0 for none
	long  string // the --long form, "" for none
}

// listFileOptions are the programs (by base name) and their list-file
// options. A short letter is recognized anywhere in a cluster of short
// options (-0a, czfT), which can only make a call stricter.
var listFileOptions = map[string][]listFileOption{
	"xargs":  {{short: 'a', long: "--arg-file"}},
	"tar":    {{short: 'T', long: "--files-from"}},
	"bsdtar": {{short: 'T', long: "--files-from"}},
	"rsync":  {{long: "--files-from"}},
	"cpio":   {{short: 'E', long: "--pattern-file"}},
	"zip":    {{short: '@', long: "--names-stdin"}},
	"git":    {{long: "--pathspec-from-file"}},
	"du":     {{long: "--files0-from"}},
	"wc":     {{long: "--files0-from"}},
	"sort":   {{long: "--files0-from"}},
	"file":   {{short: 'f', long: "--files-from"}},
}

// readsPathList reports whether a command (its words, the program first)
// takes paths from a file named by an option, and returns that file.
func readsPathList(words []string) (string, bool) {
	if len(words) < 2 {
		return "", false
	}
	name := baseName(words[0])
	opts, ok := listFileOptions[name]
	if !ok {
		return "", false
	}
	for i := 1; i < len(words); i++ {
		w := words[i]
		next := ""
		if i+1 < len(words) {
			next = words[i+1]
		}
		for _, o := range opts {
			if o.long != "" && strings.HasPrefix(w, o.long) {
				switch rest := w[len(o.long):]; {
				case rest == "":
					return next, true
				case rest[0] == '=':
					return rest[1:], true
				}
			}
			if o.short != 0 && shortCluster(w, i == 1 && name == "tar") && strings.IndexByte(w, o.short) > 0 {
				return next, true
			}
		}
	}
	return "", false
}

// shortCluster reports whether w is a cluster of short options (-xyz), or,
// for tar's old style, its first argument without a dash.
func shortCluster(w string, tarFirst bool) bool {
	if len(w) >= 2 && w[0] == '-' && w[1] != '-' {
		return true
	}
	return tarFirst && w != "" && w[0] != '-' && !strings.ContainsAny(w, "/.")
}

// plainWords appends the space-separated words of a plain command (one the
// fast path reads without a parse) to words.
func plainWords(words []string, command string) []string {
	eachPlainWord(command, func(w string) { words = append(words, w) })
	return words
}

// pathListLabel is how an external path read from a list file is listed.
func pathListLabel(file string) string {
	if file == "" {
		file = "stdin"
	}
	return "(paths listed in " + file + ")"
}
