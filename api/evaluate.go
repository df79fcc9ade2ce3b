package api

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/service"
)

// EvaluateRequest is the wire form of POST /api/v1/evaluate.
type EvaluateRequest struct {
	ToolName string `json:"tool_name"`
	// ToolArgs must be a JSON object (or null or absent); it is decoded in
	// the same pass as the request and checked by toEngine.
	ToolArgs  any        `json:"tool_args"`
	ChannelID string     `json:"channel_id"`
	Workspace string     `json:"workspace"`
	Scope     *ScopeWire `json:"scope"`
	Explain   bool       `json:"explain"`
}

// ScopeWire is the digital-persona scope of a call.
type ScopeWire struct {
	AvatarMode         bool   `json:"avatar_mode"`
	GroupDigitalAvatar bool   `json:"group_digital_avatar"`
	PrincipalUserID    string `json:"principal_user_id"`
}

// EvaluateResponse is the wire form of a decision.
type EvaluateResponse struct {
	Level         string        `json:"level"`
	MatchedRule   *string       `json:"matched_rule"`
	Reason        string        `json:"reason"`
	ExternalPaths []string      `json:"external_paths,omitempty"`
	Trace         []engine.Step `json:"trace,omitempty"`
}

// toEngine validates the wire request and converts it.
func (w *EvaluateRequest) toEngine() (*engine.Request, error) {
	req := new(engine.Request)
	if err := w.fill(req); err != nil {
		return nil, err
	}
	return req, nil
}

// fill validates the wire request and converts it into req.
func (w *EvaluateRequest) fill(req *engine.Request) error {
	if strings.TrimSpace(w.ToolName) == "" {
		return service.BadRequest("tool_name", "tool_name is required")
	}
	var args map[string]any
	switch a := w.ToolArgs.(type) {
	case nil:
		args = map[string]any{}
	case map[string]any:
		args = a
	default:
		return service.BadRequest("tool_args", "tool_args must be a JSON object")
	}
	call := engine.NewCall(w.ToolName, args)
	if err := checkShellArgs(call); err != nil {
		return err
	}
	*req = engine.Request{Call: call, ChannelID: w.ChannelID, Workspace: w.Workspace, Explain: w.Explain}
	if w.Scope != nil {
		req.Scope = &engine.Scope{AvatarMode: w.Scope.AvatarMode, GroupDigitalAvatar: w.Scope.GroupDigitalAvatar, PrincipalUserID: w.Scope.PrincipalUserID}
	}
	return nil
}

// checkShellArgs refuses a shell call whose command (or cmd) is neither a
// string nor an array of strings: the engine could not read it, and a tool
// might run it anyway (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm). The error names tool_args.<field>.
//
// A call with both command and cmd is refused too: the engine reads one, a
// tool may run the other, so either answer could be about the wrong text
// (docs/decisions.md#channels-bind-the-token).
func checkShellArgs(call engine.Call) error {
	if engine.ToolCategory(call.Tool()) != engine.CategoryShell {
		return nil
	}
	if call.HasBothCommandKeys() {
		return service.BadRequest("tool_args.cmd", "tool_args has both command and cmd; send one, so the call means one thing")
	}
	var ae *engine.ArgError
	if err := call.CommandError(); errors.As(err, &ae) {
		return service.BadRequest("tool_args."+ae.Field, "tool_args.%s %s", ae.Field, ae.Message)
	}
	return nil
}

// decisionWire converts an engine decision to its wire form.
func decisionWire(d engine.Decision) EvaluateResponse {
	out := EvaluateResponse{Level: d.Level.String(), Reason: d.Reason, ExternalPaths: d.ExternalPaths, Trace: d.Trace}
	if d.MatchedRule != "" {
		rule := d.MatchedRule
		out.MatchedRule = &rule
	}
	return out
}

// engineCall is a wire request that holds one call: EvaluateRequest, or a
// request embedding it.
type engineCall interface {
	toEngine() (*engine.Request, error)
}

// decodeEngineCall decodes the body into in and converts its call for the engine.
func decodeEngineCall(w http.ResponseWriter, r *http.Request, in engineCall) (*engine.Request, error) {
	if err := decodeJSON(w, r, in); err != nil {
		return nil, err
	}
	return in.toEngine()
}

// handleEvaluate is POST /api/v1/evaluate: a decision, no side effects.
func (s *Server) handleEvaluate(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	var in EvaluateRequest
	req, err := decodeEngineCall(w, r, &in)
	if err != nil {
		writeError(w, r, err)
		return
	}
	from, err := s.restCallerOn(r, "", req.ChannelID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	d := s.deps.Policy.Engine().Evaluate(req)
	s.observe(service.SourceEvaluate, start, req, d, from)
	writeDecision(w, d)
}
