"""Gemini's streaming ``generateContent`` end to end against the scripted server: the request pi's
``google-generative-ai`` provider sends, thoughts shown as thinking, thought signatures carried
back with the same model's next turn (on the thinking and on the function call), tool results as
``functionResponse`` parts, usage, and failures classified as on the other wire APIs."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from pi_lsp.llm import direct, google_generative_ai
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
from pi_lsp.scripted_llm.gemini import THOUGHT_SIGNATURE
from tests import scripted_llm_fixtures as fixtures
from tests.builders import user_message

scripted_llm = fixtures.scripted_llm

READ = ToolSpec(
    "read",
    "Read a file",
    {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    },
)
PIXEL = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAC"
    "hwGA60e6kgAAAABJRU5ErkJggg=="
)


def gemini_model(server: ScriptedLLM, model_id: str = "gemini-2.5-flash") -> ModelConfig:
    return ModelConfig(
        model=f"gemini/{model_id}",
        provider="google",
        model_id=model_id,
        api_base=server.gemini_url,
        api_key="gemini-key",
        reasoning=True,
    )


async def run(request: CompletionRequest) -> tuple[list[Any], dict[str, Any]]:
    events = [event async for event in AssistantStream(request).events()]
    assert isinstance(events[-1], Completed)
    return events[:-1], events[-1].message


@pytest.fixture(autouse=True)
def direct_transport(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(direct.TRANSPORT_ENVIRONMENT_VARIABLE, raising=False)


async def test_the_request_and_thoughts_streamed_as_thinking(scripted_llm: ScriptedLLM) -> None:
    model = gemini_model(scripted_llm)
    assert google_generative_ai.serves(model)
    scripted_llm.enqueue(replies.text("A red pixel.", reasoning="Look closely.", chunks=2))
    question = [
        {"type": "text", "text": "What is this?"},
        {"type": "image", "data": PIXEL, "mimeType": "image/png"},
    ]
    request = CompletionRequest(
        model=model,
        system_prompt="You are a coding agent.",
        messages=[user_message(question)],
        tools=[READ],
        thinking_level="medium",
        max_tokens=800,
        timeout=10,
    )
    events, message = await run(request)

    [body] = scripted_llm.requests
    assert body["systemInstruction"] == {
        "role": "user",
        "parts": [{"text": "You are a coding agent."}],
    }
    assert body["contents"] == [
        {
            "role": "user",
            "parts": [
                {"text": "What is this?"},
                {"inlineData": {"mimeType": "image/png", "data": PIXEL}},
            ],
        }
    ]
    assert body["generationConfig"] == {
        "maxOutputTokens": 800,
        "thinkingConfig": {"includeThoughts": True, "thinkingBudget": 8192},
    }
    [declaration] = body["tools"][0]["functionDeclarations"]
    assert declaration["name"] == "read"
    assert "$schema" not in declaration["parametersJsonSchema"]
    headers = scripted_llm.request_headers[0]
    assert headers["x-goog-api-key"] == "gemini-key"

    thinking = "".join(event.text for event in events if isinstance(event, ThinkingDelta))
    text = "".join(event.text for event in events if isinstance(event, TextDelta))
    assert (thinking, text) == ("Look closely.", "A red pixel.")
    assert message["stopReason"] == "stop" and message["api"] == "google-generative-ai"
    assert message["content"][0]["thinkingSignature"] == THOUGHT_SIGNATURE
    assert message["usage"]["input"] > 0 and message["usage"]["output"] > 0


async def test_gemini_3_gets_a_thinking_level(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.enqueue(replies.text("ok"))
    request = CompletionRequest(
        model=gemini_model(scripted_llm, "gemini-3-pro-preview"),
        system_prompt="s",
        messages=[user_message("hi")],
        thinking_level="low",
        timeout=10,
    )
    await run(request)
    thinking = scripted_llm.requests[0]["generationConfig"]["thinkingConfig"]
    assert thinking == {"includeThoughts": True, "thinkingLevel": "low"}


async def test_a_tool_round_sends_the_signatures_and_the_function_response_back(
    scripted_llm: ScriptedLLM,
) -> None:
    model = gemini_model(scripted_llm)
    scripted_llm.enqueue(
        replies.tool_calls([("call_1", "read", {"path": "app.py"})]), replies.text("Done.")
    )
    first_request = CompletionRequest(
        model=model,
        system_prompt="s",
        messages=[user_message("Read app.py")],
        tools=[READ],
        timeout=10,
    )
    _, first = await run(first_request)
    assert first["stopReason"] == "toolUse", first
    [call] = [block for block in first["content"] if block["type"] == "toolCall"]
    assert call["name"] == "read" and call["arguments"] == {"path": "app.py"}
    assert call["thoughtSignature"] == THOUGHT_SIGNATURE

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
    model_turn, tool_turn = scripted_llm.requests[1]["contents"][1:]
    assert model_turn == {
        "role": "model",
        "parts": [
            {
                "functionCall": {"name": "read", "args": {"path": "app.py"}},
                "thoughtSignature": THOUGHT_SIGNATURE,
            }
        ],
    }
    assert tool_turn == {
        "role": "user",
        "parts": [{"functionResponse": {"name": "read", "response": {"output": "x = 1"}}}],
    }


@pytest.mark.parametrize(
    ("reply", "retryable", "auth"),
    [
        (replies.error(429, "Resource has been exhausted"), True, None),
        (replies.error(403, "API key not valid"), False, 403),
        (replies.error(503, "The model is overloaded"), True, None),
        (replies.mid_stream_error("Half", message="Internal error"), True, None),
        (
            replies.error(
                400,
                "The input token count (1200000) exceeds the maximum number of tokens allowed "
                "(1048576).",
            ),
            False,
            None,
        ),
    ],
    ids=["429", "403", "503", "mid-stream", "overflow"],
)
async def test_failures_are_classified_as_on_the_other_wire_apis(
    scripted_llm: ScriptedLLM, reply: replies.Reply, retryable: bool, auth: int | None
) -> None:
    scripted_llm.enqueue(reply)
    request = CompletionRequest(
        model=gemini_model(scripted_llm),
        system_prompt="s",
        messages=[user_message("a")],
        timeout=10,
    )
    _, message = await run(request)
    assert message["stopReason"] == "error"
    assert "GeminiException" in message["errorMessage"]
    assert is_retryable_error(message) is retryable, message["errorMessage"]
    assert auth_error_status(message) == auth
    assert is_context_overflow(message, 200_000) is (reply.status == 400)


async def test_a_length_stop(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.enqueue(replies.length_stop())
    request = CompletionRequest(
        model=gemini_model(scripted_llm),
        system_prompt="s",
        messages=[user_message("a")],
        timeout=10,
    )
    _, message = await run(request)
    assert message["stopReason"] == "length"
