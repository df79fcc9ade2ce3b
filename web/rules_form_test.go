package web

import (
	"net/url"
	"reflect"
	"testing"

	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/templates"
)

// decodedForm is the rule the form decoded to before formRule: the form's
// values as config.yaml's entry (policy.FormMap), through policy.DecodeRule.
func decodedForm(f templates.RuleForm) policy.Rule {
	r, _, _ := policy.DecodeRule(policy.FormMap(url.Values{"id": {f.ID}, "tools": {f.Tools}, "pattern": {f.Pattern},
		"action": {f.Action}, "severity": {f.Severity}, "match_type": {f.MatchType}, "description": {f.Description}}), "rule")
	return r
}

// TestFormRuleIsTheDecodedEntry: the rule formRule reads from a form is
// the rule the same values decode to as a config.yaml entry, so saving it
// reports the same problems in the same words.
func TestFormRuleIsTheDecodedEntry(t *testing.T) {
	for _, f := range []struct {
		note string
		form templates.RuleForm
	}{
		{note: "a full rule", form: templates.RuleForm{ID: " no_push ", Tools: "bash, shell", Pattern: " git push * ",
			MatchType: "command", Action: "Deny", Severity: "low", Description: " why "}},
		{note: "an action that is no level", form: templates.RuleForm{Tools: "bash", Pattern: "ls", Action: "maybe"}},
		{note: "an unknown severity reads HIGH", form: templates.RuleForm{Tools: "bash", Pattern: "ls", Severity: "huge"}},
		{note: "a severity beside a valid action", form: templates.RuleForm{Tools: "bash", Pattern: "ls", Action: "ask", Severity: "nope"}},
		{note: "no tools", form: templates.RuleForm{Tools: " , ", Pattern: "ls"}},
		{note: "tools split on spaces", form: templates.RuleForm{Tools: "read_file write_file,,edit", Pattern: "/x"}},
		{note: "an unknown match type", form: templates.RuleForm{Tools: "bash", Pattern: "x", MatchType: "glob"}},
		{note: "all empty", form: templates.RuleForm{}},
		{note: "blank action and severity", form: templates.RuleForm{Tools: "bash", Action: "  ", Severity: " "}},
	} {
		if got, want := formRule(f.form), decodedForm(f.form); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", f.note, got, want)
		}
	}
}

// FuzzFormRule: for any form values, formRule and the decoded entry agree.
func FuzzFormRule(f *testing.F) {
	f.Add("id", "bash, x", "git *", "command", "deny", "LOW", "d")
	f.Add("", " ", "", "", "Allow ", "critical", "")
	f.Fuzz(func(t *testing.T, id, tools, pattern, matchType, action, severity, description string) {
		form := templates.RuleForm{ID: id, Tools: tools, Pattern: pattern, MatchType: matchType,
			Action: action, Severity: severity, Description: description}
		if got, want := formRule(form), decodedForm(form); !reflect.DeepEqual(got, want) {
			t.Errorf("%+v:\n got %+v\nwant %+v", form, got, want)
		}
	})
}
