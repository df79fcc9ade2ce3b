"""RemoteEngine: toolgate's decisions over HTTP, with the standard library only.

Failure policy (a permission layer must fail closed): no method raises for
a failure of toolgate or of the network. check_permission answers a DENY
PermissionResult and request_approval an ApprovalOutcome with
approved=False; in both ``error`` holds the reason (unreachable, timed out,
a non-2xx answer with toolgate's own error message, an unreadable answer).
Only a bad base URL raises, at construction, since no decision can be made
with it.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import math
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Dict, Mapping, Optional

from .models import ApprovalOutcome, PermissionLevel, PermissionResult

#: The agent name toolgate's decision log records for this client.
AGENT = "jiuwenswarm"
#: The header that names the agent (toolgate accepts "jiuwenswarm" or "rest").
AGENT_HEADER = "X-Toolgate-Agent"
#: The longest wait toolgate accepts in one request, in seconds.
MAX_WAIT_SECONDS = 600
#: matched_rule of a decision the client made because toolgate could not.
ERROR_RULE = "toolgate_client:error"
#: The most bytes of an answer read.
_MAX_ANSWER = 4 << 20
_LEVELS = {level.value: level for level in PermissionLevel}


class ToolgateError(Exception):
    """toolgate could not be asked, or answered something unusable.

    ``status`` is the HTTP status when toolgate answered.
    """

    def __init__(self, message: str, status: Optional[int] = None):
        super().__init__(message)
        self.status = status


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Refuses redirects: following one would send the token elsewhere."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: D102
        return None


class RemoteEngine:
    """A permission engine that asks a toolgate server.

    ``base_url`` is the server (``http://127.0.0.1:8765``), ``token`` an API
    token with the agent role or higher, ``timeout`` the seconds one
    request may take (a wait for a person is added to it). ``agent`` is
    what the decision log records: "jiuwenswarm" (default) or "rest".
    """

    def __init__(self, base_url: str, token: str, timeout: float = 10.0, agent: str = AGENT):
        parsed = urllib.parse.urlsplit(base_url or "")
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError("base_url must be an http or https URL such as http://127.0.0.1:8765")
        if parsed.username or parsed.password or parsed.query or parsed.fragment:
            raise ValueError("base_url must not carry credentials, a query or a fragment")
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        self._base = base_url.rstrip("/")
        self._where = "%s://%s" % (parsed.scheme, parsed.netloc)
        self._token = token or ""
        self.timeout = float(timeout)
        self.agent = agent
        self._opener = urllib.request.build_opener(_NoRedirect())

    def __repr__(self) -> str:  # never shows the token
        return "RemoteEngine(%r, agent=%r)" % (self._base, self.agent)

    # Decisions.

    def check_permission(
        self,
        tool_name: str,
        tool_args: Mapping[str, Any],
        channel_id: str = "web",
        workspace: Optional[str] = None,
        scope: Optional[Mapping[str, Any]] = None,
    ) -> PermissionResult:
        """Decides one call with POST /api/v1/evaluate (no side effects).

        ``channel_id`` defaults to "web", a channel toolgate checks: an
        empty or unknown channel may be skipped by the policy, which allows.
        ``scope`` is the digital-persona scope (avatar_mode,
        group_digital_avatar, principal_user_id). Never raises: any failure
        is a DENY result with ``error`` set.
        """
        try:
            body = _call_body(tool_name, tool_args, channel_id, workspace, scope)
            return _permission_result(self._request("POST", "/api/v1/evaluate", body, self.timeout))
        except ToolgateError as e:
            return _deny_result(str(e))

    async def acheck_permission(self, *args: Any, **kwargs: Any) -> PermissionResult:
        """check_permission for asyncio code (the reference engine's is a
        coroutine), run in a worker thread."""
        return await asyncio.to_thread(self.check_permission, *args, **kwargs)

    def request_approval(
        self,
        tool_name: str,
        tool_args: Mapping[str, Any],
        channel_id: str = "web",
        session_id: str = "",
        workspace: Optional[str] = None,
        scope: Optional[Mapping[str, Any]] = None,
        wait_seconds: float = 300,
    ) -> ApprovalOutcome:
        """Decides one call, waiting for a person when the policy asks.

        POST /api/v1/check decides; allow and deny answer at once. An ask
        becomes an approval that approvers see in the admin pages; this
        waits for their answer (GET /api/v1/approvals/{id}?wait_seconds=)
        up to ``wait_seconds`` in all. Only an allow approves: a deny, an
        expired ask, no answer in time or any error is approved=False.
        """
        deadline = time.monotonic() + max(float(wait_seconds), 0.0)
        try:
            body = _call_body(tool_name, tool_args, channel_id, workspace, scope)
            body["session_id"] = session_id or ""
            wait = _wait_for(deadline)
            body["wait_seconds"] = wait
            out = self._request("POST", "/api/v1/check", body, self.timeout + wait)
            decision = out.get("decision")
            approval = out.get("approval")
            if decision in ("allow", "deny"):
                return _outcome(decision, approval, out.get("reason"))
            if decision != "pending" or not isinstance(approval, dict) or not approval.get("id"):
                raise ToolgateError("toolgate answered an unknown decision %r" % (decision,))
            return self._await_person(approval, deadline)
        except ToolgateError as e:
            return ApprovalOutcome(approved=False, decision="deny", feedback=str(e), error=str(e))

    def _await_person(self, approval: Dict[str, Any], deadline: float) -> ApprovalOutcome:
        """Polls a pending approval until it is answered or the wait ends."""
        path = "/api/v1/approvals/" + urllib.parse.quote(str(approval["id"]), safe="")
        while approval.get("status") == "pending":
            wait = _wait_for(deadline)
            if wait <= 0:
                return ApprovalOutcome(approved=False, decision="deny", approval_id=approval.get("id"),
                                       feedback="no answer from an approver within the wait")
            approval = self._request("GET", path + "?wait_seconds=%d" % wait, None, self.timeout + wait)
        return _outcome(approval.get("decision"), approval, None)

    # HTTP.

    def _request(self, method: str, path: str, body: Optional[Dict[str, Any]], timeout: float) -> Dict[str, Any]:
        """One request; the decoded JSON object it answered, else ToolgateError."""
        data = None if body is None else json.dumps(body).encode("utf-8")
        req = urllib.request.Request(self._base + path, data=data, method=method)
        req.add_header("Accept", "application/json")
        req.add_header("User-Agent", "toolgate-client-python")
        req.add_header(AGENT_HEADER, self.agent)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if self._token:
            req.add_header("Authorization", "Bearer " + self._token)
        try:
            with self._opener.open(req, timeout=timeout) as resp:
                raw = resp.read(_MAX_ANSWER)
        except urllib.error.HTTPError as e:
            raise ToolgateError("toolgate answered %d: %s" % (e.code, _error_message(e)), status=e.code) from None
        except (urllib.error.URLError, OSError, http.client.HTTPException) as e:
            reason = getattr(e, "reason", None) or e
            raise ToolgateError("toolgate at %s could not be reached: %s" % (self._where, reason)) from None
        try:
            out = json.loads(raw.decode("utf-8"))
        except ValueError:
            raise ToolgateError("toolgate answered something that is not JSON") from None
        if not isinstance(out, dict):
            raise ToolgateError("toolgate answered JSON that is not an object")
        return out


def make_approval_callback(
    engine: RemoteEngine,
    channel_id: str = "web",
    session_id: str = "",
    wait_seconds: float = 300,
) -> Callable[[str, Mapping[str, Any]], ApprovalOutcome]:
    """An approval callback for an agent loop: ``callback(tool_name, tool_args)``
    returns the ApprovalOutcome of engine.request_approval for this
    channel and session."""

    def callback(tool_name: str, tool_args: Mapping[str, Any]) -> ApprovalOutcome:
        return engine.request_approval(tool_name, tool_args, channel_id=channel_id,
                                       session_id=session_id, wait_seconds=wait_seconds)

    return callback


def _call_body(tool_name: Any, tool_args: Any, channel_id: Any, workspace: Any, scope: Any) -> Dict[str, Any]:
    """The evaluate body of one call; bad arguments are a ToolgateError, so
    they too end in a deny."""
    if not isinstance(tool_name, str) or not tool_name.strip():
        raise ToolgateError("tool_name must be a non-empty string")
    if tool_args is None:
        tool_args = {}
    if not isinstance(tool_args, Mapping):
        raise ToolgateError("tool_args must be a mapping")
    body: Dict[str, Any] = {"tool_name": tool_name, "tool_args": dict(tool_args), "channel_id": channel_id or ""}
    if workspace:
        body["workspace"] = workspace
    if scope is not None:
        if not isinstance(scope, Mapping):
            raise ToolgateError("scope must be a mapping")
        body["scope"] = dict(scope)
    try:
        json.dumps(body)
    except (TypeError, ValueError) as e:
        raise ToolgateError("the call cannot be sent as JSON: %s" % e) from None
    return body


def _permission_result(out: Dict[str, Any]) -> PermissionResult:
    """Reads an evaluate answer; anything but a known level is an error."""
    level = _LEVELS.get(out.get("level"))
    if level is None:
        raise ToolgateError("toolgate answered an unknown level %r" % (out.get("level"),))
    paths = out.get("external_paths")
    return PermissionResult(
        permission=level,
        matched_rule=out.get("matched_rule") if isinstance(out.get("matched_rule"), str) else None,
        reason=out.get("reason") if isinstance(out.get("reason"), str) else None,
        external_paths=[p for p in paths if isinstance(p, str)] if isinstance(paths, list) else None,
    )


def _deny_result(error: str) -> PermissionResult:
    return PermissionResult(permission=PermissionLevel.DENY, matched_rule=ERROR_RULE,
                            reason="toolgate could not decide, so the call is denied: " + error, error=error)


def _outcome(decision: Any, approval: Any, reason: Any) -> ApprovalOutcome:
    """The outcome of a decided call; only an explicit allow approves."""
    approval = approval if isinstance(approval, dict) else {}
    approved = decision == "allow"
    feedback = approval.get("comment") or _status_text(approval) or (reason if isinstance(reason, str) else "")
    return ApprovalOutcome(approved=approved, decision="allow" if approved else "deny", feedback=feedback,
                           approval_id=approval.get("id"), choice=approval.get("choice") or None)


def _status_text(approval: Dict[str, Any]) -> str:
    status = approval.get("status")
    if not status:
        return ""
    by = approval.get("decided_by")
    return "%s by %s" % (status, by) if by else str(status)


def _wait_for(deadline: float) -> int:
    """Whole seconds left until deadline, at most MAX_WAIT_SECONDS."""
    return max(0, min(MAX_WAIT_SECONDS, math.ceil(deadline - time.monotonic())))


def _error_message(e: urllib.error.HTTPError) -> str:
    """toolgate's error message from an error answer, else the status text."""
    try:
        payload = json.loads(e.read(64 << 10).decode("utf-8"))
        message = payload["error"]["message"]
        if isinstance(message, str) and message:
            return message
    except Exception:  # an error answer that is not toolgate's: use the status
        pass
    return str(e.reason or "error")
