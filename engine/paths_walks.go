package engine

// linkWalk is how a program is told to follow the symbolic links it meets
// while it walks a directory: grep -R, rg -L, find -L. Such a walk reads
// whatever those links lead to, and the links below a directory cannot be
// known without walking it, so the call counts as having an unknown,
// external path (docs/decisions.md#links-followed-inside-a-walked-directory).
// A link named on the command line is resolved like any path and needs no
// entry here. The options are read as the risky options are (optTable):
// a letter anywhere in a bundle, a long option by any abbreviation of at
// least three letters, nothing after --.
type linkWalk struct {
	// follow are the options that make the walk follow links.
	follow *optTable
	// recurse and keep are set instead for a program that follows links
	// whenever it walks (one of recurse's options) unless one of keep's
	// stores them as links (zip -r, unless -y).
	recurse, keep *optTable
	// dashless: the first argument may be a bundle without its dash, as
	// in tar's old style (tar chf out.tar .).
	dashless bool
}

// whyFollows is the reason the link-walk tables give (their scan needs one).
const whyFollows = "follows the links below the directories it walks"

// linkOptions is an optTable of the letters and long names (without --)
// that make a walk follow links.
func linkOptions(letters string, longs ...string) *optTable {
	t := &optTable{short: map[byte]string{}, long: map[string]string{}}
	for i := 0; i < len(letters); i++ {
		t.short[letters[i]] = whyFollows
	}
	for _, l := range longs {
		t.long[l] = whyFollows
	}
	return t
}

// linkWalks are the programs (by base name) that walk directories and the
// options under which they follow links. No letter is taken for an
// option's value, so a word that only looks like an option (a pattern, as
// in grep -e -R) counts too: that can only make a call stricter.
var linkWalks = map[string]linkWalk{
	"grep":   {follow: linkOptions("R", "dereference-recursive")},
	"egrep":  {follow: linkOptions("R", "dereference-recursive")},
	"fgrep":  {follow: linkOptions("R", "dereference-recursive")},
	"rg":     {follow: linkOptions("L", "follow")},
	"fd":     {follow: linkOptions("L", "follow")},
	"fdfind": {follow: linkOptions("L", "follow")},
	"ag":     {follow: linkOptions("f", "follow")},
	"ack":    {follow: linkOptions("", "follow")},
	"find":   {follow: &optTable{noBundles: true, single: map[string]string{"-L": whyFollows, "-follow": whyFollows}}},
	"ls":     {follow: linkOptions("L", "dereference")},
	"du":     {follow: linkOptions("L", "dereference")},
	"tree":   {follow: linkOptions("l")},
	"cp":     {follow: linkOptions("L", "dereference")},
	"rsync":  {follow: linkOptions("Lk", "copy-links", "copy-dirlinks", "copy-unsafe-links")},
	"tar":    {follow: linkOptions("h", "dereference"), dashless: true},
	"gtar":   {follow: linkOptions("h", "dereference"), dashless: true},
	"bsdtar": {follow: linkOptions("Lh", "dereference"), dashless: true},
	"chmod":  {follow: linkOptions("L")},
	"chown":  {follow: linkOptions("L")},
	"chgrp":  {follow: linkOptions("L")},
	"zip":    {recurse: linkOptions("rR", "recurse-paths", "recurse-patterns"), keep: linkOptions("y", "symlinks")},
}

// followsLinks reports whether a command (its words, the program first)
// walks directories following the links it meets there.
func followsLinks(words []string) bool {
	if len(words) < 2 {
		return false
	}
	lw, ok := linkWalks[baseName(words[0])]
	if !ok {
		return false
	}
	args := words[1:]
	if lw.recurse != nil {
		return lw.has(lw.recurse, args) && !lw.has(lw.keep, args)
	}
	return lw.has(lw.follow, args)
}

// has reports whether args use one of t's options, in tar's old style too
// when lw allows it.
func (lw linkWalk) has(t *optTable, args []string) bool {
	if _, _, found := t.scan(args, nil); found {
		return true
	}
	if !lw.dashless || len(args) == 0 || !shortCluster(args[0], true) {
		return false
	}
	for i := 0; i < len(args[0]); i++ {
		if _, ok := t.short[args[0][i]]; ok {
			return true
		}
	}
	return false
}

// linkWalkLabel is how the unknown paths of such a walk are listed.
func linkWalkLabel(program string) string {
	return "(paths behind the links " + program + " follows)"
}
