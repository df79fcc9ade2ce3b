package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestRuleFormsFromAStalePageAreConflicts: a rule added or edited from a
// page opened before someone else's edit is refused with the conflict page
// (409) and nothing is written; the same form from a fresh page saves. A
// stale add once answered "Added" while writing nothing.
func TestRuleFormsFromAStalePageAreConflicts(t *testing.T) {
	srv, st, tokens := testServer(t)
	admin, _ := tokens.AdminToken()
	c, _, _ := login(t, srv, admin)
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	page := func() url.Values {
		_, body := get(t, c, srv.URL+"/rules")
		return url.Values{"csrf_token": {match(csrfField, body)}, "etag": {match(etagField, body)}}
	}
	rules := func() string { // the rules as JSON, to tell any change
		sec, _, _ := st.Section()
		raw, _ := json.Marshal(sec["rules"])
		return string(raw)
	}
	add := func(form url.Values, id string) url.Values {
		form.Set("id", id)
		form.Set("tools", "bash")
		form.Set("pattern", "make "+id+" *")
		form.Set("action", "allow")
		return form
	}
	if status, _ := post(t, c, srv.URL+"/rules", add(page(), "fresh-add")); status != http.StatusSeeOther {
		t.Fatalf("add from a fresh page: status %d, want 303", status)
	}
	cases := []struct {
		note, path string
		form       func(url.Values) url.Values
	}{
		{note: "add", path: "/rules", form: func(f url.Values) url.Values { return add(f, "stale-add") }},
		{note: "edit", path: "/rules/update", form: func(f url.Values) url.Values {
			f = add(f, "fresh-add")
			f.Set("orig_id", "fresh-add")
			f.Set("action", "deny")
			return f
		}},
	}
	for _, tc := range cases {
		stale := page()
		if _, err := st.SetToolLevel("edit_file", "deny"); err != nil { // someone else's edit
			t.Fatal(err)
		}
		before := rules()
		status, body := post(t, c, srv.URL+tc.path, tc.form(stale))
		if status != http.StatusConflict || !strings.Contains(body, "changed") {
			t.Errorf("%s from a stale page: status %d, want 409 and the conflict page", tc.note, status)
		}
		if now := rules(); now != before {
			t.Errorf("%s from a stale page wrote: rules %s, were %s", tc.note, now, before)
		}
		if _, err := st.SetToolLevel("edit_file", "ask"); err != nil {
			t.Fatal(err)
		}
	}
}
