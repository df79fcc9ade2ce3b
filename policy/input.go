package policy

import (
	"fmt"
	"strings"
)

// The strict checks of request bodies (REST, JSON-RPC): before anything is
// written, a bad level, action, severity, match type, tool list or pattern
// is a *FieldError naming the field as the request wrote it (docs/configuration.md#validation),
// with the messages docs/configuration.md#validation gives. The whole policy is then validated
// leniently (DecodeSection and the engine) as it will be in force.

// RuleFields are the keys a rule or override in a request may have
// (docs/configuration.md#permissions-keys).
var RuleFields = [...]string{"id", "tools", "pattern", "action", "severity", "match_type", "description", "source", "examples", "mode"}

func isRuleField(k string) bool { return ruleField(k) >= 0 }

// PatternCheck reports why a pattern does not compile (engine.ValidatePattern).
type PatternCheck func(pattern string) error

// CheckLevel checks a level value of field: a string naming allow, ask or
// deny in any case.
func CheckLevel(field string, v any) *FieldError {
	s, ok := v.(string)
	if _, valid := ParseLevel(s); !ok || !valid {
		return fieldErr(field, "无效级别 %q，仅允许：allow、ask、deny (field %s)", fmt.Sprint(v), field)
	}
	return nil
}

// NormLevel lower-cases and trims a checked level.
func NormLevel(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// CheckLevelMap checks a mapping of key -> level.
func CheckLevelMap(field string, v any) *FieldError { return checkLevels(field, MappingOf(v)) }

// checkLevels checks a mapping of key -> level as given.
func checkLevels(field string, m Mapping) *FieldError {
	if !m.IsMapping() {
		return fieldErr(field, "%s must be an object of levels such as {\"*\": \"ask\"}", field)
	}
	for _, f := range m.Keys {
		if err := CheckLevel(SubField(field, f.Key), f.Value.v); err != nil {
			return err
		}
	}
	return nil
}

// CheckRuleInput checks a rule or approval override object of a request.
// With partial (a PATCH), missing keys are fine and null removes a key;
// otherwise tools, pattern and an action or severity are required.
func CheckRuleInput(field string, m Mapping, partial bool, pattern PatternCheck) *FieldError {
	for _, f := range m.Keys {
		k := f.Key
		if !isRuleField(k) {
			return fieldErr(SubField(field, k), "unknown field %q (allowed: id, tools, pattern, action, severity, match_type, description, source, examples, mode)", k)
		}
		if f.Value.v == nil {
			if !partial || k == "id" || k == "tools" || k == "pattern" {
				return fieldErr(SubField(field, k), "%s may not be null", k)
			}
			continue
		}
		if err := checkRuleField(SubField(field, k), k, f.Value.v, pattern); err != nil {
			return err
		}
	}
	if partial {
		return nil
	}
	for _, k := range []string{"tools", "pattern"} {
		if _, ok := m.Get(k); !ok {
			return fieldErr(SubField(field, k), "%s is required", k)
		}
	}
	action, _ := m.Get("action")
	severity, _ := m.Get("severity")
	if action.v == nil && severity.v == nil {
		return fieldErr(SubField(field, "action"), "an action (allow, ask, deny) or a severity (LOW, MEDIUM, HIGH, CRITICAL) is required")
	}
	return nil
}

// checkRuleField checks one field of a rule.
func checkRuleField(field, key string, v any, pattern PatternCheck) *FieldError {
	switch key {
	case "action":
		return CheckLevel(field, v)
	case "severity":
		s, _ := v.(string)
		if _, ok := ParseSeverity(s); !ok {
			return fieldErr(field, "invalid severity %q, only LOW, MEDIUM, HIGH, CRITICAL", fmt.Sprint(v))
		}
	case "match_type":
		if s, _ := v.(string); !ValidMatchType(s) {
			return fieldErr(field, "invalid match_type %q, only command, path or args", fmt.Sprint(v))
		}
	case "pattern":
		s, ok := v.(string)
		if !ok {
			return fieldErr(field, "pattern must be a string")
		}
		if pattern != nil {
			if err := pattern(s); err != nil {
				return &FieldError{Field: field, Message: fmt.Sprintf("invalid pattern %q: %v", s, err), Err: ErrBadPattern}
			}
		}
	case "tools":
		return CheckToolsInput(field, v)
	case "examples":
		if _, msg := DecodeExamples(v); msg != "" {
			return fieldErr(field, "%s", msg)
		}
	case "mode":
		if s, _ := v.(string); s != RuleModeShadow && s != RuleModeEnforce {
			return fieldErr(field, "invalid mode %q, only shadow or enforce", fmt.Sprint(v))
		}
	default: // id, description, source
		s, ok := v.(string)
		if !ok {
			return fieldErr(field, "%s must be a string", key)
		}
		if key == "id" && strings.TrimSpace(s) == "" {
			return fieldErr(field, "id may not be empty")
		}
	}
	return nil
}

// CheckToolsInput checks a tools value: one name or a non-empty list of
// names.
func CheckToolsInput(field string, v any) *FieldError {
	switch t := v.(type) {
	case string:
		if strings.TrimSpace(t) == "" {
			return &FieldError{Field: field, Message: "工具名不能为空。 (the tool name is empty)", Err: ErrNoTools}
		}
	case []any:
		if len(t) == 0 {
			return &FieldError{Field: field, Message: "tools must name at least one tool", Err: ErrNoTools}
		}
		for i, e := range t {
			if s, ok := e.(string); !ok || strings.TrimSpace(s) == "" {
				return fieldErr(fmt.Sprintf("%s[%d]", field, i), "a tool name must be a non-empty string")
			}
		}
	default:
		return fieldErr(field, "tools must be a tool name or a list of tool names")
	}
	return nil
}

// CheckSectionInput checks the levels and entries of a whole section in a
// request the way the single-resource routes do, so PUT /permissions and
// validate name fields. Owner scopes in an object are decoded as their own
// route does (DecodeOwnerScopesInput); owner scopes of another type are
// left to the lenient validation, as before.
func CheckSectionInput(sec Written, pattern PatternCheck) *FieldError {
	if err := checkSectionEntries(sec, pattern); err != nil {
		return err
	}
	if sec.Owners.IsMapping() {
		if _, err := DecodeOwnerScopesInput(sec.Owners, pattern); err != nil {
			return err
		}
	}
	return nil
}

// checkSectionEntries checks defaults, tools, rules and approval_overrides.
func checkSectionEntries(sec Written, pattern PatternCheck) *FieldError {
	if sec.Defaults.IsMapping() || sec.Defaults.v != nil {
		if err := checkLevels("defaults", sec.Defaults); err != nil {
			return err
		}
	}
	for _, f := range sec.Tools.Keys { // none when tools is not a mapping
		if MappingOf(f.Value.v).IsMapping() { // legacy {"*", patterns}
			continue
		}
		if err := CheckLevel("tools."+f.Key, f.Value.v); err != nil {
			return err
		}
	}
	for _, list := range []struct {
		key     string
		entries []Entry
	}{{"rules", sec.Rules.Entries}, {"approval_overrides", sec.Overrides.Entries}} {
		for i, e := range list.entries {
			field := fmt.Sprintf("%s[%d]", list.key, i)
			m := MappingOf(e.v)
			if !m.IsMapping() {
				return fieldErr(field, "an entry must be an object")
			}
			if err := CheckRuleInput(field, m, false, pattern); err != nil {
				return err
			}
		}
	}
	return nil
}

// CheckExternalInput checks external_directory in a request: a level or a
// mapping of path prefix to level.
func CheckExternalInput(ext Mapping) *FieldError {
	if level, ok := ext.Text(); ok {
		return CheckLevel("external_directory", level)
	}
	if ext.IsMapping() {
		return checkLevels("external_directory", ext)
	}
	return nil
}

// SubField names a field inside field ("" is the body itself).
func SubField(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}
