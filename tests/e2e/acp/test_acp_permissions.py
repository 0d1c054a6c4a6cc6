"""Tool permissions over ACP, end to end: ``session/request_permission`` answered by the SDK's
client side, in front of the real ``pi-lsp acp`` process and the scripted model.

One warm process serves every test (each on a workspace of its own); its ``permissions`` setting
asks before ``bash`` and ``write``."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import pytest_asyncio
from acp import text_block
from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    RequestPermissionResponse,
    ToolCallProgress,
    ToolCallStart,
)

from pi_lsp.scripted_llm import replies
from tests.e2e.acp.support import RecordingClient, acp_agent, saved_tool_results

pytestmark = pytest.mark.asyncio(loop_scope="module")

CANCEL = "cancel"
"""An answer of the test client: send ``session/cancel``, then answer ``cancelled`` (ACP's rule)."""
CANCELLED_ONLY = "cancelled-only"
"""An answer of the test client: ``cancelled`` without a ``session/cancel``."""


class AnsweringClient(RecordingClient):
    """A client that answers each permission question with the next of ``answers`` (an option
    id, or ``CANCEL``), recording the questions."""

    def __init__(self) -> None:
        super().__init__()
        self.answers: list[str] = []
        self.questions: list[tuple[str, Any, list[Any]]] = []
        self.connection: Any = None
        self.updates_before_question: list[int] = []

    def on_connect(self, connection: Any) -> None:
        self.connection = connection

    def reset(self) -> None:
        super().reset()
        self.questions.clear()

    def check_nothing_left(self) -> None:
        assert not self.answers, "an answer was left for the next test"

    async def request_permission(self, options, session_id, tool_call, **kwargs: Any):
        self.questions.append((session_id, tool_call, options))
        self.updates_before_question.append(len(self.updates))
        answer = self.answers.pop(0)
        if answer == CANCEL:
            await self.connection.cancel(session_id=session_id)
            await asyncio.sleep(0.2)  # the turn is cancelled by the time the answer arrives
        if answer in (CANCEL, CANCELLED_ONLY):
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=answer)
        )


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def warm(scripted_llm, tmp_path_factory):
    client = AnsweringClient()
    permissions = {"bash": "ask", "write": "ask"}
    async with acp_agent(
        scripted_llm, tmp_path_factory.mktemp("acp-permissions"), client, permissions=permissions
    ) as (connection, _, _):
        yield connection, client


async def test_allow_once_runs_the_call_and_asks_again_next_time(scripted_llm, workspace, agent):
    connection, client = agent
    scripted_llm.enqueue(
        replies.tool_calls([("call-1", "bash", {"command": "echo first > one.txt"})]),
        replies.tool_calls([("call-2", "bash", {"command": "echo first > one.txt"})]),
        replies.text("Done."),
    )
    client.answers[:] = ["allow_once", "allow_once"]
    session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
    answer = await connection.prompt(session_id=session.session_id, prompt=[text_block("go")])
    assert answer.stop_reason == "end_turn"
    assert len(client.questions) == 2, "allow once must not be remembered"
    asked_in, tool_call, options = client.questions[0]
    assert asked_in == session.session_id
    assert [(option.option_id, option.kind) for option in options] == [
        ("allow_once", "allow_once"),
        ("allow_always", "allow_always"),
        ("reject", "reject_once"),
    ]
    assert (tool_call.tool_call_id, tool_call.kind, tool_call.status) == (
        "call-1",
        "execute",
        "pending",
    )
    assert tool_call.title == "bash echo first > one.txt"
    assert tool_call.raw_input == {"command": "echo first > one.txt"}
    assert "the permissions setting asks" in tool_call.content[-1].content.text
    # The client had the tool call itself before the question about it.
    shown = client.updates[: client.updates_before_question[0]]
    assert any(isinstance(update, ToolCallStart) for _, update in shown)
    assert (workspace / "one.txt").read_text() == "first\n"
    assert [result["isError"] for result in saved_tool_results(workspace)] == [False, False]


async def test_allow_for_the_session_is_remembered_for_that_session_only(
    scripted_llm, workspace, agent
):
    connection, client = agent
    call = ("bash", {"command": "echo again >> log.txt"})
    scripted_llm.enqueue(
        replies.tool_calls([("call-1", *call)]),
        replies.tool_calls([("call-2", *call)]),
        replies.text("Twice."),
        replies.tool_calls([("call-3", *call)]),
        replies.text("Once more, in another session."),
    )
    client.answers[:] = ["allow_always", "reject"]
    first = await connection.new_session(cwd=str(workspace), mcp_servers=[])
    await connection.prompt(session_id=first.session_id, prompt=[text_block("twice")])
    assert len(client.questions) == 1
    assert (workspace / "log.txt").read_text() == "again\nagain\n"
    second = await connection.new_session(cwd=str(workspace), mcp_servers=[])
    await connection.prompt(session_id=second.session_id, prompt=[text_block("again")])
    assert [question[0] for question in client.questions] == [
        first.session_id,
        second.session_id,
    ]
    assert (workspace / "log.txt").read_text() == "again\nagain\n"


async def test_a_rejected_write_shows_its_diff_and_nothing_is_written(
    scripted_llm, workspace, agent
):
    connection, client = agent
    new_text = "def add(a, b):\n    return a + b\n"
    scripted_llm.enqueue(
        replies.tool_calls([("call-1", "write", {"path": "app.py", "content": new_text})]),
        replies.text("Understood, I left it."),
    )
    client.answers[:] = ["reject"]
    session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
    answer = await connection.prompt(session_id=session.session_id, prompt=[text_block("fix")])
    assert answer.stop_reason == "end_turn"
    (_, tool_call, _) = client.questions[0]
    diff = tool_call.content[0]
    assert (diff.type, diff.path) == ("diff", str(workspace / "app.py"))
    assert (diff.old_text, diff.new_text) == ("def add(a, b):\n    return a - b\n", new_text)
    assert "overwrites the file: −1 +1 lines" in tool_call.content[1].content.text
    assert (workspace / "app.py").read_text() == "def add(a, b):\n    return a - b\n"
    final = [u for u in client.of_type(ToolCallProgress) if u.tool_call_id == "call-1"][-1]
    assert final.status == "failed"
    assert "the user denied it" in final.content[-1].content.text  # after the diff it proposed
    (result,) = saved_tool_results(workspace)
    assert result["isError"] is True and "Not run" in result["content"][0]["text"]
    sent = json.dumps(scripted_llm.requests[-1]["messages"])
    assert "the user denied it" in sent, "the model is told the call was refused"


@pytest.mark.parametrize("send_cancel", [True, False], ids=["session-cancel", "cancelled-only"])
async def test_cancel_while_asking_withdraws_the_question_and_ends_the_turn(
    scripted_llm, workspace, agent, send_cancel
):
    connection, client = agent
    scripted_llm.enqueue(
        replies.tool_calls([("call-1", "bash", {"command": "touch ran.txt"})], text="Running.")
    )
    requests_before = len(scripted_llm.requests)
    client.answers[:] = [CANCEL if send_cancel else CANCELLED_ONLY]
    session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
    answer = await asyncio.wait_for(
        connection.prompt(session_id=session.session_id, prompt=[text_block("touch it")]), 30
    )
    assert answer.stop_reason == "cancelled"
    assert len(client.questions) == 1
    assert not (workspace / "ran.txt").exists()
    assert len(scripted_llm.requests) == requests_before + 1, "the turn went on after cancel"
    (result,) = saved_tool_results(workspace)
    assert result["isError"] is True
    final = [u for u in client.of_type(ToolCallProgress) if u.tool_call_id == "call-1"][-1]
    assert final.status == "failed"
