package templates

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strconv"

	"github.com/a-h/templ"
)

// urlQuery escapes a value for a query string.
func urlQuery(s string) string { return url.QueryEscape(s) }

// orDefault returns s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// boolText is "true" or "false", for data attributes.
func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// ruleFormAction is where the rule form posts: a new rule or an update.
func ruleFormAction(editing bool) string {
	if editing {
		return "/rules/update#rule-form"
	}
	return "/rules#rule-form"
}

// itoa formats a count.
func itoa(n int) string { return strconv.Itoa(n) }

// pageTitle is the tab title: the page, and first the count of waiting
// asks when there are any, so a background tab shows it.
func pageTitle(title string, pending int) string {
	if pending > 0 {
		return "(" + strconv.Itoa(pending) + ") " + title + " · toolgate"
	}
	return title + " · toolgate"
}

// plural is "1 rule" or "3 rules": the count with the right form.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// saveKey is the message key of the rule form's save button, which the
// impact preview names.
func saveKey(editing bool) string {
	if editing {
		return "rules.save"
	}
	return "rules.addbtn"
}

// previewSummary says what a replay found, grouping repeated calls.
func previewSummary(ctx context.Context, pv RulePreview) string {
	out := Tf(ctx, "preview.summary", plural(pv.Replayed, T(ctx, "preview.logged1"), T(ctx, "preview.loggedN")), pv.Calls)
	if len(pv.Changes) < pv.Calls {
		out += Tf(ctx, "preview.distinct", plural(len(pv.Changes), T(ctx, "preview.distinct1"), T(ctx, "preview.distinctN")))
	}
	return out + T(ctx, "preview.end")
}

// levelWord is a level (or mode) in the page's words; the value the
// policy stores stays the form's value and the badge's class. A word the
// catalog does not know is shown as it is.
func levelWord(ctx context.Context, level string) string {
	if _, ok := messagesEN["level."+level]; ok {
		return T(ctx, "level."+level)
	}
	return level
}

// toastWords are approvals.js's words in the page's language, as JSON for
// a data attribute.
func toastWords(ctx context.Context) string {
	w := map[string]string{}
	for _, k := range []string{"allow_once", "allow_session", "allow_for", "allow_while", "allow_always", "deny"} {
		w[k] = T(ctx, "approvals.done."+k)
	}
	for _, k := range []string{"elsewhere", "expired", "in", "nottaken", "notsent", "ws_forbidden", "ws_internal", "ws_bad_request", "ws_invalid_ttl", "granteduntil"} {
		w[k] = T(ctx, "approvals."+k)
	}
	b, _ := json.Marshal(w)
	return string(b)
}

// ttlAction is where an "allow for" button posts without JavaScript: the
// decide form with its ttl_seconds in the query.
func ttlAction(seconds int) templ.SafeURL {
	return templ.SafeURL("/approvals/decide?ttl_seconds=" + strconv.Itoa(seconds))
}

// DurationText is a grant's lifetime in the page's words: "1 hour",
// "15 min"; a length no message names is said in hours or minutes.
func DurationText(ctx context.Context, seconds int) string {
	key := "duration." + strconv.Itoa(seconds)
	if _, ok := messagesEN[key]; ok {
		return T(ctx, key)
	}
	if seconds%3600 == 0 {
		return Tf(ctx, "duration.hours", seconds/3600)
	}
	return Tf(ctx, "duration.minutes", (seconds+59)/60)
}

// withCurrent is values with current added when it is not among them, so
// a filter asked for in the URL stays chosen.
func withCurrent(values []string, current string) []string {
	if current == "" || slices.Contains(values, current) {
		return values
	}
	return append(slices.Clip(values), current)
}
