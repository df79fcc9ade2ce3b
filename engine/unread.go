package engine

import (
	"slices"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/engine/shell"
	"github.com/toolgate/toolgate/policy"
)

// Unread input (docs/decisions.md#unread-input): xargs and parallel add
// arguments to a command from input the analysis does not read, marked
// shell.InputMark. A deny or ask glob lets that mark stand for any text, so
// `xargs -a args.txt git` meets a `git push *` deny rule: it may be git
// push. What it only may be is asked, not denied: when the decision with
// the mark read as any text is deny and without it is not, the call waits
// for a person.

// hasUnreadInput reports whether a command of the analysis holds unread
// input.
func hasUnreadInput(sh *shell.Analysis) bool {
	return sh != nil && slices.ContainsFunc(sh.Normalized, func(n string) bool {
		return strings.IndexByte(n, shell.InputByte) >= 0
	})
}

// withoutUnreadInput is the analysis with its unread input read as an
// ordinary unknown part (shell.UnknownMark), which no glob lets stand for
// any text.
func withoutUnreadInput(sh *shell.Analysis) *shell.Analysis {
	a := *sh
	plain := func(s string) string { return strings.ReplaceAll(s, shell.InputMark, shell.UnknownMark) }
	a.Normalized = make([]string, len(sh.Normalized))
	for i, n := range sh.Normalized {
		a.Normalized[i] = plain(n)
	}
	words := func(list [][]string) [][]string {
		out := make([][]string, len(list))
		for i, ws := range list {
			out[i] = make([]string, len(ws))
			for j, w := range ws {
				out[i][j] = plain(w)
			}
		}
		return out
	}
	a.Argv, a.Commands = words(sh.Argv), words(sh.Commands)
	a.Paths = make([]string, len(sh.Paths))
	for i, p := range sh.Paths {
		a.Paths[i] = plain(p)
	}
	return &a
}

// unreadInputDecision softens a deny that only unread input made: it
// decides the call again with the input read as an ordinary unknown part,
// and when that is not deny, the call is asked about, naming the deny
// rules the input may meet.
func (e *Engine) unreadInputDecision(tool string, vals *callValues, sh *shell.Analysis, d Decision, tr *tracer) Decision {
	if d.Level != policy.Deny || !hasUnreadInput(sh) {
		return d
	}
	plain := withoutUnreadInput(sh)
	v := *vals
	v.norms = slices.Clone(plain.Normalized)
	v.ctx.sh = plain
	v.readingsCut, v.normAdded = false, false
	var known Decision
	if len(v.norms) == 0 && !v.readings {
		known = e.ruleDecision(tool, &v, plain, nil)
	} else {
		known = e.normalizedDecision(tool, &v, plain, nil)
	}
	if known.Level == policy.Deny {
		return d
	}
	tr.add(Step{Name: "unread_input", Result: "ask", Rule: d.MatchedRule,
		Detail: "input that xargs or parallel reads at run time may make the command one that " + d.MatchedRule + " denies", Decisive: true})
	d.Level, d.Cause = policy.Ask, CauseEscalation
	return d
}

// unreadScriptDecision denies a command whose script text the analysis
// stopped short of reading (docs/decisions.md#unread-script-text-is-denied): nested
// deeper than shell.MaxReparseDepth, wrappers stacked deeper than it
// follows, or more text than its work budget. That text may hold any
// command, a denied one included, so reading fewer levels must not decide
// looser than reading them all would: `eval` five times around `sudo
// reboot` is denied as `sudo reboot` is. The matched rule stays the one the
// command as written met.
func unreadScriptDecision(d *Decision, sh *shell.Analysis, tr *tracer) {
	if sh == nil || !sh.TooDeep || d.Level == policy.Deny {
		return
	}
	d.Level, d.Cause = policy.Deny, CauseEscalation
	tr.add(Step{Name: "unread_script", Result: "deny", Detail: "script text is nested deeper than toolgate reads it (" + strconv.Itoa(shell.MaxReparseDepth) +
		" shells) or is more than it reads; the text not read may be a command that is denied", Decisive: true})
}
