"""pi 0.84.2 reads a session whose ``bash`` results record how long the command ran
(``details.durationMs``, which replayed tool cards show) and builds the same context from it.

pi reads only the ``details`` fields its own bash tool writes (``truncation``, ``fullOutputPath``)
and never sends ``details`` to the model, so the extra field changes nothing for it; this test
proves it on a session the agent itself wrote, in process, with the model double.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_lsp.llm.double import replies
from pi_lsp.session.session import Session

from .harness import Query, disagreements, session_written_in

# The same check as for checkpoints, collected here again on this module's ``session_file``.
from .test_pi_reads_checkpoints import (  # noqa: F401
    test_pi_reads_the_same_tree_and_rewrites_every_line_to_the_same_bytes,
)


async def _write_session(workspace: Path) -> Path:
    from tests.agent_harness import AgentHarness

    agent = AgentHarness(workspace)
    agent.model.script(
        replies.tool_calls([("c1", "bash", {"command": "echo built"})]),
        replies.text("Built."),
        replies.tool_calls([("c2", "bash", {"command": "echo failing; exit 3"})]),
        replies.text("The tests fail."),
    )
    try:
        await agent.prompt("build it")
        await agent.prompt("test it")
        assert agent.model.pending == 0
        return agent.runtime.session.path
    finally:
        agent.close()


@pytest.fixture(scope="module")
def session_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return session_written_in(tmp_path_factory, "durations", _write_session)


def test_the_session_records_each_commands_duration(session_file):
    session = Session.open(session_file, writable=False)
    details = [
        entry["message"]["details"]
        for entry in session.entries
        if entry.type == "message" and entry.role == "toolResult"
    ]
    assert [detail["exitCode"] for detail in details] == [0, 3]
    assert all(isinstance(detail["durationMs"], int) for detail in details)


def test_pi_builds_the_same_context_at_every_entry(reference_node, session_file):
    session = Session.open(session_file, writable=False)
    queries = [Query("context", session_file.name, ("--leaf", e.id)) for e in session.entries]
    mismatches, _ = disagreements(reference_node, session_file.parent, queries)
    assert mismatches == []
