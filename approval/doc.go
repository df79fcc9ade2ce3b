// Package approval owns toolgate's pending asks: the tool calls the engine
// answered with "ask" that now wait for a person.
//
// A Manager creates an Approval for each ask, lets the agent that asked Wait
// for the answer, takes the first answer given through Decide (REST and the
// websocket hub both call it), expires unanswered asks as deny, and fans out
// approval.requested / approval.resolved events to subscribers such as the
// websocket hub. The first answer wins atomically; every later one gets
// ErrAlreadyDecided.
//
// Shared mode (Options.Shared, for several replicas on one database): the
// Shared store holds the asks and decides every outcome in one atomic step,
// so the first answer wins across replicas; the Manager mirrors the store's
// pending asks from its notifications (reloading them after a reconnect),
// publishes the same events on every replica and wakes its own waiters for
// an answer given through any replica. Expiry runs in the store, by one
// replica at a time; an ask still pending here one sweep past its deadline
// (the store unreachable) ends here as expired, so waits end on time.
//
// The two modes are the two implementations of one small interface, asks
// (asks.go: localAsks, manager_shared.go: sharedAsks), chosen once by New;
// the Manager's methods do not ask which one they run on.
//
// Lock order: an entry's decideMu, then the Manager's mu. Calls to the
// Shared store and the Persister are made holding at most decideMu, never
// mu. Mirroring a stored outcome takes only mu: the store has decided it,
// and applying it twice changes nothing.
//
// Digital-persona (owner-scope) calls never reach this package: for them the
// engine already turns ask into deny (docs/decisions.md#digital-persona-and-owner-scopes), because there is no owner
// present to answer. Create refuses a request whose Scope is in avatar mode,
// so a wiring mistake fails closed instead of prompting the wrong person.
package approval
