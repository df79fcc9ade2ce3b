package store

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/toolgate/toolgate/policy"
)

// ReplaceSection replaces the whole permissions section. Entries whose
// value is unchanged keep their comments. On a view made by IfMatch it
// fails with ErrPreconditionFailed when the section, as read under the
// backend's lock, has changed since, as every edit does.
func (s *Store) ReplaceSection(w policy.Written) (string, error) {
	section := normalizeMap(w.Map())
	return s.modify(func(d *configDoc) error {
		perms := d.permissionsMap()
		return replaceMapping(perms, section)
	})
}

// sameValue reports whether a value read from the file and a value to
// write are the same. A number is compared by value, so a section that went
// through JSON (where 1 reads back as 1.0) keeps the nodes it did not
// change, comments and flow style with them.
func sameValue(old, v any) bool {
	switch o := old.(type) {
	case map[string]any:
		n, ok := v.(map[string]any)
		if !ok || len(n) != len(o) {
			return false
		}
		for k, x := range o {
			if y, has := n[k]; !has || !sameValue(x, y) {
				return false
			}
		}
		return true
	case []any:
		n, ok := v.([]any)
		if !ok || len(n) != len(o) {
			return false
		}
		for i := range o {
			if !sameValue(o[i], n[i]) {
				return false
			}
		}
		return true
	}
	if a, ok := number(old); ok {
		b, isNum := number(v)
		return isNum && a == b
	}
	return reflect.DeepEqual(old, v)
}

// number is a decoded YAML or JSON number as a float64.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// CleanETag strips the W/ prefix and the quotes of an If-Match value.
func CleanETag(tag string) string {
	tag = strings.TrimSpace(tag)
	tag = strings.TrimPrefix(tag, "W/")
	return strings.Trim(tag, `"`)
}

// replaceMapping makes m hold exactly want: keys whose value is unchanged
// keep their nodes (and comments) and place; new keys are appended.
func replaceMapping(m *yaml.Node, want map[string]any) error {
	var content []*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		nv, keep := want[k.Value]
		if !keep {
			continue
		}
		old, err := decodeNode(v)
		if err == nil && sameValue(old, nv) {
			content = append(content, k, v)
			continue
		}
		if sub, ok := nv.(map[string]any); ok && v.Kind == yaml.MappingNode && v.Style&yaml.FlowStyle == 0 {
			if err := replaceMapping(v, sub); err != nil {
				return err
			}
			content = append(content, k, v)
			continue
		}
		n, err := fieldNode(k.Value, nv)
		if err != nil {
			return err
		}
		carryComments(v, n)
		content = append(content, k, n)
	}
	have := map[string]bool{}
	for i := 0; i < len(content); i += 2 {
		have[content[i].Value] = true
	}
	// A foot comment of a removed last key stays at the end.
	var foot string
	if n := len(m.Content); n >= 2 && (len(content) == 0 || content[len(content)-2] != m.Content[n-2]) {
		foot = m.Content[n-2].FootComment
	}
	m.Content = content
	for _, k := range orderedKeys(want) {
		if have[k] {
			continue
		}
		n, err := fieldNode(k, want[k])
		if err != nil {
			return err
		}
		mapAppend(m, scalar(k), n)
	}
	if n := len(m.Content); foot != "" && n >= 2 && m.Content[n-2].FootComment == "" {
		m.Content[n-2].FootComment = foot
	}
	return nil
}

func carryComments(old, n *yaml.Node) {
	if n.Kind == yaml.ScalarNode && n.LineComment == "" {
		n.LineComment = old.LineComment
	}
	if n.FootComment == "" {
		n.FootComment = old.FootComment
	}
}

// fieldNode builds the node for a value of key, with a `tools` list of
// names in flow style.
func fieldNode(key string, v any) (*yaml.Node, error) {
	n, err := toNode(v)
	if err != nil {
		return nil, invalid(key, err.Error())
	}
	if key == "tools" && n.Kind == yaml.SequenceNode && allScalars(n) {
		n.Style = yaml.FlowStyle
	}
	return n, nil
}

// SetSettings changes the scalar settings of the section: enabled, schema
// (or version), permission_mode, defaults and deny_guidance_message, each
// as the patch gives it; a removed one is removed.
func (s *Store) SetSettings(settings policy.SettingsPatch) (string, error) {
	var problems []policy.Problem
	for _, c := range settingChanges(settings) {
		msg := ""
		switch {
		case !slices.Contains(policy.SettingsKeys, c.key):
			msg = "not a setting (enabled, schema, version, permission_mode, defaults, deny_guidance_message)"
		case c.node == nil:
		case c.key == "permission_mode":
			msg = wantMode(*settings.PermissionMode)
		case c.key == "defaults":
			msg = wantLevels(settings.Defaults)
		}
		if msg != "" {
			problems = append(problems, policy.Problem{Path: "permissions." + c.key, Message: msg})
		}
	}
	if len(problems) > 0 {
		return "", &ValidationError{Problems: problems}
	}
	return s.modify(func(d *configDoc) error {
		perms := d.permissionsMap()
		for _, c := range settingChanges(settings) { // fresh nodes: mapSet moves comments onto them
			if c.node == nil {
				mapDelete(perms, c.key)
			} else {
				mapSet(perms, c.key, c.node)
			}
		}
		return nil
	})
}

// settingChanges are the keys a settings patch changes, in orderedKeys
// order, each with its new value node (nil: removed; a key both set and
// removed is removed).
func settingChanges(p policy.SettingsPatch) []keyed {
	var changes []keyed
	if p.Enabled != nil {
		changes = append(changes, keyed{"enabled", valueNode(*p.Enabled)})
	}
	for _, kv := range []struct {
		key string
		v   *string
	}{{"schema", p.Schema}, {"version", p.Version}, {"permission_mode", p.PermissionMode}, {"deny_guidance_message", p.DenyGuidanceMessage}} {
		if kv.v != nil {
			changes = append(changes, keyed{kv.key, valueNode(*kv.v)})
		}
	}
	if p.Defaults != nil {
		levels := make([]keyed, 0, len(p.Defaults))
		for k, v := range p.Defaults {
			levels = append(levels, keyed{k, valueNode(v)})
		}
		changes = append(changes, keyed{"defaults", levelsNode(levels)})
	}
	for _, k := range p.Remove {
		changes = setKeyed(changes, k, nil)
	}
	slices.SortFunc(changes, func(a, b keyed) int { return compareKeys(a.key, b.key) })
	return changes
}

func wantMode(v string) string {
	if m := strings.ToLower(strings.TrimSpace(v)); m != "normal" && m != "strict" {
		return fmt.Sprintf("invalid permission_mode %v, only normal or strict", v)
	}
	return ""
}

// wantLevels checks a mapping of levels (defaults); the first bad key in
// orderedKeys order is named.
func wantLevels(m map[string]string) string {
	keys := slices.SortedFunc(maps.Keys(m), compareKeys)
	for _, k := range keys {
		if msg := levelProblem(m[k]); msg != "" {
			return fmt.Sprintf("%s: %s", k, msg)
		}
	}
	return ""
}

// levelProblem checks a level value; the message is the one docs/configuration.md#validation gives.
func levelProblem(v any) string {
	s, _ := v.(string)
	if _, ok := policy.ParseLevel(s); !ok {
		return fmt.Sprintf("无效级别 %q，仅允许：allow、ask、deny (invalid level %q, only allow, ask, deny)", fmt.Sprint(v), fmt.Sprint(v))
	}
	return ""
}

// SetToolLevel sets permissions.tools.<tool> to a level. For a legacy entry
// (a mapping with "*" and patterns) it sets "*" and keeps the patterns.
func (s *Store) SetToolLevel(tool, level string) (string, error) {
	tool = strings.TrimSpace(tool)
	if tool == "" {
		return "", invalid("permissions.tools", "工具名不能为空。 (the tool name is empty)")
	}
	if msg := levelProblem(level); msg != "" {
		return "", invalid("permissions.tools."+tool, msg)
	}
	level = strings.ToLower(strings.TrimSpace(level))
	return s.modify(func(d *configDoc) error {
		tools := ensureMap(d.permissionsMap(), "tools")
		if _, v := mapGet(tools, tool); v != nil && v.Kind == yaml.MappingNode {
			mapSet(v, "*", scalar(level))
			return nil
		}
		mapSet(tools, tool, scalar(level))
		return nil
	})
}

// DeleteTool removes permissions.tools.<tool>; ErrNotFound when absent.
func (s *Store) DeleteTool(tool string) (string, error) {
	return s.deleteMember("tools", "tool", tool)
}

// deleteMember removes permissions.<mapping>.<key>; ErrNotFound, naming
// the key as noun, when absent.
func (s *Store) deleteMember(mapping, noun, key string) (string, error) {
	return s.modify(func(d *configDoc) error {
		_, m := mapGet(d.permissions(), mapping)
		if !mapDelete(m, key) {
			return Refuse(ErrNotFound, "%s %q: not found", noun, key)
		}
		return nil
	})
}

// CreateRule appends a rule to permissions.rules; ErrExists when a rule with
// its id exists.
func (s *Store) CreateRule(rule policy.Rule) (string, error) {
	return s.appendEntry("rules", &rule)
}

// UpdateRule patches the rule with that id: each field patch sets is
// written as Rule.Map renders it, each it removes is removed. ErrNotFound when no rule has the id; ErrExists when
// the patch renames it to an id in use.
func (s *Store) UpdateRule(id string, patch policy.RulePatch) (string, error) {
	return s.patchEntry("rules", id, patch)
}

// DeleteRule removes the rule with that id; ErrNotFound when absent.
func (s *Store) DeleteRule(id string) (string, error) {
	return s.deleteEntry("rules", id)
}

// AddApprovalOverride appends an entry to permissions.approval_overrides;
// ErrExists when one with its id exists.
func (s *Store) AddApprovalOverride(o policy.Override) (string, error) {
	return s.appendEntry("approval_overrides", &o)
}

// DeleteApprovalOverride removes the override with that id; ErrNotFound
// when absent.
func (s *Store) DeleteApprovalOverride(id string) (string, error) {
	return s.deleteEntry("approval_overrides", id)
}

func (s *Store) appendEntry(list string, r *policy.Rule) (string, error) {
	id := strings.TrimSpace(r.ID)
	if id == "" {
		return "", invalid("permissions."+list+"[].id", "an id is required")
	}
	return s.modify(func(d *configDoc) error {
		seq := ensureSeq(d.permissionsMap(), list)
		if findEntry(seq, id) >= 0 {
			return Refuse(ErrExists, "%s id %q: already exists", list, id)
		}
		n, err := ruleNode(r)
		if err != nil {
			return invalid("permissions."+list+"[]", err.Error())
		}
		seq.Content = append(seq.Content, n)
		return nil
	})
}

// patchEntry applies patch to the entry of list with that id.
func (s *Store) patchEntry(list, id string, patch policy.RulePatch) (string, error) {
	changes, err := patchChanges(&patch)
	if err != nil {
		return "", err
	}
	newID := ""
	if i := slices.IndexFunc(changes, func(c keyed) bool { return c.key == "id" }); i >= 0 {
		if changes[i].node != nil {
			newID = strings.TrimSpace(patch.Rule.ID)
		}
		if newID == "" {
			return "", invalid("permissions."+list+"[].id", "an id is required")
		}
	}
	return s.modify(func(d *configDoc) error {
		_, seq := mapGet(d.permissions(), list)
		i := findEntry(seq, id)
		if i < 0 {
			return Refuse(ErrNotFound, "%s id %q: not found", list, id)
		}
		if newID != "" && newID != id && findEntry(seq, newID) >= 0 {
			return Refuse(ErrExists, "%s id %q: already exists", list, newID)
		}
		changes, err := patchChanges(&patch) // fresh nodes: mapSet moves comments onto them
		if err != nil {
			return err
		}
		entry := seq.Content[i]
		for _, c := range changes {
			if c.node == nil {
				mapDelete(entry, c.key)
			} else {
				mapSet(entry, c.key, c.node)
			}
		}
		return nil
	})
}

// patchChanges are the keys a rule patch sets or removes, in orderedKeys
// order (new keys are appended in that order), each with its value node
// as Rule.Map renders it (nil: removed; a key both set and removed is
// removed).
func patchChanges(patch *policy.RulePatch) ([]keyed, error) {
	var changes []keyed
	fields := patch.Rule.Map()
	for _, k := range patch.Set {
		v, ok := fields[k]
		if !ok {
			changes = setKeyed(changes, k, valueNode("")) // a string field set to "", which Rule.Map leaves out
			continue
		}
		n, err := toNode(v)
		if err != nil {
			return nil, invalid(k, err.Error())
		}
		changes = setKeyed(changes, k, flowTools(k, n))
	}
	for _, k := range patch.Remove {
		changes = setKeyed(changes, k, nil)
	}
	slices.SortFunc(changes, func(a, b keyed) int { return compareKeys(a.key, b.key) })
	return changes, nil
}

func (s *Store) deleteEntry(list, id string) (string, error) {
	return s.modify(func(d *configDoc) error {
		_, seq := mapGet(d.permissions(), list)
		i := findEntry(seq, id)
		if i < 0 {
			return Refuse(ErrNotFound, "%s id %q: not found", list, id)
		}
		seq.Content = append(seq.Content[:i], seq.Content[i+1:]...)
		return nil
	})
}

// findEntry returns the index of the mapping with that id in a sequence.
func findEntry(seq *yaml.Node, id string) int {
	if seq == nil || seq.Kind != yaml.SequenceNode {
		return -1
	}
	for i, e := range seq.Content {
		if _, v := mapGet(e, "id"); v != nil && v.Kind == yaml.ScalarNode && v.Value == id {
			return i
		}
	}
	return -1
}

// SetExternalDirectory sets external_directory[key] to a level. A missing
// section is created with "*": ask; a plain level becomes the "*" entry.
func (s *Store) SetExternalDirectory(key, level string) (string, error) {
	key = strings.TrimSpace(key)
	if key == "" {
		return "", invalid("permissions.external_directory", "the key is empty")
	}
	if msg := levelProblem(level); msg != "" {
		return "", invalid("permissions.external_directory."+key, msg)
	}
	level = strings.ToLower(strings.TrimSpace(level))
	return s.modify(func(d *configDoc) error {
		setExternal(d.permissionsMap(), key, level)
		return nil
	})
}

// setExternal sets one external_directory key, creating the mapping.
func setExternal(perms *yaml.Node, key, level string) {
	_, ext := mapGet(perms, "external_directory")
	if ext == nil || ext.Kind != yaml.MappingNode {
		star := "ask"
		if ext != nil && ext.Kind == yaml.ScalarNode && ext.Value != "" && ext.Tag != "!!null" {
			star = ext.Value
		}
		ext = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{scalar("*"), scalar(star)}}
		mapSet(perms, "external_directory", ext)
	}
	mapSet(ext, key, scalar(level))
}

// DeleteExternalDirectory removes external_directory[key]; ErrNotFound when
// absent.
func (s *Store) DeleteExternalDirectory(key string) (string, error) {
	return s.deleteMember("external_directory", "external_directory", key)
}

// SetOwnerScopes replaces permissions.owner_scopes, keyed by channel, then
// principal (docs/decisions.md: {<channel>: {<principal_user_id>: {tools: {<tool>:
// level | {patterns: {<pattern>: level}, "*": level}}, defaults: {"*":
// level}}}}), written as OwnerScopes.Map renders them; none configured
// removes it. Like every edit it is refused when it would
// add a validation problem, such as a scope in the earlier
// {<principal>: {tools}} shape.
func (s *Store) SetOwnerScopes(scopes policy.OwnerScopes) (string, error) {
	return s.modify(func(d *configDoc) error {
		if len(scopes.Channels) == 0 {
			mapDelete(d.permissions(), "owner_scopes")
			return nil
		}
		n, err := ownerScopesNode(&scopes)
		if err != nil {
			return err
		}
		mapSet(d.permissionsMap(), "owner_scopes", n)
		return nil
	})
}

// normalizeMap normalizes a decoded JSON or YAML mapping (nil stays nil).
func normalizeMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return normalize(m).(map[string]any)
}
