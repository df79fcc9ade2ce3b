package service

import (
	"context"
	"errors"
	"time"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/store/decisionlog"
)

// Sources of a decision: the route family that decided (the decision log's
// source field).
const (
	// SourceEvaluate: a decision with no person behind it (evaluate,
	// evaluate/batch, a hook's PreToolUse or BeforeTool).
	SourceEvaluate = "evaluate"
	// SourceCheck: a decision whose ask waits for a person (check, a hook's
	// PermissionRequest).
	SourceCheck = "check"
)

// Observation says where a decision came from. The handler that decided
// builds it from what it knows (its own route, the caller it parsed, the
// time it started) and hands it over explicitly; nothing is read back out
// of the HTTP request.
type Observation struct {
	Source  string // SourceEvaluate or SourceCheck
	Agent   string // the agent runtime (decisionlog.Agents)
	Session string // the agent's session, or ""
	Start   time.Time
}

// DecisionObserver is told of every decision (the decision log, metrics).
type DecisionObserver interface {
	Observe(o Observation, req *engine.Request, d engine.Decision)
}

// NopObserver observes nothing (a server without a decision log or
// metrics), so callers never check for nil.
type NopObserver struct{}

// Observe does nothing.
func (NopObserver) Observe(Observation, *engine.Request, engine.Decision) {}

// ErrLogOff is the error of NopDecisionLog's reads.
var ErrLogOff = errors.New("service: the decision log is turned off")

// NopDecisionLog is the decision log when --decision-log=false: it keeps
// nothing and its reads answer ErrLogOff (503).
type NopDecisionLog struct{}

// Enqueue drops the entry.
func (NopDecisionLog) Enqueue(decisionlog.Entry) bool { return false }

// Query answers ErrLogOff.
func (NopDecisionLog) Query(context.Context, decisionlog.Query) (decisionlog.Page, error) {
	return decisionlog.Page{}, ErrLogOff
}

// Recent answers ErrLogOff.
func (NopDecisionLog) Recent(context.Context, int) ([]decisionlog.Entry, error) {
	return nil, ErrLogOff
}
