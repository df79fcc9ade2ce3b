package api

import (
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/store"
)

// The answers of the permissions routes and of their JSON-RPC methods
// (openapi.yaml). The section, its entry lists, its tools and owner scopes
// are carried as written in config.yaml, so that whoever fixes a file sees
// what it says: a rule entry that is not a mapping, a level in another
// spelling or a legacy tools mapping stays in the answer. The envelopes
// around them are typed here. Fields are in the order the answer's keys
// are written (sorted, for the envelopes), which a client may compare byte
// for byte.

// ToolsResponse is GET /api/v1/permissions/tools and the result of
// permissions.tools.get and permissions.tools.set: tool -> a level, or a
// legacy mapping with "*" and patterns.
type ToolsResponse struct {
	Tools policy.Mapping `json:"tools"`
}

// ToolLevelResponse is PUT /api/v1/permissions/tools/{tool} and the result
// of permissions.tools.update: the tool and its level, lower-cased.
type ToolLevelResponse struct {
	Level string `json:"level"`
	Tool  string `json:"tool"`
}

// RulesResponse is GET /api/v1/permissions/rules and the result of
// permissions.rules.get without an id: the entries of rules, never null.
type RulesResponse struct {
	Rules []policy.Entry `json:"rules"`
}

// OverridesResponse is GET /api/v1/permissions/approval-overrides and the
// result of permissions.approval_overrides.get, never null.
type OverridesResponse struct {
	ApprovalOverrides []policy.Entry `json:"approval_overrides"`
}

// ExternalDirectoryResponse is GET /api/v1/permissions/external-directory:
// a level or a mapping of path prefix -> level, null (not left out) when
// none is configured.
type ExternalDirectoryResponse struct {
	ExternalDirectory policy.Mapping `json:"external_directory"`
}

// OwnerScopesResponse is GET /api/v1/permissions/owner-scopes and the
// result of permissions.owner_scopes.get and .set, never null.
type OwnerScopesResponse struct {
	OwnerScopes policy.Mapping `json:"owner_scopes"`
}

// SettingsResponse is GET and PATCH /api/v1/permissions/settings: each
// scalar setting of the section (policy.SettingsKeys) as written. A key
// absent from the section is left out; a key written with no value is
// answered null, which is what the pointer fields tell apart.
type SettingsResponse struct {
	Defaults            *policy.Mapping `json:"defaults,omitempty"`
	DenyGuidanceMessage *policy.Value   `json:"deny_guidance_message,omitempty"`
	Enabled             *policy.Value   `json:"enabled,omitempty"`
	PermissionMode      *policy.Value   `json:"permission_mode,omitempty"`
	Schema              *policy.Value   `json:"schema,omitempty"`
	Version             *policy.Value   `json:"version,omitempty"`
}

// DeletedResult is the result of the JSON-RPC delete methods: the tool
// name or entry id removed.
type DeletedResult struct {
	Deleted string `json:"deleted"`
}

// AddDirResponse is the result of command.add_dir: the directory trusted,
// whether the policy is tiered, the external_directory level now set for
// it, the approval overrides appended (as written, null when none) and the
// ids of those already there.
type AddDirResponse struct {
	Dir               string            `json:"dir"`
	Tiered            bool              `json:"tiered"`
	ExternalDirectory string            `json:"external_directory"`
	Created           []policy.Override `json:"created"`
	Existing          []string          `json:"existing,omitempty"`
}

// addDirWire is the answer of an /add-dir the store carried out.
func addDirWire(res store.AddDirResult) AddDirResponse {
	out := AddDirResponse{Dir: res.Dir, Tiered: res.Tiered, ExternalDirectory: res.ExternalDirectory, Existing: res.Existing}
	if len(res.Created) > 0 { // null when none were appended
		out.Created = res.Created
	}
	return out
}
