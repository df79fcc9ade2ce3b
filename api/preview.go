package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/decisionlog"
)

// PreviewPolicy is the policy a preview starts from: the section and the
// built-in rules in force, and the engine options the server compiles with.
type PreviewPolicy interface {
	Section() (map[string]any, string, error)
	BuiltinRules() ([]any, string)
}

// Preview limits.
const (
	DefaultPreviewCalls = 1000
	MaxPreviewCalls     = 10000
)

// PreviewRequest is the body of POST /api/v1/permissions/preview: exactly
// one of a whole draft section, a rule to add or replace (by id) or the id
// of a rule to delete, and how many logged calls to replay.
type PreviewRequest struct {
	Permissions map[string]any `json:"permissions"`
	Rule        map[string]any `json:"rule"`
	DeleteRule  *string        `json:"delete_rule"`
	Limit       int            `json:"limit"`
}

// PreviewOutcome is one side of a changed decision.
type PreviewOutcome struct {
	Level       string  `json:"level"`
	MatchedRule *string `json:"matched_rule"`
}

// PreviewChange is a logged call whose decision the draft changes.
type PreviewChange struct {
	DecisionID int64          `json:"decision_id"`
	ToolName   string         `json:"tool_name"`
	Summary    string         `json:"summary"`
	From       PreviewOutcome `json:"from"`
	To         PreviewOutcome `json:"to"`
}

// PreviewResponse is what a draft would change among the replayed calls.
type PreviewResponse struct {
	Replayed int              `json:"replayed"`
	Changed  []PreviewChange  `json:"changed"`
	Problems []engine.Problem `json:"problems"`
}

// handlePreview is POST /api/v1/permissions/preview. It replays the last
// logged calls (those logged with --log-full-args, arguments redacted)
// against the policy in force and against the draft, both compiled with the
// current built-in rules, and lists the calls whose level or rule differ.
func (s *Server) handlePreview(w http.ResponseWriter, r *http.Request) {
	if s.deps.Decisions == nil || s.deps.PreviewPolicy == nil {
		writeError(w, r, errDecisionLogOff)
		return
	}
	var in PreviewRequest
	if err := decodeJSON(w, r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	current, _, err := s.deps.PreviewPolicy.Section()
	if err != nil {
		writeError(w, r, err)
		return
	}
	draft, err := in.draft(current)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out, err := s.preview(r.Context(), current, draft, in.Limit)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// preview compiles both policies and replays the last n logged calls.
func (s *Server) preview(ctx context.Context, current, draft map[string]any, n int) (PreviewResponse, error) {
	builtin, _ := s.deps.PreviewPolicy.BuiltinRules()
	before, _ := engine.Compile(current, builtin, s.deps.EngineOptions)
	after, problems := engine.Compile(draft, builtin, s.deps.EngineOptions)
	entries, err := s.deps.Decisions.Recent(ctx, n)
	if err != nil {
		return PreviewResponse{}, err
	}
	out := PreviewResponse{Replayed: len(entries), Changed: []PreviewChange{}, Problems: problems}
	if out.Problems == nil {
		out.Problems = []engine.Problem{}
	}
	for _, c := range decisionlog.Replay(entries, before, after) {
		out.Changed = append(out.Changed, PreviewChange{DecisionID: c.Entry.ID, ToolName: c.Entry.Tool, Summary: c.Entry.Summary,
			From: previewOutcome(c.From), To: previewOutcome(c.To)})
	}
	return out, nil
}

func previewOutcome(d engine.Decision) PreviewOutcome {
	w := decisionWire(d)
	return PreviewOutcome{Level: w.Level, MatchedRule: w.MatchedRule}
}

// draft validates the request and builds the draft section from current.
func (in *PreviewRequest) draft(current map[string]any) (map[string]any, error) {
	given := 0
	for _, set := range []bool{in.Permissions != nil, in.Rule != nil, in.DeleteRule != nil} {
		if set {
			given++
		}
	}
	if given != 1 {
		return nil, badRequest("", "give exactly one of permissions, rule or delete_rule")
	}
	switch {
	case in.Limit == 0:
		in.Limit = DefaultPreviewCalls
	case in.Limit < 0 || in.Limit > MaxPreviewCalls:
		return nil, badRequest("limit", "limit must be from 1 to %d", MaxPreviewCalls)
	}
	if in.Permissions != nil {
		return in.Permissions, nil
	}
	// Only the rules key changes; current is compiled as the "from" side.
	if in.Rule != nil {
		id, _ := in.Rule["id"].(string)
		if strings.TrimSpace(id) == "" {
			return nil, badRequest("rule.id", "rule.id is required to add or replace a rule")
		}
		return store.DraftWithRule(current, id, in.Rule), nil
	}
	draft, found := store.DraftWithoutRule(current, *in.DeleteRule)
	if !found {
		return nil, &Error{Status: http.StatusNotFound, Code: CodeNotFound, Message: "no rule has id " + *in.DeleteRule,
			Details: []Detail{{Field: "delete_rule", Message: "no rule has this id"}}}
	}
	return draft, nil
}
