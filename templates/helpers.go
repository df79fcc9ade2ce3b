package templates

import (
	"net/url"
	"strconv"
)

// urlQuery escapes a value for a query string.
func urlQuery(s string) string { return url.QueryEscape(s) }

// orDefault returns s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// boolText is "true" or "false", for data attributes.
func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// ruleFormAction is where the rule form posts: a new rule or an update.
func ruleFormAction(editing bool) string {
	if editing {
		return "/rules/update#rule-form"
	}
	return "/rules#rule-form"
}

// itoa formats a count.
func itoa(n int) string { return strconv.Itoa(n) }
