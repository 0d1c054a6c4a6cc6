"""litellm's Anthropic path end to end: pi-lsp's requests through real litellm to the scripted
server's Messages endpoint, with its prompt-cache simulator, and what litellm sends to Bedrock
and Vertex AI for the same breakpoints."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import attrs
import pytest
import pytest_asyncio
from aiohttp import web

from pi_lsp.llm.config import ModelConfig, resolve_model
from pi_lsp.llm.events import Completed, TextDelta, ThinkingDelta, ToolCallStart
from pi_lsp.llm.failed_messages import is_retryable_error
from pi_lsp.llm.messages import ToolSpec
from pi_lsp.llm.models import model_info
from pi_lsp.llm.stream import AssistantStream, CompletionRequest, completion_arguments
from pi_lsp.scripted_llm import ScriptedLLM, replies
from tests import scripted_llm_fixtures as fixtures
from tests.builders import user_text

scripted_llm = fixtures.scripted_llm
MODEL = "anthropic/claude-sonnet-4-5"
READ = ToolSpec(
    "read",
    "Read a file",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
SYSTEM = "You are a coding agent. " + "Follow the project's rules. " * 250  # cacheable alone
FILE_TEXT = "def add(a, b):\n    return a - b\n" * 150


def anthropic_model(server: ScriptedLLM, model: str = MODEL, **options: Any) -> ModelConfig:
    config = resolve_model({"model": model, "apiBase": server.root_url, "apiKey": "test"}, {})
    assert config is not None
    return attrs.evolve(config, **options)


def request(
    server: ScriptedLLM, messages: list[dict[str, Any]], **options: Any
) -> CompletionRequest:
    return CompletionRequest(
        model=options.pop("model", None) or anthropic_model(server),
        system_prompt=SYSTEM,
        messages=messages,
        tools=[READ],
        session_id="session-1",
        timeout=10,
        **options,
    )


async def run(completion: CompletionRequest) -> tuple[list[Any], dict[str, Any]]:
    async with AssistantStream(completion) as stream:
        events = [event async for event in stream.events()]
    assert isinstance(events[-1], Completed)
    return events, events[-1].message


def breakpoints(body: dict[str, Any]) -> list[str]:
    """Where an Anthropic request body carries cache_control, as readable labels."""
    found = [f"tool:{tool['name']}" for tool in body.get("tools", []) if "cache_control" in tool]
    found += ["system" for block in body.get("system", []) if "cache_control" in block]
    for index, message in enumerate(body["messages"]):
        for block in message["content"]:
            if "cache_control" in block:
                found.append(f"message {index} {block['type']}")
    return found


async def test_a_tool_round_through_litellm_reads_the_cached_prefix(scripted_llm):
    scripted_llm.enqueue(
        replies.tool_calls([("toolu_1", "read", {"path": "app.py"})], text="Reading it."),
        replies.text("It subtracts instead of adding."),
    )
    first_events, first = await run(request(scripted_llm, [user_text("What does app.py do?")]))
    assert first["stopReason"] == "toolUse"
    assert any(isinstance(event, ToolCallStart) for event in first_events)
    assert first["content"][-1]["arguments"] == {"path": "app.py"}
    assert first["usage"]["cacheWrite"] > 1024 and first["usage"]["cacheRead"] == 0

    result = {
        "role": "toolResult",
        "toolCallId": "toolu_1",
        "toolName": "read",
        "content": [{"type": "text", "text": FILE_TEXT}],
        "isError": False,
        "timestamp": 2,
    }
    history = [user_text("What does app.py do?"), first, result]
    events, second = await run(request(scripted_llm, history))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)).startswith("It subtracts")
    usage = second["usage"]
    assert usage["cacheRead"] == first["usage"]["cacheWrite"]  # everything the first one wrote
    assert usage["cacheWrite"] > 0 and usage["input"] == 0
    prices = model_info(anthropic_model(scripted_llm)) or {}
    assert usage["cost"]["cacheRead"] == pytest.approx(
        usage["cacheRead"] * prices["cache_read_input_token_cost"]
    )
    assert usage["cost"]["cacheWrite"] == pytest.approx(
        usage["cacheWrite"] * prices["cache_creation_input_token_cost"]
    )

    first_body, second_body = scripted_llm.requests
    assert breakpoints(first_body) == ["tool:read", "system", "message 0 text"]
    # pi's three, plus the end of the previous request (its user message) as the fourth.
    assert breakpoints(second_body) == [
        "tool:read",
        "system",
        "message 0 text",
        "message 2 tool_result",
    ]


async def test_long_retention_asks_for_one_hour_and_prices_it(scripted_llm):
    scripted_llm.enqueue(replies.text("Hello."))
    _, answer = await run(request(scripted_llm, [user_text("Hi")], cache_retention="long"))
    body = scripted_llm.requests[-1]
    assert body["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    usage = answer["usage"]
    assert usage["cacheWrite1h"] == usage["cacheWrite"] > 0
    hourly = (model_info(anthropic_model(scripted_llm)) or {})[
        "cache_creation_input_token_cost_above_1hr"
    ]
    assert usage["cost"]["cacheWrite"] == pytest.approx(usage["cacheWrite"] * hourly)


async def test_caching_off_sends_no_breakpoints_and_reads_nothing(scripted_llm):
    scripted_llm.enqueue(replies.text("One."), replies.text("Two."))
    for _ in range(2):
        _, answer = await run(request(scripted_llm, [user_text("Hi")], cache_retention="none"))
        assert answer["usage"]["cacheRead"] == answer["usage"]["cacheWrite"] == 0
    assert all(breakpoints(body) == [] for body in scripted_llm.requests)


async def test_signed_thinking_streams_and_is_replayed_before_the_text(scripted_llm):
    scripted_llm.enqueue(replies.text("Done.", reasoning="Check add()."), replies.text("Ok."))
    model = anthropic_model(scripted_llm, reasoning=True)
    events, answer = await run(
        request(scripted_llm, [user_text("Fix it")], model=model, thinking_level="low")
    )
    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == "Check add()."
    thinking = answer["content"][0]
    assert thinking["type"] == "thinking" and thinking["thinkingSignature"].startswith("scripted")
    history = [user_text("Fix it"), answer, user_text("Thanks")]
    await run(request(scripted_llm, history, model=model, thinking_level="low"))
    replayed = scripted_llm.requests[-1]["messages"][1]["content"]
    assert [block["type"] for block in replayed] == ["thinking", "text"]
    assert replayed[0]["signature"] == thinking["thinkingSignature"]


async def test_provider_errors_become_pi_error_messages(scripted_llm):
    scripted_llm.enqueue(
        replies.error(429, "Number of request tokens has exceeded your rate limit"),
        replies.mid_stream_error("Partial", message="Overloaded"),
    )
    _, limited = await run(request(scripted_llm, [user_text("Hi")]))
    assert limited["stopReason"] == "error" and "429" in limited["errorMessage"]
    assert is_retryable_error(limited, 200_000)
    _, broken = await run(request(scripted_llm, [user_text("Hi")]))
    assert broken["stopReason"] == "error" and "Overloaded" in broken["errorMessage"]


# ------------------------------------------------------------------ Bedrock and Vertex AI


@pytest_asyncio.fixture
async def recorder() -> AsyncIterator[tuple[str, list[tuple[str, dict]]]]:
    """A server that records request bodies and refuses them (no provider answer is needed)."""
    bodies: list[tuple[str, dict]] = []

    async def record(http_request: web.Request) -> web.Response:
        bodies.append((http_request.path, json.loads(await http_request.text())))
        return web.json_response({"message": "recorded"}, status=400)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", record)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield f"http://127.0.0.1:{port}", bodies
    await runner.cleanup()


def tool_round(model: ModelConfig) -> CompletionRequest:
    call = {"type": "toolCall", "id": "toolu_1", "name": "read", "arguments": {"path": "a.py"}}
    answer = {
        "role": "assistant",
        "content": [{"type": "text", "text": "Reading."}, call],
        "provider": model.provider,
        "model": model.model_id,
        "stopReason": "toolUse",
    }
    result = {
        "role": "toolResult",
        "toolCallId": "toolu_1",
        "toolName": "read",
        "content": [{"type": "text", "text": "x = 1"}],
        "isError": False,
        "timestamp": 2,
    }
    return CompletionRequest(
        model=model,
        system_prompt="You are a coding agent.",
        messages=[user_text("Read a.py"), answer, result],
        tools=[READ],
        session_id="session-1",
        cache_retention="long",
        timeout=10,
    )


@pytest.mark.parametrize(
    "model",
    [
        "bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0",
        "bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0",
    ],
)
async def test_bedrock_converse_gets_cache_points_where_the_breakpoints_are(recorder, model):
    base, bodies = recorder
    config = resolve_model({"model": model, "apiBase": base}, {})
    assert config is not None
    completion = tool_round(config)
    arguments = completion_arguments(completion)
    arguments.update(aws_access_key_id="a", aws_secret_access_key="b", aws_region_name="us-east-1")
    from pi_lsp.llm._litellm import load_litellm

    with pytest.raises(Exception, match="recorded"):
        response = await load_litellm().acompletion(**arguments)
        async for _ in response:
            pass
    path, body = bodies[-1]
    assert path.endswith("/converse-stream")
    point = {"cachePoint": {"type": "default", "ttl": "1h"}}
    assert body["system"][-1] == point
    assert body["toolConfig"]["tools"][-1] == point
    # The first user message (where the previous request ended) and the newest one.
    assert body["messages"][0]["content"][-1] == point
    assert body["messages"][-1]["content"][-1] == point
    assert json.dumps(body).count('"cachePoint"') == 4


def test_vertex_ai_claude_gets_the_same_breakpoints():
    from pi_lsp.llm._litellm import load_litellm

    litellm = load_litellm()
    from litellm.llms.vertex_ai.vertex_ai_partner_models.anthropic.transformation import (
        VertexAIAnthropicConfig,
    )

    config = resolve_model({"model": "vertex_ai/claude-sonnet-4-5"}, {})
    assert config is not None
    arguments = completion_arguments(tool_round(config))
    vertex = VertexAIAnthropicConfig()
    optional = vertex.map_openai_params(
        {"tools": arguments["tools"], "max_tokens": 100}, {}, "claude-sonnet-4-5", True
    )
    body = vertex.transform_request("claude-sonnet-4-5", arguments["messages"], optional, {}, {})
    hour = {"type": "ephemeral", "ttl": "1h"}
    assert body["system"][-1]["cache_control"] == hour
    assert body["tools"][-1]["cache_control"] == hour
    assert body["messages"][0]["content"][-1]["cache_control"] == hour
    assert body["messages"][-1]["content"][-1]["cache_control"] == hour
    assert litellm is not None


async def test_an_in_place_summary_reads_the_conversation_from_the_cache(scripted_llm):
    scripted_llm.enqueue(replies.text("It subtracts."), replies.text("## Goal\nFix add()"))
    question = user_text("What does app.py do? " + FILE_TEXT)
    _, answer = await run(request(scripted_llm, [question]))
    instruction = user_text("Pause the work here and write the checkpoint.")
    summary = request(scripted_llm, [question, answer, instruction], uncached_tail=1)
    _, written = await run(summary)
    assert written["content"][0]["text"].startswith("## Goal")
    body = scripted_llm.requests[-1]
    assert breakpoints(body) == ["tool:read", "system", "message 0 text", "message 1 text"]
    usage = written["usage"]
    assert usage["cacheRead"] == answer["usage"]["cacheWrite"]
    # Only the answer is written; the instruction after the last breakpoint is plain input.
    assert 0 < usage["cacheWrite"] < 50 and 0 < usage["input"] < 50
