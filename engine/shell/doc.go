// Package shell reads a shell command the way bash would run it, for the
// engine's rules: the simple commands it runs (wrappers looked through,
// words expanded, text given to eval, sh -c, subscripts, prompts and
// exported functions read again), the path words it names, and the readings
// a launcher may give it. It does no I/O and decides nothing; the engine
// matches rules against what it reports.
//
// The analysis is closed-world (docs/decisions.md#unlisted-launchers): what
// it cannot show to be harmless counts as possibly running a command or
// naming a path. A word it cannot know is an unknown (UnknownMark), a
// command it cannot read makes the analysis opaque, and a program it does
// not know to leave its arguments alone may run them, so the lists it keeps
// are the short ones: wrappers it reads exactly (wrappers.go) and programs
// known never to run a later word (launch.go), never a list of the programs
// that do.
//
// It does not own the policy, the rules or their matching, the workspace
// and its paths' resolution, or the decision: those are the engine's.
package shell
