package api

import (
	"net/http"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/service"
)

// Preview limits (service.DefaultPreviewCalls, service.MaxPreviewCalls).
const (
	DefaultPreviewCalls = service.DefaultPreviewCalls
	MaxPreviewCalls     = service.MaxPreviewCalls
)

// PreviewRequest is the body of POST /api/v1/permissions/preview: exactly
// one of a whole draft section, a rule to add or replace (by id) or the id
// of a rule to delete, and how many logged calls to replay.
type PreviewRequest struct {
	Permissions policy.Mapping `json:"permissions"`
	Rule        policy.Mapping `json:"rule"`
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
	Problems []policy.Problem `json:"problems"`
}

// handlePreview is POST /api/v1/permissions/preview. It replays the last
// logged calls (those logged with --log-full-args, arguments redacted)
// against the policy in force and against the draft, both compiled with the
// current built-in rules, and lists the calls whose level or rule differ
// (service.Policy.Preview).
func (s *Server) handlePreview(w http.ResponseWriter, r *http.Request) {
	var in PreviewRequest
	if err := decodeJSON(w, r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	draft := service.Draft{DeleteRule: in.DeleteRule}
	if in.Permissions.IsMapping() {
		w := in.Permissions.Written()
		draft.Permissions = &w
	}
	if in.Rule.IsMapping() {
		draft.Rule = &in.Rule
	}
	impact, err := s.policy.Preview(r.Context(), s.deps.Decisions, draft, in.Limit)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := PreviewResponse{Replayed: impact.Replayed, Changed: []PreviewChange{}, Problems: impact.Problems}
	for _, c := range impact.Changes {
		out.Changed = append(out.Changed, PreviewChange{DecisionID: c.Entry.ID, ToolName: c.Entry.Tool, Summary: c.Entry.Summary,
			From: previewOutcome(c.From), To: previewOutcome(c.To)})
	}
	writeJSON(w, http.StatusOK, out)
}

func previewOutcome(d engine.Decision) PreviewOutcome {
	w := decisionWire(d)
	return PreviewOutcome{Level: w.Level, MatchedRule: w.MatchedRule}
}
