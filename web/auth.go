package web

import (
	"context"
	"crypto/subtle"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store/auth"
	"github.com/toolgate/toolgate/templates"
)

// loginCookie carries the login form's CSRF token (double submit), since
// there is no session yet to keep it in.
const loginCookie = "toolgate_login"

// current is the signed-in session of a request.
type current struct {
	id   string
	sess session
}

type currentKey struct{}

// currentFrom returns the session the request was authenticated with.
func currentFrom(ctx context.Context) current {
	c, _ := ctx.Value(currentKey{}).(current)
	return c
}

// canEdit reports whether a role may change the policy (service.Allowed,
// the one table of roles and rights the API asks too).
func canEdit(role string) bool { return service.Allowed(role, service.RightWrite) }

// canApprove reports whether a role may answer asks.
func canApprove(role string) bool { return service.Allowed(role, service.RightApprove) }

// canSignIn reports whether a role may use the pages: those that may read
// the policy (agents only decide calls).
func canSignIn(role string) bool { return service.Allowed(role, service.RightRead) }

// nav builds the layout props for a request and takes the flash message.
func (u *UI) nav(r *http.Request, active string) templates.Nav {
	c := currentFrom(r.Context())
	return templates.Nav{
		Active: active, User: c.sess.principal.Name, Role: c.sess.principal.Role,
		CSRF: c.sess.csrf, CanEdit: canEdit(c.sess.principal.Role),
		CanManageTokens: service.Allowed(c.sess.principal.Role, service.RightWrite),
		Flash:           u.sessions.TakeFlash(c.id), Pending: u.pendingFor(c.sess.principal),
	}
}

// pendingFor counts the asks waiting that the principal may see.
func (u *UI) pendingFor(p auth.Principal) int {
	if !u.approvals.Available() {
		return 0
	}
	pending, _ := u.approvals.List(p, approval.StatusPending)
	return len(pending)
}

// landing is where a person arrives after signing in: one who answers asks
// but may not edit (an approver) starts at the inbox.
func landing(role string) string {
	if canApprove(role) && !canEdit(role) {
		return "/approvals"
	}
	return "/"
}

// flash keeps a message for the next page of the request's session.
func (u *UI) flash(r *http.Request, kind, text string) {
	u.sessions.SetFlash(currentFrom(r.Context()).id, templates.Flash{Kind: kind, Text: text})
}

// redirect answers a form post with 303 See Other.
func redirect(w http.ResponseWriter, r *http.Request, to string) {
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// loginPage shows the sign-in form with a fresh login CSRF token.
func (u *UI) loginPage(w http.ResponseWriter, r *http.Request) {
	if p, ok := u.sessions.SessionPrincipal(r); ok {
		redirect(w, r, landing(p.Role))
		return
	}
	u.renderLogin(w, r, http.StatusOK, "")
}

// renderLogin shows the sign-in form; msgKey names the error message, if any.
func (u *UI) renderLogin(w http.ResponseWriter, r *http.Request, status int, msgKey string) {
	tok := randomID()
	http.SetCookie(w, &http.Cookie{
		Name: loginCookie, Value: tok, Path: "/login", HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode, MaxAge: 3600,
	})
	msg := ""
	if msgKey != "" {
		msg = templates.T(r.Context(), msgKey)
	}
	render(w, r, status, templates.Login(templates.LoginProps{CSRF: tok, Error: msg}))
}

// login checks the token and starts a session. Agents may not sign in.
func (u *UI) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		u.renderLogin(w, r, http.StatusBadRequest, "login.err.form")
		return
	}
	c, err := r.Cookie(loginCookie)
	form := r.PostForm.Get("csrf_token")
	if err != nil || form == "" || subtle.ConstantTimeCompare([]byte(c.Value), []byte(form)) != 1 {
		u.renderLogin(w, r, http.StatusForbidden, "login.err.expired")
		return
	}
	p, ok := u.deps.Tokens.Verify(strings.TrimSpace(r.PostForm.Get("token")))
	if !ok {
		// A valid token always signs in; a client over its failures is
		// slowed and refused.
		client := auth.ClientOf(r)
		if left, blocked := u.deps.Throttle.Blocked(client); blocked {
			u.deps.Logger.Info("web login refused", "reason", "throttled", "client", client)
			time.Sleep(auth.ThrottlePause)
			w.Header().Set("Retry-After", strconv.Itoa(int(left.Seconds())+1))
			u.renderLogin(w, r, http.StatusTooManyRequests, "login.err.throttled")
			return
		}
		u.deps.Throttle.Failed(client)
		u.deps.Logger.Info("web login refused", "reason", "unknown token")
		u.renderLogin(w, r, http.StatusUnauthorized, "login.err.token")
		return
	}
	if !canSignIn(p.Role) {
		u.deps.Logger.Info("web login refused", "reason", "role", "role", p.Role, "name", p.Name)
		u.renderLogin(w, r, http.StatusForbidden, "login.err.agent")
		return
	}
	if _, old, ok := u.sessions.lookup(r); ok {
		u.sessions.Delete(old) // a new id at every sign-in: no session fixation
	}
	id, err := u.sessions.CreateSession(p)
	if err != nil {
		// A sign-in the session store did not take (the shared database is
		// away) is said, not answered with a cookie that no replica knows.
		u.deps.Logger.Warn("web login: session not stored", "name", p.Name, "err", err)
		u.renderLogin(w, r, http.StatusServiceUnavailable, "login.err.unavailable")
		return
	}
	u.sessions.setCookie(w, r, id)
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: "", Path: "/login", MaxAge: -1})
	u.deps.Logger.Info("web login", "name", p.Name, "role", p.Role)
	redirect(w, r, landing(p.Role))
}

// logout ends the session.
func (u *UI) logout(w http.ResponseWriter, r *http.Request) {
	u.sessions.Delete(currentFrom(r.Context()).id)
	clearCookie(w, r)
	redirect(w, r, "/login")
}

// requireSession lets only signed-in browsers through: a page request
// without a session goes to /login; a POST also needs the session's CSRF
// token (form field csrf_token or header X-CSRF-Token).
func (u *UI) requireSession(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		se, id, ok := u.sessions.lookup(r)
		if !ok {
			if r.Method == http.MethodGet || r.Method == http.MethodHead {
				redirect(w, r, "/login")
				return
			}
			http.Error(w, templates.T(r.Context(), "auth.notsignedin"), http.StatusUnauthorized)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
			tok := r.Header.Get("X-CSRF-Token")
			if tok == "" {
				tok = r.PostFormValue("csrf_token")
			}
			if !u.sessions.CheckCSRF(id, tok) {
				http.Error(w, templates.T(r.Context(), "auth.csrf"), http.StatusForbidden)
				return
			}
		}
		ctx := context.WithValue(r.Context(), currentKey{}, current{id: id, sess: se})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// requireRight refuses a request whose role lacks the right (for a role
// that may only look: every change, and the token list).
func requireRight(right service.Right) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !service.Allowed(currentFrom(r.Context()).sess.principal.Role, right) {
				http.Error(w, templates.T(r.Context(), "auth.readonly"), http.StatusForbidden)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}
