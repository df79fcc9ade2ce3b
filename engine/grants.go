package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/toolgate/toolgate/policy"
)

// Grants: a person's answer to an ask remembered for a scope
// (docs/grants.md). A grant allows what an approval override with its
// pattern would allow, at the overrides' step of the order
// (docs/decisions.md#the-order-of-the-steps), and only on the channel and
// workspace of the call that was approved, in its session when it has
// one, until it expires. A call without a pattern to remember (an MCP
// call, a command that cannot be read) is remembered by its arguments'
// digest: only that exact call is covered. So a grant covers only what
// was approved: the override's checks (every path value resolved, no
// opaque command) hold for grants word for word.

// Grant is one remembered answer, as the engine needs it.
type Grant struct {
	ID   string
	Tool string
	// Channel is the channel of the approved call, in ChannelKey form.
	Channel string
	// Workspace is the workspace of the approved call in GrantWorkspace
	// form; a call in any other workspace is not covered.
	Workspace string
	// Session limits the grant to one session, and then to calls made
	// with Token, the token of the approved call (a session id is the
	// agent's to choose, so another agent could name it); empty covers any
	// session and token.
	Session, Token string
	// MatchType and Pattern are what Remembered found in the approved
	// call, as the call had it (not a pattern: WithGrants makes it match
	// only itself, policy.LiteralPattern, so `cat *` covers no other cat);
	// both empty for a digest grant.
	MatchType, Pattern string
	// Digest is ArgsDigest of the approved call's arguments, for a grant
	// without a pattern.
	Digest string
	// ExpiresAt ends the grant; the zero time never does.
	ExpiresAt time.Time
}

// ArgsDigest is the digest a grant without a pattern is bound to: the hex
// SHA-256 of the arguments' canonical JSON (CanonicalArgs), so that key
// order and spacing do not matter and any other value does.
func ArgsDigest(args map[string]any) (string, error) {
	text, err := CanonicalArgs(args)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:]), nil
}

// GrantWorkspace is the workspace of req in the form grants compare: the
// cleaned, resolved workspace the engine judges the call in.
func (e *Engine) GrantWorkspace(req *Request) string { return e.workspace(req) }

// GrantSet is the compiled live grants an engine consults. It is immutable.
type GrantSet struct {
	// idx holds the pattern grants compiled as approval overrides; a
	// rule's order is its index in meta.
	idx  ruleIndex
	meta []Grant
	// digests are the indexes in meta of each tool's digest grants.
	digests map[string][]int
	// rules and names are each grant's matched_rule and its name in it,
	// made once so that a decision by a grant allocates nothing.
	rules, names []string
	now          func() time.Time
}

// WithGrants returns a copy of e that also consults grants, with now as
// the clock every expiry is checked against at the moment of the call (so
// an expired grant decides nothing, whatever has been swept). A grant
// whose pattern cannot be compiled takes no part and is reported as a
// problem at grants[i]. The copy shares everything else with e.
func (e *Engine) WithGrants(grants []Grant, now func() time.Time) (*Engine, []policy.Problem) {
	if now == nil {
		now = time.Now
	}
	set := &GrantSet{meta: grants, now: now, digests: map[string][]int{}}
	c := &compiler{opts: e.opts, mode: e.policy.mode}
	var rules []*rule
	set.rules, set.names = make([]string, len(grants)), make([]string, len(grants))
	for i, g := range grants {
		set.rules[i] = "tiered_policy:grants:grants[" + g.ID + "]"
		set.names[i] = set.rules[i][len("tiered_policy:grants:"):]
		if g.Pattern == "" {
			set.digests[g.Tool] = append(set.digests[g.Tool], i)
			continue
		}
		pr := policy.Rule{Index: i, ID: g.ID, Tools: []string{g.Tool}, MatchType: g.MatchType, Pattern: policy.LiteralPattern(g.Pattern), Action: policy.Allow}
		r := c.compileRule(&pr, func() string { return policy.ItemPath("grants", i) }, setOverride)
		if r == nil {
			continue
		}
		r.order = i
		r.single, r.name = set.rules[i], set.names[i]
		r.addDir = "" // a grant never stands for a directory (no /add-dir reading)
		rules = append(rules, r)
	}
	set.idx = newRuleIndex(rules)
	cp := *e
	if len(grants) == 0 {
		set = nil
	}
	cp.grants = set
	if e.shadow != nil {
		sh := *e.shadow
		sh.grants = set
		cp.shadow = &sh
	}
	return &cp, c.problems
}

// Grants reports how many grants the engine consults.
func (e *Engine) Grants() int {
	if e.grants == nil {
		return 0
	}
	return len(e.grants.meta)
}

// grantOutcome is the grants' step: the oldest live grant that covers the
// call allows it, named in matched_rule; ok is false when none does.
func (e *Engine) grantOutcome(tool string, v *callValues, tr *tracer) (outcome, bool) {
	g := e.grants
	if g == nil || v.strictOnly {
		return outcome{}, false
	}
	var buf [8]*rule
	best := -1
	for _, r := range g.idx.collectWithin(tool, v, buf[:0]) {
		if (best < 0 || r.order < best) && g.live(r.order, v.ctx.req, e) {
			best = r.order
		}
	}
	if ids := g.digests[tool]; len(ids) > 0 {
		// The canonical JSON an args rule may already have written.
		if text, ok := v.argsText(); ok {
			sum := sha256.Sum256([]byte(text))
			d := hex.EncodeToString(sum[:])
			for _, i := range ids {
				if g.meta[i].Digest == d && (best < 0 || i < best) && g.live(i, v.ctx.req, e) {
					best = i
				}
			}
		}
	}
	if best < 0 {
		return outcome{}, false
	}
	out := outcome{level: policy.Allow, rule: g.rules[best], fromOverride: true, byRule: true}
	if tr != nil {
		tr.add(Step{Name: "grants", Result: "allow", Rule: out.rule, Hits: []string{g.names[best]}, Decisive: true})
	}
	return out, true
}

// live reports whether grant i holds for req now: not expired, on the
// call's channel and workspace, and in its session, asked with its token,
// when it has one.
func (g *GrantSet) live(i int, req *Request, e *Engine) bool {
	m := &g.meta[i]
	if !m.ExpiresAt.IsZero() && !g.now().Before(m.ExpiresAt) {
		return false
	}
	if m.Session != "" && (m.Session != req.SessionID || m.Token != req.TokenID) {
		return false
	}
	return m.Channel == channelKey(req.ChannelID) && m.Workspace == e.workspace(req)
}
