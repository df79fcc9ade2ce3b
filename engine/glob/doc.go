// Package glob compiles and runs toolgate's rule globs: an anchored pattern whose * and ? match only the class of characters a
// command word may hold, with a trailing " *" that also matches nothing,
// run as a bit-set NFA linear in the value and free of allocation for
// patterns of up to 63 tokens. It also answers whether a shell filename
// glob in a command may meet a rule's glob (MayMeet).
//
// It owns the matching of one pattern against one value. It does not own
// which values of a call are matched, which rules are tried (the engine's
// index and prefilter) or what a match decides.
package glob
