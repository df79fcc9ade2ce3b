package policy

import (
	"reflect"
	"testing"
)

func TestDecodeSettingsPatch(t *testing.T) {
	cases := []struct {
		note string
		body map[string]any
		want map[string]any
	}{
		{"each setting round-trips", map[string]any{"enabled": false, "schema": "tiered_policy", "version": "2",
			"permission_mode": "strict", "defaults": map[string]any{"*": "ASK"}, "deny_guidance_message": "no"},
			map[string]any{"enabled": false, "schema": "tiered_policy", "version": "2",
				"permission_mode": "strict", "defaults": map[string]any{"*": "ASK"}, "deny_guidance_message": "no"}},
		{"null removes", map[string]any{"defaults": nil, "deny_guidance_message": nil},
			map[string]any{"defaults": nil, "deny_guidance_message": nil}},
		{"a key that is not a setting is left out", map[string]any{"colour": "red", "enabled": true},
			map[string]any{"enabled": true}},
	}
	for _, c := range cases {
		if got := DecodeSettingsPatch(c.body).Map(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.note, got, c.want)
		}
	}
}
