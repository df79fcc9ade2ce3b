package web

import (
	"net/http"
	"time"

	"github.com/toolgate/toolgate/templates"
)

// overridesPage lists the approval overrides.
func (u *UI) overridesPage(w http.ResponseWriter, r *http.Request) {
	sec, etag := u.section()
	p := templates.OverridesProps{Nav: u.nav(r, "/overrides"), ETag: etag}
	for _, v := range asList(sec["approval_overrides"]) {
		if m := asMap(v); m != nil {
			p.Overrides = append(p.Overrides, overrideRow(m))
		}
	}
	render(w, r, http.StatusOK, templates.Overrides(p))
}

// overrideRow renders a decoded approval override. Its created time is
// shown when the entry records one.
func overrideRow(m map[string]any) templates.OverrideRow {
	row := templates.OverrideRow{
		ID: str(m["id"]), Tools: toolsText(m["tools"]), MatchType: str(m["match_type"]),
		Pattern: str(m["pattern"]), Action: str(m["action"]), Source: str(m["source"]),
		ApprovedBy: str(m["approved_by"]),
	}
	for _, k := range []string{"created_at", "created"} {
		switch t := m[k].(type) {
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
	if !u.confirmed(w, r, back, templates.ConfirmProps{Title: t("confirm.revoke") + " " + id + "?",
		Lead:   t("confirm.revoke.lead") + " " + id,
		Points: []string{t("confirm.revoke.point")},
		Button: t("confirm.revoke")}) {
		return
	}
	_, err := u.pol.DeleteOverride(formETag(r), id)
	u.saved(w, r, back, err, t("flash.revoked")+" "+id+".")
}
