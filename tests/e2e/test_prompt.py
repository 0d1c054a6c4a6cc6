"""``pi/prompt`` end to end: the real server, the real litellm client, the scripted model."""

from __future__ import annotations

import json

import pytest

from pi_lsp.scripted_llm import replies
from tests.e2e.conftest import request
from tests.scripted_llm_fixtures import read_then_edit_app


async def test_a_prompt_streams_events_and_persists_the_turn(
    client, events, scripted_llm, workspace
):
    scripted_llm.enqueue(replies.text("Hello there, friend.", chunks=5))
    result = await request(client, "pi/prompt", {"text": "Say hello"})
    assert result["stopReason"] == "stop" and result["contextWindow"] > 0
    types = events.types()
    assert types[0] == "agent_start" and "text_delta" in types and types[-1] == "tree_changed"
    assert types.index("agent_end") < len(types) - 1
    assert [n["seq"] for n in events.notifications] == list(range(1, len(events.notifications) + 1))
    text = "".join(event["delta"] for event in events.events() if event["type"] == "text_delta")
    assert text == "Hello there, friend."
    [session_file] = (workspace / ".pi" / "sessions").glob("*.jsonl")
    roles = [
        json.loads(line).get("message", {}).get("role")
        for line in session_file.read_text().splitlines()
    ]
    assert roles[-2:] == ["user", "assistant"]
    sent = scripted_llm.requests[0]
    assert sent["model"] == "scripted" and sent["messages"][0]["role"] == "system"
    assert "Always answer in English." in sent["messages"][0]["content"]
    assert (
        sent["messages"][-1]["content"][0]["text"] == "Say hello"
        or sent["messages"][-1]["content"] == "Say hello"
    )


async def test_tool_calls_run_and_their_results_go_back_to_the_model(
    client, events, scripted_llm, workspace
):
    scripted_llm.enqueue(*read_then_edit_app("a - b", "a + b", "Fixed the bug."))
    result = await request(client, "pi/prompt", {"text": "Fix add()"})
    assert result["stopReason"] == "stop"
    assert (workspace / "app.py").read_text() == "def add(a, b):\n    return a + b\n"
    starts = [event for event in events.events() if event["type"] == "tool_execution_start"]
    assert [event["name"] for event in starts] == ["read", "edit"]
    ends = [event for event in events.events() if event["type"] == "tool_execution_end"]
    assert [event["isError"] for event in ends] == [False, False]
    second_request_messages = scripted_llm.requests[1]["messages"]
    tool_message = second_request_messages[-1]
    assert tool_message["role"] == "tool" and "return a - b" in json.dumps(tool_message["content"])


async def test_invalid_params_name_the_field(client):
    with pytest.raises(Exception) as raised:
        await request(client, "pi/prompt", {"text": 42})
    assert "params.text" in str(raised.value)
    with pytest.raises(Exception) as raised:
        await request(client, "pi/navigate", {"targetId": "nope"})
    assert "entry nope not found" in str(raised.value)
