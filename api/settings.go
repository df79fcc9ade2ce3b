package api

import (
	"net/http"

	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/service"
)

// handleGetSettings is GET /api/v1/permissions/settings.
func (s *Server) handleGetSettings(w http.ResponseWriter, r *http.Request) {
	s.writeSectionView(w, r, func(sec policy.Written) any { return settingsOf(sec) })
}

// settingsOf picks the scalar settings out of the section as written (an
// absent key is nil, a key written without a value is null).
func settingsOf(sec policy.Written) SettingsResponse {
	return SettingsResponse{
		Defaults:            sec.Defaults.Ptr(),
		DenyGuidanceMessage: sec.DenyGuidance.Ptr(),
		Enabled:             sec.Enabled.Ptr(),
		PermissionMode:      sec.PermissionMode.Ptr(),
		Schema:              sec.Schema.Ptr(),
		Version:             sec.Version.Ptr(),
	}
}

// handlePatchSettings is PATCH /api/v1/permissions/settings: each key given
// is set; null removes it.
func (s *Server) handlePatchSettings(w http.ResponseWriter, r *http.Request) {
	var patch policy.Mapping
	if err := decodeJSON(w, r, &patch); err != nil {
		writeError(w, r, err)
		return
	}
	if err := checkSettings(patch); err != nil {
		writeError(w, r, err)
		return
	}
	if _, err := s.policy.SetSettings(ifMatch(r), policy.DecodeSettingsPatch(patch)); err != nil {
		writeError(w, r, err)
		return
	}
	s.handleGetSettings(w, r)
}

// checkSettings checks a settings patch field by field.
func checkSettings(patch policy.Mapping) *service.Error {
	if len(patch.Keys) == 0 {
		return service.BadRequest("", "the body must be an object with at least one setting")
	}
	for _, f := range patch.Keys { // sorted
		k, v := f.Key, f.Value.Any()
		if v == nil {
			continue
		}
		switch k {
		case "enabled":
			if _, ok := v.(bool); !ok {
				return service.BadRequest(k, "enabled must be true or false")
			}
		case "schema", "version", "deny_guidance_message":
			if _, ok := v.(string); !ok {
				return service.BadRequest(k, "%s must be a string", k)
			}
		case "permission_mode":
			if m, _ := v.(string); m != "normal" && m != "strict" {
				return service.BadRequest(k, "invalid permission_mode %v, only normal or strict", v)
			}
		case "defaults":
			if err := checkLevelMap(k, v); err != nil {
				return err
			}
		default:
			return service.BadRequest(k, "unknown setting %q (allowed: enabled, schema, version, permission_mode, defaults, deny_guidance_message)", k)
		}
	}
	return nil
}
