package integration

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// headerFacts measures the header in the page: its height, how many rows
// the menu's links take (distinct tops), whether the links are shown, and
// the menu button.
const headerFacts = `(() => {
  const h = document.querySelector("header.top").getBoundingClientRect();
  const links = Array.from(document.querySelectorAll("header.top nav a"));
  const tops = new Set(links.map(a => Math.round(a.getBoundingClientRect().top)));
  const shown = links.filter(a => a.getClientRects().length > 0).length;
  const btn = document.querySelector('[data-testid="menu-toggle"]');
  const btnShown = btn.getClientRects().length > 0;
  return [Math.round(h.height), tops.size, shown, links.length, btnShown, btn.getAttribute("aria-expanded")].join(" ");
})()`

// TestBrowserHeaderFitsEveryWidth: at 1,280 px every page's menu is one
// row, with the signed-in name beside it; on a phone (390×844) the header
// folds to one short row with a Menu button that carries the count of
// waiting asks, and opens to every link.
func TestBrowserHeaderFitsEveryWidth(t *testing.T) {
	s := StartServer(t, ServerOptions{})
	seedPages(t, s)
	// A long token name must not push the menu to a second row.
	admin := createToken(t, s, "release-manager-for-the-platform-team", "admin")
	ctx := newBrowser(t)
	run(t, ctx, "desktop size", chromedp.EmulateViewport(1280, 900))
	login(t, ctx, s, admin)
	for _, p := range allPages[:len(allPages)-1] { // every signed-in page
		run(t, ctx, "open "+p.path, chromedp.Navigate(s.URL+p.path), chromedp.WaitVisible(tid(p.ready)))
		var height, rows, shown, links int
		var btn bool
		var expanded string
		fmt.Sscan(attrJS(t, ctx, headerFacts), &height, &rows, &shown, &links, &btn, &expanded)
		if rows != 1 || shown != links || btn || height > 60 {
			t.Errorf("%s at 1280: header %d px, links on %d rows, %d of %d shown, menu button shown %v; want one row under 60 px, every link, no button",
				p.name, height, rows, shown, links, btn)
		}
	}
	shot(t, ctx, "header-1280")

	run(t, ctx, "phone size", chromedp.EmulateViewport(390, 844))
	for _, p := range []sitePage{allPages[0], allPages[1], allPages[8]} {
		run(t, ctx, "open "+p.path, chromedp.Navigate(s.URL+p.path), chromedp.WaitVisible(tid(p.ready)))
		var height, rows, shown, links int
		var btn bool
		var expanded string
		fmt.Sscan(attrJS(t, ctx, headerFacts), &height, &rows, &shown, &links, &btn, &expanded)
		if height > 64 || shown != 0 || !btn || expanded != "false" {
			t.Errorf("%s at 390, folded: header %d px, %d links shown, button %v (aria-expanded %s); want at most 64 px, none shown, the button",
				p.name, height, shown, btn, expanded)
		}
		if got := strings.TrimSpace(textOf(t, ctx, tid("menu-badge"))); got != "2" {
			t.Errorf("%s at 390: the menu button says %q waiting, want 2", p.name, got)
		}
		run(t, ctx, "open the menu", chromedp.Click(tid("menu-toggle")), chromedp.WaitVisible(tid("nav-Decisions")))
		fmt.Sscan(attrJS(t, ctx, headerFacts), &height, &rows, &shown, &links, &btn, &expanded)
		if shown != links || expanded != "true" {
			t.Errorf("%s at 390, open: %d of %d links shown, aria-expanded %s", p.name, shown, links, expanded)
		}
		checkWidth(t, ctx, p.name+" with the menu open")
	}
	shot(t, ctx, "header-390-open")
	run(t, ctx, "follow a link from the open menu", chromedp.Click(tid("nav-Rules")), chromedp.WaitVisible(tid("rules-table")))
	// The tools page on a phone: one line a tool and one Save (it was
	// 3,450 px with a Save a row).
	run(t, ctx, "open /tools", chromedp.Navigate(s.URL+"/tools"), chromedp.WaitVisible(tid("tools-table")))
	var pageHeight, submits int
	fmt.Sscan(attrJS(t, ctx, `document.documentElement.scrollHeight + " " + document.querySelectorAll("main button[type=submit]").length`), &pageHeight, &submits)
	if pageHeight > 1800 || submits != 2 {
		t.Errorf("tools at 390: %d px with %d submit buttons, want at most 1,800 px and two (Save the levels; Set for another tool)", pageHeight, submits)
	}
}

// TestBrowserUndoToastCoversNothing: the Undo toast after an answer takes
// the answered card's place in the list, so no other card and none of the
// recent answers lie under it, at desktop and phone sizes.
func TestBrowserUndoToastCoversNothing(t *testing.T) {
	s := StartServer(t, ServerOptions{})
	agent := createToken(t, s, "agent-runtime", "agent")
	for i := range 4 {
		askPending(t, s, agent, fmt.Sprintf("make deploy-%d", i))
	}
	ctx := newBrowser(t)
	login(t, ctx, s, s.Token)
	// Answered ones fill the recent answers.
	for _, size := range [][2]int64{{1280, 900}, {390, 844}} {
		run(t, ctx, "size", chromedp.EmulateViewport(size[0], size[1]))
		run(t, ctx, "open approvals", chromedp.Navigate(s.URL+"/approvals"), chromedp.WaitVisible(tid("approval")))
		// The second card's deny: the toast must appear where it was.
		// Places are measured on the page, not the viewport: the click
		// scrolls a card's lower buttons into view at a phone's size.
		cardTop := attrJS(t, ctx, `String(Math.round(document.querySelectorAll('[data-testid="approval"]')[1].getBoundingClientRect().top + scrollY))`)
		run(t, ctx, "deny the second", chromedp.Click(chromedp.CSS(`[data-testid="approval"]:nth-of-type(3) [data-testid="deny"]`)), chromedp.WaitVisible(tid("undo")))
		covered := attrJS(t, ctx, `(() => {
		  const toast = document.querySelector('[data-testid="toast"]');
		  const r = toast.getBoundingClientRect();
		  const hit = Array.from(document.querySelectorAll('[data-testid="approval"], [data-testid="recent-answers"], main h1, header.top'))
		    .filter(e => e.getClientRects().length > 0)
		    .filter(e => { const q = e.getBoundingClientRect(); return q.left < r.right && r.left < q.right && q.top < r.bottom && r.top < q.bottom; })
		    .map(e => e.dataset.testid || e.tagName);
		  return getComputedStyle(toast).position + " " + Math.round(r.top + scrollY) + " " + hit.join(",");
		})()`)
		fields := strings.Fields(covered)
		if len(fields) < 2 || fields[0] == "fixed" || fields[0] == "sticky" || len(fields) > 2 {
			t.Errorf("at %dpx the toast is %q; want it in the flow, covering nothing", size[0], covered)
		} else if fields[1] != cardTop {
			t.Errorf("at %dpx the toast is at %s px, want the answered card's place (%s px)", size[0], fields[1], cardTop)
		}
		shot(t, ctx, fmt.Sprintf("toast-%d", size[0]))
		// Undo keeps the ask; the next size starts from the same list.
		run(t, ctx, "undo", chromedp.Click(tid("undo")))
	}
}
