// Package observe owns what follows a decision once it is made: the
// decision log entry (handed to the log's writer without waiting) and the
// Prometheus metrics. Every door that decides (REST, the hooks, JSON-RPC,
// the MCP gateway's checks) tells its Recorder through
// service.DecisionObserver. It does not decide, store or serve HTTP: the
// log's storage is store/decisionlog, and api serves /metrics with the
// handler Metrics gives it.
package observe
