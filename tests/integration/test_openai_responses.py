"""OpenAI's Responses API end to end against the scripted server's ``/v1/responses``: the request
pi's ``openai-responses`` provider sends, reasoning summaries shown as thinking, the encrypted
reasoning item carried to the next turn as it came, tool calls and their results, usage, and
failures classified as on the other wire APIs."""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest

from pi_lsp.llm import direct, openai_responses
from pi_lsp.llm.config import ModelConfig
from pi_lsp.llm.events import Completed, TextDelta, ThinkingDelta
from pi_lsp.llm.failed_messages import (
    auth_error_status,
    is_context_overflow,
    is_retryable_error,
)
from pi_lsp.llm.messages import ToolSpec
from pi_lsp.llm.stream import AssistantStream, CompletionRequest
from pi_lsp.scripted_llm import ScriptedLLM, replies
from tests import scripted_llm_fixtures as fixtures
from tests.builders import user_message

scripted_llm = fixtures.scripted_llm

READ = ToolSpec(
    "read",
    "Read a file",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


def responses_model(server: ScriptedLLM) -> ModelConfig:
    """A ``models.json`` model with ``api: "openai-responses"`` at the scripted server."""
    return ModelConfig(
        model="lab/gpt-5-mini",
        provider="lab",
        model_id="gpt-5-mini",
        api_base=server.base_url,
        api_key="sk-test",
        reasoning=True,
        litellm_model="openai/responses/gpt-5-mini",
        source="models.json",
    )


async def run(request: CompletionRequest) -> tuple[list[Any], dict[str, Any]]:
    events = [event async for event in AssistantStream(request).events()]
    assert isinstance(events[-1], Completed)
    return events[:-1], events[-1].message


@pytest.fixture(autouse=True)
def direct_transport(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(direct.TRANSPORT_ENVIRONMENT_VARIABLE, raising=False)


async def test_the_request_is_pis_and_reasoning_streams_as_thinking(
    scripted_llm: ScriptedLLM,
) -> None:
    model = responses_model(scripted_llm)
    assert openai_responses.serves(model)
    scripted_llm.enqueue(replies.text("It adds.", reasoning="Look at the code.", chunks=3))
    request = CompletionRequest(
        model=model,
        system_prompt="You are a coding agent.",
        messages=[user_message("What does app.py do?")],
        tools=[READ],
        thinking_level="medium",
        max_tokens=500,
        session_id="session-1",
        timeout=10,
    )
    events, message = await run(request)

    [body] = scripted_llm.requests
    assert body["model"] == "gpt-5-mini" and body["stream"] is True and body["store"] is False
    assert body["input"] == [
        {"role": "developer", "content": "You are a coding agent."},
        {"role": "user", "content": [{"type": "input_text", "text": "What does app.py do?"}]},
    ]
    assert body["reasoning"] == {"effort": "medium", "summary": "auto"}
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["max_output_tokens"] == 500
    assert body["prompt_cache_key"] == "session-1"
    assert body["tools"] == [
        {
            "type": "function",
            "name": "read",
            "description": "Read a file",
            "parameters": READ.parameters,
            "strict": False,
        }
    ]
    assert scripted_llm.request_headers[0]["Authorization"] == "Bearer sk-test"

    thinking = "".join(event.text for event in events if isinstance(event, ThinkingDelta))
    text = "".join(event.text for event in events if isinstance(event, TextDelta))
    assert (thinking, text) == ("Look at the code.", "It adds.")
    assert message["stopReason"] == "stop" and message["api"] == "openai-responses"
    reasoning_block, text_block = message["content"]
    assert reasoning_block["thinking"] == "Look at the code."
    item = json.loads(reasoning_block["thinkingSignature"])
    assert item["type"] == "reasoning" and item["encrypted_content"].startswith("scripted-")
    assert text_block == {"type": "text", "text": "It adds."}
    assert message["usage"]["input"] > 0 and message["usage"]["output"] > 0


async def test_the_reasoning_item_and_the_tool_call_go_back_as_they_came(
    scripted_llm: ScriptedLLM,
) -> None:
    model = responses_model(scripted_llm)
    scripted_llm.enqueue(
        replies.tool_calls([("call_1", "read", {"path": "app.py"})], text=None),
        replies.text("Done."),
    )
    first_request = CompletionRequest(
        model=model,
        system_prompt="s",
        messages=[user_message("Read app.py")],
        tools=[READ],
        thinking_level="low",
        timeout=10,
    )
    _, first = await run(first_request)
    assert first["stopReason"] == "toolUse", first
    [call] = [block for block in first["content"] if block["type"] == "toolCall"]
    call_id, _, item_id = call["id"].partition("|")
    assert call_id == "call_1" and item_id.startswith("fc_")
    assert call["arguments"] == {"path": "app.py"}

    result = {
        "role": "toolResult",
        "toolCallId": call["id"],
        "toolName": "read",
        "content": [{"type": "text", "text": "x = 1"}],
        "isError": False,
        "timestamp": 3,
    }
    second_request = attrs.evolve(
        first_request, messages=[user_message("Read app.py"), first, result]
    )
    _, second = await run(second_request)
    assert second["stopReason"] == "stop"
    replayed = scripted_llm.requests[1]["input"]
    assert replayed[-2] == {
        "type": "function_call",
        "call_id": "call_1",
        "name": "read",
        "arguments": '{"path":"app.py"}',
        "id": item_id,
    }
    assert replayed[-1] == {"type": "function_call_output", "call_id": "call_1", "output": "x = 1"}


async def test_the_encrypted_reasoning_is_sent_back_to_the_same_model(
    scripted_llm: ScriptedLLM,
) -> None:
    model = responses_model(scripted_llm)
    scripted_llm.enqueue(replies.text("First.", reasoning="Plan."), replies.text("Second."))
    request = CompletionRequest(
        model=model,
        system_prompt="s",
        messages=[user_message("a")],
        thinking_level="low",
        timeout=10,
    )
    _, first = await run(request)
    await run(attrs.evolve(request, messages=[user_message("a"), first, user_message("b")]))
    replayed = scripted_llm.requests[1]["input"]
    reasoning_items = [item for item in replayed if item.get("type") == "reasoning"]
    assert reasoning_items == [json.loads(first["content"][0]["thinkingSignature"])]
    assert reasoning_items[0]["encrypted_content"].startswith("scripted-encrypted-")


@pytest.mark.parametrize(
    ("reply", "retryable", "auth"),
    [
        (replies.error(429, "Rate limit reached"), True, None),
        (replies.error(401, "Incorrect API key"), False, 401),
        (replies.error(503, "Unavailable"), True, None),
        (replies.mid_stream_error("Half", message="The server had an error"), True, None),
        (replies.context_overflow(), False, None),
    ],
    ids=["429", "401", "503", "mid-stream", "overflow"],
)
async def test_failures_are_classified_as_on_the_other_wire_apis(
    scripted_llm: ScriptedLLM, reply: replies.Reply, retryable: bool, auth: int | None
) -> None:
    scripted_llm.enqueue(reply)
    request = CompletionRequest(
        model=responses_model(scripted_llm),
        system_prompt="s",
        messages=[user_message("a")],
        timeout=10,
    )
    _, message = await run(request)
    assert message["stopReason"] == "error"
    assert is_retryable_error(message) is retryable, message["errorMessage"]
    assert auth_error_status(message) == auth
    assert is_context_overflow(message, 200_000) is (reply.status == 400)


async def test_a_length_stop(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.enqueue(replies.length_stop())
    request = CompletionRequest(
        model=responses_model(scripted_llm),
        system_prompt="s",
        messages=[user_message("a")],
        timeout=10,
    )
    _, message = await run(request)
    assert message["stopReason"] == "length"
