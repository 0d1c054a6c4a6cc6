"""Compaction cuts where pi 0.84.2 and pi 1.6 cut when the user's editor file operations are on
the path.

The agent records what the user opened and saved in the editor as a ``pi-lsp.editor-file-ops``
custom entry just before the next prompt's user message. pi's ``findCutPoint`` moves a cut back
over entries that add nothing to the context, so a cut on that user message lands on the custom
entry instead, and since a custom entry does not start a turn, pi plans a split turn: the turn
before it is summarized as the turn's prefix. pi-lsp plans the same, to the entry.

The session is written by the agent itself (in process, the model double answering), with editor
file operations noted before every prompt; plans at every turn end and many kept-token budgets
are compared with pi 0.84.2's whole plan and with pi 1.6.0's cut.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_lsp.compaction.file_ops import EDITOR_FILE_OPS_TYPE
from pi_lsp.llm.double import replies
from pi_lsp.session.session import Session

from .harness import (
    PI16_DIR,
    Query,
    ask_pi,
    disagreements,
    run_our_cli_in_process,
    session_written_in,
)

KEEP_RECENT_TOKENS = ("1", "20", "40", "60", "80", "120", "160", "240")


async def _write_session(workspace: Path) -> Path:
    from tests.agent_harness import AgentHarness

    (workspace / "notes.md").write_text("notes\n")
    (workspace / "app.py").write_text("print('app')\n")
    agent = AgentHarness(workspace)
    agent.model.script(
        replies.tool_calls([("c1", "read", {"path": "notes.md"})]),
        replies.text("The notes say: notes. What should change?"),
        replies.text("I would rename the print to a log call, as you did in the editor."),
        replies.tool_calls([("c2", "write", {"path": "app.py", "content": "log('app')\n"})]),
        replies.text("Done: app.py logs now."),
    )
    try:
        for prompt, opened, saved in (
            ("read the notes", "notes.md", None),
            ("what about app.py?", "app.py", "app.py"),
            ("write it then", "notes.md", "notes.md"),
        ):
            agent.agent.note_editor_file_op(workspace / opened, "read")
            if saved:
                agent.agent.note_editor_file_op(workspace / saved, "modified")
            await agent.prompt(prompt)
        assert agent.model.pending == 0
        return agent.runtime.session.path
    finally:
        agent.close()


@pytest.fixture(scope="module")
def session_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return session_written_in(tmp_path_factory, "editor-file-ops", _write_session)


def editor_records(session: Session) -> list[str]:
    return [
        entry.id for entry in session.entries if entry.get("customType") == EDITOR_FILE_OPS_TYPE
    ]


def plan_queries(session_file: Path) -> list[Query]:
    session = Session.open(session_file, writable=False)
    turn_ends = [
        entry.id
        for entry in session.entries
        if entry.type == "message" and entry["message"].get("stopReason") == "stop"
    ]
    return [
        Query("plan-compaction", session_file.name, ("--leaf", leaf, "--keep-recent-tokens", keep))
        for leaf in turn_ends
        for keep in KEEP_RECENT_TOKENS
    ]


def test_each_editor_record_sits_right_before_a_user_message(session_file):
    session = Session.open(session_file, writable=False)
    records = editor_records(session)
    assert len(records) == 3
    for record in records:
        [child] = session.children(record)
        assert child.type == "message" and child.role == "user"


def test_compaction_plans_match_pi_where_the_cut_meets_an_editor_record(
    reference_node, session_file
):
    queries = plan_queries(session_file)
    mismatches, answers = disagreements(reference_node, session_file.parent, queries)
    assert mismatches == []
    records = set(editor_records(Session.open(session_file, writable=False)))
    on_records = [
        answer["result"]
        for answer in answers
        if answer["result"] and answer["result"]["firstKeptEntryId"] in records
    ]
    # pi cuts on the record, not on the user message after it, and calls it a split turn.
    assert on_records and all(plan["isSplitTurn"] for plan in on_records)
    assert all(plan["turnPrefixMessages"] for plan in on_records)


def test_compaction_cuts_match_pi16(reference_node, session_file):
    queries = plan_queries(session_file)
    answers = ask_pi(
        reference_node, [query.reference_argv(session_file.parent) for query in queries], PI16_DIR
    )
    cut = ("firstKeptEntryId", "isSplitTurn", "messagesToSummarize", "turnPrefixMessages")
    records = set(editor_records(Session.open(session_file, writable=False)))
    compared_on_records = 0
    for query, answer in zip(queries, answers, strict=True):
        ours = run_our_cli_in_process(query.our_argv(session_file.parent))
        assert answer["ok"] and ours.ok, (query.describe(), answer, ours)
        theirs = answer["result"] and {field: answer["result"][field] for field in cut}
        mine = ours.value and {field: ours.value[field] for field in cut}
        assert mine == theirs, query.describe()
        compared_on_records += bool(theirs and theirs["firstKeptEntryId"] in records)
    assert compared_on_records
