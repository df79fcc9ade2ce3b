package web

import (
	"context"
	"net/http"

	"github.com/toolgate/toolgate/templates"
)

// NotFound answers a path no route has: a page in the layout for a
// signed-in browser, a plain page otherwise. It leaves the session's flash
// alone. The wiring routes API paths to the API's JSON answer instead.
func (u *UI) NotFound(w http.ResponseWriter, r *http.Request) {
	withLang(http.HandlerFunc(u.notFoundPage)).ServeHTTP(w, r)
}

// notFoundPage is NotFound once the page language is known.
func (u *UI) notFoundPage(w http.ResponseWriter, r *http.Request) {
	securityHeaders(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		se, id, ok := u.sessions.lookup(r)
		if !ok {
			render(w, r, http.StatusNotFound, templates.NotFoundPlain())
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), currentKey{}, current{id: id, sess: se}))
		nav := templates.Nav{User: se.principal.Name, Role: se.principal.Role, CSRF: se.csrf,
			CanEdit: true, Pending: u.pendingFor(se.principal)}
		render(w, r, http.StatusNotFound, templates.Message(templates.MessageProps{Nav: nav, Title: templates.T(r.Context(), "notfound.title"),
			Text:   templates.Tf(r.Context(), "notfound.textat", r.URL.Path),
			TestID: "not-found", Link: landing(se.principal.Role), LinkText: templates.T(r.Context(), "notfound.home")}))
	})).ServeHTTP(w, r)
}
