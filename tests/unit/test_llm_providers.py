"""The provider table: where each model goes, with which endpoint, and the provider's rules."""

from __future__ import annotations

from typing import Any

import pytest

from pi_lsp.llm import direct, providers
from pi_lsp.llm.config import ModelConfig, split_model_string


def model(call_model: str, api_base: str | None = None) -> ModelConfig:
    provider, model_id = split_model_string(call_model)
    return ModelConfig(model=call_model, provider=provider, model_id=model_id, api_base=api_base)


@pytest.mark.parametrize(
    ("call_model", "environ", "expected"),
    [
        ("openai/gpt-4o", {}, ("openai-responses", "https://api.openai.com/v1", "gpt-4o")),
        (
            "openai/qwen",
            {"OPENAI_BASE_URL": "http://127.0.0.1:8000/v1/"},
            ("openai-completions", "http://127.0.0.1:8000/v1", "qwen"),
        ),
        (
            "openai/qwen",
            {"OPENAI_API_BASE": "http://127.0.0.1:9000/v1"},
            ("openai-completions", "http://127.0.0.1:9000/v1", "qwen"),
        ),
        ("gpt-5-mini", {}, ("openai-responses", "https://api.openai.com/v1", "gpt-5-mini")),
        (
            "openai/responses/gpt-5",
            {},
            ("openai-responses", "https://api.openai.com/v1", "gpt-5"),
        ),
        (
            "openrouter/anthropic/claude-sonnet-4-5",
            {"OPENROUTER_API_BASE": "http://127.0.0.1:7000/api/v1"},
            ("openai-completions", "http://127.0.0.1:7000/api/v1", "anthropic/claude-sonnet-4-5"),
        ),
        (
            "anthropic/claude-sonnet-4-5",
            {"ANTHROPIC_BASE_URL": "http://127.0.0.1:6000"},
            ("anthropic-messages", "http://127.0.0.1:6000", "claude-sonnet-4-5"),
        ),
        (
            "claude-sonnet-4-5",
            {},
            ("anthropic-messages", "https://api.anthropic.com", "claude-sonnet-4-5"),
        ),
        (
            "gemini/gemini-2.5-flash",
            {},
            (
                "google-generative-ai",
                "https://generativelanguage.googleapis.com/v1beta",
                "gemini-2.5-flash",
            ),
        ),
        (
            "groq/llama-3.3",
            {},
            ("openai-completions", "https://api.groq.com/openai/v1", "llama-3.3"),
        ),
        ("xai/grok-4", {}, ("openai-completions", "https://api.x.ai/v1", "grok-4")),
        (
            "deepseek/deepseek-chat",
            {},
            ("openai-completions", "https://api.deepseek.com", "deepseek-chat"),
        ),
        ("mistral/codestral", {}, ("openai-completions", "https://api.mistral.ai/v1", "codestral")),
        (
            "cerebras/gpt-oss-120b",
            {},
            ("openai-completions", "https://api.cerebras.ai/v1", "gpt-oss-120b"),
        ),
        ("ollama/llama3", {}, ("openai-completions", "http://127.0.0.1:11434/v1", "llama3")),
        (
            "ollama_chat/llama3",
            {"OLLAMA_HOST": "gpu-box"},
            ("openai-completions", "http://gpu-box:11434/v1", "llama3"),
        ),
        (
            "ollama/llama3",
            {"OLLAMA_HOST": "http://10.0.0.5:8080"},
            ("openai-completions", "http://10.0.0.5:8080/v1", "llama3"),
        ),
    ],
)
def test_the_route_of_a_table_model(
    call_model: str, environ: dict[str, str], expected: tuple[str, str, str]
) -> None:
    found = providers.route(model(call_model), environ)
    assert found is not None
    assert (found.wire_api, found.base_url, found.model_id) == expected


def test_a_configured_base_url_wins_over_the_environment() -> None:
    found = providers.route(
        model("openai/qwen", "http://127.0.0.1:1/v1"), {"OPENAI_BASE_URL": "http://other/v1"}
    )
    assert found is not None and found.base_url == "http://127.0.0.1:1/v1"


@pytest.mark.parametrize(
    "call_model",
    ["bedrock/anthropic.claude-3", "vertex_ai/gemini-2.5-pro", "azure/gpt-4o", "cohere/command-r"],
)
def test_the_long_tail_has_no_route(call_model: str) -> None:
    assert providers.route(model(call_model), {}) is None


def test_every_provider_names_its_key_and_base_url_variables() -> None:
    assert set(providers.PROVIDERS) >= {
        "openai",
        "anthropic",
        "google",
        "openrouter",
        "groq",
        "xai",
        "deepseek",
        "mistral",
        "cerebras",
        "ollama",
    }
    for provider in providers.PROVIDERS.values():
        assert provider.wire_api in providers.WIRE_APIS
        assert provider.key_variables and provider.base_url_variables, provider.id
        assert provider.base_url.startswith(("https://", "http://127.0.0.1")), provider.id


def body(call_model: str, **arguments: Any) -> dict[str, Any]:
    found = providers.route(model(call_model), {})
    assert found is not None
    base = {"model": call_model, "messages": [{"role": "user", "content": "hi"}], "stream": True}
    return direct.request_body({**base, **arguments}, found)


@pytest.mark.parametrize("call_model", ["openai/gpt-5-mini", "o3-mini", "openai/o1"])
def test_openai_reasoning_models_take_max_completion_tokens_and_no_temperature(
    call_model: str,
) -> None:
    sent = body(call_model, max_tokens=100, extra_body={"temperature": 0.2})
    assert sent["max_completion_tokens"] == 100
    assert "max_tokens" not in sent and "temperature" not in sent


def test_other_models_keep_max_tokens_and_temperature() -> None:
    sent = body("openai/gpt-4o", max_tokens=100, extra_body={"temperature": 0.2})
    assert (sent["max_tokens"], sent["temperature"]) == (100, 0.2)


@pytest.mark.parametrize(
    ("call_model", "expected"),
    [
        ("openai/gpt-5", {"reasoning_effort": "high"}),
        ("groq/openai/gpt-oss-120b", {"reasoning_effort": "high"}),
        ("openrouter/openai/gpt-5", {"reasoning": {"effort": "high"}}),
        ("xai/grok-4", {}),
        ("mistral/magistral-medium", {}),
    ],
)
def test_the_reasoning_effort_goes_as_the_provider_takes_it(
    call_model: str, expected: dict[str, Any]
) -> None:
    sent = body(call_model, reasoning_effort="high")
    reasoning = {key: sent[key] for key in ("reasoning_effort", "reasoning") if key in sent}
    assert reasoning == expected


def test_mistral_gets_no_stream_options() -> None:
    assert "stream_options" not in body("mistral/codestral", stream_options={"include_usage": True})
    assert body("groq/llama", stream_options={"include_usage": True})["stream_options"]


@pytest.mark.parametrize(
    ("thinking_level", "effort"),
    [("off", None), ("minimal", "minimal"), ("medium", "medium"), ("xhigh", "high")],
)
def test_thinking_levels_map_to_reasoning_efforts(thinking_level: str, effort: str | None) -> None:
    assert providers.reasoning_effort(thinking_level) == effort
