package web

import (
	"context"
	"net/http"
	"strconv"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/templates"
)

// RecentDecisions gives the last logged calls with their full (redacted)
// arguments; *store.DecisionLog satisfies it.
type RecentDecisions interface {
	Recent(ctx context.Context, n int) ([]store.DecisionEntry, error)
}

// previewCalls is how many logged calls the rules page replays.
const previewCalls = 1000

// previewRule shows, before anything is saved, which logged calls the rule
// in the form would decide differently: the policy with the rule added (or,
// when editing, replaced) against the policy in force.
func (u *UI) previewRule(w http.ResponseWriter, r *http.Request) {
	form := ruleFormFrom(r)
	form.Editing = form.OrigID != ""
	rule := ruleMap(form)
	if msg := checkRule(rule["tools"].([]any), form.Pattern); msg != "" {
		form.Error = "Cannot preview: " + msg
		render(w, r, http.StatusUnprocessableEntity, templates.Rules(u.rulesProps(r, form, templates.TestBox{})))
		return
	}
	p := u.rulesProps(r, form, templates.TestBox{})
	p.Preview = u.replayWithRule(r.Context(), form, rule)
	render(w, r, http.StatusOK, templates.Rules(p))
}

// replayWithRule compiles the draft and replays the logged calls.
func (u *UI) replayWithRule(ctx context.Context, form templates.RuleForm, rule map[string]any) templates.RulePreview {
	out := templates.RulePreview{Ran: true}
	if u.recent == nil {
		out.Note = "The decision log is off, so there are no past calls to replay."
		return out
	}
	sec, _ := u.section()
	id := form.OrigID // editing replaces the rule; adding puts it in its id's place
	if id == "" {
		id = str(rule["id"])
	}
	draft := store.DraftWithRule(sec, id, rule)
	builtin, _ := u.deps.Policy.BuiltinRules()
	current, _ := engine.Compile(sec, builtin, u.deps.EngineOptions)
	next, problems := engine.Compile(draft, builtin, u.deps.EngineOptions)
	for _, pr := range problems {
		out.Problems = append(out.Problems, pr.Error())
	}
	entries, err := u.recent.Recent(ctx, previewCalls)
	if err != nil {
		out.Note = "The decision log could not be read: " + err.Error()
		return out
	}
	out.Replayed = len(entries)
	if len(entries) == 0 {
		out.Note = "No calls were logged with their arguments yet (start the server with --log-full-args to keep them for previews)."
	}
	for _, c := range store.ReplayDecisions(entries, current, next) {
		out.Changes = append(out.Changes, templates.PreviewRow{
			ID: strconv.FormatInt(c.Entry.ID, 10), Tool: c.Entry.Tool, Summary: c.Entry.Summary,
			From: c.From.Level.String(), FromRule: c.From.MatchedRule, To: c.To.Level.String(), ToRule: c.To.MatchedRule,
		})
	}
	return out
}
