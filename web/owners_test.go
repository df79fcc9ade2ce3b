package web

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/toolgate/toolgate/store"
)

// TestOwnersPage: /owners lists owner scopes by channel and principal, with
// patterns, tool levels and defaults, reports an entry in the earlier shape
// with the fix, and offers no edit form.
func TestOwnersPage(t *testing.T) {
	srv, st, tokens := testServer(t)
	cfg := `permissions:
  schema: tiered_policy
  tools: {bash: allow}
  owner_scopes:
    ou_old:
      tools: {bash: deny}
    feishu:
      ou_123:
        tools:
          bash: {patterns: {"git *": allow, "rm *": deny}, "*": ask}
          read_file: allow
        defaults: {"*": deny}
`
	if err := os.WriteFile(filepath.Join(st.Dir(), store.ConfigFile), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := st.Reload(); err != nil {
		t.Fatal(err)
	}
	admin, _ := tokens.AdminToken()
	c, status, _ := login(t, srv, admin)
	if status != 200 {
		t.Fatalf("login: %d", status)
	}
	status, page := get(t, c, srv.URL+"/owners")
	if status != 200 {
		t.Fatalf("GET /owners: %d", status)
	}
	d, err := goquery.NewDocumentFromReader(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	d.Find(`[data-testid="owner-row"]`).Each(func(_ int, s *goquery.Selection) {
		var cells []string
		s.Find("td").Each(func(_ int, td *goquery.Selection) { cells = append(cells, strings.TrimSpace(td.Text())) })
		got = append(got, strings.Join(cells, " "))
	})
	want := []string{
		"feishu ou_123 bash git * allow",
		"feishu ou_123 bash rm * deny",
		"feishu ou_123 bash * ask",
		"feishu ou_123 read_file * allow",
		"feishu ou_123 defaults * deny",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("rows:\n got %q\nwant %q", got, want)
	}
	problems := d.Find(`[data-testid="owner-problem"]`).Text()
	if !strings.Contains(problems, "move it under a channel, e.g. owner_scopes.feishu.ou_old") {
		t.Errorf("problems: got %q, want the earlier shape with the fix", problems)
	}
	d.Find("form").Each(func(_ int, f *goquery.Selection) {
		if a := f.AttrOr("action", ""); a != "/logout" {
			t.Errorf("the owners page renders a form to %s", a)
		}
	})
	if !d.Find(`[data-testid="nav-Owners"]`).HasClass("active") {
		t.Errorf("the Owners link is not marked active")
	}
}

// TestOwnersPageEmpty: without owner scopes the page says what applies.
func TestOwnersPageEmpty(t *testing.T) {
	srv, _, tokens := testServer(t)
	admin, _ := tokens.AdminToken()
	c, _, _ := login(t, srv, admin)
	status, page := get(t, c, srv.URL+"/owners")
	if status != 200 || !strings.Contains(page, `data-testid="owners-empty"`) {
		t.Errorf("GET /owners: %d, want the empty note", status)
	}
}
