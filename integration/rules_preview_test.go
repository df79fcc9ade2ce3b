package integration

import (
	"io"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
)

// TestRulesPagePreview: on the rules page, "Preview impact" shows which
// logged calls a rule would decide differently, before anything is saved:
// a draft rule denying `git push *` lists exactly the logged pushes.
func TestRulesPagePreview(t *testing.T) {
	s := StartServer(t, ServerOptions{Args: []string{"--log-full-args"}})
	calls := []string{"git push origin main", "git status", "git push --tags", "make build", "git pull"}
	for _, cmd := range calls {
		if st, body := s.Do("POST", "/api/v1/evaluate", map[string]any{"tool_name": "bash", "tool_args": map[string]any{"command": cmd}}); st != 200 {
			t.Fatalf("evaluate %q: %d %s", cmd, st, body)
		}
	}
	b := secSignIn(t, s, s.Token)
	before := s.ReadFile("config.yaml")
	var doc *goquery.Document
	WaitFor(t, 5*time.Second, "the logged calls to be replayed", func() bool {
		_, page := b.get(t, "/rules")
		d, _ := goquery.NewDocumentFromReader(strings.NewReader(page))
		csrf, _ := d.Find(`form[data-testid="rule-form"] input[name="csrf_token"]`).Attr("value")
		etag, _ := d.Find(`form[data-testid="rule-form"] input[name="etag"]`).Attr("value")
		form := url.Values{"csrf_token": {csrf}, "etag": {etag}, "id": {"no_push"}, "tools": {"bash"},
			"pattern": {"git push *"}, "action": {"deny"}}
		resp := b.post(t, "/rules/preview", form, s.URL)
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("preview: %d %s", resp.StatusCode, data)
		}
		doc, _ = goquery.NewDocumentFromReader(strings.NewReader(string(data)))
		return doc.Find(`[data-testid="preview-change"]`).Length() > 0
	})
	var flipped []string
	doc.Find(`[data-testid="preview-change"]`).Each(func(_ int, row *goquery.Selection) {
		flipped = append(flipped, strings.TrimSpace(row.Find("code").First().Text()))
		if !strings.Contains(row.Text(), "deny") {
			t.Errorf("a change that does not end in deny: %q", row.Text())
		}
	})
	if len(flipped) != 2 || !strings.Contains(strings.Join(flipped, "|"), "git push origin main") || !strings.Contains(strings.Join(flipped, "|"), "git push --tags") {
		t.Errorf("flipped calls: got %q, want the two pushes", flipped)
	}
	if got := doc.Find(`input[name="pattern"]`).First().AttrOr("value", ""); got != "git push *" {
		t.Errorf("the form lost its pattern: %q", got)
	}
	if after := s.ReadFile("config.yaml"); after != before {
		t.Errorf("a preview changed config.yaml")
	}
}
