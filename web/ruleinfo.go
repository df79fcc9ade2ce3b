package web

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/templates"
)

// translator gives a message in the page's language.
type translator func(key string) string

// translatorFor is the translator of a request's (or any) context.
func translatorFor(ctx context.Context) translator {
	return func(key string) string { return templates.T(ctx, key) }
}

// f is the message key with args put in its verbs (templates.Tf).
func (t translator) f(key string, args ...any) string {
	return fmt.Sprintf(t(key), args...)
}

// ruleMeta is what the pages say about one rule: its words and its risk.
type ruleMeta struct {
	ID          string
	Description string
	Severity    string
	Action      string
	Builtin     bool
}

// ruleRef finds the rules a matched_rule string names: the engine writes
// builtin[id], rules[id] and approval_overrides[id], joined by + when
// several hit and by | when the external-directory check was stricter.
var ruleRef = regexp.MustCompile(`\b(builtin|rules|approval_overrides)\[([^\]]*)\]`)

// ruleWords says why a call was decided as it was, in words a person reads
// in a hurry: the descriptions of the rules that decided it, or what the
// tool level, the default or the external-directory check did. It returns
// the rules it found too.
type ruleWords struct {
	Reason string
	Rules  []ruleMeta
	// Tool and External say that the tool's level or a path outside the
	// workspace took part.
	ToolLevel, Default, External bool
	// Escalation says that the policy allowed and the shell escalation
	// asked (engine.CauseEscalation).
	Escalation bool
}

// rulesByRef indexes the user and built-in rules in force by the
// set[id] names the engine uses, read through the typed policy model.
func (u *UI) rulesByRef() map[string]ruleMeta {
	sec, _ := u.typed()
	out := map[string]ruleMeta{}
	add := func(set string, list []policy.Rule, builtin bool) {
		for i := range list {
			r := &list[i]
			if r.ID == "" {
				continue
			}
			out[set+"["+r.ID+"]"] = ruleMeta{ID: r.ID, Description: r.Description, Severity: severityText(r),
				Action: actionText(r), Builtin: builtin}
		}
	}
	add("rules", sec.Rules, false)
	builtin, _ := u.deps.Policy.BuiltinRules()
	add("builtin", policy.DecodeBuiltin(builtin).Rules, true)
	return out
}

// severityText is a rule's severity as written, upper-cased ("" when it
// has none).
func severityText(r *policy.Rule) string {
	switch {
	case r.BadSeverity != "":
		return strings.ToUpper(r.BadSeverity)
	case r.Severity != 0:
		return r.Severity.String()
	}
	return ""
}

// actionText is a rule's action: its level, or the text of an action that
// is not one.
func actionText(r *policy.Rule) string {
	if r.BadAction != "" {
		return r.BadAction
	}
	return r.Action.String()
}

// explainRule turns a matched_rule string into words and rule facts, with
// the rules in force (index from rulesByRef).
func explainRule(matched, tool string, index map[string]ruleMeta, t translator) ruleWords {
	var w ruleWords
	var parts []string
	for _, m := range ruleRef.FindAllStringSubmatch(matched, -1) {
		meta, ok := index[m[1]+"["+m[2]+"]"]
		if !ok {
			meta = ruleMeta{ID: m[2], Builtin: m[1] == "builtin"}
		}
		w.Rules = append(w.Rules, meta)
		switch {
		case meta.Description != "":
			parts = append(parts, meta.Description)
		case meta.Builtin:
			parts = append(parts, t("why.builtin")+" "+meta.ID+".")
		default:
			parts = append(parts, t("why.yours")+" "+meta.ID+".")
		}
	}
	for _, seg := range strings.Split(matched, "|") {
		switch {
		case strings.HasPrefix(seg, "tools.") || strings.HasPrefix(seg, "tiered_policy:tools."):
			w.ToolLevel = true
			parts = append(parts, t("why.toollevel")+" ("+tool+")")
		case strings.Contains(seg, "defaults") || seg == "default":
			w.Default = true
			parts = append(parts, t("why.default"))
		case strings.HasPrefix(seg, "external_directory"):
			w.External = true
			parts = append(parts, t("why.external"))
		}
	}
	w.Reason = strings.Join(parts, " ")
	return w
}
