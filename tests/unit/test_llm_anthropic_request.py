"""The Anthropic request pi-lsp builds itself: turns, blocks, thinking, limits, URL and headers."""

from __future__ import annotations

from typing import Any

import pytest

from pi_lsp.llm import anthropic_request
from pi_lsp.llm.config import ModelConfig


def claude(model_id: str = "claude-sonnet-4-5", **options: Any) -> ModelConfig:
    return ModelConfig(
        model=f"anthropic/{model_id}", provider="anthropic", model_id=model_id, **options
    )


def body(messages: list[dict[str, Any]], **options: Any) -> dict[str, Any]:
    model = options.pop("model", None) or claude()
    options.setdefault("effort", None)
    options.setdefault("max_tokens", None)
    return anthropic_request.request_body(model, model.model_id, messages, [], **options)


def test_user_and_tool_messages_merge_into_one_user_turn() -> None:
    sent = body(
        [
            {"role": "system", "content": "rules"},
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": "Looking.",
                "thinking_blocks": [{"type": "thinking", "thinking": "t", "signature": "s"}],
                "tool_calls": [
                    {"id": "c1", "function": {"name": "read", "arguments": '{"path":"a"}'}},
                    {"id": "c2", "function": {"name": "ls", "arguments": ""}},
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "A"},
            {
                "role": "tool",
                "tool_call_id": "c2",
                "content": "B",
                "cache_control": {"type": "ephemeral"},
            },
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": ""},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,QUJD"}},
                ],
            },
        ]
    )
    assert sent["system"] == [{"type": "text", "text": "rules"}]
    assert [turn["role"] for turn in sent["messages"]] == ["user", "assistant", "user"]
    assert sent["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "t", "signature": "s"},
        {"type": "text", "text": "Looking."},
        {"type": "tool_use", "id": "c1", "name": "read", "input": {"path": "a"}},
        {"type": "tool_use", "id": "c2", "name": "ls", "input": {}},
    ]
    assert sent["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "c1", "content": "A"},
        {
            "type": "tool_result",
            "tool_use_id": "c2",
            "content": "B",
            "cache_control": {"type": "ephemeral"},
        },
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "QUJD"}},
    ]
    assert sent["stream"] is True


@pytest.mark.parametrize(
    ("effort", "configured", "thinking", "max_tokens"),
    [
        ("low", None, {"type": "enabled", "budget_tokens": 1024}, 5120),
        ("minimal", None, {"type": "enabled", "budget_tokens": 1024}, 5120),
        ("medium", None, {"type": "enabled", "budget_tokens": 2048}, 6144),
        ("high", None, {"type": "enabled", "budget_tokens": 4096}, 8192),
        ("high", 3000, {"type": "enabled", "budget_tokens": 2999}, 3000),
        ("high", 1000, None, 1000),  # too little room to think
        (None, None, None, 64000),  # the model table's output limit
    ],
)
def test_thinking_budget_and_max_tokens(
    effort: str | None, configured: int | None, thinking: dict | None, max_tokens: int
) -> None:
    sent = body([{"role": "user", "content": "hi"}], effort=effort, max_tokens=configured)
    assert sent.get("thinking") == thinking
    assert sent["max_tokens"] == max_tokens


def test_an_adaptive_model_gets_an_effort_instead_of_a_budget() -> None:
    sent = body(
        [{"role": "user", "content": "hi"}], model=claude("claude-opus-4-6"), effort="minimal"
    )
    assert sent["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert sent["output_config"] == {"effort": "low"}


def test_a_model_the_table_does_not_know_gets_4096_tokens() -> None:
    sent = body([{"role": "user", "content": "hi"}], model=claude("my-gateway-claude"))
    assert sent["max_tokens"] == 4096


@pytest.mark.parametrize(
    ("base", "url"),
    [
        ("https://api.anthropic.com", "https://api.anthropic.com/v1/messages"),
        ("http://127.0.0.1:8000/", "http://127.0.0.1:8000/v1/messages"),
        ("https://gw.example/v1/messages", "https://gw.example/v1/messages"),
    ],
)
def test_the_messages_url(base: str, url: str) -> None:
    assert anthropic_request.messages_url(base) == url


def test_headers_take_the_key_or_the_auth_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(anthropic_request.AUTH_TOKEN_VARIABLE, raising=False)
    headers = anthropic_request.request_headers("k", {"X-Team": "pi"})
    assert headers["x-api-key"] == "k" and headers["X-Team"] == "pi"
    assert headers["anthropic-version"] == "2023-06-01"
    with pytest.raises(anthropic_request.MissingKeyError, match="Missing Anthropic API Key"):
        anthropic_request.request_headers(None, {})
    monkeypatch.setenv(anthropic_request.AUTH_TOKEN_VARIABLE, "token")
    assert anthropic_request.request_headers(None, {})["authorization"] == "Bearer token"
