package web

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/templates"
)

// str renders a scalar as text ("" for nil).
func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// section reads the permissions section in force as written, and its ETag.
func (u *UI) section() (policy.Written, string) {
	sec, etag, err := u.deps.Policy.Written()
	if err != nil {
		u.deps.Logger.Warn("read policy section", "err", err)
	}
	return sec, etag
}

// stale refuses a form rendered from an older version of the policy: it
// answers 409 with a reload link and reports true. Nothing is changed.
func (u *UI) stale(w http.ResponseWriter, r *http.Request, back string) bool {
	if _, etag := u.typed(); r.PostFormValue("etag") == etag {
		return false
	}
	u.conflict(w, r, back)
	return true
}

// conflict answers a form whose ETag is stale (checked here, or by the
// service's If-Match at write time) with 409, the typed values beside the
// current ones and a reload link. Nothing is changed.
func (u *UI) conflict(w http.ResponseWriter, r *http.Request, back string) {
	sec, _ := u.typed()
	render(w, r, http.StatusConflict, templates.Message(templates.MessageProps{
		Nav: u.nav(r, back), Title: templates.T(r.Context(), "conflict.title"), TestID: "conflict",
		Text: templates.T(r.Context(), "conflict.text"),
		Link: back, LinkText: templates.T(r.Context(), "conflict.reload"), Typed: typedValues(r, sec),
	}))
}

// typedValues lists what a refused form carried, beside the value each
// field has in the policy now (for the rule, tool or directory it names).
func typedValues(r *http.Request, typed policy.Section) []templates.TypedValue {
	current := map[string]string{}
	switch {
	case r.PostFormValue("orig_id") != "" || r.PostFormValue("id") != "":
		id := cmp.Or(r.PostFormValue("orig_id"), r.PostFormValue("id"))
		rule, ok := policy.RuleByID(typed.Rules, id)
		if !ok {
			rule, ok = policy.RuleByID(typed.Overrides, id)
		}
		if ok {
			for k, x := range rule.Map() {
				current[k] = str(x)
			}
			current["tools"] = policy.ToolsText(rule.Tools)
		}
	case r.PostFormValue("tool") != "":
		if t, ok := typed.Tool(r.PostFormValue("tool")); ok {
			current["level"] = t.Level.String()
		}
	case r.PostFormValue("key") != "":
		if l, ok := typed.External.Key(r.PostFormValue("key")); ok {
			current["level"] = l.String()
		}
	}
	var out []templates.TypedValue
	for _, k := range slices.Sorted(maps.Keys(r.PostForm)) {
		if k == "csrf_token" || k == "etag" || k == "confirm" {
			continue
		}
		out = append(out, templates.TypedValue{Name: k, Typed: r.PostFormValue(k), Current: current[k]})
	}
	return out
}

// errorText says in plain words, in the page's language, why a store
// operation failed; the engine's and store's problem texts are data and
// stay as they are.
func errorText(err error, t translator) string {
	var ve *store.ValidationError
	switch {
	case errors.As(err, &ve):
		msgs := make([]string, 0, len(ve.Problems))
		for _, p := range ve.Problems {
			msgs = append(msgs, p.Path+": "+p.Message)
		}
		return t.f("err.notsaved", strings.Join(msgs, "; "))
	case errors.Is(err, store.ErrNotFound):
		return t("err.gone")
	case errors.Is(err, store.ErrExists):
		return t("err.exists")
	case errors.Is(err, store.ErrBrokenConfig):
		return t("err.broken")
	}
	if e := service.Classify(err); e.Code != service.CodeInternal {
		return t.f("err.notsaved", e.Message) // the one classification's words
	}
	return t.f("err.notsaved", err.Error()) // the page's own words
}

// done answers a change: a flash message and a redirect back to the page.
func (u *UI) done(w http.ResponseWriter, r *http.Request, back string, err error, ok string) {
	if err != nil {
		u.flash(r, "error", errorText(err, translatorFor(r.Context())))
	} else {
		u.flash(r, "ok", ok)
	}
	redirect(w, r, back)
}
