"""toolgate_client: a standard-library client of the toolgate permission service.

    from toolgate_client import RemoteEngine

    engine = RemoteEngine("http://127.0.0.1:8765", token)
    result = engine.check_permission("bash", {"command": "git push"}, channel_id="web")
    if result.needs_approval:
        outcome = engine.request_approval("bash", {"command": "git push"},
                                          channel_id="web", session_id="s1")

Every failure fails closed: a DENY result (or ``approved=False``) whose
``error`` says what went wrong. See RemoteEngine.
"""

from .client import AGENT, RemoteEngine, ToolgateError, make_approval_callback
from .models import ApprovalOutcome, PermissionLevel, PermissionResult

__all__ = [
    "AGENT",
    "ApprovalOutcome",
    "PermissionLevel",
    "PermissionResult",
    "RemoteEngine",
    "ToolgateError",
    "make_approval_callback",
]

__version__ = "0.1.0"
