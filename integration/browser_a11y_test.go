package integration

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// axeRun runs axe-core's WCAG 2 A and AA rules on the page and gives the
// serious and critical violations as "rule: element, element".
const axeRun = `axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}})
  .then(r => JSON.stringify({passes: r.passes.length, bad: r.violations.filter(v => v.impact === "serious" || v.impact === "critical")
    .map(v => v.id + " (" + v.impact + "): " + v.nodes.slice(0, 4).map(n => n.target.join(" ")).join(", "))}))`

// axeViolations injects axe-core into the current page and runs it.
func axeViolations(t *testing.T, ctx context.Context, axe string) []string {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](axe)); err != nil {
		t.Fatalf("inject axe-core: %v", err)
	}
	out, err := chromedp.Run(ctx, chromedp.Evaluate[string](axeRun, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("run axe-core: %v", err)
	}
	var res struct {
		Passes int      `json:"passes"`
		Bad    []string `json:"bad"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("axe-core result %q: %v", out, err)
	}
	if res.Passes == 0 {
		t.Fatalf("axe-core checked nothing: %s", out)
	}
	return res.Bad
}

// TestBrowserAccessibility runs axe-core (vendored under testdata) on the
// overview, rules, approvals (with an ask waiting), grants and decisions pages, at
// both sizes: no serious or critical WCAG 2 AA violation. It also checks
// the 404 page is an HTML page in the layout.
func TestBrowserAccessibility(t *testing.T) {
	axe, err := os.ReadFile("testdata/axe-core/axe.min.js")
	if err != nil {
		t.Fatal(err)
	}
	s := StartServer(t, ServerOptions{Args: []string{"--log-full-args"}})
	seedPages(t, s)
	ctx := newBrowser(t)
	login(t, ctx, s, s.Token)
	pages := []sitePage{
		{"overview", "/", "severity-table"},
		{"rules", "/rules", "rules-table"},
		{"approvals", "/approvals", "approval"},
		{"grants", "/grants", "grants-table"},
		{"decisions", "/decisions", "decisions-table"},
	}
	for _, size := range [][2]int64{{1280, 900}, {390, 844}} {
		run(t, ctx, "resize", chromedp.EmulateViewport(size[0], size[1]))
		for _, p := range pages {
			run(t, ctx, "open "+p.path, chromedp.Navigate(s.URL+p.path), chromedp.WaitVisible(tid(p.ready)))
			if v := axeViolations(t, ctx, string(axe)); len(v) > 0 {
				t.Errorf("%s at %d px: %d serious or critical accessibility violations:\n  %s", p.name, size[0], len(v), strings.Join(v, "\n  "))
			}
		}
	}

	// The 404 page: HTML, in the layout, with a way back.
	run(t, ctx, "open a missing page", chromedp.Navigate(s.URL+"/no/such/page"), chromedp.WaitVisible(tid("not-found")))
	if got := textOf(t, ctx, chromedp.CSS("main h1")); got != "Page not found" {
		t.Errorf("404 heading: %q", got)
	}
	if n := attrJS(t, ctx, `String(document.querySelectorAll('[data-testid="user"]').length)`); n != "1" {
		t.Errorf("the 404 page is not in the layout")
	}
	checkWidth(t, ctx, "404")
	shot(t, ctx, "not-found-390")
}
