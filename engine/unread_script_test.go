package engine_test

import (
	"testing"

	"github.com/toolgate/toolgate/engine/shell"
	"github.com/toolgate/toolgate/policy"
)

// TestUnreadScriptNeverLooser wraps every obfuscation seed in as many
// shells as the analysis reads and in one more, under every fixture policy:
// the wrapped command
// must never decide looser than the seed itself, and nothing it cannot read
// is allowed. Each nesting is a real one (bash runs the seed at its end),
// so a limit that stops reading and keeps the outer text's level fails
// here: a denied seed reached five shells deep must stay denied.
func TestUnreadScriptNeverLooser(t *testing.T) {
	fx := newIssueFixture(t)
	seeds := obfuscationSeeds(t, fx)
	plain := plainLevels(fx, seeds)
	wrappers := []struct {
		note string
		wrap func(string) string
	}{
		{note: "eval", wrap: func(s string) string { return "eval " + shellQuote(s) }},
		{note: "sh -c", wrap: func(s string) string { return "sh -c " + shellQuote(s) }},
		{note: "bash -c after env", wrap: func(s string) string { return "env bash -c " + shellQuote(s) }},
	}
	// As deep as is read, a seed's own script text (gcloud --command, ssh
	// host "...") is one shell more; one deeper, the seed is not read.
	for _, times := range []int{shell.MaxReparseDepth, shell.MaxReparseDepth + 1} {
		for _, w := range wrappers {
			for _, p := range policyNames {
				for i, s := range seeds {
					cmd := s.text
					for range times {
						cmd = w.wrap(cmd)
					}
					d := fx.evalShell(p, cmd)
					if d.Level < plain[p][i] || (times > shell.MaxReparseDepth && d.Level == policy.Allow) {
						t.Errorf("%s under %s: %q nested %d times decides %s (%q); the seed decides %s",
							w.note, p, s.text, times, d.Level, d.MatchedRule, plain[p][i])
					}
				}
			}
		}
	}
}

// TestReadScriptKeepsItsLevel is the benign side: commands nested as deep
// as the analysis reads keep the level of the command they run, so denying
// every nested command fails here.
func TestReadScriptKeepsItsLevel(t *testing.T) {
	fx := newIssueFixture(t)
	tests := []struct {
		note   string
		cmd    string
		levels int
	}{
		{note: "a read-only command under eval", cmd: "ls -la", levels: 1},
		{note: "git status two shells deep", cmd: "git status", levels: 2},
		{note: "as deep as is read", cmd: "cat README.md", levels: shell.MaxReparseDepth},
	}
	for _, tt := range tests {
		for _, p := range policyNames {
			cmd := tt.cmd
			for range tt.levels {
				cmd = "sh -c " + shellQuote(cmd)
			}
			want := fx.evalShell(p, tt.cmd).Level
			if want == policy.Allow {
				want = policy.Ask // sh -c is not among any fixture policy's allow rules
			}
			if got := fx.evalShell(p, cmd); got.Level == policy.Deny || got.Level > want {
				t.Errorf("%s under %s: %q decides %s (%q), want at most %s", tt.note, p, cmd, got.Level, got.MatchedRule, want)
			}
		}
	}
}
