package api

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/service"
)

// MaxBatchCalls is the most calls one POST /api/v1/evaluate/batch may hold.
const MaxBatchCalls = 1000

// EvaluateBatchRequest is the wire form of POST /api/v1/evaluate/batch.
type EvaluateBatchRequest struct {
	Calls []EvaluateRequest `json:"calls"`
}

// EvaluateBatchResponse holds one decision per call, in order.
type EvaluateBatchResponse struct {
	Decisions []EvaluateResponse `json:"decisions"`
}

// handleEvaluateBatch is POST /api/v1/evaluate/batch: up to MaxBatchCalls
// evaluate requests decided against one engine snapshot, answered in order.
// Any invalid call rejects the whole batch with a 400 naming calls[i]: the
// body is decoded in one pass straight into the calls, and a decoding error
// names the field by its place in the body (calls[3].tool_name).
func (s *Server) handleEvaluateBatch(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	body, err := readBody(w, r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	defer releaseBody(body)
	var in EvaluateBatchRequest
	if err := decodeBytes(body.Bytes(), &in); err != nil {
		writeError(w, r, err)
		return
	}
	reqs, err := batchRequests(in.Calls)
	if err != nil {
		writeError(w, r, err)
		return
	}
	from, err := restCaller(r, "")
	for i := 0; err == nil && i < len(reqs); i++ {
		if e := s.bindChannel(r, reqs[i].ChannelID); e != nil {
			err = inCall(i, e)
		}
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	decisions := make([]engine.Decision, len(reqs))
	s.deps.Policy.Engine().EvaluateBatch(reqs, decisions)
	for i, d := range decisions {
		s.observe(service.SourceEvaluate, start, &reqs[i], d, from)
	}
	writeDecisions(w, decisions)
}

// batchRequests validates and converts every call, naming the first bad
// one's field as calls[i].<field>.
func batchRequests(calls []EvaluateRequest) ([]engine.Request, error) {
	if calls == nil {
		return nil, service.BadRequest("calls", "calls is required: a list of evaluate requests")
	}
	if len(calls) > MaxBatchCalls {
		return nil, service.BadRequest("calls", "calls holds %d requests; at most %d are allowed", len(calls), MaxBatchCalls)
	}
	reqs := make([]engine.Request, len(calls))
	for i := range calls {
		if err := calls[i].fill(&reqs[i]); err != nil {
			return nil, inCall(i, err)
		}
	}
	return reqs, nil
}

// inCall prefixes the fields of a call's error with calls[i].
func inCall(i int, err error) error {
	prefix := fmt.Sprintf("calls[%d]", i)
	var e *service.Error
	if !errors.As(err, &e) {
		return service.BadRequest(prefix, "%s: %v", prefix, err)
	}
	out := *e
	out.Message = prefix + ": " + e.Message
	out.Details = nil
	for _, d := range e.Details {
		field := prefix
		if d.Field != "" {
			field += "." + d.Field
		}
		out.Details = append(out.Details, service.Detail{Field: field, Message: d.Message})
	}
	if len(out.Details) == 0 {
		out.Details = []service.Detail{{Field: prefix, Message: e.Message}}
	}
	return &out
}
