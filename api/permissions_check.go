package api

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/engine"
)

// The checks here run before any store call so that a bad level, action,
// severity, match type or pattern in a request is a 400 naming the field
// (contract D4); the store then validates the policy as a whole.

// ruleFields are the keys a rule or override may have (contract 2).
var ruleFields = map[string]bool{
	"id": true, "tools": true, "pattern": true, "action": true, "severity": true,
	"match_type": true, "description": true, "source": true,
}

// checkLevel checks a level value of field, with the spec's message (6.4).
func checkLevel(field string, v any) *Error {
	s, ok := v.(string)
	if _, valid := engine.ParseLevel(s); !ok || !valid {
		return badRequest(field, "无效级别 %q，仅允许：allow、ask、deny (field %s)", fmt.Sprint(v), field)
	}
	return nil
}

// normLevel lower-cases a checked level.
func normLevel(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// checkLevelMap checks a mapping of key -> level.
func checkLevelMap(field string, v any) *Error {
	m, ok := v.(map[string]any)
	if !ok {
		return badRequest(field, "%s must be an object of levels such as {\"*\": \"ask\"}", field)
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if err := checkLevel(sub(field, k), m[k]); err != nil {
			return err
		}
	}
	return nil
}

// checkRule checks a rule or approval override object. With partial (a
// PATCH), missing keys are fine and null removes a key; otherwise tools,
// pattern and an action or severity are required.
func checkRule(field string, m map[string]any, partial bool) *Error {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !ruleFields[k] {
			return badRequest(sub(field, k), "unknown field %q (allowed: id, tools, pattern, action, severity, match_type, description, source)", k)
		}
		if m[k] == nil {
			if !partial || k == "id" || k == "tools" || k == "pattern" {
				return badRequest(sub(field, k), "%s may not be null", k)
			}
			continue
		}
		if err := checkRuleField(sub(field, k), k, m[k]); err != nil {
			return err
		}
	}
	if partial {
		return nil
	}
	for _, k := range []string{"tools", "pattern"} {
		if _, ok := m[k]; !ok {
			return badRequest(sub(field, k), "%s is required", k)
		}
	}
	if m["action"] == nil && m["severity"] == nil {
		return badRequest(sub(field, "action"), "an action (allow, ask, deny) or a severity (LOW, MEDIUM, HIGH, CRITICAL) is required")
	}
	return nil
}

// checkRuleField checks one field of a rule.
func checkRuleField(field, key string, v any) *Error {
	switch key {
	case "action":
		return checkLevel(field, v)
	case "severity":
		s, _ := v.(string)
		if _, ok := engine.ParseSeverity(s); !ok {
			return badRequest(field, "invalid severity %q, only LOW, MEDIUM, HIGH, CRITICAL", fmt.Sprint(v))
		}
	case "match_type":
		if s, _ := v.(string); s != "command" && s != "path" {
			return badRequest(field, "invalid match_type %q, only command or path", fmt.Sprint(v))
		}
	case "pattern":
		s, ok := v.(string)
		if !ok {
			return badRequest(field, "pattern must be a string")
		}
		if err := engine.ValidatePattern(s); err != nil {
			return badRequest(field, "invalid pattern %q: %v", s, err)
		}
	case "tools":
		return checkTools(field, v)
	default: // id, description, source
		s, ok := v.(string)
		if !ok {
			return badRequest(field, "%s must be a string", key)
		}
		if key == "id" && strings.TrimSpace(s) == "" {
			return badRequest(field, "id may not be empty")
		}
	}
	return nil
}

// checkTools checks a tools value: one name or a non-empty list of names.
func checkTools(field string, v any) *Error {
	switch t := v.(type) {
	case string:
		if strings.TrimSpace(t) == "" {
			return badRequest(field, "工具名不能为空。 (the tool name is empty)")
		}
	case []any:
		if len(t) == 0 {
			return badRequest(field, "tools must name at least one tool")
		}
		for i, e := range t {
			if s, ok := e.(string); !ok || strings.TrimSpace(s) == "" {
				return badRequest(fmt.Sprintf("%s[%d]", field, i), "a tool name must be a non-empty string")
			}
		}
	default:
		return badRequest(field, "tools must be a tool name or a list of tool names")
	}
	return nil
}

// checkSection checks the levels and entries of a whole section the way the
// single-resource routes do, so PUT /permissions and validate name fields.
func checkSection(sec map[string]any) *Error {
	if v, ok := sec["defaults"]; ok && v != nil {
		if err := checkLevelMap("defaults", v); err != nil {
			return err
		}
	}
	if tools, ok := sec["tools"].(map[string]any); ok {
		for _, k := range slices.Sorted(maps.Keys(tools)) {
			if _, legacy := tools[k].(map[string]any); legacy {
				continue
			}
			if err := checkLevel("tools."+k, tools[k]); err != nil {
				return err
			}
		}
	}
	for _, list := range []string{"rules", "approval_overrides"} {
		entries, _ := sec[list].([]any)
		for i, e := range entries {
			m, ok := e.(map[string]any)
			if !ok {
				return badRequest(fmt.Sprintf("%s[%d]", list, i), "an entry must be an object")
			}
			if err := checkRule(fmt.Sprintf("%s[%d]", list, i), m, false); err != nil {
				return err
			}
		}
	}
	if scopes, ok := sec["owner_scopes"].(map[string]any); ok {
		if err := checkOwnerScopes(scopes); err != nil {
			return err
		}
	}
	switch ext := sec["external_directory"].(type) {
	case string:
		return checkLevel("external_directory", ext)
	case map[string]any:
		return checkLevelMap("external_directory", ext)
	}
	return nil
}

// sub names a field inside field ("" is the body itself).
func sub(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}
