package web

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"time"

	"github.com/toolgate/toolgate/grant"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/redact"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/templates"
)

// grantsPage lists the live grants a person may see, filtered by the
// query's agent, session and tool, and the overrides "always allow" wrote
// (docs/grants.md). Expired grants never show: the list is live at now.
func (u *UI) grantsPage(w http.ResponseWriter, r *http.Request) {
	c := currentFrom(r.Context())
	role := c.sess.principal.Role
	nav := u.nav(r, "/grants")
	// Revoking a grant is answering asks, not editing the policy: an
	// approver's page is not read-only.
	nav.CanEdit = canApprove(role)
	q := r.URL.Query()
	p := templates.GrantsProps{Nav: nav, Available: u.deps.Grants != nil, CanRevoke: canApprove(role),
		Filter:          templates.GrantFilter{Agent: q.Get("agent"), Session: q.Get("session"), Tool: q.Get("tool")},
		CanRevokeAlways: canEdit(role)}
	if p.Available {
		now := time.Now()
		all := u.grantsFor(c.sess.principal)
		p.Live = len(all)
		p.Agents, p.Sessions, p.Tools = grantChoices(all)
		for _, g := range all {
			if (service.GrantFilter{Agent: p.Filter.Agent, Session: p.Filter.Session, Tool: p.Filter.Tool}).Matches(g) {
				p.Grants = append(p.Grants, grantRow(r.Context(), g, now))
			}
		}
	}
	p.Overrides, p.ETag = u.alwaysOverrides()
	render(w, r, http.StatusOK, templates.Grants(p))
}

// grantChoices are the agents, sessions and tools the grants have, sorted,
// for the filters' choices.
func grantChoices(list []grant.Grant) (agents, sessions, tools []string) {
	for _, g := range list {
		if g.Agent != "" {
			agents = append(agents, g.Agent)
		}
		if g.Scope == grant.ScopeSession {
			sessions = append(sessions, g.SessionID)
		}
		tools = append(tools, g.ToolName)
	}
	for _, l := range []*[]string{&agents, &sessions, &tools} {
		slices.Sort(*l)
		*l = slices.Compact(*l)
	}
	return agents, sessions, tools
}

// grantRow renders a grant for the page: what it covers in words (its
// pattern, or "this exact call" with the call's summary for a digest
// grant), its scope, and when it ends. Texts are masked as on the cards.
func grantRow(ctx context.Context, g grant.Grant, now time.Time) templates.GrantRow {
	t := translatorFor(ctx)
	row := templates.GrantRow{
		ID: g.ID, Tool: redact.Visible(g.ToolName), Pattern: redact.Shown(g.Pattern), MatchType: g.MatchType,
		Exact: g.Pattern == "", Summary: redact.Clip(redact.Shown(g.Summary), maxShownArg), Scope: string(g.Scope),
		Agent: redact.Visible(g.Agent), Channel: redact.Visible(g.ChannelID), GrantedBy: redact.Visible(g.GrantedBy),
		ApprovalID: g.ApprovalID,
		Created:    g.CreatedAt.UTC().Format("2006-01-02 15:04:05"), CreatedISO: g.CreatedAt.UTC().Format(time.RFC3339),
		Expires: g.ExpiresAt.UTC().Format("2006-01-02 15:04:05"), ExpiresISO: g.ExpiresAt.UTC().Format(time.RFC3339),
		ExpiresIn: leftText(ctx, g.ExpiresAt.Sub(now)),
	}
	switch g.Scope {
	case grant.ScopeSession:
		row.Session = redact.Visible(g.SessionID)
		row.ScopeText = t("grants.scope.session")
	default:
		row.ScopeText = t("grants.scope.timed") + " " + templates.DurationText(ctx, int(g.ExpiresAt.Sub(g.CreatedAt).Round(time.Second).Seconds()))
	}
	return row
}

// leftText says how long a grant has left, in the largest unit that reads
// well: seconds, minutes, then hours.
func leftText(ctx context.Context, d time.Duration) string {
	t := translatorFor(ctx)
	if d < time.Hour {
		return untilText(d, t)
	}
	return t("approvals.in") + " " + templates.Tf(ctx, "duration.hours", int(d.Round(time.Hour).Hours()))
}

// alwaysOverrides are the approval overrides "always allow" wrote (source
// user_approval), with the policy's ETag for their revoke.
func (u *UI) alwaysOverrides() ([]templates.OverrideRow, string) {
	sec, etag := u.typed()
	var out []templates.OverrideRow
	for i := range sec.Overrides {
		if sec.Overrides[i].Source == policy.SourceUserApproval {
			out = append(out, overrideRow(&sec.Overrides[i]))
		}
	}
	return out, etag
}

// revokeGrantForm revokes a grant after a confirmation page that says
// what it covers; the person must be one who answers asks.
func (u *UI) revokeGrantForm(w http.ResponseWriter, r *http.Request) {
	c := currentFrom(r.Context())
	t := translatorFor(r.Context())
	if !canApprove(c.sess.principal.Role) {
		http.Error(w, t("auth.readonly"), http.StatusForbidden)
		return
	}
	if u.deps.Grants == nil {
		http.Error(w, t("grants.unavailable"), http.StatusServiceUnavailable)
		return
	}
	id := r.PostFormValue("id")
	i := slices.IndexFunc(u.grantsFor(c.sess.principal), func(g grant.Grant) bool { return g.ID == id })
	if i < 0 {
		u.flash(r, "error", t("err.grantgone"))
		redirect(w, r, "/grants")
		return
	}
	row := grantRow(r.Context(), u.grantsFor(c.sess.principal)[i], time.Now())
	covers := row.MatchType + " " + row.Pattern
	if row.Exact {
		covers = t("approvals.exactcall") + " " + row.Summary
	}
	if !u.confirmed(w, r, "/grants", removal(t, "confirm.revokegrant", id,
		id+": "+row.Tool+" "+covers+" ("+row.ScopeText+").")) {
		return
	}
	if _, err := u.revokeGrant(r.Context(), c.sess.principal, id); errors.Is(err, grant.ErrNotFound) {
		u.flash(r, "error", t("err.grantgone"))
		redirect(w, r, "/grants")
		return
	} else if err != nil {
		u.done(w, r, "/grants", err, "")
		return
	}
	u.done(w, r, "/grants", nil, t("flash.revokedgrant")+" "+id+".")
}

// deleteAlwaysOverride revokes an "always allow" override from the Grants
// page, the same way the Overrides page does.
func (u *UI) deleteAlwaysOverride(w http.ResponseWriter, r *http.Request) {
	u.revokeOverride(w, r, "/grants")
}

// grantRef finds the grant a matched_rule names
// (tiered_policy:grants:grants[<id>]).
var grantRef = regexp.MustCompile(`\bgrants\[([^\]]+)\]`)

// grantOfDecision names the grant that allowed a logged call, and whether
// it is still live among those listed.
func grantOfDecision(matched string, live []grant.Grant) (id string, isLive bool) {
	m := grantRef.FindStringSubmatch(matched)
	if m == nil {
		return "", false
	}
	id = m[1]
	return id, slices.ContainsFunc(live, func(g grant.Grant) bool { return g.ID == id })
}

// grantWords says an answer in the page's words; an allow_for says for
// how long (ttl seconds), or "for a while" when that is not known.
func grantWords(ctx context.Context, choice string, ttl int) string {
	switch {
	case choice == "allow_for" && ttl > 0:
		return templates.T(ctx, "approvals.done.allow_for") + " " + templates.DurationText(ctx, ttl)
	case choice == "allow_for":
		return templates.T(ctx, "approvals.done.allow_while")
	}
	return templates.T(ctx, "approvals.done."+choice)
}
