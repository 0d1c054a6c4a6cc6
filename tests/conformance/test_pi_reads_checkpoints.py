"""pi 0.84.2 reads a session holding file checkpoints (``pi-lsp.checkpoint`` custom entries, placed
between an assistant's tool call and its result) and builds the same context from it.

The session is written by the agent itself (in process, the model double answering): turns whose
``write`` and ``edit`` calls record checkpoints, a ``bash`` call, a navigation with
``restore_files`` to an earlier entry, a new branch from there, and a compaction. pi must see the
same tree and leaf, build the same context at every entry, plan the same compaction at every turn
boundary, and re-serialize every line to the same bytes.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from pi_lsp.checkpoints.records import CHECKPOINT_TYPE
from pi_lsp.llm.double import replies
from pi_lsp.session.session import Session

from .harness import Query, ask_pi, disagreements, session_written_in
from .test_pi_reads_ours import ROUND_TRIP_SCRIPT

SUMMARY = "## Goal\nChange a.txt\n\n## Progress\nEdited it twice."


async def _write_session(workspace: Path) -> Path:
    from tests.agent_harness import AgentHarness

    (workspace / "a.txt").write_text("one\n")
    agent = AgentHarness(workspace, options={"compaction": {"keepRecentTokens": 40}})
    edit = {"path": "a.txt", "edits": [{"oldText": "one", "newText": "two"}]}
    agent.model.script(
        replies.tool_calls(
            [("c1", "edit", edit), ("c2", "write", {"path": "sub/new.txt", "content": "new\n"})]
        ),
        replies.text("Changed a.txt and created sub/new.txt."),
        replies.tool_calls(
            [
                ("c3", "bash", {"command": "echo hi"}),
                ("c4", "write", {"path": "a.txt", "content": "three\n"}),
            ]
        ),
        replies.text("Rewrote a.txt."),
        replies.tool_calls([("c5", "write", {"path": "a.txt", "content": "another way\n"})]),
        replies.text("Took another way."),
        replies.text(SUMMARY),
    )
    try:
        await agent.prompt("change a.txt")
        await agent.prompt("rewrite it")
        session = agent.runtime.session
        second = [e.id for e in session.branch() if e.type == "message" and e.role == "user"][1]
        await agent.services.navigator.navigate(agent.runtime, second, restore_files=True)
        await agent.prompt("try another way")
        await agent.agent.compact(agent.runtime, None)
        assert agent.model.pending == 0
        return session.path
    finally:
        agent.close()


@pytest.fixture(scope="module")
def session_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return session_written_in(tmp_path_factory, "checkpoints", _write_session)


def test_the_session_holds_what_the_test_is_about(session_file):
    session = Session.open(session_file, writable=False)
    kinds = [entry.type for entry in session.entries]
    checkpoints = [e for e in session.entries if e.get("customType") == CHECKPOINT_TYPE]
    assert len(checkpoints) == 4 and "compaction" in kinds
    for checkpoint in checkpoints:  # between the tool call and its result
        parent = session.get_entry(checkpoint.parent_id)
        [child] = session.children(checkpoint.id)
        assert child["message"]["role"] == "toolResult"
        assert parent.type == "message" and parent.role in ("assistant", "toolResult")
    # an overwrite keeps its patch in details (for its tool card): pi must read that too
    overwrites = [
        e["message"]["details"]
        for e in session.entries
        if e.type == "message"
        and e["message"].get("toolName") == "write"
        and not e["message"]["details"]["created"]
    ]
    assert [details["patch"].splitlines()[2:] for details in overwrites] == [
        ["@@ -1,1 +1,1 @@", "-two", "+three"],
        ["@@ -1,1 +1,1 @@", "-two", "+another way"],
    ], overwrites


def test_pi_reads_the_same_tree_and_rewrites_every_line_to_the_same_bytes(
    reference_node, session_file
):
    [answer] = ask_pi(reference_node, [["tree", str(session_file)]])
    ours = Session.open(session_file, writable=False)
    assert answer["ok"], answer
    assert answer["result"]["leafId"] == ours.leaf_id
    assert [(e["id"], e["parentId"], e["type"]) for e in answer["result"]["entries"]] == [
        (entry.id, entry.parent_id, entry.type) for entry in ours.entries
    ]
    result = subprocess.run(
        [str(reference_node), "-e", ROUND_TRIP_SCRIPT, str(session_file)],
        capture_output=True,
        check=True,
    )
    assert json.loads(result.stdout) == []


def test_pi_builds_the_same_context_and_compaction_plans(reference_node, session_file):
    session = Session.open(session_file, writable=False)
    turn_ends = [
        entry.id
        for entry in session.entries
        if entry.type == "message"
        and (entry.role == "user" or entry["message"].get("stopReason") == "stop")
    ]
    queries = [Query("context", session_file.name, ("--leaf", e.id)) for e in session.entries]
    queries += [
        Query("plan-compaction", session_file.name, ("--leaf", leaf, "--keep-recent-tokens", keep))
        for leaf in turn_ends
        for keep in ("1", "60")
    ]
    mismatches, answers = disagreements(reference_node, session_file.parent, queries)
    assert len(queries) > 25
    assert mismatches == []
    plans = [a["result"] for a in answers[len(session.entries) :] if a["result"] is not None]
    assert plans, "no compaction plan was compared"
