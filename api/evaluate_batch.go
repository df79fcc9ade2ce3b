package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/toolgate/toolgate/engine"
)

// MaxBatchCalls is the most calls one POST /api/v1/evaluate/batch may hold.
const MaxBatchCalls = 1000

// EvaluateBatchRequest is the wire form of POST /api/v1/evaluate/batch.
type EvaluateBatchRequest struct {
	Calls []json.RawMessage `json:"calls"`
}

// EvaluateBatchResponse holds one decision per call, in order.
type EvaluateBatchResponse struct {
	Decisions []EvaluateResponse `json:"decisions"`
}

// handleEvaluateBatch is POST /api/v1/evaluate/batch: up to MaxBatchCalls
// evaluate requests decided against one engine snapshot, answered in order.
// Any invalid call rejects the whole batch with a 400 naming calls[i].
func (s *Server) handleEvaluateBatch(w http.ResponseWriter, r *http.Request) {
	var in EvaluateBatchRequest
	if err := decodeJSON(w, r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	reqs, err := batchRequests(in.Calls)
	if err != nil {
		writeError(w, r, err)
		return
	}
	e := s.deps.Policy.Engine()
	out := EvaluateBatchResponse{Decisions: make([]EvaluateResponse, len(reqs))}
	for i, req := range reqs {
		d := e.Evaluate(req)
		s.observe(r, req, d)
		out.Decisions[i] = decisionWire(d)
	}
	writeJSON(w, http.StatusOK, out)
}

// batchRequests validates and converts every call, naming the first bad
// one's field as calls[i].<field>.
func batchRequests(calls []json.RawMessage) ([]*engine.Request, error) {
	if calls == nil {
		return nil, badRequest("calls", "calls is required: a list of evaluate requests")
	}
	if len(calls) > MaxBatchCalls {
		return nil, badRequest("calls", "calls holds %d requests; at most %d are allowed", len(calls), MaxBatchCalls)
	}
	reqs := make([]*engine.Request, len(calls))
	for i, raw := range calls {
		var call EvaluateRequest
		err := decodeBytes(raw, &call)
		if err == nil {
			reqs[i], err = call.toEngine()
		}
		if err != nil {
			return nil, inCall(i, err)
		}
	}
	return reqs, nil
}

// inCall prefixes the fields of a call's error with calls[i].
func inCall(i int, err error) error {
	prefix := fmt.Sprintf("calls[%d]", i)
	var e *Error
	if !errors.As(err, &e) {
		return badRequest(prefix, "%s: %v", prefix, err)
	}
	out := *e
	out.Message = prefix + ": " + e.Message
	out.Details = nil
	for _, d := range e.Details {
		field := prefix
		if d.Field != "" {
			field += "." + d.Field
		}
		out.Details = append(out.Details, Detail{Field: field, Message: d.Message})
	}
	if len(out.Details) == 0 {
		out.Details = []Detail{{Field: prefix, Message: e.Message}}
	}
	return &out
}
