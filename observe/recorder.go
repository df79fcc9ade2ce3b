package observe

import (
	"strings"
	"time"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/logcall"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store/decisionlog"
)

// Recorder is the service.DecisionObserver of the server: it counts every
// decision in the metrics and hands it to the decision log without waiting.
// Redaction happens later, on the log's writer goroutine.
type Recorder struct {
	log      service.DecisionLog
	metrics  *Metrics // nil when metrics are off
	fullArgs bool
	// policy is the engine in force (nil: none known), whose shadow rules
	// the log's writer asks about each call.
	policy func() *engine.Engine
}

// WithPolicy gives the recorder the engine in force, so that the log
// records what its shadow rules would have decided (on the writer, not
// here: a policy without shadow rules costs a call one nil check).
func (d *Recorder) WithPolicy(policy func() *engine.Engine) *Recorder {
	d.policy = policy
	return d
}

// NewRecorder builds the recorder; log nil means the log is off
// (service.NopDecisionLog), metrics may be nil. fullArgs keeps the whole
// (redacted) call for the impact preview.
func NewRecorder(log service.DecisionLog, metrics *Metrics, fullArgs bool) *Recorder {
	if log == nil {
		log = service.NopDecisionLog{}
	}
	return &Recorder{log: log, metrics: metrics, fullArgs: fullArgs}
}

// Observe implements service.DecisionObserver: a metrics increment and a
// non-blocking enqueue, with the source, agent, session and start time the
// deciding handler handed over.
func (d *Recorder) Observe(o service.Observation, req *engine.Request, dec engine.Decision) {
	now := time.Now()
	var latency time.Duration
	if !o.Start.IsZero() {
		latency = now.Sub(o.Start)
	}
	if d.metrics != nil {
		d.metrics.ObserveDecision(req.Call.Tool(), dec.Level, latency)
		if dec.MatchedRule == "" && strings.HasPrefix(dec.Reason, engine.SkippedReasonPrefix) {
			d.metrics.ObserveSkipped()
		}
	}
	var shadowed *engine.Engine
	if d.policy != nil {
		if e := d.policy(); e != nil && e.Shadow() != nil {
			shadowed = e
		}
	}
	d.log.Enqueue(decisionlog.Entry{
		Time:          now,
		Source:        o.Source,
		Agent:         o.Agent,
		Tool:          req.Call.Tool(),
		Channel:       req.ChannelID,
		Session:       o.Session,
		Level:         dec.Level.String(),
		MatchedRule:   dec.MatchedRule,
		LatencyMicros: latency.Microseconds(),
		Call:          logcall.Of(req, shadowed),
		FullArgs:      d.fullArgs,
	})
}
