"""Tests of toolgate_client against a running toolgate server.

They need TOOLGATE_URL and TOOLGATE_TOKEN (an admin token: the tests also
answer approvals) of a server whose permissions section is POLICY below;
integration/python_client_test.go starts one and runs
``python3 -m unittest discover clients/python/tests``. Without the two
variables every test is skipped.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
import unittest
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from toolgate_client import (  # noqa: E402
    AGENT,
    PermissionLevel,
    RemoteEngine,
    make_approval_callback,
)
from toolgate_client.client import ERROR_RULE  # noqa: E402

URL = os.environ.get("TOOLGATE_URL", "")
TOKEN = os.environ.get("TOOLGATE_TOKEN", "")

# POLICY is the permissions section the server must have.
POLICY = """permissions:
  enabled: true
  schema: tiered_policy
  tools:
    bash: ask
    read_file: allow
  rules:
    - {id: ls_ok, tools: [bash], pattern: "ls *", action: allow}
    - {id: no_shred, tools: [bash], pattern: "shred *", action: deny}
  external_directory:
    "*": ask
"""


def admin(method, path, body=None):
    """A request with the admin token; the decoded JSON answer."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(URL + path, data=data, method=method)
    req.add_header("Authorization", "Bearer " + TOKEN)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


def answer_when_asked(session, choice, comment=""):
    """Starts a thread that answers the first pending approval of a session
    as an approver would in the browser; join it to get its error, if any."""
    errors = []

    def run():
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            pending = admin("GET", "/api/v1/approvals?status=pending")
            items = pending.get("approvals", pending) if isinstance(pending, dict) else pending
            for a in items:
                if a["request"]["session_id"] == session:
                    admin("POST", "/api/v1/approvals/%s/decision" % a["id"], {"choice": choice, "comment": comment})
                    return
            time.sleep(0.05)
        errors.append("no pending approval for session %s within 15s" % session)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.errors = errors
    return t


def closed_port():
    """A loopback port nothing listens on."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@unittest.skipUnless(URL and TOKEN, "set TOOLGATE_URL and TOOLGATE_TOKEN to run against a server")
class CheckPermissionTest(unittest.TestCase):
    def setUp(self):
        self.engine = RemoteEngine(URL, TOKEN, timeout=10)

    def test_levels_and_reference_fields(self):
        cases = [
            ("allowed by a rule", "bash", {"command": "ls -la"}, PermissionLevel.ALLOW, "tiered_policy:rules:rules[ls_ok]"),
            ("denied by a rule", "bash", {"command": "shred secrets.txt"}, PermissionLevel.DENY, "tiered_policy:rules:deny:rules[no_shred]"),
            ("asked by the tool level", "bash", {"command": "make deploy"}, PermissionLevel.ASK, "tools.bash"),
            ("allowed path tool", "read_file", {"path": "notes.txt"}, PermissionLevel.ALLOW, "tools.read_file"),
        ]
        for note, tool, args, level, rule in cases:
            with self.subTest(note):
                r = self.engine.check_permission(tool, args, channel_id="web")
                self.assertEqual(r.permission, level)
                self.assertEqual(r.matched_rule, rule)
                self.assertTrue(r.reason)
                self.assertIsNone(r.error)
                self.assertEqual(r.is_allowed, level == PermissionLevel.ALLOW)
                self.assertEqual(r.is_denied, level == PermissionLevel.DENY)
                self.assertEqual(r.needs_approval, level == PermissionLevel.ASK)

    def test_external_paths(self):
        r = self.engine.check_permission("read_file", {"path": "/etc/hostname"}, channel_id="web")
        self.assertEqual(r.permission, PermissionLevel.ASK)
        self.assertEqual(r.external_paths, ["/etc/hostname"])
        self.assertIn("external_directory", r.matched_rule)

    def test_persona_turns_ask_into_deny(self):
        # A digital persona (both flags) in an IM group chat: never waits for a person.
        scope = {"avatar_mode": True, "group_digital_avatar": True, "principal_user_id": "u1"}
        r = self.engine.check_permission("bash", {"command": "make deploy"}, channel_id="feishu", scope=scope)
        self.assertEqual(r.permission, PermissionLevel.DENY)
        self.assertTrue(r.reason.startswith("[PERMISSION_DENIED] "), r.reason)

    def test_scope_without_group_flag_is_ordinary(self):
        scope = {"avatar_mode": True, "group_digital_avatar": False, "principal_user_id": "u1"}
        r = self.engine.check_permission("bash", {"command": "make deploy"}, channel_id="web", scope=scope)
        self.assertEqual(r.permission, PermissionLevel.ASK)

    def test_async_variant(self):
        import asyncio

        r = asyncio.run(self.engine.acheck_permission("bash", {"command": "ls"}, channel_id="web"))
        self.assertTrue(r.is_allowed)


@unittest.skipUnless(URL and TOKEN, "set TOOLGATE_URL and TOOLGATE_TOKEN to run against a server")
class FailClosedTest(unittest.TestCase):
    def assert_denied(self, r, want_in_error):
        self.assertEqual(r.permission, PermissionLevel.DENY)
        self.assertEqual(r.matched_rule, ERROR_RULE)
        self.assertIsNotNone(r.error)
        self.assertIn(want_in_error, r.error)

    def test_wrong_token(self):
        r = RemoteEngine(URL, "not-a-token").check_permission("bash", {"command": "ls -la"})
        self.assert_denied(r, "401")

    def test_server_unreachable(self):
        r = RemoteEngine("http://127.0.0.1:%d" % closed_port(), TOKEN, timeout=2).check_permission("bash", {"command": "ls"})
        self.assert_denied(r, "could not be reached")

    def test_bad_request_names_the_field(self):
        r = RemoteEngine(URL, TOKEN).check_permission("bash", {"command": "ls"}, scope={"avatar_mode": "yes"})
        self.assert_denied(r, "400")

    def test_bad_arguments_are_denied_not_raised(self):
        engine = RemoteEngine(URL, TOKEN)
        self.assert_denied(engine.check_permission("", {"command": "ls"}), "tool_name")
        self.assert_denied(engine.check_permission("bash", ["ls"]), "tool_args")
        self.assert_denied(engine.check_permission("bash", {"f": object()}), "JSON")

    def test_token_is_not_shown(self):
        engine = RemoteEngine(URL, TOKEN)
        self.assertNotIn(TOKEN, repr(engine))
        r = RemoteEngine("http://127.0.0.1:%d" % closed_port(), TOKEN, timeout=2).check_permission("bash", {"command": "ls"})
        self.assertNotIn(TOKEN, r.reason)

    def test_bad_base_url_raises(self):
        for bad in ["", "127.0.0.1:8765", "ftp://host", "http://user:pw@host:1", "http://host/?x=1"]:
            with self.subTest(bad):
                with self.assertRaises(ValueError):
                    RemoteEngine(bad, TOKEN)

    def test_approval_fails_closed(self):
        outcome = RemoteEngine("http://127.0.0.1:%d" % closed_port(), TOKEN, timeout=2).request_approval(
            "bash", {"command": "make deploy"}, wait_seconds=1)
        self.assertFalse(outcome.approved)
        self.assertEqual(outcome.decision, "deny")
        self.assertIn("could not be reached", outcome.error)


@unittest.skipUnless(URL and TOKEN, "set TOOLGATE_URL and TOOLGATE_TOKEN to run against a server")
class ApprovalTest(unittest.TestCase):
    def setUp(self):
        self.engine = RemoteEngine(URL, TOKEN, timeout=10)
        self.session = "py-" + uuid.uuid4().hex

    def test_allow_and_deny_answer_at_once(self):
        ok = self.engine.request_approval("bash", {"command": "ls -la"}, session_id=self.session)
        self.assertTrue(ok.approved)
        self.assertIsNone(ok.approval_id)
        no = self.engine.request_approval("bash", {"command": "shred x"}, session_id=self.session)
        self.assertFalse(no.approved)
        self.assertEqual(no.decision, "deny")
        self.assertIsNone(no.approval_id)

    def test_person_allows(self):
        approver = answer_when_asked(self.session, "allow_once", "looks fine")
        callback = make_approval_callback(self.engine, channel_id="web", session_id=self.session, wait_seconds=20)
        outcome = callback("bash", {"command": "make release-%s" % self.session})
        approver.join()
        self.assertEqual(approver.errors, [])
        self.assertTrue(outcome.approved)
        self.assertEqual(outcome.choice, "allow_once")
        self.assertEqual(outcome.feedback, "looks fine")
        self.assertTrue(outcome.approval_id)

    def test_person_denies(self):
        approver = answer_when_asked(self.session, "deny")
        outcome = self.engine.request_approval("bash", {"command": "make drop-%s" % self.session},
                                               session_id=self.session, wait_seconds=20)
        approver.join()
        self.assertEqual(approver.errors, [])
        self.assertFalse(outcome.approved)
        self.assertEqual(outcome.decision, "deny")
        self.assertEqual(outcome.choice, "deny")

    def test_no_answer_in_time_is_deny(self):
        outcome = self.engine.request_approval("bash", {"command": "make wait-%s" % self.session},
                                               session_id=self.session, wait_seconds=1)
        self.assertFalse(outcome.approved)
        self.assertTrue(outcome.approval_id)
        self.assertIn("no answer", outcome.feedback)


@unittest.skipUnless(URL and TOKEN, "set TOOLGATE_URL and TOOLGATE_TOKEN to run against a server")
class DecisionLogTest(unittest.TestCase):
    def test_calls_are_logged_as_jiuwenswarm_with_their_session(self):
        session = "py-log-" + uuid.uuid4().hex
        engine = RemoteEngine(URL, TOKEN)
        outcome = engine.request_approval("bash", {"command": "ls -la"}, session_id=session)
        self.assertTrue(outcome.approved)
        query = urllib.parse.urlencode({"agent": AGENT, "session": session})
        deadline = time.monotonic() + 10
        while True:
            page = admin("GET", "/api/v1/decisions?" + query)["decisions"]
            if page or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        self.assertEqual(len(page), 1, page)
        self.assertEqual(page[0]["agent"], "jiuwenswarm")
        self.assertEqual(page[0]["session_id"], session)
        self.assertEqual(page[0]["source"], "check")


if __name__ == "__main__":
    unittest.main()
