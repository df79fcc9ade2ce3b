package web

import (
	"net/http"
	"time"

	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/templates"
)

// overridesPage lists the approval overrides.
func (u *UI) overridesPage(w http.ResponseWriter, r *http.Request) {
	sec, etag := u.typed()
	p := templates.OverridesProps{Nav: u.nav(r, "/overrides"), ETag: etag}
	for i := range sec.Overrides {
		p.Overrides = append(p.Overrides, overrideRow(&sec.Overrides[i]))
	}
	render(w, r, http.StatusOK, templates.Overrides(p))
}

// overrideRow renders an approval override as the rules page renders a
// rule (an action that is no level shown as written, lower-cased), with
// who approved it and its created time when the entry records them (keys
// the engine does not read: policy.Rule.Extra).
func overrideRow(o *policy.Override) templates.OverrideRow {
	rr := ruleRow(o)
	row := templates.OverrideRow{
		ID: o.ID, Tools: rr.Tools, MatchType: o.MatchType, Pattern: o.Pattern, Action: rr.Action, Source: o.Source,
		ApprovedBy: str(o.Extra["approved_by"]),
	}
	for _, k := range []string{"created_at", "created"} {
		switch t := o.Extra[k].(type) {
		case time.Time:
			row.Created = t.UTC().Format(time.RFC3339)
		case nil:
		default:
			row.Created = str(t)
		}
		if row.Created != "" {
			break
		}
	}
	return row
}

// deleteOverride revokes an override from the Overrides page.
func (u *UI) deleteOverride(w http.ResponseWriter, r *http.Request) {
	u.revokeOverride(w, r, "/overrides")
}

// revokeOverride revokes an override under the form's ETag, after a
// confirmation, and goes back to the page it was asked from.
func (u *UI) revokeOverride(w http.ResponseWriter, r *http.Request, back string) {
	if u.stale(w, r, back) {
		return
	}
	id := r.PostFormValue("id")
	t := translatorFor(r.Context())
	if !u.confirmed(w, r, back, removal(t, "confirm.revoke", id, id)) {
		return
	}
	_, err := u.pol.DeleteOverride(formETag(r), id)
	u.saved(w, r, back, err, t("flash.revoked")+" "+id+".")
}
