"""Tool permissions over LSP: the server asks with ``window/showMessageRequest``, the test client
answers as an editor would, and the session file records what happened."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from lsprotocol import types

from pi_lsp.scripted_llm import replies
from tests.e2e.conftest import request

ANSWERS = ["Allow", "Allow for this session", "Deny"]


def tool_results(workspace: Path) -> list[dict]:
    [session] = (workspace / ".pi" / "sessions").glob("*.jsonl")
    lines = [json.loads(line) for line in session.read_text().splitlines()]
    return [
        line["message"]
        for line in lines
        if line.get("type") == "message" and line["message"]["role"] == "toolResult"
    ]


def answering(client, *titles: str) -> list[types.ShowMessageRequestParams]:
    """Answer the next questions with ``titles``, in order; returns the questions asked."""
    asked: list[types.ShowMessageRequestParams] = []
    queue = list(titles)

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def on_question(params: types.ShowMessageRequestParams):
        asked.append(params)
        return types.MessageActionItem(title=queue.pop(0))

    return asked


@pytest.mark.options(trusted=False)
async def test_a_denied_command_does_not_run_in_an_untrusted_workspace(
    client, scripted_llm, workspace
):
    asked = answering(client, "Deny")
    scripted_llm.enqueue(
        replies.tool_calls([("call_1", "bash", {"command": "touch ran.txt"})]),
        replies.text("I could not run it."),
    )
    result = await request(client, "pi/prompt", {"text": "run it"})
    assert result["stopReason"] == "stop"
    assert not (workspace / "ran.txt").exists()
    [question] = asked
    assert [action.title for action in question.actions or []] == ANSWERS
    assert question.type == types.MessageType.Warning
    assert question.message == ("pi wants to run:\ntouch ran.txt\n(the workspace is not trusted)")
    [refusal] = tool_results(workspace)
    assert refusal["isError"] is True
    assert "the user denied it" in refusal["content"][0]["text"]
    assert "the user denied it" in json.dumps(scripted_llm.requests[1]["messages"][-1])


@pytest.mark.options(trusted=False)
async def test_allow_for_this_session_asks_once_and_shows_the_change(
    client, scripted_llm, workspace
):
    asked = answering(client, "Allow for this session", "Allow")
    scripted_llm.enqueue(
        replies.tool_calls([("call_1", "write", {"path": "a.txt", "content": "one\ntwo\n"})]),
        replies.tool_calls(
            [
                (
                    "call_2",
                    "edit",
                    {"path": "app.py", "edits": [{"oldText": "a - b", "newText": "a + b"}]},
                )
            ]
        ),
        replies.tool_calls([("call_3", "write", {"path": "b.txt", "content": "three\n"})]),
        replies.text("Done."),
    )
    await request(client, "pi/prompt", {"text": "write them"})
    assert (workspace / "a.txt").read_text() == "one\ntwo\n"
    assert (workspace / "b.txt").read_text() == "three\n"
    assert "a + b" in (workspace / "app.py").read_text()
    assert [question.message for question in asked] == [
        "pi wants to write:\na.txt\nnew file, 2 lines\n(the workspace is not trusted)",
        "pi wants to edit:\napp.py\n−1 +1 lines\n(the workspace is not trusted)",
    ]
    assert [message["isError"] for message in tool_results(workspace)] == [False, False, False]


@pytest.mark.options(permissions={"timeoutSeconds": 0.5})
async def test_a_write_outside_the_root_unanswered_in_time_is_refused(
    client, scripted_llm, workspace
):
    outside = workspace.parent / "outside.txt"
    withdrawn = asyncio.Event()

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    async def on_question(params: types.ShowMessageRequestParams):
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            withdrawn.set()  # the server's $/cancelRequest reached the editor
            raise

    scripted_llm.enqueue(
        replies.tool_calls([("call_1", "write", {"path": str(outside), "content": "x"})]),
        replies.text("ok"),
    )
    await request(client, "pi/prompt", {"text": "write outside"})
    assert not outside.exists()
    [refusal] = tool_results(workspace)
    assert "no answer within 0.5 seconds" in refusal["content"][0]["text"]
    assert refusal["details"]["permission"]["decision"] == "timeout"
    await asyncio.wait_for(withdrawn.wait(), 5)


@pytest.mark.options(permissions={"bash": "ask"})
async def test_aborting_the_turn_withdraws_the_question(client, events, scripted_llm, workspace):
    asked = asyncio.Event()
    withdrawn = asyncio.Event()

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    async def on_question(params: types.ShowMessageRequestParams):
        asked.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            withdrawn.set()
            raise

    scripted_llm.enqueue(replies.tool_calls([("call_1", "bash", {"command": "touch ran.txt"})]))
    prompt = asyncio.ensure_future(request(client, "pi/prompt", {"text": "run it"}))
    # The server's first turn imports the model client: on a loaded machine that can take a while.
    await events.wait_for("tool_execution_start", timeout=60)
    await asyncio.wait_for(asked.wait(), 10)
    aborted = await request(client, "pi/abort", {})
    result = await asyncio.wait_for(prompt, 15)
    assert aborted["aborted"] is True and result["stopReason"] == "aborted"
    await asyncio.wait_for(withdrawn.wait(), 5)
    assert not (workspace / "ran.txt").exists()
    [aborted_call] = tool_results(workspace)
    assert aborted_call["isError"] is True
