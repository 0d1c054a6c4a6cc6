"""pi 0.84.2 reads a session whose tool calls were refused (denied, timed out, dismissed) or aborted
while the user was asked, and builds the same context from it.

A refused call is an ordinary ``toolResult`` message (``isError`` true, the refusal as its text,
``details.permission`` saying why), so pi needs nothing new; this test proves it on a session the
agent itself wrote, in process, with the model double and a scripted asker.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest

from pi_lsp.agent.permissions import Answer
from pi_lsp.llm.double import replies
from pi_lsp.session.session import Session

from .harness import REFERENCE_SCRIPT, Query, run_node_script, run_our_cli_in_process
from .test_pi_reads_ours import ROUND_TRIP_SCRIPT


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
    workspace = tmp_path_factory.mktemp("permissions") / "project"
    workspace.mkdir()
    return asyncio.run(_write_session(workspace))


def ask_pi(node: Path, queries: list[list[str]]) -> list[dict]:
    output = run_node_script(
        node, REFERENCE_SCRIPT, ["batch", "-"], stdin=json.dumps(queries).encode()
    )
    return json.loads(output)


def test_the_session_holds_refusals_of_every_kind(session_file):
    session = Session.open(session_file, writable=False)
    decisions = [
        (entry["message"].get("details") or {}).get("permission", {}).get("decision")
        for entry in session.entries
        if entry.type == "message" and entry.role == "toolResult"
    ]
    # c1 denied; c2 dismissed; c3 allowed for the session, c4 then without asking; c5 timed out.
    assert decisions == ["denied", "dismissed", None, None, "timeout"]


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


def test_pi_builds_the_same_context_at_every_entry(reference_node, session_file):
    session = Session.open(session_file, writable=False)
    queries = [Query("context", session_file.name, ("--leaf", e.id)) for e in session.entries]
    answers = ask_pi(reference_node, [q.reference_argv(session_file.parent) for q in queries])
    mismatches = [
        query.describe()
        for query, answer in zip(queries, answers, strict=True)
        if not (
            answer["ok"]
            and (ours := run_our_cli_in_process(query.our_argv(session_file.parent))).ok
            and answer["result"] == ours.value
        )
    ]
    assert mismatches == []
