package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestToolsPageSavesEveryChangeAtOnce: the tools page's one Save writes
// the levels that were changed, leaves the others alone, refuses a bad
// level without writing anything, and refuses a page that went stale.
func TestToolsPageSavesEveryChangeAtOnce(t *testing.T) {
	srv, st, tokens := testServer(t)
	admin, _ := tokens.AdminToken()
	c, _, _ := login(t, srv, admin)
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	levels := func() map[string]any {
		sec, _, _ := st.Section()
		return asMap(sec["tools"])
	}
	fresh := func() url.Values {
		_, page := get(t, c, srv.URL+"/tools")
		return url.Values{"csrf_token": {match(csrfField, page)}, "etag": {match(etagField, page)}}
	}
	before := levels()
	cases := []struct {
		note   string
		fields map[string]string
		status int
		// flashErr: the page then says the save failed.
		flashErr bool
		want     map[string]any // levels after; nil: unchanged
	}{
		{note: "two changes, one unchanged row", status: http.StatusSeeOther,
			fields: map[string]string{"level:write_file": "deny", "was:write_file": str(before["write_file"]),
				"level:mcp_exec_command": "deny", "was:mcp_exec_command": str(before["mcp_exec_command"]),
				"level:bash": str(before["bash"]), "was:bash": str(before["bash"])},
			want: map[string]any{"write_file": "deny", "mcp_exec_command": "deny", "bash": before["bash"]}},
		{note: "not set removes the level", status: http.StatusSeeOther,
			fields: map[string]string{"level:mcp_exec_command": "", "was:mcp_exec_command": "deny"},
			want:   map[string]any{"mcp_exec_command": nil}},
		{note: "a bad level changes nothing, even beside a good one", status: http.StatusSeeOther, flashErr: true,
			fields: map[string]string{"level:bash": "deny", "was:bash": str(before["bash"]), "level:grep": "sometimes", "was:grep": ""}},
		{note: "nothing changed writes nothing", status: http.StatusSeeOther,
			fields: map[string]string{"level:bash": str(before["bash"]), "was:bash": str(before["bash"])}},
	}
	for _, tc := range cases {
		form := fresh()
		for k, v := range tc.fields {
			form.Set(k, v)
		}
		was := levels()
		status, body := post(t, c, srv.URL+"/tools", form)
		if status != tc.status {
			t.Errorf("%s: status %d, want %d: %s", tc.note, status, tc.status, body)
		}
		_, page := get(t, c, srv.URL+"/tools")
		if got := strings.Contains(page, "flash-error"); got != tc.flashErr {
			t.Errorf("%s: an error flash: %v, want %v", tc.note, got, tc.flashErr)
		}
		now := levels()
		if tc.want == nil {
			for k, v := range was {
				if now[k] != v {
					t.Errorf("%s: %s changed from %v to %v", tc.note, k, v, now[k])
				}
			}
			continue
		}
		for k, v := range tc.want {
			if now[k] != v {
				t.Errorf("%s: %s is %v, want %v", tc.note, k, now[k], v)
			}
		}
	}
	// A page opened before someone else's edit is refused as a whole.
	stale := fresh()
	if _, err := st.SetToolLevel("edit_file", "deny"); err != nil {
		t.Fatal(err)
	}
	stale.Set("level:bash", "deny")
	stale.Set("was:bash", str(before["bash"]))
	if status, body := post(t, c, srv.URL+"/tools", stale); status != http.StatusConflict || !strings.Contains(body, "conflict") && !strings.Contains(body, "changed") {
		t.Errorf("stale page: status %d, want 409 and the conflict page", status)
	}
	if levels()["bash"] != before["bash"] {
		t.Errorf("a stale page changed bash")
	}
}
