package policy

// SettingsKeys are the scalar settings of the section, in the order
// config.yaml's permissions mapping has them.
var SettingsKeys = []string{"enabled", "schema", "version", "permission_mode", "defaults", "deny_guidance_message"}

// SettingsPatch is a change to the scalar settings of the section: each
// field that is not nil is written as given, each key of Remove is removed,
// the other settings stay as they are. Defaults maps a key ("*") to a level
// as written.
type SettingsPatch struct {
	Enabled             *bool
	Schema              *string
	Version             *string
	PermissionMode      *string
	Defaults            map[string]string
	DenyGuidanceMessage *string
	Remove              []string
}

// DecodeSettingsPatch reads a settings PATCH body whose values were checked
// (a bool for enabled, strings, a mapping of levels for defaults): a key
// with null is removed, a key that is not a setting or a value of another
// type is left out.
func DecodeSettingsPatch(m Mapping) SettingsPatch {
	var p SettingsPatch
	str := func(v any) *string {
		if s, ok := v.(string); ok {
			return &s
		}
		return nil
	}
	p.Remove = patchKeys(m, SettingsKeys, func(k string, v any) {
		switch k {
		case "enabled":
			if b, ok := v.(bool); ok {
				p.Enabled = &b
			}
		case "schema":
			p.Schema = str(v)
		case "version":
			p.Version = str(v)
		case "permission_mode":
			p.PermissionMode = str(v)
		case "deny_guidance_message":
			p.DenyGuidanceMessage = str(v)
		case "defaults":
			levels := MappingOf(v).Keys
			p.Defaults = make(map[string]string, len(levels))
			for _, f := range levels {
				if s, ok := f.Value.Text(); ok {
					p.Defaults[f.Key] = s
				}
			}
		}
	})
	return p
}
