"""pi 0.84.2 reads a session whose tool calls were refused (denied, timed out, dismissed) or aborted
while the user was asked, and builds the same context from it.

A refused call is an ordinary ``toolResult`` message (``isError`` true, the refusal as its text,
``details.permission`` saying why), so pi needs nothing new; this test proves it on a session the
agent itself wrote, in process, with the model double and a scripted asker.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from pi_lsp.agent.permissions import Answer
from pi_lsp.llm.double import replies
from pi_lsp.session.session import Session

from .harness import Query, disagreements, session_written_in

# The same check as for checkpoints, collected here again on this module's ``session_file``.
from .test_pi_reads_checkpoints import (  # noqa: F401
    test_pi_reads_the_same_tree_and_rewrites_every_line_to_the_same_bytes,
)


class _Asker:
    def __init__(self, *answers: Answer | None) -> None:
        self.answers = list(answers)

    async def ask(self, question):
        if self.answers:
            return self.answers.pop(0)
        await asyncio.Event().wait()  # never answers: the timeout or an abort ends it
        return None


async def _write_session(workspace: Path) -> Path:
    from tests.agent_harness import AgentHarness

    asker = _Asker(Answer.DENY, None, Answer.ALLOW_FOR_SESSION)
    options = {"trusted": False, "permissions": {"timeoutSeconds": 0.05}}
    agent = AgentHarness(workspace, options=options, asker=asker)
    agent.model.script(
        replies.tool_calls([("c1", "bash", {"command": "rm -rf build"})]),
        replies.text("Not allowed, then."),
        replies.tool_calls(
            [
                ("c2", "write", {"path": "a.txt", "content": "a\n"}),
                ("c3", "write", {"path": "b.txt", "content": "b\n"}),
                ("c4", "write", {"path": "c.txt", "content": "c\n"}),
            ]
        ),
        replies.text("Wrote what I could."),
        replies.tool_calls([("c5", "bash", {"command": "make"})]),  # no answer: timed out
        replies.text("It timed out."),
    )
    try:
        await agent.prompt("clean up")
        await agent.prompt("write the files")
        await agent.prompt("build it")
        assert agent.model.pending == 0
        return agent.runtime.session.path
    finally:
        agent.close()


@pytest.fixture(scope="module")
def session_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return session_written_in(tmp_path_factory, "permissions", _write_session)


def test_the_session_holds_refusals_of_every_kind(session_file):
    session = Session.open(session_file, writable=False)
    decisions = [
        (entry["message"].get("details") or {}).get("permission", {}).get("decision")
        for entry in session.entries
        if entry.type == "message" and entry.role == "toolResult"
    ]
    # c1 denied; c2 dismissed; c3 allowed for the session, c4 then without asking; c5 timed out.
    assert decisions == ["denied", "dismissed", None, None, "timeout"]


def test_pi_builds_the_same_context_at_every_entry(reference_node, session_file):
    session = Session.open(session_file, writable=False)
    queries = [Query("context", session_file.name, ("--leaf", e.id)) for e in session.entries]
    mismatches, _ = disagreements(reference_node, session_file.parent, queries)
    assert mismatches == []
