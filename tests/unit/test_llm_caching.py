"""Prompt caching rules (``pi_lsp.llm.caching``): retention, which providers take breakpoints,
where the breakpoints go, and the cache parameters of automatic caching."""

from __future__ import annotations

from typing import Any

import pytest

from pi_lsp.llm.caching import (
    MAX_BREAKPOINTS,
    cache_control,
    prompt_cache_parameters,
    resolve_cache_retention,
    uses_cache_breakpoints,
    with_cache_breakpoints,
)
from pi_lsp.llm.config import resolve_model
from pi_lsp.llm.messages import ToolSpec, tools_to_openai
from pi_lsp.llm.stream import CompletionRequest, chat_payload

SHORT = {"type": "ephemeral"}
LONG = {"type": "ephemeral", "ttl": "1h"}
TOOLS = tools_to_openai([ToolSpec("read", "Read a file"), ToolSpec("bash", "Run a command")])


def marked(messages: list[dict[str, Any]]) -> list[int]:
    """Indexes of the messages that carry a breakpoint (on a part or on the message)."""
    return [index for index, message in enumerate(messages) if _has_mark(message)]


def _has_mark(message: dict[str, Any]) -> bool:
    if "cache_control" in message:
        return True
    content = message.get("content")
    return isinstance(content, list) and any("cache_control" in part for part in content)


def tool_round_conversation() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix app.py"},
        {
            "role": "assistant",
            "content": "Reading it.",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "def add(a, b): return a - b"},
    ]


@pytest.mark.parametrize(
    ("configured", "environment", "expected"),
    [
        (None, {}, "short"),
        (None, {"PI_CACHE_RETENTION": "long"}, "long"),
        (None, {"PI_CACHE_RETENTION": "forever"}, "short"),
        ("none", {"PI_CACHE_RETENTION": "long"}, "none"),
        ("short", {"PI_CACHE_RETENTION": "long"}, "short"),
        ("long", {}, "long"),
        ("weekly", {}, "short"),
    ],
)
def test_retention_is_the_setting_else_the_environment_else_short(
    configured, environment, expected
):
    assert resolve_cache_retention(configured, environment) == expected


def test_cache_control_per_retention():
    assert cache_control("none") is None
    assert cache_control("short") == SHORT
    assert cache_control("long") == LONG


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("anthropic/claude-sonnet-4-5", True),
        ("anthropic/anything-served-by-an-anthropic-endpoint", True),
        ("claude-sonnet-4-5", True),
        ("bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0", True),
        ("bedrock/invoke/anthropic.claude-sonnet-4-5-20250929-v1:0", True),
        ("vertex_ai/claude-sonnet-4-5", True),
        ("openrouter/anthropic/claude-sonnet-4.5", True),
        ("openrouter/openai/gpt-4o", False),
        ("openai/gpt-4o", False),
        ("gemini/gemini-2.5-pro", False),
        ("bedrock/amazon.nova-pro-v1:0", False),
        ("deepseek/deepseek-chat", False),
    ],
)
def test_which_models_take_cache_breakpoints(model, expected):
    config = resolve_model({"model": model}, {})
    assert config is not None
    assert uses_cache_breakpoints(config) is expected


def test_a_first_request_marks_the_system_prompt_the_last_tool_and_the_newest_message():
    messages = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix app.py"},
    ]
    sent, tools = with_cache_breakpoints(messages, TOOLS, SHORT)
    assert sent[0]["content"] == [
        {"type": "text", "text": "You are a coding agent.", "cache_control": SHORT}
    ]
    assert sent[1]["content"] == [{"type": "text", "text": "Fix app.py", "cache_control": SHORT}]
    assert "cache_control" not in tools[0] and tools[1]["cache_control"] == SHORT
    assert messages[1]["content"] == "Fix app.py" and "cache_control" not in TOOLS[1]  # copies


def test_a_tool_round_also_marks_where_the_previous_request_ended():
    sent, _ = with_cache_breakpoints(tool_round_conversation(), TOOLS, LONG)
    assert marked(sent) == [0, 1, 3]
    # litellm puts a tool message's own cache_control on the tool_result block it becomes.
    assert sent[3]["cache_control"] == LONG and sent[3]["content"].startswith("def add")
    assert sent[1]["content"][-1]["cache_control"] == LONG


def test_never_more_than_four_breakpoints():
    conversation = tool_round_conversation()
    conversation += [
        {"role": "assistant", "content": "Fixing it.", "tool_calls": []},
        {"role": "tool", "tool_call_id": "c2", "content": "edited"},
        {"role": "user", "content": [{"type": "text", "text": "Also run the tests"}]},
    ]
    sent, tools = with_cache_breakpoints(conversation, TOOLS, SHORT)
    breakpoints = len(marked(sent)) + sum("cache_control" in tool for tool in tools)
    assert breakpoints == MAX_BREAKPOINTS
    # The newest message, and the tool result that ended the request the last answer answered.
    assert marked(sent) == [0, 3, 6]


def test_the_mark_goes_on_the_last_text_or_image_part():
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    message = {"role": "user", "content": [{"type": "text", "text": "Look"}, image]}
    sent, _ = with_cache_breakpoints([message], [], SHORT)
    assert sent[0]["content"][0] == {"type": "text", "text": "Look"}
    assert sent[0]["content"][1] == {**image, "cache_control": SHORT}


def test_an_uncached_tail_moves_the_newest_mark_before_it():
    conversation = [*tool_round_conversation(), {"role": "user", "content": "Summarize"}]
    sent, _ = with_cache_breakpoints(conversation, TOOLS, SHORT, uncached_tail=1)
    assert marked(sent) == [0, 1, 3]
    assert sent[-1] == {"role": "user", "content": "Summarize"}


def test_no_breakpoints_without_caching():
    conversation = tool_round_conversation()
    sent, tools = with_cache_breakpoints(conversation, TOOLS, None)
    assert sent == conversation and tools == TOOLS


def test_prompt_cache_parameters_follow_what_litellm_forwards():
    supported = ["temperature", "prompt_cache_key", "prompt_cache_retention"]
    session = "0197c1d2-" + "a" * 70
    assert prompt_cache_parameters("short", session, supported) == {
        "prompt_cache_key": session[:64]
    }
    assert prompt_cache_parameters("long", "s1", supported) == {
        "prompt_cache_key": "s1",
        "prompt_cache_retention": "24h",
    }
    assert prompt_cache_parameters("long", "s1", ["prompt_cache_key"]) == {"prompt_cache_key": "s1"}
    assert prompt_cache_parameters("none", "s1", supported) == {}
    assert prompt_cache_parameters("short", None, supported) == {}
    assert prompt_cache_parameters("short", "s1", ["temperature"]) == {}


def request(model: str, retention: str = "short", **fields: Any) -> CompletionRequest:
    config = resolve_model({"model": model, "apiBase": "http://127.0.0.1:9"}, {})
    assert config is not None
    user = {"role": "user", "content": [{"type": "text", "text": "Fix app.py"}], "timestamp": 1}
    return CompletionRequest(
        model=config,
        system_prompt="You are a coding agent.",
        messages=[user],
        tools=[ToolSpec("read", "Read a file")],
        session_id="session-1",
        cache_retention=retention,
        **fields,
    )


def test_requests_to_anthropic_carry_breakpoints_and_others_do_not():
    messages, tools = chat_payload(request("anthropic/claude-sonnet-4-5", "long"))
    assert marked(messages) == [0, 1] and tools[-1]["cache_control"] == LONG
    messages, tools = chat_payload(request("openai/gpt-4o", "long"))
    assert marked(messages) == [] and "cache_control" not in tools[-1]
    messages, tools = chat_payload(request("anthropic/claude-sonnet-4-5", "none"))
    assert marked(messages) == [] and "cache_control" not in tools[-1]
