"""The streamed-message accumulator, usage and cost, tolerant argument parsing, the model table."""

from __future__ import annotations

import json

import pytest

from pi_lsp.llm.assistant import PartialAssistant, stop_reason_for
from pi_lsp.llm.config import ModelConfig
from pi_lsp.llm.models import (
    DEFAULT_CONTEXT_WINDOW,
    context_window_for,
    list_known_models,
    max_output_tokens_for,
    supports_reasoning,
)
from pi_lsp.llm.partial_json import parse_streaming_json
from pi_lsp.llm.usage import usage_from_openai

GPT_4O = ModelConfig(model="openai/gpt-4o", provider="openai", model_id="gpt-4o")
UNKNOWN = ModelConfig(model="openai/scripted", provider="openai", model_id="scripted")


def test_blocks_keep_stream_order_and_pi_key_order() -> None:
    partial = PartialAssistant(provider="openai", model="gpt-4o", timestamp=42)
    partial.add_thinking("pl", "reasoning_content")
    partial.add_thinking("an", "reasoning_content")
    partial.add_text("Reading")
    partial.start_tool_call(0, "call_1", "read")
    partial.add_tool_arguments(0, '{"path": ')
    partial.add_tool_arguments(0, '"a.py"}')
    partial.add_text(" now")
    partial.finish_reason = "tool_calls"
    message = partial.to_message()
    assert list(message) == [
        "role",
        "content",
        "api",
        "provider",
        "model",
        "usage",
        "stopReason",
        "timestamp",
    ]
    assert message["content"] == [
        {"type": "thinking", "thinking": "plan", "thinkingSignature": "reasoning_content"},
        {"type": "text", "text": "Reading now"},
        {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "a.py"}},
    ]
    assert (message["stopReason"], message["timestamp"], message["api"]) == (
        "toolUse",
        42,
        "openai-completions",
    )


def test_unfinished_stream_is_an_error_and_abort_keeps_partial_arguments() -> None:
    partial = PartialAssistant(provider="openai", model="gpt-4o")
    partial.start_tool_call(0, "call_1", "write")
    partial.add_tool_arguments(0, '{"path": "a.py", "content": "hel')
    assert partial.to_message()["errorMessage"] == "Stream ended without finish_reason"
    aborted = partial.to_message("aborted")
    assert list(aborted)[-3:] == ["stopReason", "errorMessage", "timestamp"]
    assert aborted["errorMessage"] == "Request was aborted."
    assert aborted["content"][0]["arguments"] == {"path": "a.py", "content": "hel"}


def test_signature_and_late_tool_call_names() -> None:
    partial = PartialAssistant(provider="anthropic", model="claude")
    partial.add_thinking("hmm", "reasoning_content")
    partial.sign_thinking("sig==")
    assert partial.start_tool_call(3, "", "")
    assert not partial.start_tool_call(3, "toolu_1", "bash")
    assert partial.tool_call_index("toolu_1") == 3
    assert partial.tool_call_index("unknown") == 4
    content = partial.to_message("stop")["content"]
    assert content[0]["thinkingSignature"] == "sig=="
    assert content[1] == {"type": "toolCall", "id": "toolu_1", "name": "bash", "arguments": {}}


@pytest.mark.parametrize(
    ("finish", "expected"),
    [
        ("stop", ("stop", None)),
        ("length", ("length", None)),
        ("tool_calls", ("toolUse", None)),
        ("content_filter", ("error", "Provider finish_reason: content_filter")),
    ],
)
def test_finish_reasons(finish: str, expected: tuple[str, str | None]) -> None:
    assert stop_reason_for(finish) == expected


def test_usage_subtracts_cache_reads_from_input_and_prices_known_models() -> None:
    raw = {
        "prompt_tokens": 1000,
        "completion_tokens": 100,
        "total_tokens": 1100,
        "prompt_tokens_details": {"cached_tokens": 400},
    }
    usage = usage_from_openai(raw, GPT_4O)
    assert {
        key: usage[key] for key in ("input", "output", "cacheRead", "cacheWrite", "totalTokens")
    } == {"input": 600, "output": 100, "cacheRead": 400, "cacheWrite": 0, "totalTokens": 1100}
    cost = usage["cost"]
    assert cost["input"] == pytest.approx(600 * 2.5e-6)
    assert cost["output"] == pytest.approx(100 * 1e-5)
    assert cost["cacheRead"] == pytest.approx(400 * 1.25e-6)
    assert cost["total"] == pytest.approx(cost["input"] + cost["output"] + cost["cacheRead"])


def test_usage_of_unknown_models_costs_nothing_and_reads_anthropic_cache_fields() -> None:
    usage = usage_from_openai(
        {
            "prompt_tokens": 50,
            "completion_tokens": 5,
            "cache_read_input_tokens": 10,
            "cache_creation_input_tokens": 20,
        },
        UNKNOWN,
    )
    assert (usage["input"], usage["cacheRead"], usage["cacheWrite"], usage["totalTokens"]) == (
        20,
        10,
        20,
        55,
    )
    assert usage["cost"] == {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    assert usage_from_openai(None, UNKNOWN)["totalTokens"] == 0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"path": "a.py"}', {"path": "a.py"}),
        ('{"path": "src/ma', {"path": "src/ma"}),
        ('{"a": 1, "b', {"a": 1}),
        ('{"a": 1, "b": tr', {"a": 1}),
        ('{"a": [1, {"b": "x', {"a": [1, {"b": "x"}]}),
        ('{"a": "line\nbreak"}', {"a": "line\nbreak"}),
        ('{"pattern": "\\d+"}', {"pattern": "\\d+"}),
        ('{"a": "q\\"', {"a": 'q"'}),
        ('{"a": 12', {"a": 12}),
        ('{"a": 1.', {}),  # a cut number drops what it belonged to, as in pi
        ('{"a": "line\nbreak', {"a": "line\nbreak"}),
        ('{"a": "caf\\u00', {"a": "caf"}),
        ("[1, 2]", {}),
        ("", {}),
        ("not json", {}),
    ],
)
def test_streaming_json(text: str, expected: dict) -> None:
    assert parse_streaming_json(text) == expected


def test_every_prefix_of_arguments_parses_to_an_object() -> None:
    encoded = json.dumps({"path": "a b/c.py", "edits": [{"old": "x\ny", "new": '"z"'}], "n": -1.5})
    for end in range(len(encoded) + 1):
        assert isinstance(parse_streaming_json(encoded[:end]), dict)
    assert parse_streaming_json(encoded) == json.loads(encoded)


def test_context_windows_from_settings_table_or_default() -> None:
    assert context_window_for(GPT_4O) == 128_000
    claude = ModelConfig(
        model="anthropic/claude-sonnet-4-5", provider="anthropic", model_id="claude-sonnet-4-5"
    )
    assert context_window_for(claude) == 200_000
    assert supports_reasoning(claude) and not supports_reasoning(GPT_4O)
    assert max_output_tokens_for(claude) == 64_000
    assert context_window_for(UNKNOWN) == DEFAULT_CONTEXT_WINDOW
    configured = ModelConfig(
        model="openai/gpt-4o",
        provider="openai",
        model_id="gpt-4o",
        context_window=9000,
        max_output_tokens=100,
        reasoning=True,
    )
    assert (context_window_for(configured), max_output_tokens_for(configured)) == (9000, 100)
    assert supports_reasoning(configured)


def test_known_models_filtered_by_prefix() -> None:
    models = list_known_models("anthropic/claude-sonnet-4-5")
    assert models and all(model.model.startswith("anthropic/claude-sonnet-4-5") for model in models)
    first = models[0]
    assert first.provider == "anthropic" and first.context_window and first.reasoning
    gemini = list_known_models("gemini/gemini-2.5-pro")
    assert gemini and gemini[0].provider == "google"
    assert [model.model for model in list_known_models("ollama/")] == sorted(
        model.model for model in list_known_models("ollama/")
    )


def test_tool_calls_without_ids_get_stable_ones() -> None:
    partial = PartialAssistant(provider="ollama", model="llama3", timestamp=7)
    partial.add_text("x")
    partial.start_tool_call(0, "", "ls")
    partial.finish_reason = "tool_calls"
    first = partial.to_message()["content"][1]["id"]
    assert first == "call_7_1" == partial.to_message("aborted")["content"][1]["id"]
