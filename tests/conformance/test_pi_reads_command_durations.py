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

from .harness import prompted_session, session_written_in

# The same checks as for checkpoints and refusals, collected here again on this module's
# ``session_file``: the same tree, every line rewritten to the same bytes, the same context.
from .test_pi_reads_checkpoints import (  # noqa: F401
    test_pi_reads_the_same_tree_and_rewrites_every_line_to_the_same_bytes,
)
from .test_pi_reads_permission_refusals import (  # noqa: F401
    test_pi_builds_the_same_context_at_every_entry,
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
    return await prompted_session(agent, "build it", "test it")


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
