// Package logcall is where the decision log meets the engine: a decided
// call becomes a log entry's redacted fields (Of), and a logged call is
// decided again under two policies (Replay, the impact preview). The log
// itself (store/decisionlog, SQLite and PostgreSQL) keeps plain values and does not
// import the engine.
package logcall

import (
	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/redact"
	"github.com/toolgate/toolgate/store/decisionlog"
)

// Of is the decision log's Call for req, decided by policy (nil, or an
// engine without shadow rules, when no shadow level is to be worked out).
// Without a policy it costs no allocation, so the request path pays
// nothing for it; the caller must not change req after Enqueue.
func Of(req *engine.Request, policy *engine.Engine) decisionlog.Call {
	if policy == nil {
		return (*plain)(req)
	}
	return &shadowed{req: req, policy: policy}
}

// plain is a call logged without a shadow policy.
type plain engine.Request

// Prepare implements decisionlog.Call.
func (c *plain) Prepare(e *decisionlog.Entry) { prepare(e, (*engine.Request)(c), nil) }

// shadowed is a call whose policy has shadow rules.
type shadowed struct {
	req    *engine.Request
	policy *engine.Engine
}

// Prepare implements decisionlog.Call.
func (c *shadowed) Prepare(e *decisionlog.Entry) { prepare(e, c.req, c.policy) }

// prepare fills e from req: the redacted summary when e has none, what the
// shadow rules of shadows would have decided when that differs
// (Engine.ShadowOf), and the redacted request with FullArgs.
func prepare(e *decisionlog.Entry, req *engine.Request, shadows *engine.Engine) {
	if e.Summary == "" {
		e.Summary = redact.Summarize(req.Call)
	}
	if shadows != nil {
		level, _ := policy.ParseLevel(e.Level)
		d := engine.Decision{Level: level, MatchedRule: e.MatchedRule}
		if s := shadows.ShadowOf(req, d); s.Changed {
			e.ShadowLevel, e.ShadowRule = s.Level.String(), s.MatchedRule
		}
	}
	if e.FullArgs && e.Request == nil {
		e.Request = Logged(req)
	}
}

// Logged is req as the log keeps it: its arguments redacted, without the
// fields a replay must not carry (the session, the token, the home, a
// request for the trace).
func Logged(req *engine.Request) *decisionlog.Request {
	r := &decisionlog.Request{ToolName: req.Call.Tool(), ToolArgs: redact.Args(req.Call.Args()),
		ChannelID: req.ChannelID, Workspace: req.Workspace}
	if s := req.Scope; s != nil {
		r.Scope = &decisionlog.Scope{AvatarMode: s.AvatarMode, GroupDigitalAvatar: s.GroupDigitalAvatar,
			PrincipalUserID: s.PrincipalUserID}
	}
	return r
}

// Request is the engine's call for a logged one.
func Request(r *decisionlog.Request) *engine.Request {
	req := &engine.Request{Call: engine.NewCall(r.ToolName, r.ToolArgs), ChannelID: r.ChannelID, Workspace: r.Workspace}
	if s := r.Scope; s != nil {
		req.Scope = &engine.Scope{AvatarMode: s.AvatarMode, GroupDigitalAvatar: s.GroupDigitalAvatar,
			PrincipalUserID: s.PrincipalUserID}
	}
	return req
}
