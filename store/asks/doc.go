// Package asks keeps the pending asks that every replica shares when the
// server runs on PostgreSQL (--database-url): it is approval.Shared there.
//
// It owns the approval_asks table (the live asks with their raw tool
// arguments, removed after their retention), opening or joining an ask,
// storing its outcome (with the always-allow rule or the grant the answer
// makes joining the same transaction through txn.Enclosing), the expiry
// lease, and the notifications that tell other replicas an ask changed
// (Listen). Each change is recorded in the approval history in the same
// transaction (history.RecordApprovalTx).
//
// It does not own the history itself (store/history), the policy the
// always-allow rule is written to (store), the grants (store/grants) or
// the connection, schema steps and LISTEN connection (store/pg). Without
// a database, pending asks live in the approval.Manager's memory and this
// package is not used.
package asks
