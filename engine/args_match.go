package engine

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/toolgate/toolgate/engine/glob"
	"github.com/toolgate/toolgate/engine/prefilter"
	"github.com/toolgate/toolgate/policy"
)

// A match_type: args rule matches the call's arguments written as
// canonical JSON: object keys sorted, no white space, no HTML escaping
// (docs/decisions.md#args-rules). It serves any tool, MCP tools first of
// all, whose arguments are not a command or paths. Its hits join the
// rule's set like any other hit, so a deny rule of the set that matches
// the call still wins over an allow args rule.

// compileRulePattern compiles a rule's pattern: compilePattern, except that
// an args rule's glob keeps its backslashes, which JSON text holds as
// escapes (a path rule's glob reads \ as /).
func compileRulePattern(p string, args bool) (m *matcher, partial error, err error) {
	if !args {
		return compilePattern(p)
	}
	if strings.TrimSpace(p) == "" {
		return nil, nil, ErrEmptyPattern
	}
	if expr, ok := strings.CutPrefix(p, "re:"); ok {
		return compileRegex(p, expr)
	}
	m = &matcher{raw: p}
	if !strings.ContainsAny(p, "*?[") {
		m.exact = p
		return m, nil, nil
	}
	m.hasWild = true
	m.glob = glob.Compile(p)
	return m, nil, nil
}

// matchArgs matches the canonical JSON of a call's arguments: a glob as
// written (an allow rule's * and ? keep to the class, so they never cross
// a , } ] or \ into another member; a deny or ask rule's match anything),
// a re: pattern searched in the text as it is, never with \ read as /.
func (m *matcher) matchArgs(text string) bool {
	if !m.isRegex {
		return m.matchGlobAs(text, true)
	}
	if m.needsBackslash && strings.IndexByte(text, '\\') < 0 {
		return false
	}
	c := m.regexps()
	filter := len(text) <= prefilter.MaxCondValue
	nonASCII := filter && prefilter.HasNonASCII(text)
	for i, re := range c.res {
		if (!filter || c.conds[i].Holds(text, nonASCII)) && re.MatchString(text) {
			return true
		}
	}
	return false
}

// CanonicalArgs writes tool arguments as args rules match them: JSON with
// object keys sorted, no white space and no HTML escaping; no arguments
// are {}. An error means the arguments hold a value JSON cannot write.
// The values a JSON request decodes to are written by appendCanonical
// (canonical.go), byte for byte as encoding/json writes them; anything
// else goes through encoding/json.
func CanonicalArgs(args map[string]any) (string, error) {
	if args == nil {
		return "{}", nil
	}
	buf := canonicalBufs.Get().(*[]byte)
	out, ok := appendCanonical((*buf)[:0], args)
	text := string(out)
	if cap(out) <= maxPooledCanonical {
		*buf = out[:0]
	}
	canonicalBufs.Put(buf)
	if ok {
		return text, nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(args); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// canonicalBufs hold the buffers CanonicalArgs writes into (a recursive
// writer's buffer would escape to the heap on every call); a buffer grown
// past maxPooledCanonical is not kept.
var canonicalBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

const maxPooledCanonical = 64 << 10

// Argument text states of callValues.
const (
	argsUnread uint8 = iota
	argsRead
	argsUnwritable
)

// argsText is the canonical JSON of the call's arguments, written the
// first time an args rule needs it; ok is false when it cannot be written.
func (v *callValues) argsText() (string, bool) {
	if v.argsState == argsUnread {
		text, err := CanonicalArgs(v.ctx.req.Call.Args())
		v.argsJSON, v.argsState = text, argsRead
		if err != nil {
			v.argsState = argsUnwritable
		}
	}
	return v.argsJSON, v.argsState == argsRead
}

// argsHits appends the args rules of tr that match the call, then keeps
// hits in file order. Only the call's own values carry its arguments (a
// normalized command or a reading holds none), so derived values add
// nothing. Arguments JSON cannot write fail closed: every ask and deny
// args rule hits, no allow rule does.
func (tr *toolRules) argsHits(v *callValues, hits []*rule) []*rule {
	if len(tr.args) == 0 || v.strictOnly || v.ctx.req == nil {
		return hits
	}
	text, ok := v.argsText()
	n := len(hits)
	hit := func(r *rule) {
		if ok && r.m.matchArgs(text) || !ok && r.level >= policy.Ask {
			hits = append(hits, r)
		}
	}
	if tr.argsPF == nil || tr.argsPF.ac == nil || !ok {
		for _, r := range tr.args {
			hit(r)
		}
	} else {
		var cb [candidateBuf]int32
		for _, pos := range tr.argsPF.textCandidates(text, cb[:0]) {
			hit(tr.args[pos])
		}
	}
	if n > 0 && len(hits) > n {
		slices.SortStableFunc(hits, func(a, b *rule) int { return cmp.Compare(a.order, b.order) })
	}
	return hits
}

// textCandidates appends to buf the positions of the rules that may match
// text, ascending and without repeats.
func (pf *ruleFilter) textCandidates(text string, buf []int32) []int32 {
	var kb [32]int32
	return pf.merge(buf, pf.ac.Scan(text, kb[:0]), prefilter.HasNonASCII(text))
}
