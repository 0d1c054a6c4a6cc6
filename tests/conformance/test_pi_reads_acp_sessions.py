"""pi 0.84.2 reads a session written through ``pi-lsp acp`` and builds the same context from it.

The session is written by the real ``pi-lsp acp`` process, driven by the ACP SDK's client side
with the scripted model: a tool call, a second turn, ``/navigate`` back with a branch summary, a
new branch, ``/label``, ``/name`` and ``/compact``. pi must see the same tree and leaf, rewrite
every line to the same bytes and build the same context at every entry.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import text_block

from pi_lsp.scripted_llm import replies
from pi_lsp.scripted_llm.server import ScriptedLLM
from pi_lsp.session.session import Session
from tests.e2e.acp.support import acp_agent

from .harness import Query, disagreements, session_written_in

# The same check as for checkpoints, collected here again on this module's ``session_file``.
from .test_pi_reads_checkpoints import (  # noqa: F401
    test_pi_reads_the_same_tree_and_rewrites_every_line_to_the_same_bytes,
)


async def _write_session(workspace: Path) -> Path:
    (workspace / "app.py").write_text("def add(a, b):\n    return a - b\n")
    async with ScriptedLLM() as scripted_llm:
        scripted_llm.enqueue(
            replies.tool_calls([("c1", "read", {"path": "app.py"})]),
            replies.text("add subtracts.", reasoning="Read the operator."),
            replies.text("Second answer."),
            replies.text("The user asked a second question."),  # branch summary
            replies.text("Another way."),
            replies.text("## Goal\nUnderstand add."),  # compaction summary
        )
        small = {"compaction": {"keepRecentTokens": 5, "reserveTokens": 100}}
        async with acp_agent(scripted_llm, workspace, **small) as (connection, _, _):
            session_id = (await connection.new_session(cwd=str(workspace))).session_id

            async def say(text: str) -> None:
                await connection.prompt(session_id=session_id, prompt=[text_block(text)])

            await say("what does add do?")
            await say("second question")
            file = next((workspace / ".pi" / "sessions").glob("*.jsonl"))
            session = Session.open(file, writable=False)
            answer = [e.id for e in session.branch() if e.type == "message"][3]
            session.close()
            await say(f"/navigate {answer} --summarize")
            await say("try another way")
            await say(f"/label {answer} first answer")
            await say("/name acp session")
            await say("/compact")
        assert not scripted_llm._queue, "every scripted reply was used"
    return file


@pytest.fixture(scope="module")
def session_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return session_written_in(tmp_path_factory, "acp", _write_session)


def test_the_session_holds_what_the_test_is_about(session_file):
    kinds = [entry.type for entry in Session.open(session_file, writable=False).entries]
    for kind in ("branch_summary", "compaction", "label", "session_info", "thinking_level_change"):
        assert kind in kinds


def test_pi_builds_the_same_context_at_every_entry(reference_node, session_file):
    session = Session.open(session_file, writable=False)
    queries = [Query("context", session_file.name, ("--leaf", e.id)) for e in session.entries]
    mismatches, _ = disagreements(reference_node, session_file.parent, queries)
    assert len(queries) > 10
    assert mismatches == []
