"""Both transports streaming from the scripted OpenAI-compatible server: the direct one
(``direct.py``, what an ``openai/…`` model with an ``apiBase`` uses) and the real litellm client.

Every test runs on both (the ``transport`` fixture); one litellm import serves the whole module.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest

from pi_lsp.llm import direct
from pi_lsp.llm.config import ModelConfig
from pi_lsp.llm.events import Completed, StreamEvent, TextDelta
from pi_lsp.llm.failed_messages import is_context_overflow, is_retryable_error
from pi_lsp.llm.messages import ToolSpec
from pi_lsp.llm.stream import (
    AssistantStream,
    CompletionRequest,
)
from pi_lsp.scripted_llm import ScriptedLLM, replies
from tests import scripted_llm_fixtures as fixtures
from tests.integration.cancelling import SLOW_TEXT, cancel_after_three_deltas

READ_TOOL = ToolSpec(
    "read",
    "Read a file",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)

scripted_llm = fixtures.scripted_llm


@pytest.fixture(autouse=True, params=["direct", "litellm"])
def transport(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The transport every stream of the test goes through."""
    if request.param == "litellm":
        monkeypatch.setenv(direct.TRANSPORT_ENVIRONMENT_VARIABLE, "litellm")
    else:
        monkeypatch.delenv(direct.TRANSPORT_ENVIRONMENT_VARIABLE, raising=False)
    probe = ModelConfig(model="openai/x", provider="openai", model_id="x", api_base="http://h")
    assert direct.serves(probe) == (request.param == "direct")
    return str(request.param)


def model_for(server: ScriptedLLM, model: str = "openai/scripted", **options: Any) -> ModelConfig:
    return ModelConfig(
        model=model,
        provider="openai",
        model_id=model.partition("/")[2],
        api_base=server.base_url,
        api_key="test-key",
        **options,
    )


def request_for(server: ScriptedLLM, text: str = "hi", **options: Any) -> CompletionRequest:
    model = options.pop("model", None) or model_for(server)
    options.setdefault("timeout", 10)
    messages = [{"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}]
    return CompletionRequest(
        model=model, system_prompt="You are a test.", messages=messages, **options
    )


async def collect(request: CompletionRequest) -> tuple[list[StreamEvent], dict[str, Any]]:
    events = [event async for event in AssistantStream(request).events()]
    assert isinstance(events[-1], Completed)
    assert not any(isinstance(event, Completed) for event in events[:-1])
    return events, events[-1].message


async def wait_until(condition: Callable[[], bool], seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


async def test_streamed_text_with_usage(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.enqueue(
        replies.text(
            "Hello world",
            chunks=4,
            usage={
                "prompt_tokens": 120,
                "completion_tokens": 7,
                "prompt_tokens_details": {"cached_tokens": 20},
            },
        )
    )
    events, message = await collect(request_for(scripted_llm))
    deltas = [event.text for event in events if isinstance(event, TextDelta)]
    assert len(deltas) == 4 and "".join(deltas) == "Hello world"
    assert message["content"] == [{"type": "text", "text": "Hello world"}]
    assert message["stopReason"] == "stop" and "errorMessage" not in message
    assert (message["provider"], message["model"], message["api"]) == (
        "openai",
        "scripted",
        "openai-completions",
    )
    usage = message["usage"]
    assert (usage["input"], usage["output"], usage["cacheRead"], usage["totalTokens"]) == (
        100,
        7,
        20,
        127,
    )
    assert usage["cost"]["total"] == 0


async def test_request_body_carries_context_tools_and_options(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.enqueue(replies.text("ok"))
    model = model_for(scripted_llm, max_output_tokens=512, reasoning=True)
    await collect(request_for(scripted_llm, model=model, tools=[READ_TOOL], thinking_level="high"))
    [body] = scripted_llm.requests
    assert body["model"] == "scripted"
    assert body["messages"] == [
        {"role": "system", "content": "You are a test."},
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
    ]
    assert body["tools"][0]["function"]["name"] == "read"
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert (body["max_tokens"], body["reasoning_effort"]) == (512, "high")


async def test_no_reasoning_effort_when_thinking_is_off_or_unsupported(
    scripted_llm: ScriptedLLM,
) -> None:
    scripted_llm.enqueue(replies.text("a"), replies.text("b"))
    await collect(request_for(scripted_llm, model=model_for(scripted_llm, reasoning=True)))
    await collect(request_for(scripted_llm, thinking_level="high"))
    assert all("reasoning_effort" not in body for body in scripted_llm.requests)


async def test_reasoning_deltas_become_a_thinking_block(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.enqueue(replies.text("Answer", reasoning="Let me think", chunks=3))
    events, message = await collect(request_for(scripted_llm))
    thinking = "".join(event.text for event in events if event.kind == "thinking_delta")
    assert thinking == "Let me think"
    assert message["content"] == [
        {"type": "thinking", "thinking": "Let me think", "thinkingSignature": "reasoning_content"},
        {"type": "text", "text": "Answer"},
    ]


async def test_tool_calls_with_arguments_split_over_chunks(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.enqueue(
        replies.tool_calls(
            [("call_1", "read", {"path": "src/app.py"}), ("call_2", "read", {"path": "README.md"})],
            text="Reading both.",
            argument_chunks=4,
        )
    )
    events, message = await collect(request_for(scripted_llm, tools=[READ_TOOL]))
    starts = [
        (event.index, event.id, event.name) for event in events if event.kind == "toolcall_start"
    ]
    assert starts == [(0, "call_1", "read"), (1, "call_2", "read")]
    first_deltas = [
        event.arguments_delta
        for event in events
        if event.kind == "toolcall_delta" and event.index == 0
    ]
    assert len(first_deltas) == 4 and "".join(first_deltas) == '{"path": "src/app.py"}'
    assert message["stopReason"] == "toolUse"
    assert message["content"] == [
        {"type": "text", "text": "Reading both."},
        {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "src/app.py"}},
        {"type": "toolCall", "id": "call_2", "name": "read", "arguments": {"path": "README.md"}},
    ]


async def test_tool_round_trip_replays_calls_and_results(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.enqueue(
        replies.tool_calls([("call_1", "read", {"path": "a.py"})]), replies.text("It prints hi.")
    )
    first = request_for(scripted_llm, tools=[READ_TOOL])
    _, call_message = await collect(first)
    result = {
        "role": "toolResult",
        "toolCallId": "call_1",
        "toolName": "read",
        "content": [{"type": "text", "text": "print('hi')"}],
        "isError": False,
        "timestamp": 5,
    }
    second = CompletionRequest(
        model=first.model,
        system_prompt=first.system_prompt,
        messages=[*first.messages, call_message, result],
        tools=[READ_TOOL],
    )
    _, answer = await collect(second)
    assert answer["content"] == [{"type": "text", "text": "It prints hi."}]
    replayed = scripted_llm.requests[1]["messages"]
    # An assistant message that only calls tools goes without content (litellm drops the null).
    assert replayed[2] == {
        "role": "assistant",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "read", "arguments": '{"path":"a.py"}'},
            }
        ],
    }
    assert replayed[3] == {"role": "tool", "tool_call_id": "call_1", "content": "print('hi')"}


async def test_length_stop(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.enqueue(replies.length_stop("Cut off"))
    _, message = await collect(request_for(scripted_llm))
    assert message["stopReason"] == "length"
    assert message["content"] == [{"type": "text", "text": "Cut off"}]


async def test_rate_limit_is_a_retryable_error(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.enqueue(replies.error(429, "Rate limit reached for gpt-4o in organization org-x"))
    events, message = await collect(request_for(scripted_llm))
    assert len(events) == 1
    assert message["stopReason"] == "error" and message["content"] == []
    assert message["errorMessage"].startswith("429 ")
    assert "Rate limit reached for gpt-4o" in message["errorMessage"]
    assert is_retryable_error(message) and not is_context_overflow(message, 128_000)
    assert len(scripted_llm.requests) == 1, "the client must not retry on its own"


async def test_context_overflow_is_classified_as_overflow(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.enqueue(replies.context_overflow())
    _, message = await collect(request_for(scripted_llm))
    assert message["errorMessage"].startswith("400 ")
    assert "maximum context length is 8192 tokens" in message["errorMessage"]
    assert is_context_overflow(message, None) and not is_retryable_error(message)


async def test_server_error_before_and_during_the_stream(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.enqueue(
        replies.error(500, "The server had an error"),
        replies.mid_stream_error("Half an ans", message="upstream failed"),
    )
    _, before = await collect(request_for(scripted_llm))
    assert before["errorMessage"].startswith("500 ") and is_retryable_error(before)
    events, during = await collect(request_for(scripted_llm))
    assert [event.kind for event in events] == ["text_delta", "text_delta", "completed"]
    assert during["stopReason"] == "error"
    assert during["content"] == [{"type": "text", "text": "Half an ans"}]
    assert "upstream failed" in during["errorMessage"] and is_retryable_error(during)


async def test_dropped_connection_is_a_retryable_error(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.enqueue(replies.dropped_stream("Some text"))
    _, message = await collect(request_for(scripted_llm))
    assert message["stopReason"] == "error"
    assert message["content"] == [{"type": "text", "text": "Some text"}]
    assert is_retryable_error(message)


async def test_timeout_and_refused_connection_are_retryable(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.enqueue(replies.hang(5))
    started = time.monotonic()
    _, timed_out = await collect(request_for(scripted_llm, timeout=0.5))
    assert time.monotonic() - started < 4
    assert timed_out["stopReason"] == "error" and is_retryable_error(timed_out)
    port = scripted_llm.port
    await scripted_llm.stop()
    unreachable = ModelConfig(
        model="openai/scripted",
        provider="openai",
        model_id="scripted",
        api_base=f"http://127.0.0.1:{port}/v1",
        api_key="k",
    )
    _, refused = await collect(request_for(scripted_llm, model=unreachable))
    assert refused["stopReason"] == "error" and is_retryable_error(refused)


async def test_empty_script_answers_a_clear_error(scripted_llm: ScriptedLLM) -> None:
    _, message = await collect(request_for(scripted_llm))
    assert "no scripted reply" in message["errorMessage"]


async def test_known_model_is_priced(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.enqueue(
        replies.text("ok", usage={"prompt_tokens": 1000, "completion_tokens": 100})
    )
    model = model_for(scripted_llm, model="openai/gpt-4o")
    _, message = await collect(request_for(scripted_llm, model=model))
    assert scripted_llm.requests[0]["model"] == "gpt-4o"
    assert message["usage"]["cost"]["total"] == pytest.approx(1000 * 2.5e-6 + 100 * 1e-5)


async def test_cancelling_mid_stream_closes_the_connection_and_keeps_the_partial(
    scripted_llm: ScriptedLLM,
) -> None:
    scripted_llm.enqueue(replies.slow_text(SLOW_TEXT, chunks=30, chunk_delay=0.05))
    stream = AssistantStream(request_for(scripted_llm))
    received = await cancel_after_three_deltas(stream)
    message = stream.partial_message("aborted")
    assert message["stopReason"] == "aborted"
    assert message["errorMessage"] == "Request was aborted."
    [block] = message["content"]
    assert block["type"] == "text" and block["text"].startswith("".join(received))
    assert len(block["text"]) < 30
    await wait_until(lambda: scripted_llm.disconnects == 1)
    assert scripted_llm.completed_streams == 0
    scripted_llm.enqueue(replies.text("still works"))
    _, after = await collect(request_for(scripted_llm))
    assert after["stopReason"] == "stop"


async def test_cancelling_while_waiting_for_the_first_chunk(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.enqueue(replies.hang(30))
    stream = AssistantStream(request_for(scripted_llm, timeout=60))

    async def consume() -> None:
        async with stream:
            async for _ in stream.events():
                pass

    task = asyncio.create_task(consume())
    await wait_until(lambda: len(scripted_llm.requests) == 1)
    await asyncio.sleep(0.1)
    task.cancel()
    started = time.monotonic()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 5)
    assert time.monotonic() - started < 2
    assert stream.partial_message()["content"] == []
    await wait_until(lambda: scripted_llm.disconnects == 1)


async def test_leaving_the_loop_early_closes_the_stream(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.enqueue(replies.slow_text("x" * 20, chunks=20, chunk_delay=0.05))
    async with AssistantStream(request_for(scripted_llm)) as stream:
        async for event in stream.events():
            if isinstance(event, TextDelta):
                break
    await wait_until(lambda: scripted_llm.disconnects == 1)
    assert stream.message is None
