package policy

import (
	"reflect"
	"testing"
)

func TestDecodeSettingsPatch(t *testing.T) {
	off, schema, version, mode, msg := false, "tiered_policy", "2", "strict", "no"
	on := true
	cases := []struct {
		note string
		body map[string]any
		want SettingsPatch
	}{
		{"each setting round-trips", map[string]any{"enabled": false, "schema": "tiered_policy", "version": "2",
			"permission_mode": "strict", "defaults": map[string]any{"*": "ASK"}, "deny_guidance_message": "no"},
			SettingsPatch{Enabled: &off, Schema: &schema, Version: &version, PermissionMode: &mode,
				Defaults: map[string]string{"*": "ASK"}, DenyGuidanceMessage: &msg}},
		{"null removes", map[string]any{"defaults": nil, "deny_guidance_message": nil},
			SettingsPatch{Remove: []string{"defaults", "deny_guidance_message"}}},
		{"a key that is not a setting is left out", map[string]any{"colour": "red", "enabled": true},
			SettingsPatch{Enabled: &on}},
	}
	for _, c := range cases {
		if got := DecodeSettingsPatch(MappingOf(c.body)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.note, got, c.want)
		}
	}
}
