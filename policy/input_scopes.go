package policy

import "fmt"

// The strict decoding of owner_scopes in a request (REST PUT
// /permissions/owner-scopes, JSON-RPC permissions.owner_scopes.set, the
// owner_scopes of a whole section): where DecodeSection reads a stored
// file leniently (a bad entry is reported and denies), a request with a bad
// entry is refused before anything is written, as a *FieldError naming the
// field as the request wrote it (owner_scopes.<channel>.<principal>...).
// The shape itself (channel, then principal; the earlier shape; the exact
// levels) is shared with decode_scopes.go.

// OwnerScopesField is the key of owner scopes in a request body.
const OwnerScopesField = "owner_scopes"

// DecodeOwnerScopesInput strictly decodes the owner_scopes object of a
// request, in JiuwenSwarm's shape keyed by channel, then by principal
// (docs/decisions.md#digital-persona-and-owner-scopes): {<channel>: {<principal_user_id>:
// {tools: {<tool>: level | {patterns: {<pattern>: level}, "*": level}},
// defaults: {"*": level}}}}. A scope in toolgate's earlier shape
// ({<principal>: {tools, defaults}}) is refused with the fix. Pattern keys
// are checked with pattern (engine.ValidatePattern): policy sits below the
// engine and cannot import it, so the caller passes it; nil skips the
// check. An empty or nil object decodes to OwnerScopes{} (none configured).
// Empty tools and patterns objects are kept (Map writes them back), but an
// empty defaults object reads as no defaults: OwnerScope has no place for
// it, so it is not written back (the engine reads both alike).
func DecodeOwnerScopesInput(scopes Mapping, pattern PatternCheck) (OwnerScopes, *FieldError) {
	out := OwnerScopes{Configured: len(scopes.Keys) > 0}
	for _, f := range scopes.Keys {
		oc, err := ownerChannelInput(f.Key, f.Value.v, pattern)
		if err != nil {
			return OwnerScopes{}, err
		}
		out.Channels = append(out.Channels, oc)
	}
	return out, nil
}

// ownerChannelInput decodes owner_scopes.<channel>.
func ownerChannelInput(ch string, v any, pattern PatternCheck) (OwnerChannel, *FieldError) {
	field := OwnerScopesField + "." + ch
	principals := MappingOf(v)
	if !principals.IsMapping() {
		return OwnerChannel{}, fieldErr(field, "a channel must be an object of principal user id to scope (owner_scopes.<channel>.<principal>)")
	}
	if isEarlierShape(principals) {
		return OwnerChannel{}, fieldErr(field, "owner scopes are keyed by channel, then principal: %q is a scope in toolgate's earlier shape owner_scopes.<principal>.tools; move it under a channel, e.g. owner_scopes.feishu.%s", ch, ch)
	}
	oc := OwnerChannel{Channel: ch, Principals: make([]OwnerScope, 0, len(principals.Keys))}
	for _, f := range principals.Keys {
		sc, err := ownerScopeInput(field+"."+f.Key, f.Key, f.Value.v, pattern)
		if err != nil {
			return OwnerChannel{}, err
		}
		oc.Principals = append(oc.Principals, sc)
	}
	return oc, nil
}

// inputFields reads the keys of an object in key order: read decodes the
// value of a key it knows and reports false for any other, which is
// refused as unknown (allowed names the keys read knows).
func inputFields(field string, obj Mapping, allowed string, read func(key string, v any) (bool, *FieldError)) *FieldError {
	for _, f := range obj.Keys {
		known, err := read(f.Key, f.Value.v)
		if !known {
			return fieldErr(field+"."+f.Key, "unknown field %q (allowed: %s)", f.Key, allowed)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// ownerScopeInput decodes the scope of one principal on one channel.
func ownerScopeInput(field, pid string, v any, pattern PatternCheck) (OwnerScope, *FieldError) {
	m := MappingOf(v)
	if !m.IsMapping() {
		return OwnerScope{}, fieldErr(field, "a scope must be an object with tools and defaults")
	}
	sc := OwnerScope{Principal: pid}
	err := inputFields(field, m, "tools, defaults", func(k string, v any) (bool, *FieldError) {
		var err *FieldError
		switch k {
		case "tools":
			sc.Tools, err = ownerToolsInput(field+".tools", v, pattern)
		case "defaults":
			sc.Defaults, err = ownerDefaultsInput(field+".defaults", v)
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return OwnerScope{}, err
	}
	return sc, nil
}

// ownerToolsInput decodes tools: {<tool>: level | {patterns, "*"}}. The
// list is non-nil even when empty, so Map writes tools: {} as sent.
func ownerToolsInput(field string, v any, pattern PatternCheck) ([]OwnerTool, *FieldError) {
	tools := MappingOf(v)
	if !tools.IsMapping() {
		return nil, fieldErr(field, "tools must be an object of tool name to level or {patterns, \"*\"}")
	}
	return entriesInput(tools, func(name string, v any) (OwnerTool, *FieldError) {
		return ownerToolInput(field+"."+name, name, v, pattern)
	})
}

// entriesInput decodes each member of an object with read, in order; the
// list is non-nil even when empty, and the first error stops it.
func entriesInput[T any](m Mapping, read func(key string, v any) (T, *FieldError)) ([]T, *FieldError) {
	out := make([]T, 0, len(m.Keys))
	for _, f := range m.Keys {
		e, err := read(f.Key, f.Value.v)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// ownerToolInput decodes one tool entry: a level, or {patterns, "*"}.
func ownerToolInput(field, name string, v any, pattern PatternCheck) (OwnerTool, *FieldError) {
	t := OwnerTool{Tool: name}
	entry := MappingOf(v)
	if !entry.IsMapping() {
		lvl, err := ownerLevelInput(field, v)
		t.Level = lvl
		return t, err
	}
	err := inputFields(field, entry, `patterns, "*"`, func(k string, v any) (bool, *FieldError) {
		var err *FieldError
		switch k {
		case "*":
			t.Level, err = ownerLevelInput(field+".*", v)
			t.Star = true
		case "patterns":
			t.Patterns, err = ownerPatternsInput(field+".patterns", v, pattern)
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return OwnerTool{}, err
	}
	return t, nil
}

// ownerPatternsInput decodes patterns: {<pattern>: level}, each pattern
// named as field['<pattern>'] (a pattern may hold dots and spaces) and
// checked with pattern. The list is non-nil even when empty.
func ownerPatternsInput(field string, v any, pattern PatternCheck) ([]LegacyPattern, *FieldError) {
	m := MappingOf(v)
	if !m.IsMapping() {
		return nil, levelsObjectErr(field)
	}
	return entriesInput(m, func(p string, v any) (LegacyPattern, *FieldError) {
		pf := field + "['" + p + "']"
		if pattern != nil {
			if err := pattern(p); err != nil {
				return LegacyPattern{}, &FieldError{Field: pf, Message: err.Error(), Err: ErrBadPattern}
			}
		}
		lvl, err := ownerLevelInput(pf, v)
		return LegacyPattern{Pattern: p, Level: lvl}, err
	})
}

// ownerDefaultsInput decodes defaults: {"*": level}; LevelNone when "*" is
// absent.
func ownerDefaultsInput(field string, v any) (Level, *FieldError) {
	m := MappingOf(v)
	if !m.IsMapping() {
		return LevelNone, levelsObjectErr(field)
	}
	lvl := LevelNone
	for _, f := range m.Keys {
		if f.Key != "*" {
			return LevelNone, fieldErr(field+"."+f.Key, "unknown key %q (only \"*\")", f.Key)
		}
		var err *FieldError
		if lvl, err = ownerLevelInput(field+"."+f.Key, f.Value.v); err != nil {
			return LevelNone, err
		}
	}
	return lvl, nil
}

// levelsObjectErr refuses defaults or patterns that are not an object.
func levelsObjectErr(field string) *FieldError {
	return fieldErr(field, "%s must be an object of levels such as {\"*\": \"deny\"}", field)
}

// ownerLevelInput decodes an owner-scope level: exactly allow, ask or deny,
// as the reference compares it (the engine denies any other spelling, so a
// request may not write one).
func ownerLevelInput(field string, v any) (Level, *FieldError) {
	if lvl, ok := ownerLevelOf(v); ok {
		return lvl, nil
	}
	return LevelNone, fieldErr(field, "无效级别 %q，仅允许：allow、ask、deny (field %s; owner-scope levels are lower case)", fmt.Sprint(v), field)
}
