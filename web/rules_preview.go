package web

import (
	"context"
	"net/http"
	"strconv"

	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/templates"
)

// RecentDecisions gives the last logged calls with their full (redacted)
// arguments; *decisionlog.Log satisfies it.
type RecentDecisions = service.RecentDecisions

// previewCalls is how many logged calls the rules page replays.
const previewCalls = 1000

// previewRule shows, before anything is saved, which logged calls the rule
// in the form would decide differently: the policy with the rule added (or,
// when editing, replaced) against the policy in force.
func (u *UI) previewRule(w http.ResponseWriter, r *http.Request) {
	form := ruleFormFrom(r)
	form.Editing = form.OrigID != ""
	rule := u.ruleOf(form)
	t := translatorFor(r.Context())
	if msg := checkRule(rule.Tools, form.Pattern, form.MatchType, t); msg != "" {
		form.Error = t.f("rules.err.nopreview", msg)
		render(w, r, http.StatusUnprocessableEntity, templates.Rules(u.rulesProps(r, form, templates.TestBox{})))
		return
	}
	p := u.rulesProps(r, form, templates.TestBox{})
	p.Preview = u.replayWithRule(r.Context(), form, &rule)
	render(w, r, http.StatusOK, templates.Rules(p))
}

// replayWithRule compiles the draft and replays the logged calls.
func (u *UI) replayWithRule(ctx context.Context, form templates.RuleForm, rule *policy.Rule) templates.RulePreview {
	out := templates.RulePreview{Ran: true}
	t := translatorFor(ctx)
	if u.recent == nil {
		out.Note = t("preview.note.off")
		return out
	}
	given := policy.MappingOf(rule.Map())
	impact, err := u.pol.Preview(ctx, u.recent, service.Draft{Rule: &given, ReplaceID: form.OrigID}, previewCalls)
	if err != nil {
		out.Note = t.f("preview.note.read", service.Classify(err).Message)
		return out
	}
	for _, pr := range impact.Problems {
		out.Problems = append(out.Problems, pr.Error())
	}
	out.Replayed = impact.Replayed
	if impact.Replayed == 0 {
		out.Note = t("preview.note.none")
	}
	seen := map[templates.PreviewRow]int{}
	for _, c := range impact.Changes {
		row := templates.PreviewRow{Tool: c.Entry.Tool, Summary: c.Entry.Summary,
			From: c.From.Level.String(), FromRule: c.From.MatchedRule, To: c.To.Level.String(), ToRule: c.To.MatchedRule}
		if i, ok := seen[row]; ok {
			out.Changes[i].Count++ // the same call logged again: one line with a count
			out.Calls++
			continue
		}
		seen[row] = len(out.Changes)
		row.ID, row.Count = strconv.FormatInt(c.Entry.ID, 10), 1
		out.Changes = append(out.Changes, row)
		out.Calls++
	}
	return out
}
