"""Which Anthropic models stream directly, and how stream events become chunks."""

from __future__ import annotations

import pytest

from pi_lsp.llm import anthropic_direct, direct
from pi_lsp.llm.anthropic_events import ChunkTranslator, StreamErrorEvent
from pi_lsp.llm.config import ModelConfig

FINISH = {"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length"}


def model(call_model: str, api_base: str | None = None, **options: object) -> ModelConfig:
    provider, _, model_id = call_model.partition("/")
    return ModelConfig(
        model=call_model, provider=provider, model_id=model_id, api_base=api_base, **options
    )


@pytest.fixture(autouse=True)
def no_proxy_or_transport(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "REQUEST_METHOD"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    for name in (direct.TRANSPORT_ENVIRONMENT_VARIABLE, "ANTHROPIC_API_BASE", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    ("configured", "direct_path"),
    [
        (model("anthropic/claude-sonnet-4-5"), True),
        (model("anthropic/claude-sonnet-4-5", "http://127.0.0.1:8000"), True),
        # a models.json provider with api "anthropic-messages"
        (model("gateway/claude", "https://gw.example", litellm_model="anthropic/claude"), True),
        (model("bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0"), False),
        (model("vertex_ai/claude-sonnet-4-5"), False),
        (model("openrouter/anthropic/claude-sonnet-4-5"), False),
        (model("openai/gpt-4o"), False),
    ],
)
def test_which_models_stream_directly(configured: ModelConfig, direct_path: bool) -> None:
    assert anthropic_direct.serves(configured) is direct_path


def test_the_environment_can_send_everything_through_litellm(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(direct.TRANSPORT_ENVIRONMENT_VARIABLE, "litellm")
    assert not anthropic_direct.serves(model("anthropic/claude-sonnet-4-5"))


@pytest.mark.parametrize(
    ("variables", "api_base", "direct_path"),
    [
        ({"HTTPS_PROXY": "http://proxy.corp:3128"}, None, True),  # a CONNECT tunnel
        ({"ALL_PROXY": "socks5://proxy.corp:1080"}, None, False),
        ({"HTTPS_PROXY": "socks5://proxy.corp:1080", "NO_PROXY": "api.anthropic.com"}, None, True),
        ({"HTTP_PROXY": "socks5://proxy.corp:1080"}, None, True),  # only http:// uses it
        ({"HTTP_PROXY": "socks5://proxy.corp:1080"}, "http://gw.internal", False),
        (
            {"HTTP_PROXY": "socks5://proxy.corp:1080", "ANTHROPIC_BASE_URL": "http://gw.internal"},
            None,
            False,
        ),
    ],
)
def test_only_an_endpoint_behind_a_proxy_of_another_kind_goes_through_litellm(
    variables: dict[str, str],
    api_base: str | None,
    direct_path: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    assert anthropic_direct.serves(model("anthropic/claude", api_base)) is direct_path


def chunks(events: list[dict]) -> list[dict]:
    translator = ChunkTranslator(FINISH.__getitem__)
    return [chunk for event in events if (chunk := translator.chunk(event)) is not None]


def test_text_thinking_and_signature_deltas() -> None:
    assert chunks(
        [
            {"type": "ping"},
            {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking"}},
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "thinking_delta", "thinking": "Hmm"},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "signature_delta", "signature": "sig"},
            },
            {"type": "content_block_stop", "index": 0},
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "text", "text": ""},
            },
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "text_delta", "text": "Hi"},
            },
            {"type": "content_block_stop", "index": 1},
            {"type": "message_stop"},
        ]
    ) == [
        {"choices": [{"index": 0, "delta": {"reasoning_content": "Hmm"}}]},
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {"thinking_blocks": [{"type": "thinking", "signature": "sig"}]},
                }
            ]
        },
        {"choices": [{"index": 0, "delta": {"content": "Hi"}}]},
    ]


def test_tool_blocks_are_numbered_among_tool_blocks_and_empty_arguments_become_braces() -> None:
    result = chunks(
        [
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
            {"type": "content_block_stop", "index": 0},
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {}},
            },
            {"type": "content_block_stop", "index": 1},
            {
                "type": "content_block_start",
                "index": 2,
                "content_block": {"type": "tool_use", "id": "toolu_2", "name": "read", "input": {}},
            },
            {
                "type": "content_block_delta",
                "index": 2,
                "delta": {"type": "input_json_delta", "partial_json": '{"path":'},
            },
            {"type": "content_block_stop", "index": 2},
        ]
    )
    calls = [chunk["choices"][0]["delta"]["tool_calls"][0] for chunk in result]
    assert calls == [
        {"index": 0, "id": "toolu_1", "function": {"name": "ls", "arguments": ""}},
        {"index": 0, "function": {"arguments": "{}"}},
        {"index": 1, "id": "toolu_2", "function": {"name": "read", "arguments": ""}},
        {"index": 1, "function": {"arguments": '{"path":'}},
    ]


def test_usage_is_merged_and_counts_the_cache_in_the_prompt() -> None:
    start_usage = {
        "input_tokens": 10,
        "cache_read_input_tokens": 1000,
        "cache_creation_input_tokens": 200,
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 200},
        "output_tokens": 1,
    }
    start, end = chunks(
        [
            {"type": "message_start", "message": {"usage": start_usage}},
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use"},
                "usage": {"output_tokens": 42},
            },
        ]
    )
    assert start["usage"]["prompt_tokens"] == 1210 and start["usage"]["completion_tokens"] == 1
    assert end["choices"][0]["finish_reason"] == "tool_calls"
    usage = end["usage"]
    assert (usage["prompt_tokens"], usage["completion_tokens"]) == (1210, 42)
    assert usage["prompt_tokens_details"]["cached_tokens"] == 1000
    assert (
        usage["prompt_tokens_details"]["cache_creation_token_details"]["ephemeral_1h_input_tokens"]
        == 200
    )


def test_redacted_thinking_and_error_events() -> None:
    [redacted] = chunks(
        [
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "redacted_thinking", "data": "opaque"},
            }
        ]
    )
    assert redacted["choices"][0]["delta"]["thinking_blocks"] == [
        {"type": "redacted_thinking", "data": "opaque"}
    ]
    with pytest.raises(StreamErrorEvent, match="Overloaded"):
        chunks([{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}])
