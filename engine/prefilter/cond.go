package prefilter

import (
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// A literal condition is a cheap necessary condition of a re: alternative:
// the literals every match must contain, combined with and/or as the
// regexp combines its parts. The prefilter's keys only say that one of a
// rule's literals occurs somewhere, so a rule can be woken by a literal of
// one part ("sh" inside "push") although another part's literal is absent;
// the condition, checked before the regexp runs, turns most such
// candidates away for the price of a few substring searches.
//
// Like the keys, literals are compared after foldTable (ASCII lower case,
// \ as /), which makes the condition hold for every value the regexp
// matches directly or after \ becomes /.

// condOp is the kind of a condition node.
type condOp uint8

const (
	condTrue condOp = iota // requires nothing
	condLit                // the value contains lit
	condAnd                // every sub holds
	condOr                 // some sub holds
)

// maxCondLiterals bounds the literals of one condition; a part beyond it
// requires nothing (weaker, never wrong).
const maxCondLiterals = 64

// MaxCondValue is the longest value the condition is checked on; longer
// values go straight to the regexp (the check is a shortcut only).
const MaxCondValue = 8192

// Cond is one node of a literal condition.
type Cond struct {
	op  condOp
	lit string // condLit: a folded literal
	// asciiOnly marks a literal sound only for ASCII values (see the engine's rule keys);
	// for a value with a non-ASCII byte it holds.
	asciiOnly bool
	subs      []Cond
}

// CondOf computes the literal condition of a parsed alternative.
func CondOf(tree *syntax.Regexp) Cond {
	budget := maxCondLiterals
	return buildCond(tree.Simplify(), &budget)
}

func buildCond(re *syntax.Regexp, budget *int) Cond {
	switch re.Op {
	case syntax.OpLiteral:
		s := string(re.Rune)
		if strings.ContainsRune(s, utf8.RuneError) || *budget <= 0 {
			return Cond{}
		}
		*budget--
		return Cond{op: condLit, lit: FoldKey(s), asciiOnly: re.Flags&syntax.FoldCase != 0 && ASCIIFoldRisk(s)}
	case syntax.OpCapture, syntax.OpPlus:
		return buildCond(re.Sub[0], budget)
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return buildCond(re.Sub[0], budget)
		}
	case syntax.OpConcat:
		var subs []Cond
		for _, sub := range re.Sub {
			if c := buildCond(sub, budget); c.op != condTrue {
				subs = append(subs, c)
			}
		}
		// A run of small exact parts (n(?:c|cat)) requires one of its
		// products, which no single part says.
		if r := requiredConcat(re.Sub); r.ok {
			if c := litsCond(r.lits, budget); c.op != condTrue {
				subs = append(subs, c)
			}
		}
		return combine(condAnd, subs)
	case syntax.OpAlternate:
		subs := make([]Cond, 0, len(re.Sub))
		for _, sub := range re.Sub {
			c := buildCond(sub, budget)
			if c.op == condTrue {
				return Cond{}
			}
			subs = append(subs, c)
		}
		return combine(condOr, subs)
	case syntax.OpCharClass:
		if set, ok := exactSet(re); ok {
			if r := set.requirement(); r.ok {
				return litsCond(r.lits, budget)
			}
		}
	}
	return Cond{}
}

// litsCond is "one of lits".
func litsCond(lits []Literal, budget *int) Cond {
	if len(lits) > *budget {
		return Cond{}
	}
	*budget -= len(lits)
	subs := make([]Cond, len(lits))
	for i, l := range lits {
		subs[i] = Cond{op: condLit, lit: FoldKey(l.S), asciiOnly: l.Fold && ASCIIFoldRisk(l.S)}
	}
	return combine(condOr, subs)
}

// combine builds an and/or node, collapsing one sub to itself and none to
// true.
func combine(op condOp, subs []Cond) Cond {
	switch len(subs) {
	case 0:
		return Cond{}
	case 1:
		return subs[0]
	}
	return Cond{op: op, subs: subs}
}

// Holds reports whether v may match: false only when v lacks what every
// match needs. nonASCII says whether v has a byte >= 0x80.
func (c *Cond) Holds(v string, nonASCII bool) bool {
	switch c.op {
	case condLit:
		return c.asciiOnly && nonASCII || containsFolded(v, c.lit)
	case condAnd:
		for i := range c.subs {
			if !c.subs[i].Holds(v, nonASCII) {
				return false
			}
		}
		return true
	case condOr:
		for i := range c.subs {
			if c.subs[i].Holds(v, nonASCII) {
				return true
			}
		}
		return false
	}
	return true
}

// containsFolded reports whether v, compared through foldTable, contains
// the folded Literal lit. Its loops index only slices whose length they
// test, so they run without bounds checks: the literal condition is the
// inner loop of every ask and deny match (BENCHMARKS.md, "The decision
// matrix").
func containsFolded(v, lit string) bool {
	n := len(lit)
	if n == 0 {
		return true
	}
	if len(v) < n {
		return false
	}
	first := lit[0]
	starts := v[:len(v)-n+1] // the places a match may start
	for i := 0; i < len(starts); i++ {
		if foldTable[starts[i]] != first {
			continue
		}
		w := v[i : i+n] // as long as lit: the compare below needs no bounds checks
		j := 1
		for j < len(w) && foldTable[w[j]] == lit[j] {
			j++
		}
		if j == len(w) {
			return true
		}
	}
	return false
}
