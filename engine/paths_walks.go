package engine

import "strings"

// linkWalk is how a program is told to follow the symbolic links it meets
// while it walks a directory: grep -R, rg -L, find -L. Such a walk reads
// whatever those links lead to, and the links below a directory cannot be
// known without walking it, so the call counts as having an unknown,
// external path (docs/decisions.md#links-followed-inside-a-walked-directory).
// A link named on the command line is resolved like any path and needs no
// entry here.
type linkWalk struct {
	short string   // one-letter options that follow links, anywhere in a cluster (-rR)
	long  []string // --long options, alone or with =value
	words []string // whole words (find's -L and -follow)
	// byDefault: the program follows links when it recurses (one of the
	// recurse letters or longs) unless one of the keep letters or longs
	// says to store links as links (zip -r, unless -y).
	byDefault               bool
	recurseShort, keepShort string
	recurseLong, keepLong   []string
	// dashless: the first argument may be a cluster without its dash, as
	// in tar's old style (tar chf out.tar .).
	dashless bool
}

// linkWalks are the programs (by base name) that walk directories and the
// options under which they follow links. A letter is recognized anywhere
// in a cluster of short options, and a word that only looks like an option
// (a pattern such as grep -e -R) counts too: both can only make a call
// stricter. Words after -- are operands.
var linkWalks = map[string]linkWalk{
	"grep":   {short: "R", long: []string{"--dereference-recursive"}},
	"egrep":  {short: "R", long: []string{"--dereference-recursive"}},
	"fgrep":  {short: "R", long: []string{"--dereference-recursive"}},
	"rg":     {short: "L", long: []string{"--follow"}},
	"fd":     {short: "L", long: []string{"--follow"}},
	"fdfind": {short: "L", long: []string{"--follow"}},
	"ag":     {short: "f", long: []string{"--follow"}},
	"ack":    {long: []string{"--follow"}},
	"find":   {words: []string{"-L", "-follow"}},
	"ls":     {short: "L", long: []string{"--dereference"}},
	"du":     {short: "L", long: []string{"--dereference"}},
	"tree":   {short: "l"},
	"cp":     {short: "L", long: []string{"--dereference"}},
	"rsync":  {short: "Lk", long: []string{"--copy-links", "--copy-dirlinks", "--copy-unsafe-links"}},
	"tar":    {short: "h", long: []string{"--dereference"}, dashless: true},
	"bsdtar": {short: "Lh", long: []string{"--dereference"}, dashless: true},
	"chmod":  {short: "L"},
	"chown":  {short: "L"},
	"chgrp":  {short: "L"},
	"zip": {byDefault: true, recurseShort: "rR", recurseLong: []string{"--recurse-paths", "--recurse-patterns"},
		keepShort: "y", keepLong: []string{"--symlinks"}},
}

// followsLinks reports whether a command (its words, the program first)
// walks directories following the links it meets there.
func followsLinks(words []string) bool {
	if len(words) < 2 {
		return false
	}
	name := words[0]
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	lw, ok := linkWalks[name]
	if !ok {
		return false
	}
	if lw.byDefault {
		return lw.has(words, lw.recurseShort, lw.recurseLong) && !lw.has(words, lw.keepShort, lw.keepLong)
	}
	return lw.has(words, lw.short, lw.long)
}

// has reports whether an option word before -- sets one of letters (in a
// cluster of short options), is one of longs (alone or with =value) or is
// one of lw.words.
func (lw linkWalk) has(words []string, letters string, longs []string) bool {
	for i, w := range words[1:] {
		switch {
		case w == "--":
			return false
		case i == 0 && lw.dashless && w != "" && w[0] != '-' && !strings.ContainsAny(w, "/."):
			if letters != "" && strings.ContainsAny(w, letters) {
				return true
			}
			continue
		case len(w) < 2 || w[0] != '-':
			continue
		case w[1] == '-':
			for _, l := range longs {
				if w == l || strings.HasPrefix(w, l+"=") {
					return true
				}
			}
		case letters != "" && strings.ContainsAny(w[1:], letters):
			return true
		}
		for _, x := range lw.words {
			if w == x {
				return true
			}
		}
	}
	return false
}

// linkWalkLabel is how the unknown paths of such a walk are listed.
func linkWalkLabel(program string) string {
	return "(paths behind the links " + program + " follows)"
}
