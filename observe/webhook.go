package observe

import "github.com/prometheus/client_golang/prometheus"

// WebhookCounters are the counters of the approval notifier
// (approval.Notifier).
type WebhookCounters interface {
	Sent() uint64
	Failed() uint64
	Dropped() uint64
}

// RegisterApprovalWebhooks exports the approval notifier's counters:
// notifications accepted by a receiver, given up after their tries, and
// dropped (queue full, or the server stopped first). Call it once.
func (m *Metrics) RegisterApprovalWebhooks(c WebhookCounters) {
	counter := func(name, help string, f func() uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help},
			func() float64 { return float64(f()) })
	}
	m.registry.MustRegister(
		counter("toolgate_approval_webhook_sent_total", "Approval notifications a webhook receiver accepted.", c.Sent),
		counter("toolgate_approval_webhook_failed_total", "Approval notifications given up after their tries or refused by the receiver.", c.Failed),
		counter("toolgate_approval_webhook_dropped_total", "Approval notifications dropped: the queue was full, or the server stopped first.", c.Dropped))
}
