"""The direct transport against litellm's, side by side on the scripted server: the same request
body, the same error texts and classification, and no per-chunk objects on the direct one."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from pi_lsp.llm import direct
from pi_lsp.llm.config import ModelConfig
from pi_lsp.llm.events import Completed
from pi_lsp.llm.failed_messages import auth_error_status, is_context_overflow, is_retryable_error
from pi_lsp.llm.messages import ToolSpec
from pi_lsp.llm.stream import AssistantStream, CompletionRequest
from pi_lsp.scripted_llm import Reply, ScriptedLLM, replies
from tests import scripted_llm_fixtures as fixtures

scripted_llm = fixtures.scripted_llm

READ_TOOL = ToolSpec(
    "read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}}
)
PIXEL = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAC"
    "hwGA60e6kgAAAABJRU5ErkJggg=="
)
CONVERSATION = [
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
            {"type": "thinking", "thinking": "Read it.", "thinkingSignature": "reasoning_content"},
            {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "a.py"}},
        ],
        "api": "openai-completions",
        "provider": "openai",
        "model": "scripted",
        "usage": {},
        "stopReason": "toolUse",
        "timestamp": 2,
    },
    {
        "role": "toolResult",
        "toolCallId": "call_1",
        "toolName": "read",
        "content": [{"type": "text", "text": "print('hi')"}],
        "isError": False,
        "timestamp": 3,
    },
]


def model_for(server: ScriptedLLM, **options: Any) -> ModelConfig:
    return ModelConfig(
        model="openai/scripted",
        provider="openai",
        model_id="scripted",
        api_base=server.base_url,
        api_key="test-key",
        **options,
    )


async def run_on(
    transport: str, monkeypatch: pytest.MonkeyPatch, request: CompletionRequest
) -> dict[str, Any]:
    if transport == "litellm":
        monkeypatch.setenv(direct.TRANSPORT_ENVIRONMENT_VARIABLE, "litellm")
    else:
        monkeypatch.delenv(direct.TRANSPORT_ENVIRONMENT_VARIABLE, raising=False)
    events = [event async for event in AssistantStream(request).events()]
    assert isinstance(events[-1], Completed)
    return events[-1].message


async def both(
    server: ScriptedLLM, monkeypatch: pytest.MonkeyPatch, reply: Reply, **options: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    model = options.pop("model", None) or model_for(server)
    options.setdefault("timeout", 10)
    request = CompletionRequest(
        model=model, system_prompt="You are a test.", messages=CONVERSATION, **options
    )
    server.enqueue(reply, reply)
    return (
        await run_on("direct", monkeypatch, request),
        await run_on("litellm", monkeypatch, request),
    )


async def test_both_send_the_same_body_and_headers(
    scripted_llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = model_for(
        scripted_llm,
        reasoning=True,
        max_output_tokens=321,
        compat={"maxTokensField": "max_completion_tokens"},
        sampling_params={"temperature": 0.3, "top_k": 20},
        headers={"X-Team": "pi"},
    )
    await both(
        scripted_llm,
        monkeypatch,
        replies.text("ok"),
        model=model,
        tools=[READ_TOOL],
        thinking_level="medium",
        session_id="session-1",
        cache_retention="long",
    )
    direct_body, litellm_body = scripted_llm.requests
    # The one addition is pi's: OpenAI's API is asked to keep no copy (``store: false``).
    assert direct_body.pop("store") is False
    assert direct_body == litellm_body
    assert direct_body["prompt_cache_key"] == "session-1" and direct_body["top_k"] == 20
    direct_headers, litellm_headers = scripted_llm.request_headers
    for name in ("authorization", "x-team", "content-type"):
        assert _header(direct_headers, name) == _header(litellm_headers, name)


def _header(headers: dict[str, str], name: str) -> str | None:
    return next((value for key, value in headers.items() if key.lower() == name), None)


@pytest.mark.parametrize(
    "reply",
    [
        replies.error(429, "Rate limit reached for gpt-4o in organization org-x"),
        replies.error(500, "The server had an error"),
        replies.error(503, "Service unavailable"),
        replies.error(401, "Incorrect API key provided: sk-abc"),
        replies.error(403, "Your key has no access"),
        replies.error(404, "The model does not exist"),
        replies.error(400, "Unsupported parameter: 'top_k'"),
        replies.context_overflow(),
        replies.mid_stream_error("Half an ans", message="upstream failed"),
    ],
    ids=["429", "500", "503", "401", "403", "404", "400", "overflow", "mid-stream"],
)
async def test_both_describe_and_classify_failures_alike(
    scripted_llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch, reply: Reply
) -> None:
    ours, litellms = await both(scripted_llm, monkeypatch, reply)
    assert ours["stopReason"] == litellms["stopReason"] == "error"
    assert ours["content"] == litellms["content"]
    for classify in (is_retryable_error, auth_error_status):
        assert classify(ours) == classify(litellms)
    assert is_context_overflow(ours, 128_000) == is_context_overflow(litellms, 128_000)
    if reply.is_http_error:
        assert ours["errorMessage"] == litellms["errorMessage"]


@pytest.mark.parametrize(
    "reply",
    [replies.dropped_stream("Some text"), replies.hang(5)],
    ids=["dropped", "timeout"],
)
async def test_both_classify_transport_failures_alike(
    scripted_llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch, reply: Reply
) -> None:
    ours, litellms = await both(scripted_llm, monkeypatch, reply, timeout=0.5)
    assert ours["content"] == litellms["content"]
    assert is_retryable_error(ours) and is_retryable_error(litellms)
    assert ours["errorMessage"] == litellms["errorMessage"]


async def test_both_describe_a_refused_connection_alike(
    scripted_llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = model_for(scripted_llm)
    await scripted_llm.stop()
    ours, litellms = await both(scripted_llm, monkeypatch, replies.text("unused"), model=model)
    assert ours["errorMessage"] == litellms["errorMessage"]
    assert is_retryable_error(ours)


_NO_OBJECTS_SCRIPT = """
import asyncio, sys
from pi_lsp.llm.config import ModelConfig
from pi_lsp.llm.stream import AssistantStream, CompletionRequest
from pi_lsp.scripted_llm import ScriptedLLM, replies

async def main():
    async with ScriptedLLM() as server:
        server.enqueue(replies.text("x" * 200, chunks=50))
        model = ModelConfig(model="openai/scripted", provider="openai", model_id="scripted",
                            api_base=server.base_url, api_key="k")
        request = CompletionRequest(model=model, system_prompt="s",
                                    messages=[{"role": "user", "content": "hi", "timestamp": 1}])
        stream = AssistantStream(request)
        deltas = [event async for event in stream.events() if event.kind == "text_delta"]
        assert len(deltas) == 50 and stream.message["stopReason"] == "stop", stream.message
    loaded = {name.split(".")[0] for name in sys.modules}
    print(sorted(loaded & {"litellm", "openai", "pydantic"}))

asyncio.run(main())
"""


def test_direct_streaming_builds_no_pydantic_objects() -> None:
    """No per-chunk pydantic objects: neither litellm, the openai SDK nor pydantic is imported."""
    result = subprocess.run(
        [sys.executable, "-c", _NO_OBJECTS_SCRIPT],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_direct_cache_parameters_are_those_litellm_forwards() -> None:
    """The direct path sends each table provider the prompt-cache parameters litellm forwards to
    it, without asking litellm (which it does not load)."""
    from pi_lsp.llm._litellm import load_litellm
    from pi_lsp.llm.providers import PROVIDERS

    litellm = load_litellm()
    for provider in PROVIDERS.values():
        if provider.wire_api != "openai-completions":
            continue
        for model_id in ("scripted", "gpt-4o"):
            supported = litellm.get_supported_openai_params(model_id, provider.model_prefixes[0])
            assert set(provider.cache_parameters) <= set(supported or []), provider.id
