package policy

import (
	"net/url"
	"strings"
)

// FormFields are the form fields of a rule, as the rules page posts them.
var FormFields = [...]string{"id", "tools", "pattern", "match_type", "action", "severity", "description"}

// SplitTools reads a comma- or space-separated tool list, as a form holds it.
func SplitTools(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
}

// ToolsText renders a tool list for a form field: names joined by ", ".
func ToolsText(tools []string) string { return strings.Join(tools, ", ") }

// FormMap reads a rule form (url.Values of FormFields) into the mapping a
// request body or config.yaml holds: values trimmed, tools split into a
// list, empty fields left out. The id is left out when empty: the caller
// picks one (service's id generator).
func FormMap(form url.Values) map[string]any {
	m := map[string]any{}
	for _, k := range FormFields {
		v := strings.TrimSpace(form.Get(k))
		if v == "" {
			continue
		}
		if k == "tools" {
			tools := SplitTools(v)
			list := make([]any, len(tools))
			for i, t := range tools {
				list[i] = t
			}
			m[k] = list
			continue
		}
		m[k] = v
	}
	return m
}

// RuleFromForm decodes a rule form as DecodeRule does the same entry in
// config.yaml: lenient, every problem named under "rule" (rule.tools,
// rule.action, ...).
func RuleFromForm(form url.Values) (Rule, []Problem) {
	r, problems, _ := DecodeRule(FormMap(form), "rule")
	return r, problems
}
