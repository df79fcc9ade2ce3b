package engine

import (
	"strings"

	"github.com/toolgate/toolgate/engine/shell"
)

// optionPathPrograms are the programs of listFileOptions and linkWalks: a
// plain command whose program is neither pays one lookup here and no more.
var optionPathPrograms = func() map[string]bool {
	m := make(map[string]bool, len(listFileOptions)+len(linkWalks))
	for name := range listFileOptions {
		m[name] = true
	}
	for name := range linkWalks {
		m[name] = true
	}
	return m
}()

// addOptionPaths counts the unknown external paths a command's options
// bring in: the paths a list file names (xargs -a, tar -T) and those
// behind the links a walk follows (grep -R, find -L).
func (c *extCollector) addOptionPaths(command string, sh *shell.Analysis) {
	if sh != nil {
		for _, words := range sh.Argv {
			c.addOptionPathsOf(words, words[0])
		}
		return
	}
	first, _, _ := strings.Cut(command, " ")
	if !optionPathPrograms[plainProgram(first)] {
		return
	}
	var buf [16]string // a plain command's words, on the stack: no allocation on the hot path
	c.addOptionPathsOf(plainWords(buf[:0], command), first)
}

// addOptionPathsOf judges one command's words (the program first); name
// is the program as the label shows it.
func (c *extCollector) addOptionPathsOf(words []string, name string) {
	if f, ok := readsPathList(words); ok {
		c.init()
		c.external(unknownPathLabel(pathListLabel(f)), true)
	}
	if followsLinks(words) {
		c.init()
		c.external(linkWalkLabel(name), true)
	}
}

// plainProgram is a plain command's first word by its base name; a bare
// name (no /, \ or .), nearly every call's, is its own and skips
// baseName's search on the hot path (13-17 ns a call, measured).
func plainProgram(first string) string {
	for i := 0; i < len(first); i++ {
		switch first[i] {
		case '/', '\\', '.':
			return baseName(first)
		}
	}
	return first
}
