package web

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/toolgate/toolgate/store/auth"
	"github.com/toolgate/toolgate/templates"
)

// tokensPage lists the API tokens (never their secrets).
func (u *UI) tokensPage(w http.ResponseWriter, r *http.Request) {
	render(w, r, http.StatusOK, templates.Tokens(u.tokensProps(r, templates.NewToken{})))
}

func (u *UI) tokensProps(r *http.Request, created templates.NewToken) templates.TokensProps {
	p := templates.TokensProps{Nav: u.nav(r, "/tokens"), Created: created}
	list, err := u.tokens.List(currentFrom(r.Context()).sess.principal)
	if !u.tokens.Available() || err != nil {
		return p
	}
	p.Available = true
	tr := translatorFor(r.Context())
	for _, t := range list {
		p.Tokens = append(p.Tokens, templates.TokenRow{ID: t.ID, Name: t.Name, Role: t.Role,
			Scope: tokenScope(t, tr), Created: t.Created.UTC().Format(time.DateTime + " UTC"), CreatedISO: t.Created.UTC().Format(time.RFC3339)})
	}
	return p
}

// tokenScope says which asks an approver token sees.
func tokenScope(t auth.TokenInfo, tr translator) string {
	var parts []string
	if len(t.Channels) > 0 {
		parts = append(parts, tr("tokens.scope.channels")+" "+strings.Join(t.Channels, ", "))
	}
	if len(t.Sessions) > 0 {
		parts = append(parts, tr("tokens.scope.sessions")+" "+strings.Join(t.Sessions, ", "))
	}
	return strings.Join(parts, "; ")
}

// createToken makes a token and shows its secret once, on this response
// only: it is not kept anywhere but in the hash.
func (u *UI) createToken(w http.ResponseWriter, r *http.Request) {
	if !u.tokens.Available() {
		http.Error(w, templates.T(r.Context(), "tokens.unavailable"), http.StatusServiceUnavailable)
		return
	}
	name, role := strings.TrimSpace(r.PostFormValue("name")), r.PostFormValue("role")
	if name == "" {
		u.done(w, r, "/tokens", errors.New(templates.T(r.Context(), "tokens.err.name")), "")
		return
	}
	info, secret, err := u.tokens.Create(currentFrom(r.Context()).sess.principal, name, role, splitList(r.PostFormValue("channels")), splitList(r.PostFormValue("sessions")))
	if errors.Is(err, auth.ErrBadRole) {
		err = errors.New(templates.T(r.Context(), "tokens.err.role"))
	}
	if err != nil {
		u.done(w, r, "/tokens", err, "")
		return
	}
	u.deps.Logger.Info("web token created", "id", info.ID, "role", info.Role, "by", currentFrom(r.Context()).sess.principal.Name)
	render(w, r, http.StatusOK, templates.Tokens(u.tokensProps(r, templates.NewToken{ID: info.ID, Name: info.Name, Role: info.Role, Secret: secret})))
}

// revokeToken deletes a token after a confirmation; its sessions and
// websockets end with it.
func (u *UI) revokeToken(w http.ResponseWriter, r *http.Request) {
	if !u.tokens.Available() {
		http.Error(w, templates.T(r.Context(), "tokens.unavailable"), http.StatusServiceUnavailable)
		return
	}
	id := r.PostFormValue("id")
	t := translatorFor(r.Context())
	if !u.confirmed(w, r, "/tokens", removal(t, "confirm.revoketoken", id, id)) {
		return
	}
	u.done(w, r, "/tokens", u.tokens.Revoke(currentFrom(r.Context()).sess.principal, id), t("flash.revoked")+" "+id+".")
}

// splitList reads a comma- or space-separated list; nil when empty.
func splitList(s string) []string {
	out := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
	if len(out) == 0 {
		return nil
	}
	return out
}
