package api

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store"
)

// rpcMethod is one JSON-RPC method: the right it needs and its body.
type rpcMethod struct {
	right service.Right
	run   func(s *Server, params json.RawMessage) (any, error)
	// as, when set instead of run, also gets the request (its context and
	// principal): the methods that act as a person.
	as func(s *Server, r *http.Request, params json.RawMessage) (any, error)
}

// rpcMethodTable lists the methods of docs/agents.md#editing-the-policy-over-the-api and openapi.yaml; New builds
// it once for the server (a function, not a package variable set in init,
// since the methods refer to each other).
func rpcMethodTable() map[string]rpcMethod {
	return map[string]rpcMethod{
		"permissions.tools.get":                 {right: service.RightRead, run: rpcToolsGet},
		"permissions.tools.set":                 {right: service.RightWrite, run: rpcToolsSet},
		"permissions.tools.update":              {right: service.RightWrite, run: rpcToolsUpdate},
		"permissions.tools.delete":              {right: service.RightWrite, run: rpcToolsDelete},
		"permissions.rules.get":                 {right: service.RightRead, run: rpcRulesGet},
		"permissions.rules.create":              {right: service.RightWrite, run: rpcRulesCreate},
		"permissions.rules.update":              {right: service.RightWrite, run: rpcRulesUpdate},
		"permissions.rules.delete":              {right: service.RightWrite, run: rpcRulesDelete},
		"permissions.approval_overrides.get":    {right: service.RightRead, run: rpcOverridesGet},
		"permissions.approval_overrides.delete": {right: service.RightWrite, run: rpcOverridesDelete},
		"permissions.owner_scopes.get":          {right: service.RightRead, run: rpcOwnersGet},
		"permissions.owner_scopes.set":          {right: service.RightWrite, run: rpcOwnersSet},
		"command.add_dir":                       {right: service.RightWrite, run: rpcAddDir},
		"approvals.decide":                      {right: service.RightApprove, as: rpcApprovalsDecide},
		"grants.list":                           {right: service.RightApprove, as: rpcGrantsList},
		"grants.revoke":                         {right: service.RightApprove, as: rpcGrantsRevoke},
	}
}

// rpcParams decodes params strictly into v; absent params are {}.
func rpcParams(params json.RawMessage, v any) error {
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	if params[0] != '{' {
		return service.BadRequest("params", "params must be an object")
	}
	return decodeBytes(params, v)
}

// rpcObject decodes params, an object as given ({} when absent or null).
func rpcObject(params json.RawMessage) (policy.Mapping, error) {
	var m policy.Mapping
	if err := rpcParams(params, &m); err != nil {
		return policy.Mapping{}, err
	}
	return m.OrEmpty(), nil
}

type noParams struct{}

func rpcSection(s *Server, params json.RawMessage) (policy.Written, error) {
	if err := rpcParams(params, &noParams{}); err != nil {
		return policy.Written{}, err
	}
	sec, _, err := s.section()
	return sec, err
}

func rpcToolsGet(s *Server, params json.RawMessage) (any, error) {
	sec, err := rpcSection(s, params)
	if err != nil {
		return nil, err
	}
	return ToolsResponse{Tools: toolsOf(sec)}, nil
}

// toolLevelParams are the params of permissions.tools.update.
type toolLevelParams struct {
	Tool  string `json:"tool"`
	Level string `json:"level"`
}

func rpcToolsUpdate(s *Server, params json.RawMessage) (any, error) {
	var p toolLevelParams
	if err := rpcParams(params, &p); err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.Tool) == "" {
		return nil, service.BadRequest("tool", msgEmptyTool)
	}
	if err := checkLevel("level", p.Level); err != nil {
		return nil, err
	}
	if _, err := s.policy.SetToolLevel("", p.Tool, normLevel(p.Level)); err != nil {
		return nil, err
	}
	return ToolLevelResponse{Tool: p.Tool, Level: normLevel(p.Level)}, nil
}

// toolsSetParams are the params of permissions.tools.set: tool -> a
// level, or a legacy mapping, as a config.yaml tools section holds them.
type toolsSetParams struct {
	Tools policy.Mapping `json:"tools"`
}

// rpcToolsSet replaces the whole tools map: {"tools": {<tool>: level}}.
func rpcToolsSet(s *Server, params json.RawMessage) (any, error) {
	var p toolsSetParams
	if err := rpcParams(params, &p); err != nil {
		return nil, err
	}
	if !p.Tools.IsMapping() {
		return nil, service.BadRequest("tools", "tools is required: an object of tool -> level")
	}
	if err := checkSection(policy.Written{Tools: p.Tools}); err != nil {
		return nil, err
	}
	sec, etag, err := s.section()
	if err != nil {
		return nil, err
	}
	sec.Tools = p.Tools
	if _, err := s.policy.ReplaceSection(etag, sec); err != nil {
		return nil, err
	}
	return ToolsResponse{Tools: sec.Tools}, nil // the tools set, in the shape they were given
}

// isText reports whether a value is a string.
func isText(v policy.Value) bool {
	_, ok := v.Text()
	return ok
}

// idParams are the params of the methods that name one rule, override or
// grant.
type idParams struct {
	ID string `json:"id"`
}

func rpcID(params json.RawMessage) (string, error) {
	var p idParams
	if err := rpcParams(params, &p); err != nil {
		return "", err
	}
	if p.ID == "" {
		return "", service.BadRequest("id", "id is required")
	}
	return p.ID, nil
}

// toolParams are the params of permissions.tools.delete.
type toolParams struct {
	Tool string `json:"tool"`
}

func rpcToolsDelete(s *Server, params json.RawMessage) (any, error) {
	var p toolParams
	if err := rpcParams(params, &p); err != nil {
		return nil, err
	}
	if p.Tool == "" {
		return nil, service.BadRequest("tool", msgEmptyTool)
	}
	if _, err := s.policy.DeleteTool("", p.Tool); err != nil {
		return nil, err
	}
	return DeletedResult{Deleted: p.Tool}, nil
}

// rpcRulesGet returns every rule, or the one named by id.
func rpcRulesGet(s *Server, params json.RawMessage) (any, error) {
	var p idParams
	if err := rpcParams(params, &p); err != nil {
		return nil, err
	}
	sec, _, err := s.section()
	if err != nil {
		return nil, err
	}
	if p.ID == "" {
		return RulesResponse{Rules: sec.Rules.All()}, nil
	}
	rule, ok := sec.Rules.Find(p.ID)
	if !ok {
		return nil, store.Refuse(store.ErrNotFound, "rule %q: not found", p.ID)
	}
	return rule, nil
}

// rpcRulesCreate takes the rule itself as params.
func rpcRulesCreate(s *Server, params json.RawMessage) (any, error) {
	rule, err := rpcObject(params)
	if err != nil {
		return nil, err
	}
	if id, _ := rule.Get("id"); !isText(id) {
		return nil, service.BadRequest("id", "id is required")
	}
	typed, derr := decodeRule(rule)
	if derr != nil {
		return nil, derr
	}
	if _, _, err := s.policy.CreateRule("", typed); err != nil {
		return nil, err
	}
	return rule, nil
}

// rpcRulesUpdate takes {id, <fields to set>}; null removes a field.
func rpcRulesUpdate(s *Server, params json.RawMessage) (any, error) {
	patch, err := rpcObject(params)
	if err != nil {
		return nil, err
	}
	given, _ := patch.Get("id")
	id, _ := given.Text()
	if id == "" {
		return nil, service.BadRequest("id", "id is required")
	}
	patch = patch.Without("id")
	if len(patch.Keys) == 0 {
		return nil, service.BadRequest("", "nothing to update: give the fields to set")
	}
	change, derr := decodeRulePatch(patch)
	if derr != nil {
		return nil, derr
	}
	if _, err := s.policy.UpdateRule("", id, change); err != nil {
		return nil, err
	}
	sec, _, err := s.section()
	if err != nil {
		return nil, err
	}
	rule, _ := sec.Rules.Find(id)
	return rule, nil
}

func rpcRulesDelete(s *Server, params json.RawMessage) (any, error) {
	return rpcDelete(params, s.policy.DeleteRule)
}

func rpcOverridesGet(s *Server, params json.RawMessage) (any, error) {
	sec, err := rpcSection(s, params)
	if err != nil {
		return nil, err
	}
	return OverridesResponse{ApprovalOverrides: sec.Overrides.All()}, nil
}

func rpcOverridesDelete(s *Server, params json.RawMessage) (any, error) {
	return rpcDelete(params, s.policy.DeleteOverride)
}

func rpcOwnersGet(s *Server, params json.RawMessage) (any, error) {
	if err := rpcParams(params, &noParams{}); err != nil {
		return nil, err
	}
	scopes, _, err := s.policy.OwnerScopes()
	if err != nil {
		return nil, err
	}
	return OwnerScopesResponse{OwnerScopes: scopes}, nil
}

func rpcOwnersSet(s *Server, params json.RawMessage) (any, error) {
	var p OwnerScopesRequest
	if err := rpcParams(params, &p); err != nil {
		return nil, err
	}
	if err := s.setOwnerScopes("", p.OwnerScopes); err != nil {
		return nil, err
	}
	return rpcOwnersGet(s, nil)
}

// addDirParams are the params of command.add_dir.
type addDirParams struct {
	Path string `json:"path"`
}

// rpcAddDir is /add-dir: {"path": ...}.
func rpcAddDir(s *Server, params json.RawMessage) (any, error) {
	var p addDirParams
	if err := rpcParams(params, &p); err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.Path) == "" {
		return nil, service.BadRequest("path", "path is required")
	}
	res, err := s.policy.AddDir("", p.Path)
	if err != nil {
		return nil, err
	}
	return addDirWire(res), nil
}

// rpcDelete deletes the section entry whose id params name, with del.
func rpcDelete(params json.RawMessage, del func(ifMatch, id string) (string, error)) (any, error) {
	id, err := rpcID(params)
	if err != nil {
		return nil, err
	}
	if _, err := del("", id); err != nil {
		return nil, err
	}
	return DeletedResult{Deleted: id}, nil
}
