package glob

// A filename glob in a command on a workspace that is not on this host
// cannot be expanded, so a deny or ask glob rule is taken to match it
// whenever some path could match both (docs/decisions.md#path-rules-see-every-form).

// wordTok is one element of a shell filename glob: a set of bytes that one
// character may be (a literal, ?, or a [...] class), or a * run.
type wordTok struct {
	star bool
	set  [256]bool
}

// parseFilenameGlob reads a shell filename glob into tokens: * and ? never
// match /, a [...] class is a set (! or ^ negates it), \ quotes the next
// byte.
func parseFilenameGlob(w string) []wordTok {
	toks := make([]wordTok, 0, len(w))
	for i := 0; i < len(w); i++ {
		var t wordTok
		switch c := w[i]; {
		case c == '*':
			t.star = true
			t.set = notSlash
		case c == '?':
			t.set = notSlash
		case c == '[':
			end, set, ok := globClass(w, i)
			if !ok {
				t.set['['] = true
				break
			}
			t.set, i = set, end
		case c == '\\' && i+1 < len(w):
			i++
			t.set[w[i]] = true
		default:
			t.set[c] = true
		}
		toks = append(toks, t)
	}
	return toks
}

// notSlash is every byte but /.
var notSlash = func() (s [256]bool) {
	for i := range s {
		s[i] = i != '/'
	}
	return s
}()

// globClass reads the class that starts at w[start] ('['): its set and the
// index of its closing ']'.
func globClass(w string, start int) (end int, set [256]bool, ok bool) {
	i := start + 1
	negate := i < len(w) && (w[i] == '!' || w[i] == '^')
	if negate {
		i++
	}
	first := i
	var in [256]bool
	for ; i < len(w); i++ {
		if w[i] == ']' && i > first {
			break
		}
		if i+2 < len(w) && w[i+1] == '-' && w[i+2] != ']' {
			for c := int(w[i]); c <= int(w[i+2]); c++ {
				in[c] = true
			}
			i += 2
			continue
		}
		in[w[i]] = true
	}
	if i >= len(w) {
		return 0, set, false
	}
	for c := range set {
		set[c] = in[c] != negate && c != '/'
	}
	return i, set, true
}

// mayMeet reports whether some path could match both the glob (strictly:
// its * and ? match any byte, as a deny or ask rule's do; the path itself
// or a parent, as matchPath) and the filename glob w. It walks the product
// of the two, each state a pair of positions.
func (g *Program) MayMeet(w string) bool {
	word := parseFilenameGlob(w)
	if len(word) > 0 && !word[0].star && word[0].set['/'] && g.matchRootSlash(true) {
		return true // the root parent, tried as "//" (matchPathOrParent)
	}
	rn, wn := len(g.toks)+1, len(word)+1
	// fresh marks a state reached by taking a whole word token: only then
	// does the text taken so far end with that token (a / for a parent).
	type state struct {
		i, j  int
		fresh bool
	}
	seen := make([]bool, 2*rn*wn)
	var queue []state
	push := func(i, j int, fresh bool) {
		k := 2 * (i*wn + j)
		if fresh {
			k++
		}
		if !seen[k] {
			seen[k] = true
			queue = append(queue, state{i, j, fresh})
		}
	}
	push(0, 0, false)
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		i, j := s.i, s.j
		if i < len(g.toks) && g.toks[i].kind == tokStar {
			push(i+1, j, s.fresh) // the rule's * matches nothing
		}
		if hasBit(g.final, i) && g.wordMayEnd(word, j, s.fresh) {
			return true
		}
		if j == len(word) {
			continue
		}
		wt := &word[j]
		if wt.star {
			push(i, j+1, false) // the word's * matches nothing
		}
		if i == len(g.toks) {
			continue
		}
		switch rt := g.toks[i]; {
		case rt.kind == tokLit && wt.set[rt.c] && wt.star:
			push(i+1, j, false) // the word's * takes the rule's literal
		case rt.kind == tokLit && wt.set[rt.c]:
			push(i+1, j+1, true)
		case rt.kind == tokOne && wt.star:
			push(i+1, j, false)
		case rt.kind == tokOne:
			push(i+1, j+1, true)
		case rt.kind == tokStar && wt.star:
			push(i, j+1, false) // the rule's * takes the word's run
		case rt.kind == tokStar:
			push(i, j+1, true) // the rule's * takes the word's character
		}
	}
	return false
}

// wordMayEnd reports whether the rule, having matched the text the word's
// first j tokens (and part of a * at j) may spell, matches the whole path
// or one of its parents: the rest of the word may be empty (only * runs
// left), or the path goes on with a / (a parent p), or the text taken ends
// with a whole / token (a parent p/).
func (g *Program) wordMayEnd(word []wordTok, j int, fresh bool) bool {
	rest := true
	for _, t := range word[j:] {
		if !t.star {
			rest = false
			break
		}
	}
	switch {
	case rest:
		return true
	case !word[j].star && word[j].set['/']:
		return true
	default:
		return fresh && j > 0 && word[j-1].set['/'] && !word[j-1].star
	}
}
