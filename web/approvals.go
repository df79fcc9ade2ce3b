package web

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/redact"
	"github.com/toolgate/toolgate/templates"
)

// recentAnswers is how many answered asks the inbox lists below the
// waiting ones.
const recentAnswers = 8

// approvalsPage server-renders the pending asks and the recent answers;
// approvals.js keeps the list live over /ws.
// MaxShownPending is how many pending asks the inbox page and a websocket
// hello carry, oldest first; the rest follow as these are answered.
const MaxShownPending = 50

// maxShownArg is the longest argument string a card or the websocket
// shows; the rest is cut with a note saying how much.
const maxShownArg = 4096

func (u *UI) approvalsPage(w http.ResponseWriter, r *http.Request) {
	c := currentFrom(r.Context())
	nav := u.nav(r, "/approvals")
	nav.CanEdit = canApprove(c.sess.principal.Role)
	p := templates.ApprovalsProps{Nav: nav, Available: u.approvals.Available(), CanDecide: nav.CanEdit}
	if p.Available {
		now, t := time.Now(), translatorFor(r.Context())
		index := u.rulesByRef()
		all, _ := u.approvals.List(c.sess.principal, "")
		for _, a := range all {
			switch {
			case !a.Pending():
			case len(p.Pending) < MaxShownPending:
				row := approvalRow(a, index, now, t)
				row.NoAllowFor = !c.sess.principal.ApprovalFilter().MayAllowFor()
				p.Pending = append(p.Pending, row)
			default:
				p.More++
			}
		}
		p.Recent = answeredRows(r.Context(), all)
	}
	render(w, r, http.StatusOK, templates.Approvals(p))
}

// approvalItem renders one pending ask's card alone, for approvals.js to
// insert when an ask arrives live: the card is built by the same code as
// the page's.
func (u *UI) approvalItem(w http.ResponseWriter, r *http.Request) {
	c := currentFrom(r.Context())
	if !u.approvals.Available() {
		http.Error(w, "approvals are not available", http.StatusServiceUnavailable)
		return
	}
	id := r.URL.Query().Get("id")
	pending, _ := u.approvals.List(c.sess.principal, approval.StatusPending)
	for _, a := range pending {
		if a.ID == id {
			row := approvalRow(a, u.rulesByRef(), time.Now(), translatorFor(r.Context()))
			row.NoAllowFor = !c.sess.principal.ApprovalFilter().MayAllowFor()
			render(w, r, http.StatusOK, templates.ApprovalItem(row, canApprove(c.sess.principal.Role), c.sess.csrf))
			return
		}
	}
	http.Error(w, "that ask is not waiting (or not yours to see)", http.StatusNotFound)
}

// approvalRow renders an approval for the inbox: what it runs, why in
// words, how risky, what it would write, what "always allow" remembers and
// when it expires. Arguments and content are redacted.
func approvalRow(a approval.Approval, index map[string]ruleMeta, now time.Time, t translator) templates.ApprovalRow {
	req := engine.Request{Call: a.Request.Call(), ChannelID: a.Request.ChannelID, Workspace: a.Request.Workspace}
	summary := req.Call.Summary()
	redacted := redact.ClipArgs(redact.ShownArgs(a.Request.ToolArgs), maxShownArg)
	args := indentJSON(redacted)
	words := explainRule(a.Asked.MatchedRule, a.Request.ToolName, index, t)
	switch a.Asked.Cause {
	case engine.CauseEscalation:
		// The policy allowed; the shell escalation asked. Paths outside
		// the workspace that an allowed directory covers did not.
		words = ruleWords{Reason: t("why.escalation"), Escalation: true}
	case "":
		// An ask kept without its cause: as before, from its paths.
		if len(a.Asked.ExternalPaths) > 0 && !words.External {
			words.External = true
			words.Reason = strings.TrimSpace(words.Reason + " " + t("why.external"))
		}
	}
	row := templates.ApprovalRow{
		ID: a.ID, Tool: redact.Visible(a.Request.ToolName), Summary: redact.Clip(redact.Shown(summary), maxShownArg), Args: args,
		Hidden:  redact.HasInvisible(summary) || redact.HasInvisible(args),
		Channel: cmp.Or(a.Request.ChannelID, "web"), Session: cmp.Or(a.Request.SessionID, "–"),
		Reason: cmp.Or(words.Reason, a.Asked.Reason), EngineReason: a.Asked.Reason, Rule: a.Asked.MatchedRule,
		External: externalText(a.Asked.ExternalPaths), ExternalPaths: a.Asked.ExternalPaths,
		Risk:    riskCue(words, a.Request.ToolName, t),
		Preview: contentPreview(redacted, t),
		Created: a.CreatedAt.UTC().Format(time.RFC3339),
		Expires: a.ExpiresAt.UTC().Format("15:04:05 UTC"), ExpiresISO: a.ExpiresAt.UTC().Format(time.RFC3339),
		ExpiresIn:  untilText(a.ExpiresAt.Sub(now), t),
		HasSession: a.Request.SessionID != "",
	}
	if server, tool, ok := engine.SplitMCPTool(a.Request.ToolName); ok {
		row.Server, row.ServerTool = redact.Visible(server), redact.Visible(tool)
		row.ArgList = argLines(redacted)
	}
	if o, err := engine.AlwaysAllowOverride(&req); err == nil {
		row.RememberType, row.Remember = o.MatchType, redact.Shown(o.Pattern)
	}
	return row
}

// indentJSON writes v as indented JSON for a person: < > & as they are
// (the page escapes them as HTML).
func indentJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

// argLines lists shown (redacted, visible, clipped) arguments by key, in
// key order: a string as it is, so that a query or a message reads as
// written, any other value as indented JSON.
func argLines(shown map[string]any) []templates.ArgLine {
	keys := slices.Sorted(maps.Keys(shown))
	out := make([]templates.ArgLine, 0, len(keys))
	for _, k := range keys {
		v, ok := shown[k].(string)
		if !ok {
			v = indentJSON(shown[k])
		}
		out = append(out, templates.ArgLine{Key: k, Value: v})
	}
	return out
}

// riskCue sums up how much care an ask needs: the worst severity of the
// rules that asked, whether a built-in safety rule or only the tool's
// level asked, and whether it reaches outside the workspace.
func riskCue(w ruleWords, tool string, t translator) templates.RiskCue {
	rc := templates.RiskCue{Category: engine.ToolCategory(tool).String(), External: w.External}
	var worst policy.Severity
	for _, r := range w.Rules {
		// A rule without action or severity is HIGH (ParseSeverity's
		// fallback); an unreadable severity does not count.
		if sev, ok := policy.ParseSeverity(r.Severity); (ok || r.Severity == "" && r.Action == "") && sev > worst {
			worst = sev
		}
		if r.Builtin {
			rc.Source = "risk.builtin"
		} else if rc.Source == "" {
			rc.Source = "risk.yours"
		}
	}
	if worst != 0 {
		rc.Severity = worst.String()
	}
	switch {
	case rc.Source != "":
	case w.Escalation:
		rc.Source = "risk.escalation"
	case w.ToolLevel:
		rc.Source = "risk.toollevel"
	case w.Default:
		rc.Source = "risk.default"
	case w.External:
		rc.Source = "risk.external"
	}
	switch {
	case rc.Severity == "CRITICAL" || rc.Source == "risk.builtin" || rc.External:
		rc.Class = "high"
	case rc.Severity == "HIGH" || rc.Severity == "MEDIUM":
		rc.Class = "medium"
	default:
		rc.Class = "low"
	}
	if rc.Source != "" {
		rc.Source = t(rc.Source)
	}
	return rc
}

// previewKeys are the arguments that carry what a write or edit would put
// in a file, in the order they are shown.
var previewKeys = []struct{ key, label string }{
	{"content", "preview.content"}, {"contents", "preview.content"}, {"text", "preview.text"},
	{"old_string", "preview.replaces"}, {"old_str", "preview.replaces"},
	{"new_string", "preview.with"}, {"new_str", "preview.with"},
}

// Preview limits: a person in a hurry reads the start of it.
const (
	previewBytes = 800
	previewLines = 14
)

// contentPreview is the start of the content a write or edit carries,
// from arguments that are already redacted.
func contentPreview(args map[string]any, t translator) []templates.ContentPreview {
	var out []templates.ContentPreview
	for _, k := range previewKeys {
		s, ok := args[k.key].(string)
		if !ok || s == "" {
			continue
		}
		text, cut := s, false
		if lines := strings.SplitN(text, "\n", previewLines+1); len(lines) > previewLines {
			text, cut = strings.Join(lines[:previewLines], "\n"), true
		}
		if len(text) > previewBytes {
			text, cut = strings.ToValidUTF8(text[:previewBytes], ""), true
		}
		out = append(out, templates.ContentPreview{Label: t(k.label), Text: text, Truncated: cut,
			Size: fmt.Sprintf("%d %s, %d %s", len(s), t("preview.bytes"), strings.Count(s, "\n")+1, t("preview.lines"))})
	}
	return out
}

// untilText says how long is left, roughly, for a server-rendered page
// (the countdown script refines it).
func untilText(d time.Duration, t translator) string {
	switch {
	case d <= 0:
		return t("approvals.expired")
	case d < time.Minute:
		return fmt.Sprintf("%s %d s", t("approvals.in"), int(d.Seconds()))
	default:
		return fmt.Sprintf("%s %d min", t("approvals.in"), int(d.Round(time.Minute).Minutes()))
	}
}

// answeredRows lists the newest answered (or expired) asks, newest first,
// each answer in the page's words; a scoped answer says until when its
// grant holds and links to it.
func answeredRows(ctx context.Context, all []approval.Approval) []templates.AnsweredRow {
	var done []approval.Approval
	for _, a := range all {
		if !a.Pending() && a.DecidedAt != nil {
			done = append(done, a)
		}
	}
	slices.SortFunc(done, func(a, b approval.Approval) int { return b.DecidedAt.Compare(*a.DecidedAt) })
	var out []templates.AnsweredRow
	for _, a := range done[:min(len(done), recentAnswers)] {
		row := templates.AnsweredRow{Tool: redact.Visible(a.Request.ToolName), Summary: redact.Clip(redact.Shown(a.Request.Call().Summary()), maxShownArg),
			Status: string(a.Status), By: a.DecidedBy,
			When: a.DecidedAt.UTC().Format("15:04:05 UTC"), WhenISO: a.DecidedAt.UTC().Format(time.RFC3339)}
		ttl := 0
		if g := a.Grant; g != nil {
			ttl = int(g.ExpiresAt.Sub(g.CreatedAt).Round(time.Second).Seconds())
			row.GrantID = g.ID
			row.Until, row.UntilISO = g.ExpiresAt.UTC().Format("2006-01-02 15:04:05 UTC"), g.ExpiresAt.UTC().Format(time.RFC3339)
		}
		if a.Choice != "" {
			row.Choice = grantWords(ctx, string(a.Choice), ttl)
		}
		out = append(out, row)
	}
	return out
}

// externalText lists the external paths of an ask for the prompt.
func externalText(paths []string) string {
	if len(paths) == 0 {
		return "none"
	}
	return strings.Join(paths, ", ")
}

// decideApproval answers an ask from the no-JavaScript form.
func (u *UI) decideApproval(w http.ResponseWriter, r *http.Request) {
	c := currentFrom(r.Context())
	if !canApprove(c.sess.principal.Role) {
		http.Error(w, "your role may not answer approvals", http.StatusForbidden)
		return
	}
	if !u.approvals.Available() {
		http.Error(w, "approvals are not available", http.StatusServiceUnavailable)
		return
	}
	id, choice := r.PostFormValue("id"), approval.Choice(r.PostFormValue("choice"))
	ttl, ok := formTTL(r)
	if !ok {
		u.flash(r, "error", templates.T(r.Context(), "approvals.ws_invalid_ttl"))
		redirect(w, r, "/approvals")
		return
	}
	_, err := u.decide(r.Context(), c.sess.principal, id, choice, ttl)
	switch {
	case errors.Is(err, approval.ErrInvalidChoice):
		u.done(w, r, "/approvals", errors.New(templates.T(r.Context(), "approvals.err.choice")), "")
	case errors.Is(err, approval.ErrNotFound):
		u.done(w, r, "/approvals", errors.New(templates.T(r.Context(), "approvals.err.gone")), "")
	case errors.Is(err, approval.ErrAlreadyDecided):
		u.flash(r, "error", templates.T(r.Context(), "flash.elsewhere"))
		redirect(w, r, "/approvals")
	case err != nil:
		u.done(w, r, "/approvals", err, "")
	default:
		u.done(w, r, "/approvals", nil, grantWords(r.Context(), string(choice), ttl)+".")
	}
}

// formTTL reads an "allow for" answer's ttl_seconds: from the form, or
// from the query of the button's formaction (a form without JavaScript
// posts the duration of the button pressed that way). Absent is 0; ok is
// false for a value that is not a whole number of seconds.
func formTTL(r *http.Request) (int, bool) {
	v := cmp.Or(r.PostFormValue("ttl_seconds"), r.URL.Query().Get("ttl_seconds"))
	if v == "" {
		return 0, true
	}
	n, err := strconv.Atoi(v)
	return n, err == nil && n > 0
}
