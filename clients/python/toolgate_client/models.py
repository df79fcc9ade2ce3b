"""Result types of the toolgate client.

``PermissionLevel`` and ``PermissionResult`` carry the field names of the
reference engine's (``openjiuwen.harness.security``): ``permission``,
``matched_rule``, ``reason``, ``external_paths`` and the ``is_allowed`` /
``is_denied`` / ``needs_approval`` properties, so code written against the
local engine reads a remote decision unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import List, Optional


class PermissionLevel(str, Enum):
    """The three levels a call can get."""

    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


@dataclass
class PermissionResult:
    """One decision: the level, the rule that decided and why.

    ``error`` is set (and ``permission`` is DENY) when toolgate could not
    decide: the server was unreachable, refused the request or answered
    something unreadable. The client fails closed.
    """

    permission: PermissionLevel
    matched_rule: Optional[str] = None
    reason: Optional[str] = None
    external_paths: Optional[List[str]] = None
    error: Optional[str] = None

    @property
    def is_allowed(self) -> bool:
        return self.permission == PermissionLevel.ALLOW

    @property
    def is_denied(self) -> bool:
        return self.permission == PermissionLevel.DENY

    @property
    def needs_approval(self) -> bool:
        return self.permission == PermissionLevel.ASK


@dataclass(frozen=True)
class ApprovalOutcome:
    """The final answer for a call that may have waited for a person.

    ``approved`` is True only when toolgate answered allow: by policy at
    once, or by a person in the admin pages. Everything else (a person's
    deny, an ask that expired or was not answered within the wait, any
    error) is ``approved=False`` with the reason in ``feedback``.
    """

    approved: bool
    decision: str  # "allow" or "deny"
    feedback: str = ""
    approval_id: Optional[str] = None
    choice: Optional[str] = None  # allow_once, allow_always or deny, when a person answered
    error: Optional[str] = None
