package api

import (
	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/service"
)

// The checks here run before any store call so that a bad level, action,
// severity, match type or pattern in a request is a 400 naming the field
// (docs/configuration.md#validation); the store then validates the policy as a whole. The
// checks themselves are policy's (policy.CheckRuleInput and friends); this
// file turns their *policy.FieldError into the API's error.

// fieldError turns a policy field error into a 400 naming the field.
func fieldError(fe *policy.FieldError) *service.Error {
	if fe == nil {
		return nil
	}
	return service.BadRequest(fe.Field, "%s", fe.Message)
}

// checkLevel checks a level value of field, with the message docs/configuration.md#validation gives.
func checkLevel(field string, v any) *service.Error { return fieldError(policy.CheckLevel(field, v)) }

// normLevel lower-cases a checked level.
func normLevel(s string) string { return policy.NormLevel(s) }

// checkLevelMap checks a mapping of key -> level.
func checkLevelMap(field string, v any) *service.Error {
	return fieldError(policy.CheckLevelMap(field, v))
}

// decodeRule checks and decodes a new rule or approval override object
// (policy.DecodeRuleInput): tools, pattern and an action or severity are
// required.
func decodeRule(m policy.Mapping) (policy.Rule, *service.Error) {
	r, fe := policy.DecodeRuleInput("", m, engine.ValidatePattern)
	return r, fieldError(fe)
}

// decodeRulePatch checks and decodes a rule change (a PATCH): missing keys
// are fine and null removes a key.
func decodeRulePatch(m policy.Mapping) (policy.RulePatch, *service.Error) {
	p, fe := policy.DecodeRulePatchInput("", m, engine.ValidatePattern)
	return p, fieldError(fe)
}

// checkSection checks the levels and entries of a whole section the way the
// single-resource routes do, so PUT /permissions and validate name fields.
func checkSection(sec policy.Written) *service.Error {
	if err := policy.CheckSectionInput(sec, engine.ValidatePattern); err != nil {
		return fieldError(err)
	}
	return fieldError(policy.CheckExternalInput(sec.External))
}
