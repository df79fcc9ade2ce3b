package store

import "github.com/toolgate/toolgate/engine"

// DecisionChange is one logged call whose decision a draft policy changes.
type DecisionChange struct {
	Entry    DecisionEntry
	From, To engine.Decision
}

// ReplayDecisions decides each logged call (those logged with their full,
// redacted arguments) under the policy in force and under a draft, and
// returns the calls whose level or matched rule would change. It is the
// impact preview of the API and of the rules page.
func ReplayDecisions(entries []DecisionEntry, current, draft *engine.Engine) []DecisionChange {
	var out []DecisionChange
	for _, e := range entries {
		if e.Request == nil {
			continue
		}
		from, to := current.Evaluate(e.Request), draft.Evaluate(e.Request)
		if from.Level == to.Level && from.MatchedRule == to.MatchedRule {
			continue
		}
		out = append(out, DecisionChange{Entry: e, From: from, To: to})
	}
	return out
}
