"""What a turn appends has the shape ``session/message_types.py`` declares: every required key,
no key the types do not know, and pi's key order (JSON.stringify writes keys in insertion order,
so the order is part of the bytes pi reads)."""

from __future__ import annotations

import pytest

from pi_lsp.llm.double import replies
from pi_lsp.session.message_types import (
    AssistantMessage,
    CustomMessage,
    ToolResultMessage,
    UserMessage,
)

DECLARED = {
    "user": UserMessage,
    "assistant": AssistantMessage,
    "toolResult": ToolResultMessage,
    "custom": CustomMessage,
}


def assert_declared_shape(message: dict) -> None:
    declared = DECLARED[message["role"]]
    keys = list(declared.__annotations__)
    assert declared.__required_keys__ <= set(message), message
    assert set(message) <= set(keys), f"keys the types do not declare: {set(message) - set(keys)}"
    assert list(message) == [key for key in keys if key in message], "not pi's key order"


async def test_a_turn_with_a_tool_round_appends_messages_of_the_declared_shape(agent):
    agent.model.script(replies.tool_calls([("call-1", "read", {"path": "app.py"})]))
    agent.model.script(replies.text("Done."))
    await agent.prompt("read app.py")
    messages = agent.messages()
    assert [message["role"] for message in messages] == [
        "user",
        "assistant",
        "toolResult",
        "assistant",
    ]
    for message in messages:
        assert_declared_shape(message)
    assert "details" in messages[2]  # read's details: the shape with its optional key


def test_a_message_out_of_order_is_caught():
    misordered = {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "read",
        "content": [],
        "isError": False,
        "timestamp": 1,
        "details": {},
    }
    with pytest.raises(AssertionError, match="key order"):
        assert_declared_shape(misordered)
