package web

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/templates"
)

// approvalsPage server-renders the pending asks; approvals.js keeps the
// list live over /ws.
func (u *UI) approvalsPage(w http.ResponseWriter, r *http.Request) {
	c := currentFrom(r.Context())
	nav := u.nav(r, "/approvals")
	nav.CanEdit = canApprove(c.sess.principal.Role)
	p := templates.ApprovalsProps{Nav: nav, Available: u.deps.Approvals != nil, CanDecide: nav.CanEdit}
	if p.Available {
		for _, a := range u.deps.Approvals.List(c.sess.principal.ApprovalFilter(), approval.StatusPending) {
			p.Pending = append(p.Pending, ApprovalRow(a))
		}
	}
	render(w, r, http.StatusOK, templates.Approvals(p))
}

// ApprovalRow renders an approval for the inbox.
func ApprovalRow(a approval.Approval) templates.ApprovalRow {
	args, _ := json.MarshalIndent(a.Request.ToolArgs, "", "  ")
	return templates.ApprovalRow{
		ID: a.ID, Tool: a.Request.ToolName, Summary: summary(a.Request.ToolArgs), Args: string(args),
		Channel: orText(a.Request.ChannelID, "web"), Session: orText(a.Request.SessionID, "–"),
		Reason: a.Asked.Reason, Rule: a.Asked.MatchedRule, External: externalText(a.Asked.ExternalPaths),
		Created: a.CreatedAt.UTC().Format(time.RFC3339), Expires: a.ExpiresAt.UTC().Format(time.RFC3339),
	}
}

// externalText lists the external paths of an ask for the prompt.
func externalText(paths []string) string {
	if len(paths) == 0 {
		return "none"
	}
	return strings.Join(paths, ", ")
}

// summary is the one line that says what a call does: its command or path.
func summary(args map[string]any) string {
	if c := engine.ShellCommand(args); c != "" {
		return c
	}
	if p, ok := engine.FirstPathValue(args); ok {
		return p
	}
	return ""
}

// decideApproval answers an ask from the no-JavaScript form.
func (u *UI) decideApproval(w http.ResponseWriter, r *http.Request) {
	c := currentFrom(r.Context())
	if !canApprove(c.sess.principal.Role) {
		http.Error(w, "your role may not answer approvals", http.StatusForbidden)
		return
	}
	if u.deps.Approvals == nil {
		http.Error(w, "approvals are not available", http.StatusServiceUnavailable)
		return
	}
	id, choice := r.PostFormValue("id"), approval.Choice(r.PostFormValue("choice"))
	if !choice.Valid() {
		u.done(w, r, "/approvals", errors.New("choose allow once, always allow or deny"), "")
		return
	}
	if !u.visible(c.sess.principal, id) {
		u.done(w, r, "/approvals", errors.New("that ask is not there (or not yours to answer)"), "")
		return
	}
	_, err := u.deps.Approvals.Decide(r.Context(), id, choice, c.sess.principal.Name, "")
	switch {
	case errors.Is(err, approval.ErrAlreadyDecided):
		u.flash(r, "error", "Someone else already answered that ask.")
		redirect(w, r, "/approvals")
	case err != nil:
		u.done(w, r, "/approvals", err, "")
	default:
		u.done(w, r, "/approvals", nil, "Answered: "+strings.ReplaceAll(string(choice), "_", " ")+".")
	}
}

// visible reports whether the principal's filter shows the pending ask.
func (u *UI) visible(p store.Principal, id string) bool {
	for _, a := range u.deps.Approvals.List(p.ApprovalFilter(), approval.StatusPending) {
		if a.ID == id {
			return true
		}
	}
	return false
}
