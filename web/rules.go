package web

import (
	"cmp"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/templates"
)

// rulesPage lists the rules with an empty add form.
func (u *UI) rulesPage(w http.ResponseWriter, r *http.Request) {
	render(w, r, http.StatusOK, templates.Rules(u.rulesProps(r, templates.RuleForm{}, templates.TestBox{})))
}

// ruleEditPage is the rules page with one rule in the form.
func (u *UI) ruleEditPage(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	sec, _ := u.typed()
	if rule, ok := policy.RuleByID(sec.Rules, id); ok {
		form := templates.RuleForm{Editing: true, OrigID: id, RuleFields: ruleRow(rule).RuleFields}
		if rule.Examples != nil {
			form.Match, form.NoMatch = strings.Join(rule.Examples.Match, "\n"), strings.Join(rule.Examples.NoMatch, "\n")
		}
		render(w, r, http.StatusOK, templates.Rules(u.rulesProps(r, form, templates.TestBox{})))
		return
	}
	u.flash(r, "error", translatorFor(r.Context()).f("rules.err.gone", id))
	redirect(w, r, "/rules")
}

func (u *UI) rulesProps(r *http.Request, form templates.RuleForm, test templates.TestBox) templates.RulesProps {
	sec, etag := u.typed()
	p := templates.RulesProps{Nav: u.nav(r, "/rules"), ETag: etag, Form: form, Test: test,
		Tools: toolOptions(u.mcpToolsSeen(r), translatorFor(r.Context()))}
	mode := sec.Mode
	p.Mode = mode.String()
	for i := range sec.Rules {
		p.Rules = append(p.Rules, withLevel(ruleRow(&sec.Rules[i]), mode))
	}
	list, source := u.deps.Policy.BuiltinRules()
	p.BuiltinSource = source
	builtin := policy.DecodeBuiltin(list)
	for i := range builtin.Rules {
		p.Builtin = append(p.Builtin, withLevel(ruleRow(&builtin.Rules[i]), mode))
	}
	return p
}

// withLevel fills the level a rule gives: its action, else its severity's
// level in the mode (HIGH when it has neither).
func withLevel(row templates.RuleRow, mode policy.Mode) templates.RuleRow {
	if row.Action != "" {
		row.Level = row.Action
		return row
	}
	sev, ok := policy.ParseSeverity(row.Severity)
	if !ok {
		sev = policy.SeverityHigh
	}
	row.Level = policy.SeverityLevel(sev, mode).String()
	return row
}

// ruleRow renders a rule: an action or severity that is not one is shown
// as written (lower- and upper-cased), so the page says what is wrong.
func ruleRow(r *policy.Rule) templates.RuleRow {
	action := strings.ToLower(r.BadAction)
	if r.Action != policy.LevelNone {
		action = r.Action.String()
	}
	severity := strings.ToUpper(r.BadSeverity)
	if severity == "" && r.Severity != 0 {
		severity = r.Severity.String()
	}
	return templates.RuleRow{RuleFields: templates.RuleFields{
		ID: r.ID, Tools: policy.ToolsText(r.Tools), Pattern: r.Pattern, MatchType: r.MatchType,
		Action: action, Severity: severity, Description: r.Description,
	}, Source: r.Source, Shadow: r.Shadow()}
}

// typed reads the section in force, decoded (service.Policy.Typed), and
// its ETag.
func (u *UI) typed() (policy.Section, string) {
	sec, etag, err := u.pol.Typed()
	if err != nil {
		u.deps.Logger.Warn("read policy section", "err", err)
	}
	return sec, etag
}

// ruleFormFrom reads the rule form of a request.
func ruleFormFrom(r *http.Request) templates.RuleForm {
	f := func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) }
	return templates.RuleForm{OrigID: f("orig_id"), RuleFields: templates.RuleFields{
		ID: f("id"), Tools: f("tools"), Pattern: f("pattern"), MatchType: f("match_type"),
		Action: f("action"), Severity: f("severity"), Description: f("description"),
	}, Match: f("examples_match"), NoMatch: f("examples_no_match")}
}

// checkRule says what is wrong with a rule's tools and pattern (read as its
// match type reads it), or "":
// engine.CheckRule checks them as compiling the policy will, and its
// error's kind (errors.Is) picks the words, never its text.
func checkRule(tools []string, pattern, matchType string, t translator) string {
	if len(tools) == 0 {
		return t("rules.err.notools")
	}
	err := engine.CheckRule(&policy.Rule{Tools: tools, Pattern: pattern, MatchType: matchType})
	switch {
	case err == nil:
		return ""
	case errors.Is(err, policy.ErrNetworkTools):
		return t("rules.err.network")
	case errors.Is(err, policy.ErrBadPattern):
		return t.f("rules.err.pattern", err.Message)
	}
	return t.f("rules.err.skipped", err.Message)
}

// ruleFields are the fields of a rule the form edits; a cleared one is
// removed from the rule.
var ruleFields = []string{"id", "tools", "pattern", "action", "severity", "match_type", "description", "examples"}

// ruleOf is the rule of a form (formRule). A rule without an id gets the
// service's (service.NewID, as over the API).
func (u *UI) ruleOf(f templates.RuleForm) policy.Rule {
	rule := formRule(f.RuleFields)
	if rule.ID == "" {
		rule.ID = u.pol.RuleIDFor(rule.Tools, rule.Pattern, f.OrigID)
	}
	rule.Examples = formExamples(f.Match, f.NoMatch)
	return rule
}

// formRule is the rule of a form as config.yaml's entry with those values
// decodes (policy.RuleFromForm), so saving it reports the same problems.
// Examples are not read here (formExamples).
func formRule(f templates.RuleFields) policy.Rule {
	r, _ := policy.RuleFromForm(url.Values{"id": {f.ID}, "tools": {f.Tools}, "pattern": {f.Pattern},
		"action": {f.Action}, "severity": {f.Severity}, "match_type": {f.MatchType}, "description": {f.Description}})
	return r
}

// formExamples reads the examples of the form, one a line (blank lines
// skipped); nil when there are none, which removes them from the rule.
func formExamples(match, noMatch string) *policy.Examples {
	lines := func(text string) []string {
		var out []string
		for _, l := range strings.Split(text, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				out = append(out, l)
			}
		}
		return out
	}
	ex := &policy.Examples{Match: lines(match), NoMatch: lines(noMatch)}
	if len(ex.Match) == 0 && len(ex.NoMatch) == 0 {
		return nil
	}
	return ex
}

// createRule adds a rule.
func (u *UI) createRule(w http.ResponseWriter, r *http.Request) {
	u.saveRule(w, r, ruleFormFrom(r), "flash.added", func(rule policy.Rule) error {
		_, _, err := u.pol.CreateRule(formETag(r), rule)
		return err
	})
}

// updateRule saves the edit form; a cleared field is removed from the rule.
func (u *UI) updateRule(w http.ResponseWriter, r *http.Request) {
	form := ruleFormFrom(r)
	form.Editing = true
	u.saveRule(w, r, form, "flash.savedrule", func(rule policy.Rule) error {
		_, err := u.pol.UpdateRule(formETag(r), form.OrigID, policy.ReplaceFields(rule, ruleFields...))
		return err
	})
}

// saveRule checks the form's rule and saves it with save. A rule that does
// not check, or that save refuses, comes back in the form with the reason
// (422); a form from a page that went stale gets the conflict page (saved),
// and nothing is written.
func (u *UI) saveRule(w http.ResponseWriter, r *http.Request, form templates.RuleForm, flash string, save func(policy.Rule) error) {
	rule := u.ruleOf(form)
	t := translatorFor(r.Context())
	refused := func(why string) {
		form.Error = why
		render(w, r, http.StatusUnprocessableEntity, templates.Rules(u.rulesProps(r, form, templates.TestBox{})))
	}
	if msg := checkRule(rule.Tools, form.Pattern, form.MatchType, t); msg != "" && msg != t("rules.err.network") {
		refused(t.f("err.notsaved", msg))
		return
	}
	err := save(rule)
	if err != nil && !errors.Is(err, store.ErrPreconditionFailed) {
		refused(errorText(err, t))
		return
	}
	u.saved(w, r, "/rules#rule-"+rule.ID, err, t(flash)+" "+rule.ID+".")
}

// deleteRule removes a rule.
func (u *UI) deleteRule(w http.ResponseWriter, r *http.Request) {
	if u.stale(w, r, "/rules") {
		return
	}
	id := r.PostFormValue("id")
	t := translatorFor(r.Context())
	if !u.confirmed(w, r, "/rules", removal(t, "confirm.delrule", id, id)) {
		return
	}
	_, err := u.pol.DeleteRule(formETag(r), id)
	u.saved(w, r, "/rules", err, t("flash.deleted")+" "+id+".")
}

// checkPattern answers the as-you-type check of the rule form with JSON
// {ok, message, examples}: the pattern's check, and, once it is usable,
// each example decided as saving will check it (engine.RuleMatchesAlone).
func (u *UI) checkPattern(w http.ResponseWriter, r *http.Request) {
	form := ruleFormFrom(r)
	tools := policy.SplitTools(form.Tools)
	t := translatorFor(r.Context())
	msg := checkRule(tools, form.Pattern, form.MatchType, t)
	if form.Pattern == "" {
		msg = t("rules.err.nopattern")
	}
	var examples []exampleResult
	if msg == "" {
		examples = u.checkExamples(form, t)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(patternCheck{OK: msg == "", Message: cmp.Or(msg, t("rules.check.ok")), Examples: examples})
}

// patternCheck is the answer of the as-you-type check (fields in the
// order encoding/json wrote the map it replaces).
type patternCheck struct {
	Examples []exampleResult `json:"examples"`
	Message  string          `json:"message"`
	OK       bool            `json:"ok"`
}

// exampleResult is one example's line in the as-you-type check.
type exampleResult struct {
	Value   string `json:"value"`
	OK      bool   `json:"ok"`
	Message string `json:"message"`
}

// checkExamples decides each example of the form's rule.
func (u *UI) checkExamples(form templates.RuleForm, t translator) []exampleResult {
	rule := formRule(templates.RuleFields{Tools: form.Tools, Pattern: form.Pattern, Action: form.Action,
		Severity: form.Severity, MatchType: form.MatchType})
	ex := formExamples(form.Match, form.NoMatch)
	if ex == nil || rule.Inert() {
		return nil
	}
	opts := u.pol.EngineOptions()
	var out []exampleResult
	for _, list := range []struct {
		values []string
		want   bool
	}{{ex.Match, true}, {ex.NoMatch, false}} {
		for _, v := range list.values {
			got, bad := engine.ExampleMatches(&rule, v, opts)
			res := exampleResult{Value: v, OK: bad == "" && got == list.want}
			switch {
			case bad != "":
				res.Message = bad
			case res.OK && got:
				res.Message = t("rules.examples.matches")
			case res.OK:
				res.Message = t("rules.examples.nomatches")
			case got:
				res.Message = t("rules.examples.unwanted")
			default:
				res.Message = t("rules.examples.missed")
			}
			out = append(out, res)
		}
	}
	return out
}

// testRule runs sample calls against a one-rule policy.
func (u *UI) testRule(w http.ResponseWriter, r *http.Request) {
	f := func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) }
	box := templates.TestBox{Tools: f("tools"), Pattern: f("pattern"), Action: f("action"),
		Severity: f("severity"), MatchType: f("match_type"), Samples: r.PostFormValue("samples"), Ran: true}
	box.Results, box.Error = u.runRuleTest(box, translatorFor(r.Context()))
	render(w, r, http.StatusOK, templates.Rules(u.rulesProps(r, templates.RuleForm{}, box)))
}

// runRuleTest compiles the box's rule alone (tiered, no built-in rules, no
// defaults) and decides each sample with each of its tools.
func (u *UI) runRuleTest(box templates.TestBox, t translator) ([]templates.TestResult, string) {
	rule := u.ruleOf(templates.RuleForm{RuleFields: templates.RuleFields{Tools: box.Tools, Pattern: box.Pattern,
		Action: box.Action, Severity: box.Severity, MatchType: box.MatchType, ID: "tested"}})
	tools := rule.Tools
	if msg := checkRule(tools, box.Pattern, box.MatchType, t); msg != "" {
		return nil, msg
	}
	alone := policy.Section{Enabled: true, SchemaKey: "schema", Schema: "tiered_policy", Rules: []policy.Rule{rule}}
	eng, problems := engine.Compile(alone.Map(), nil, u.deps.EngineOptions)
	if len(problems) > 0 {
		return nil, problemText(problems[0], t)
	}
	var out []templates.TestResult
	for _, line := range strings.Split(box.Samples, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		for _, tool := range tools {
			args, err := sampleArgs(tool, line)
			if err != nil {
				return nil, t.f("rules.err.sample", line, err.Error())
			}
			d := eng.Evaluate(&engine.Request{Call: engine.NewCall(tool, args)})
			matched := strings.Contains(d.MatchedRule, "rules[tested]")
			out = append(out, templates.TestResult{Sample: line, Tool: tool, Matched: matched,
				Level: d.Level.String(), Rule: d.MatchedRule})
		}
	}
	if len(out) == 0 {
		return nil, t("rules.err.nosample")
	}
	return out, ""
}

// sampleArgs reads a sample: JSON tool arguments, or a command for a shell
// tool, or a path for any other. Its error is JSON's own, the words
// around it are the page's.
func sampleArgs(tool, line string) (map[string]any, error) {
	if strings.HasPrefix(line, "{") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			return nil, err
		}
		return m, nil
	}
	if engine.ToolCategory(tool) == engine.CategoryShell {
		return map[string]any{"command": line}, nil
	}
	return map[string]any{"path": line}, nil
}
