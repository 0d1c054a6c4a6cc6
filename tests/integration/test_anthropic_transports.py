"""The Anthropic direct transport (pi-lsp's own request, no litellm) against litellm's, side by
side on the scripted server's Messages endpoint: the same request body and headers, the same
events, messages and usage, the same classification of failures (with a readable text of our own),
cancellation, and no per-chunk pydantic objects."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import attrs
import pytest

from pi_lsp.llm import anthropic_direct, direct
from pi_lsp.llm.config import ModelConfig
from pi_lsp.llm.events import Completed
from pi_lsp.llm.failed_messages import auth_error_status, is_context_overflow, is_retryable_error
from pi_lsp.llm.stream import AssistantStream, CompletionRequest
from pi_lsp.scripted_llm import Reply, ScriptedLLM, replies
from tests import scripted_llm_fixtures as fixtures
from tests.builders import user_text
from tests.integration.cancelling import SLOW_TEXT, cancel_after_three_deltas
from tests.integration.test_anthropic_endpoint import READ, SYSTEM, anthropic_model

scripted_llm = fixtures.scripted_llm

PIXEL = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAC"
    "hwGA60e6kgAAAABJRU5ErkJggg=="
)


def conversation(model: ModelConfig) -> list[dict[str, Any]]:
    """A user turn with an image, a signed-thinking tool call of this model, and its result."""
    return [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in a.py and this picture?"},
                {"type": "image", "data": PIXEL, "mimeType": "image/png"},
            ],
            "timestamp": 1,
        },
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Read it.", "thinkingSignature": "sig-1"},
                {"type": "toolCall", "id": "toolu_1", "name": "read", "arguments": {"path": "a"}},
            ],
            "api": "openai-completions",
            "provider": model.provider,
            "model": model.model_id,
            "usage": {},
            "stopReason": "toolUse",
            "timestamp": 2,
        },
        {
            "role": "toolResult",
            "toolCallId": "toolu_1",
            "toolName": "read",
            "content": [{"type": "text", "text": "print('hi')"}],
            "isError": False,
            "timestamp": 3,
        },
    ]


def use_transport(monkeypatch: pytest.MonkeyPatch, transport: str) -> None:
    if transport == "litellm":
        monkeypatch.setenv(direct.TRANSPORT_ENVIRONMENT_VARIABLE, "litellm")
    else:
        monkeypatch.delenv(direct.TRANSPORT_ENVIRONMENT_VARIABLE, raising=False)


async def run_on(
    transport: str, monkeypatch: pytest.MonkeyPatch, request: CompletionRequest
) -> tuple[list[Any], dict[str, Any]]:
    use_transport(monkeypatch, transport)
    assert anthropic_direct.serves(request.model) == (transport == "direct")
    events = [event async for event in AssistantStream(request).events()]
    assert isinstance(events[-1], Completed)
    return events[:-1], events[-1].message


async def both(
    server: ScriptedLLM,
    monkeypatch: pytest.MonkeyPatch,
    reply: Reply,
    messages: list[dict[str, Any]] | None = None,
    **options: Any,
) -> tuple[tuple[list[Any], dict[str, Any]], tuple[list[Any], dict[str, Any]]]:
    model = options.pop("model", None) or anthropic_model(server)
    options.setdefault("timeout", 10)
    request = CompletionRequest(
        model=model,
        system_prompt=SYSTEM,
        messages=messages if messages is not None else [user_text("Hi")],
        **options,
    )
    server.enqueue(reply, reply)
    ours = await run_on("direct", monkeypatch, request)
    server.prompt_cache.clear()  # the second request must not read what the first one wrote
    return ours, await run_on("litellm", monkeypatch, request)


def without_timestamp(message: dict[str, Any]) -> dict[str, Any]:
    """The message without its time and its ``api`` (pi-lsp's own path records
    ``anthropic-messages``, litellm's the chat completions its chunks come in)."""
    return {key: value for key, value in message.items() if key not in ("timestamp", "api")}


def header(headers: dict[str, str], name: str) -> str | None:
    return next((value for key, value in headers.items() if key.lower() == name), None)


async def test_both_send_the_same_body_and_headers(
    scripted_llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = anthropic_model(
        scripted_llm, reasoning=True, max_output_tokens=4321, headers={"X-Team": "pi"}
    )
    await both(
        scripted_llm,
        monkeypatch,
        replies.text("ok"),
        conversation(model),
        model=model,
        tools=[READ],
        thinking_level="medium",
        session_id="session-1",
        cache_retention="long",
    )
    direct_body, litellm_body = scripted_llm.requests
    assert direct_body == litellm_body
    assert direct_body["stream"] is True and direct_body["thinking"]["type"] == "enabled"
    assert direct_body["system"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert direct_body["messages"][0]["content"][1]["type"] == "image"
    assert direct_body["messages"][1]["content"][0] == {
        "type": "thinking",
        "thinking": "Read it.",
        "signature": "sig-1",
    }
    direct_headers, litellm_headers = scripted_llm.request_headers
    for name in ("x-api-key", "anthropic-version", "anthropic-beta", "x-team", "content-type"):
        assert header(direct_headers, name) == header(litellm_headers, name), name
    assert header(direct_headers, "x-api-key") == "test"
    assert header(direct_headers, "anthropic-version")


@pytest.mark.parametrize(
    "reply",
    [
        replies.text("Hello there, world.", reasoning="Think about it first.", chunks=4),
        replies.tool_calls(
            [("toolu_a", "read", {"path": "a.py"}), ("toolu_b", "read", {"path": "b.py"})],
            text="Reading both.",
        ),
        replies.tool_calls([("toolu_c", "read", {})], argument_chunks=1),
        replies.length_stop(),
        replies.text(
            "Scripted usage.",
            usage={
                "prompt_tokens": 900,
                "completion_tokens": 7,
                "cache_read_input_tokens": 600,
                "cache_creation_input_tokens": 200,
            },
        ),
    ],
    ids=["text-and-thinking", "two-tool-calls", "tool-call-without-arguments", "length", "usage"],
)
async def test_both_give_the_same_events_message_and_usage(
    scripted_llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch, reply: Reply
) -> None:
    model = anthropic_model(scripted_llm, reasoning=True)
    (direct_events, ours), (litellm_events, litellms) = await both(
        scripted_llm,
        monkeypatch,
        reply,
        model=model,
        tools=[READ],
        thinking_level="low",
        session_id="session-1",
    )
    assert direct_events == litellm_events
    assert without_timestamp(ours) == without_timestamp(litellms)
    assert ours["stopReason"] in ("stop", "toolUse", "length")
    assert (ours["api"], litellms["api"]) == ("anthropic-messages", "openai-completions")
    assert ours["usage"]["totalTokens"] > 0 and ours["usage"]["cost"]["total"] > 0


async def test_both_read_the_same_cache_usage_over_a_tool_round(
    scripted_llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two requests per transport against the prompt-cache simulator: the second reads what the
    first wrote, with the same tokens and costs on both paths."""
    results = {}
    for transport in ("direct", "litellm"):
        use_transport(monkeypatch, transport)
        scripted_llm.prompt_cache.clear()
        scripted_llm.enqueue(
            replies.tool_calls([("toolu_1", "read", {"path": "app.py"})], text="Reading it."),
            replies.text("It subtracts."),
        )
        model = anthropic_model(scripted_llm)
        first_request = CompletionRequest(
            model=model,
            system_prompt=SYSTEM,
            messages=[user_text("What does app.py do?")],
            tools=[READ],
            session_id="s",
            timeout=10,
        )
        first = await _message(first_request)
        result = {
            "role": "toolResult",
            "toolCallId": "toolu_1",
            "toolName": "read",
            "content": [{"type": "text", "text": "x = 1\n" * 400}],
            "isError": False,
            "timestamp": 2,
        }
        second_request = attrs.evolve(
            first_request, messages=[user_text("What does app.py do?"), first, result]
        )
        second = await _message(second_request)
        results[transport] = (first["usage"], second["usage"])
    assert results["direct"] == results["litellm"]
    first_usage, second_usage = results["direct"]
    assert first_usage["cacheWrite"] > 1024
    assert second_usage["cacheRead"] == first_usage["cacheWrite"]
    assert second_usage["cost"]["cacheRead"] > 0


async def _message(request: CompletionRequest) -> dict[str, Any]:
    events = [event async for event in AssistantStream(request).events()]
    assert isinstance(events[-1], Completed)
    return events[-1].message


@pytest.mark.parametrize(
    "reply",
    [
        replies.error(429, "Number of request tokens has exceeded your rate limit"),
        replies.error(500, "Internal server error"),
        replies.error(502, "Bad gateway"),
        replies.error(503, "Service unavailable"),
        replies.error(529, "Overloaded"),
        replies.error(401, "invalid x-api-key"),
        replies.error(403, "Your key has no access"),
        replies.error(404, "model: claude-nope"),
        replies.error(400, "max_tokens: too large"),
        replies.error(400, "prompt is too long: 208000 tokens > 200000 maximum"),
        replies.error(413, "Request exceeds the maximum size"),
        replies.context_overflow(),
        replies.mid_stream_error("Half an ans", message="Overloaded"),
    ],
    ids=[
        "429",
        "500",
        "502",
        "503",
        "529-overloaded",
        "401",
        "403",
        "404",
        "400",
        "prompt-too-long",
        "413",
        "overflow",
        "mid-stream",
    ],
)
async def test_both_describe_and_classify_failures_alike(
    scripted_llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch, reply: Reply
) -> None:
    (_, ours), (_, litellms) = await both(scripted_llm, monkeypatch, reply)
    assert ours["stopReason"] == litellms["stopReason"] == "error"
    assert ours["content"] == litellms["content"]
    # litellm's text quotes the body's bytes (b'{"type": "error", …}'); ours names the status,
    # the error type and the provider's message.
    status = str(reply.status) if reply.is_http_error else "500"
    assert ours["errorMessage"].startswith(status), ours["errorMessage"]
    assert "AnthropicException - " in ours["errorMessage"]
    provider_text = ((reply.error_body or {}).get("error") or {}).get("message") or (
        (reply.stream_error or {}).get("message")
    )
    assert provider_text and provider_text in ours["errorMessage"]
    for classify in (is_retryable_error, auth_error_status):
        assert classify(ours) == classify(litellms)
    assert is_context_overflow(ours, 200_000) == is_context_overflow(litellms, 200_000)


async def test_overloaded_and_overflow_are_classified_as_pi_does(
    scripted_llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_transport(monkeypatch, "direct")
    scripted_llm.enqueue(
        replies.error(529, "Overloaded"),
        replies.error(400, "prompt is too long: 208000 tokens > 200000 maximum"),
        replies.error(401, "invalid x-api-key"),
    )
    request = CompletionRequest(
        model=anthropic_model(scripted_llm),
        system_prompt="s",
        messages=[user_text("Hi")],
        timeout=10,
    )
    overloaded, overflow, refused = [await _message(request) for _ in range(3)]
    assert is_retryable_error(overloaded, 200_000)
    assert is_context_overflow(overflow, 200_000) and not is_retryable_error(overflow, 200_000)
    assert auth_error_status(refused) == 401 and not is_retryable_error(refused, 200_000)


@pytest.mark.parametrize(
    "reply",
    [replies.dropped_stream("Some text"), replies.hang(5)],
    ids=["dropped", "timeout"],
)
async def test_both_classify_transport_failures_alike(
    scripted_llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch, reply: Reply
) -> None:
    (_, ours), (_, litellms) = await both(scripted_llm, monkeypatch, reply, timeout=0.5)
    assert ours["content"] == litellms["content"]
    assert is_retryable_error(ours) and is_retryable_error(litellms)
    assert ours["errorMessage"].split()[0] == litellms["errorMessage"].split()[0]  # the status


async def test_both_classify_a_refused_connection_alike(
    scripted_llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = anthropic_model(scripted_llm)
    await scripted_llm.stop()
    (_, ours), (_, litellms) = await both(scripted_llm, monkeypatch, replies.text("-"), model=model)
    assert is_retryable_error(ours) and is_retryable_error(litellms)
    assert ours["errorMessage"].startswith("500 AnthropicException - Connection error")
    assert litellms["errorMessage"].startswith("500 AnthropicException")


async def wait_until(condition: Callable[[], bool], seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


async def test_cancelling_mid_stream_closes_the_connection_and_keeps_the_partial(
    scripted_llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_transport(monkeypatch, "direct")
    scripted_llm.enqueue(replies.slow_text(SLOW_TEXT, chunks=30, chunk_delay=0.05))
    request = CompletionRequest(
        model=anthropic_model(scripted_llm),
        system_prompt="s",
        messages=[user_text("Hi")],
        timeout=10,
    )
    stream = AssistantStream(request)
    received = await cancel_after_three_deltas(stream)
    message = stream.partial_message("aborted")
    assert message["stopReason"] == "aborted"
    [block] = message["content"]
    assert block["text"].startswith("".join(received)) and len(block["text"]) < 30
    await wait_until(lambda: scripted_llm.disconnects == 1)
    scripted_llm.enqueue(replies.text("still works"))
    assert (await _message(request))["stopReason"] == "stop"


async def test_a_missing_key_fails_as_litellm_says_before_anything_is_sent(
    scripted_llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    model = anthropic_model(scripted_llm, api_key=None)
    scripted_llm.enqueue(replies.text("unused"), replies.text("unused"))
    (_, ours), (_, litellms) = await both(scripted_llm, monkeypatch, replies.text("-"), model=model)
    assert ours["stopReason"] == litellms["stopReason"] == "error"
    assert "Missing Anthropic API Key" in ours["errorMessage"]
    assert "Missing Anthropic API Key" in litellms["errorMessage"]
    assert auth_error_status(ours) == auth_error_status(litellms) == 401
    assert scripted_llm.requests == []


_NO_OBJECTS_SCRIPT = """
import asyncio, json, os, sys
from pi_lsp.llm._litellm import load_litellm
from pi_lsp.llm.config import resolve_model
from pi_lsp.llm.stream import AssistantStream, CompletionRequest
from pi_lsp.scripted_llm import ScriptedLLM, replies

pydantic = __import__("pydantic")
built = [0]
original = pydantic.BaseModel.__init__

def counting(self, *args, **kwargs):
    built[0] += 1
    original(self, *args, **kwargs)

async def stream(server, model, chunks):
    server.enqueue(replies.text("x" * chunks, chunks=chunks, reasoning="y" * chunks))
    request = CompletionRequest(model=model, system_prompt="s",
                                messages=[{"role": "user", "content": "hi", "timestamp": 1}])
    events = [event async for event in AssistantStream(request).events()]
    assert events[-1].message["stopReason"] == "stop", events[-1].message
    assert len(events) == 2 * chunks + 1

async def counts(server, model):
    await stream(server, model, 5)  # warm: lazy imports, caches
    built_per_stream = []
    for chunks in (10, 400):
        before = built[0]
        await stream(server, model, chunks)
        built_per_stream.append(built[0] - before)
    return built_per_stream

async def main():
    load_litellm()
    pydantic.BaseModel.__init__ = counting
    async with ScriptedLLM() as server:
        model = resolve_model({"model": "anthropic/claude-sonnet-4-5",
                               "apiBase": server.root_url, "apiKey": "k"}, {})
        direct = await counts(server, model)
        os.environ["PI_LSP_LLM_TRANSPORT"] = "litellm"
        through_litellm = await counts(server, model)
    print(json.dumps({"direct": direct, "litellm": through_litellm}))

asyncio.run(main())
"""


def test_direct_streaming_builds_no_per_chunk_pydantic_objects() -> None:
    """The pydantic objects built per stream do not grow with its chunks on the direct path
    (litellm builds a few per request only); on litellm's own path, in the same process, they
    do, which shows the count sees them."""
    environment = dict(os.environ)
    environment.pop(direct.TRANSPORT_ENVIRONMENT_VARIABLE, None)
    result = subprocess.run(
        [sys.executable, "-c", _NO_OBJECTS_SCRIPT],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=environment,
    )
    assert result.returncode == 0, result.stderr
    built = json.loads(result.stdout.strip().splitlines()[-1])
    few, many = built["direct"]
    assert few == many
    few, many = built["litellm"]
    assert many > few + 390  # 780 more deltas


async def test_redacted_thinking_is_kept_and_replayed_on_both_paths(
    scripted_llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = anthropic_model(scripted_llm, reasoning=True)
    reply = Reply(
        deltas=(
            {"redacted_thinking": "opaque-data"},
            {"reasoning_content": "Visible thoughts."},
            {"content": "Done."},
        )
    )
    (direct_events, ours), (litellm_events, litellms) = await both(
        scripted_llm, monkeypatch, reply, model=model, thinking_level="low"
    )
    assert direct_events == litellm_events
    assert without_timestamp(ours) == without_timestamp(litellms)
    redacted, thinking, text = ours["content"]
    assert redacted == {
        "type": "thinking",
        "thinking": "[Reasoning redacted]",
        "thinkingSignature": "opaque-data",
        "redacted": True,
    }
    assert thinking["thinkingSignature"].startswith("scripted") and text["text"] == "Done."

    history = [user_text("Fix it"), ours, user_text("Thanks")]
    await both(
        scripted_llm, monkeypatch, replies.text("Ok."), history, model=model, thinking_level="low"
    )
    direct_body, litellm_body = scripted_llm.requests[-2:]
    assert direct_body == litellm_body
    replayed = direct_body["messages"][1]["content"]
    assert [block["type"] for block in replayed] == ["redacted_thinking", "thinking", "text"]
    assert replayed[0]["data"] == "opaque-data"
