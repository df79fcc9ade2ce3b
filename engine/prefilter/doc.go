// Package prefilter finds, before any rule runs, which rules a value may
// match at all: the literals every match of a pattern must contain
// (Required, from a regexp's parse tree), a cheap and/or condition of them
// checked before a regexp runs (Cond), and one pass over a value that
// reports every key it contains (Machine, an Aho-Corasick automaton over
// bytes folded to ASCII lower case with \ as /). Each answer is a
// necessary condition only: a value it lets through still meets the real
// matcher, so a weak answer costs time, never a wrong decision.
//
// It owns literals and their search. It does not own rules, tools or which
// of a call's values are looked at (the engine's index), nor matching a
// glob or a regexp against a value.
package prefilter
