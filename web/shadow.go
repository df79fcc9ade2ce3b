package web

import (
	"net/http"
	"time"

	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store/decisionlog"
	"github.com/toolgate/toolgate/templates"
)

// shadowCalls is how many logged calls the page shows a shadow rule.
const shadowCalls = 20

// shadowPage lists each shadow rule (mode: shadow) with the logged calls
// it would have decided otherwise (docs/configuration.md#shadow-rules).
func (u *UI) shadowPage(w http.ResponseWriter, r *http.Request) {
	sec, etag := u.typed()
	p := templates.ShadowProps{Nav: u.nav(r, "/rules"), ETag: etag, Off: u.decisions == nil}
	t := translatorFor(r.Context())
	for i := range sec.Rules {
		rule := &sec.Rules[i]
		if !rule.Shadow() {
			continue
		}
		view := templates.ShadowRuleView{Rule: ruleRow(rule)}
		if u.decisions != nil {
			page, err := u.decisions.Query(r.Context(), decisionlog.Query{Shadowed: true, ShadowRule: rule.ID, Limit: shadowCalls})
			if err != nil {
				p.Error = t.f("shadow.err.read", service.Classify(err).Message)
			}
			for _, e := range page.Entries {
				view.Calls = append(view.Calls, templates.ShadowCallRow{Tool: e.Tool, Summary: e.Summary,
					Level: e.Level, ShadowLevel: e.ShadowLevel,
					At: e.Time.UTC().Format("2006-01-02 15:04:05"), AtISO: e.Time.UTC().Format(time.RFC3339)})
			}
			view.More = page.NextBefore > 0
		}
		p.Rules = append(p.Rules, view)
	}
	render(w, r, http.StatusOK, templates.Shadow(p))
}

// enforceShadow turns a shadow rule live: its mode is removed, in one
// click (the page's ETag guards against a policy changed meanwhile).
func (u *UI) enforceShadow(w http.ResponseWriter, r *http.Request) {
	id := r.PostFormValue("id")
	t := translatorFor(r.Context())
	sec, _ := u.typed()
	rule, ok := policy.RuleByID(sec.Rules, id)
	if !ok || !rule.Shadow() {
		u.flash(r, "error", t.f("shadow.err.gone", id))
		redirect(w, r, "/shadow")
		return
	}
	_, err := u.pol.UpdateRule(formETag(r), id, policy.RulePatch{Remove: []string{"mode"}})
	u.saved(w, r, "/rules#rule-"+id, err, t.f("shadow.enforced", id))
}
