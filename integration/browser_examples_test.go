package integration

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserRuleExamples: the rule form runs a rule's examples as they are
// typed (each line marked as holding or not, as saving will check it),
// refuses to save examples that do not hold, saves them into config.yaml
// once they do, and shows them again in the edit form.
func TestBrowserRuleExamples(t *testing.T) {
	s := StartServer(t, ServerOptions{})
	ctx := newBrowser(t)
	run(t, ctx, "log in",
		chromedp.Navigate(s.URL+"/"), chromedp.WaitVisible(tid("login-form")),
		chromedp.SendKeys(tid("token"), s.Token), chromedp.Click(tid("login-submit")),
		chromedp.WaitVisible(tid("severity-table")))
	run(t, ctx, "type a rule with examples",
		chromedp.Navigate(s.URL+"/rules"), chromedp.WaitVisible(tid("rule-form")),
		chromedp.SendKeys(tid("rule-id-input"), "no_push"),
		chromedp.SendKeys(tid("rule-tools"), "bash"),
		chromedp.SetValue(tid("rule-action-select"), "deny"),
		chromedp.SendKeys(tid("rule-pattern-input"), "git push *"),
		chromedp.SendKeys(tid("rule-examples-match"), "git push origin main\ngit pull"),
		chromedp.SendKeys(tid("rule-examples-no-match"), "git status"))
	marks := func() string {
		got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
			`Array.from(document.querySelectorAll('[data-testid="examples-check"] li')).map(e => e.textContent.split(" ")[0] + "=" + e.dataset.ok)`))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(got, ",")
	}
	WaitFor(t, 5*time.Second, "each example to be checked as typed", func() bool {
		return marks() == "git=true,git=false,git=true"
	})
	if got := textOf(t, ctx, tid("examples-check")); !strings.Contains(got, "does not match, but is listed under must match") {
		t.Errorf("the failing example is not explained: %q", got)
	}
	screenshot(t, ctx, "rule-examples-as-you-type")
	run(t, ctx, "save with an example that does not hold",
		chromedp.Click(tid("rule-add")), chromedp.WaitVisible(tid("rule-form")))
	if c := s.ReadFile("config.yaml"); strings.Contains(c, "no_push") {
		t.Fatalf("a rule whose example fails was saved:\n%s", c)
	}
	if got := textOf(t, ctx, tid("rule-error")); !strings.Contains(got, `does not match its example "git pull"`) {
		t.Errorf("the refusal does not name the example: %q", got)
	}
	run(t, ctx, "fix the example and save",
		chromedp.SetValue(tid("rule-examples-match"), "git push origin main\ngit -C repo push"),
		chromedp.Click(tid("rule-add")), chromedp.WaitVisible(tid("rules-table")))
	c := s.ReadFile("config.yaml")
	for _, want := range []string{"id: no_push", "examples:", "- git -C repo push", "no_match:", "- git status"} {
		if !strings.Contains(c, want) {
			t.Errorf("config.yaml lacks %q:\n%s", want, c)
		}
	}
	run(t, ctx, "edit it", chromedp.Navigate(s.URL+"/rules/edit?id=no_push"), chromedp.WaitVisible(tid("rule-save")))
	match, err := chromedp.Run(ctx, chromedp.Value(tid("rule-examples-match")))
	if err != nil {
		t.Fatal(err)
	}
	if match != "git push origin main\ngit -C repo push" {
		t.Errorf("edit form examples: %q", match)
	}
	WaitFor(t, 5*time.Second, "the saved examples to be checked", func() bool { return marks() == "git=true,git=true,git=true" })
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelectorAll('[data-check="examples"]').forEach(e => e.value = ""), true`)); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "clear the examples and save", chromedp.Click(tid("rule-save")), chromedp.WaitVisible(tid("flash")))
	if c := s.ReadFile("config.yaml"); strings.Contains(c, "examples:") || !strings.Contains(c, "id: no_push") {
		t.Errorf("cleared examples stayed (or the rule went):\n%s", c)
	}
}
