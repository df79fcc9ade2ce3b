package web

import (
	"net/http"
	"strings"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/templates"
)

// overview shows the state of the policy at a glance.
func (u *UI) overview(w http.ResponseWriter, r *http.Request) {
	sec, etag := u.typed()
	render(w, r, http.StatusOK, templates.Overview(u.overviewProps(r, &sec, etag)))
}

func (u *UI) overviewProps(r *http.Request, sec *policy.Section, etag string) templates.OverviewProps {
	mode := sec.Mode
	p := templates.OverviewProps{
		Nav: u.nav(r, "/"), ETag: etag, Enabled: sec.Enabled, Schema: sec.Schema,
		Tiered: sec.Tiered, Mode: mode.String(), Defaults: sec.Defaults.String(),
	}
	for _, s := range []policy.Severity{policy.SeverityLow, policy.SeverityMedium, policy.SeverityHigh, policy.SeverityCritical} {
		p.Severity = append(p.Severity, templates.SeverityRow{Severity: s.String(), Level: policy.SeverityLevel(s, mode).String()})
	}
	builtin, _ := u.deps.Policy.BuiltinRules()
	t := func(key string) string { return templates.T(r.Context(), key) }
	p.Counts = []templates.Count{
		{Label: t("overview.count.tools"), N: len(sec.Tools), Link: "/tools"},
		{Label: t("overview.count.rules"), N: len(sec.Rules), Link: "/rules"},
		{Label: t("overview.count.builtin"), N: len(builtin), Link: "/rules"},
		{Label: t("overview.count.overrides"), N: len(sec.Overrides), Link: "/overrides"},
		{Label: t("overview.count.dirs"), N: dirCount(&sec.External), Link: "/directories"},
	}
	for _, pr := range u.deps.Policy.Problems() {
		p.Problems = append(p.Problems, problemText(pr, t))
		p.SetAside = p.SetAside || pr.Path == store.ConfigFile && strings.Contains(pr.Message, store.MsgSetAside)
	}
	if u.approvals.Available() {
		p.PendingKnown = true
		p.Pending = len(u.deps.Approvals.List(approval.Filter{}, approval.StatusPending))
	}
	return p
}

// dirCount is how many entries external_directory has: its path keys and
// "*" when written (a plain level for every path counts none).
func dirCount(x *policy.ExternalDirs) int {
	n := len(x.Keys)
	if x.StarSet {
		n++
	}
	return n
}

// problemText says a validation problem in words.
func problemText(p policy.Problem, t translator) string {
	if p.Path == "" {
		return p.Message
	}
	return t.f("problem.in", p.Path, p.Message)
}

// saveSettings sets the master switch, mode and default level.
func (u *UI) saveSettings(w http.ResponseWriter, r *http.Request) {
	if u.stale(w, r, "/") {
		return
	}
	enabled := r.PostFormValue("enabled") == "true"
	t := translatorFor(r.Context())
	if !enabled && !u.confirmed(w, r, "/", templates.ConfirmProps{Title: t("confirm.off"),
		Lead:   t("confirm.off.lead"),
		Points: []string{t("confirm.off.p1"), t("confirm.off.p2"), t("confirm.off.p3")},
		Button: t("confirm.off.button")}) {
		return
	}
	mode := policy.ParseMode(r.PostFormValue("permission_mode")).String()
	patch := policy.SettingsPatch{Enabled: &enabled, PermissionMode: &mode}
	if d := r.PostFormValue("default"); d != "" {
		patch.Defaults = map[string]string{"*": d}
	}
	_, err := u.pol.SetSettings(formETag(r), patch)
	u.saved(w, r, "/", err, t("flash.settings"))
}
