package api

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/store"
)

// TestSettingsResponseKeys: SettingsResponse has one field per scalar
// setting of policy.SettingsKeys, so a new setting cannot go unanswered.
func TestSettingsResponseKeys(t *testing.T) {
	var keys []string
	rt := reflect.TypeFor[SettingsResponse]()
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		keys = append(keys, name)
	}
	want := slices.Sorted(slices.Values(policy.SettingsKeys))
	if !slices.Equal(keys, want) {
		t.Errorf("SettingsResponse keys %v, policy.SettingsKeys %v", keys, want)
	}
}

// TestSettingsAnswerAsWritten: the settings answer holds every setting the
// section has, as written, null when written without a value, and no key
// the section lacks or that is not a setting: the JSON of a map of those
// keys, byte for byte.
func TestSettingsAnswerAsWritten(t *testing.T) {
	cases := []struct {
		note string
		sec  map[string]any
	}{
		{"an empty section", map[string]any{}},
		{"only enabled", map[string]any{"enabled": true}},
		{"a key without a value is null", map[string]any{"deny_guidance_message": nil, "enabled": false}},
		{"values of the wrong type as written", map[string]any{"enabled": "no", "permission_mode": 3, "defaults": "ask"}},
		{"every setting, and keys that are not settings", map[string]any{
			"enabled": true, "schema": "tiered_policy", "version": "1", "permission_mode": "strict",
			"defaults": map[string]any{"*": "deny"}, "deny_guidance_message": "ask the owner",
			"tools": map[string]any{"bash": "allow"}, "rules": []any{}, "unknown": 1,
		}},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			want := map[string]any{}
			for _, k := range policy.SettingsKeys {
				if v, ok := c.sec[k]; ok {
					want[k] = v
				}
			}
			wantJSON, _ := json.Marshal(want)
			got, err := json.Marshal(settingsOf(policy.WrittenOf(c.sec)))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(wantJSON) {
				t.Errorf("got %s, want %s", got, wantJSON)
			}
		})
	}
}

// TestAddDirAnswer: the result of command.add_dir is its own wire shape,
// whatever JSON names the store's result has: created is null when none
// were appended, existing is left out when none were there.
func TestAddDirAnswer(t *testing.T) {
	cases := []struct {
		note string
		res  store.AddDirResult
		want string
	}{
		{"not tiered", store.AddDirResult{Dir: "/srv", ExternalDirectory: "allow"},
			`{"dir":"/srv","tiered":false,"external_directory":"allow","created":null}`},
		{"overrides appended", store.AddDirResult{Dir: "/srv", Tiered: true, ExternalDirectory: "allow",
			Created: []policy.Override{{ID: "a", Action: policy.Allow, Pattern: "x"}}},
			`{"dir":"/srv","tiered":true,"external_directory":"allow","created":[{"action":"allow","id":"a","pattern":"x"}]}`},
		{"overrides already there", store.AddDirResult{Dir: "/srv", Tiered: true, ExternalDirectory: "allow", Existing: []string{"a", "b"}},
			`{"dir":"/srv","tiered":true,"external_directory":"allow","created":null,"existing":["a","b"]}`},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			got, err := json.Marshal(addDirWire(c.res))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}
