package web

import (
	"maps"
	"net/http"
	"slices"

	"github.com/toolgate/toolgate/templates"
)

// confirmed reports whether a risky form was confirmed (confirm=yes).
// When it was not, it renders the confirmation page, which posts the same
// fields again with confirm=yes, and reports false: nothing is changed
// until the person says yes. It works without JavaScript.
func (u *UI) confirmed(w http.ResponseWriter, r *http.Request, back string, c templates.ConfirmProps) bool {
	if r.PostFormValue("confirm") == "yes" {
		return true
	}
	c.Nav, c.Action, c.Back = u.nav(r, back), r.URL.Path, back
	for _, k := range slices.Sorted(maps.Keys(r.PostForm)) {
		if k == "csrf_token" || k == "confirm" {
			continue
		}
		for _, v := range r.PostForm[k] {
			c.Fields = append(c.Fields, templates.Field{Name: k, Value: v})
		}
	}
	render(w, r, http.StatusOK, templates.Confirm(c))
	return false
}

// removal is the confirmation of removing one thing, worded by key in the
// catalog: the title "<key> <id>?", the lead "<key.lead> <what>", the one
// effect <key.point>, and the button <key>.
func removal(t translator, key, id, what string) templates.ConfirmProps {
	return templates.ConfirmProps{Title: t(key) + " " + id + "?", Lead: t(key+".lead") + " " + what,
		Points: []string{t(key + ".point")}, Button: t(key)}
}
