package observe

import (
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
)

// MetricsOptions feed the gauges the metrics read at scrape time; a nil
// func leaves that metric out.
// Pending approvals and websocket clients are always exported (0 until
// set), since the approval manager and the hub may be wired after the
// metrics: pass them here or later with SetPendingApprovals and
// SetWebsocketClients.
type MetricsOptions struct {
	// PendingApprovals is the number of asks waiting for a person.
	PendingApprovals func() float64
	// WebsocketClients is the number of connected browsers.
	WebsocketClients func() float64
	// ConfigProblems is the number of validation problems of the policy
	// in force.
	ConfigProblems func() float64
	// LogDropped is the number of decision log entries dropped because the
	// queue was full.
	LogDropped func() float64
	// LogQueued is the number of entries waiting for the log writer.
	LogQueued func() float64
}

// Metrics are toolgate's Prometheus metrics, in their own registry.
type Metrics struct {
	registry        *prometheus.Registry
	decisions       *prometheus.CounterVec
	evalLatency     prometheus.Histogram
	approvalLatency prometheus.Histogram
	reloads         prometheus.Counter
	skipped         prometheus.Counter
	knownTools      map[string]bool
	pending         atomic.Pointer[func() float64]
	websockets      atomic.Pointer[func() float64]
}

// SetPendingApprovals sets the func the pending-approvals gauge reads.
func (m *Metrics) SetPendingApprovals(f func() float64) { m.pending.Store(&f) }

// SetWebsocketClients sets the func the websocket-clients gauge reads.
func (m *Metrics) SetWebsocketClients(f func() float64) { m.websockets.Store(&f) }

// readFunc calls the func a pointer holds, 0 when unset.
func readFunc(p *atomic.Pointer[func() float64]) func() float64 {
	return func() float64 {
		if f := p.Load(); f != nil && *f != nil {
			return (*f)()
		}
		return 0
	}
}

// otherTool is the tool label of every tool outside the known categories,
// so that agents cannot grow the label set without bound.
const otherTool = "other"

// NewMetrics registers the metrics.
func NewMetrics(o MetricsOptions) *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolgate_decisions_total",
			Help: "Decisions of evaluate and check, by level and tool (unknown tools are \"other\").",
		}, []string{"level", "tool"}),
		evalLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "toolgate_evaluation_duration_seconds",
			Help:    "Time from a request's arrival to its decision.",
			Buckets: []float64{.00001, .000025, .00005, .0001, .00025, .0005, .001, .0025, .005, .01, .05, .25},
		}),
		approvalLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "toolgate_approval_duration_seconds",
			Help:    "Time from an ask to its answer or expiry.",
			Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600},
		}),
		reloads: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "toolgate_config_reloads_total",
			Help: "Policy changes put in force (file edits and API writes).",
		}),
		skipped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "toolgate_skipped_channel_total",
			Help: "Calls allowed unchecked because they named a channel the policy skips (admin tokens only).",
		}),
		knownTools: map[string]bool{},
	}
	for _, list := range [][]string{engine.ShellTools, engine.PathTools, engine.NetworkTools} {
		for _, t := range list {
			m.knownTools[t] = true
		}
	}
	m.registry.MustRegister(m.decisions, m.evalLatency, m.approvalLatency, m.reloads, m.skipped,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	gauge := func(name, help string, f func() float64) {
		if f != nil {
			m.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
		}
	}
	m.SetPendingApprovals(o.PendingApprovals)
	m.SetWebsocketClients(o.WebsocketClients)
	gauge("toolgate_approvals_pending", "Asks waiting for a person.", readFunc(&m.pending))
	gauge("toolgate_websocket_clients", "Connected browser websockets.", readFunc(&m.websockets))
	gauge("toolgate_config_problems", "Validation problems of the policy in force.", o.ConfigProblems)
	gauge("toolgate_decision_log_queue", "Decision log entries waiting for the writer.", o.LogQueued)
	if o.LogDropped != nil {
		m.registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "toolgate_decision_log_dropped_total",
			Help: "Decision log entries dropped because the queue was full.",
		}, o.LogDropped))
	}
	return m
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Registry: m.registry})
}

// ObserveDecision counts a decision and its latency.
func (m *Metrics) ObserveDecision(tool string, level policy.Level, latency time.Duration) {
	if !m.knownTools[tool] {
		tool = otherTool
	}
	m.decisions.WithLabelValues(level.String(), tool).Inc()
	if latency > 0 {
		m.evalLatency.Observe(latency.Seconds())
	}
}

// ObserveSkipped counts a call allowed because its channel is not checked.
func (m *Metrics) ObserveSkipped() { m.skipped.Inc() }

// ObserveApprovalLatency records how long an ask waited for its answer.
func (m *Metrics) ObserveApprovalLatency(d time.Duration) {
	m.approvalLatency.Observe(d.Seconds())
}

// ConfigReloaded counts a policy change put in force (pass it to
// store.OnChange).
func (m *Metrics) ConfigReloaded() { m.reloads.Inc() }
