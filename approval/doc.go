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
// Digital-persona (owner-scope) calls never reach this package: for them the
// engine already turns ask into deny (contract D3), because there is no owner
// present to answer. Create refuses a request whose Scope is in avatar mode,
// so a wiring mistake fails closed instead of prompting the wrong person.
package approval
