"""Model resolution: precedence of environment and settings, pi's provider names, refinements."""

from __future__ import annotations

import pytest

from pi_lsp.llm.config import ModelConfig, litellm_model_string, resolve_model, split_model_string


def test_no_model_configured_is_none() -> None:
    assert resolve_model({}, {}) is None
    assert resolve_model({"defaultProvider": "openai"}, {}) is None
    assert resolve_model({"model": "  "}, {"PI_LSP_MODEL": ""}) is None


def test_environment_beats_model_setting_beats_pi_defaults() -> None:
    settings = {
        "model": "anthropic/claude-sonnet-4-5",
        "defaultProvider": "openai",
        "defaultModel": "gpt-4o",
    }
    assert resolve_model(settings, {"PI_LSP_MODEL": "ollama/llama3"}).model == "ollama/llama3"
    assert resolve_model(settings, {}).model == "anthropic/claude-sonnet-4-5"
    del settings["model"]
    assert resolve_model(settings, {}).model == "openai/gpt-4o"


def test_pi_defaults_translate_pi_provider_names_to_litellm_prefixes() -> None:
    config = resolve_model({"defaultProvider": "google", "defaultModel": "gemini-2.5-pro"}, {})
    assert config == ModelConfig(
        model="gemini/gemini-2.5-pro",
        provider="google",
        model_id="gemini-2.5-pro",
        key_status="missing",  # no GEMINI_API_KEY: chosen anyway, so the error can say so
    )


@pytest.mark.parametrize(
    ("model", "provider", "model_id"),
    [
        ("openai/gpt-4o", "openai", "gpt-4o"),
        ("openrouter/anthropic/claude-3.5-sonnet", "openrouter", "anthropic/claude-3.5-sonnet"),
        ("gemini/gemini-2.5-flash", "google", "gemini-2.5-flash"),
        ("bedrock/anthropic.claude-v2", "amazon-bedrock", "anthropic.claude-v2"),
        ("ollama/llama3:8b", "ollama", "llama3:8b"),
        ("gpt-4o", "openai", "gpt-4o"),
        ("claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5"),
        ("some-local-model", "openai", "some-local-model"),
    ],
)
def test_provider_and_model_id_are_what_pi_records(
    model: str, provider: str, model_id: str
) -> None:
    assert split_model_string(model) == (provider, model_id)


def test_pi_name_round_trip() -> None:
    assert litellm_model_string("google", "gemini-2.5-pro") == "gemini/gemini-2.5-pro"
    assert litellm_model_string("anthropic", "claude-sonnet-4-5") == "anthropic/claude-sonnet-4-5"


def test_settings_refine_the_model() -> None:
    settings = {
        "model": "openai/qwen",
        "apiBase": "http://localhost:8080/v1",
        "apiKey": "k",
        "contextWindow": 32768,
        "maxOutputTokens": 4096,
        "reasoning": True,
    }
    config = resolve_model(settings, {})
    assert (config.api_base, config.api_key) == ("http://localhost:8080/v1", "k")
    assert (config.context_window, config.max_output_tokens, config.reasoning) == (
        32768,
        4096,
        True,
    )


def test_invalid_numbers_are_ignored() -> None:
    config = resolve_model({"model": "openai/x", "contextWindow": "big", "maxOutputTokens": -1}, {})
    assert (config.context_window, config.max_output_tokens) == (None, None)
    assert resolve_model({"model": "openai/x", "contextWindow": True}, {}).context_window is None


def test_environment_overrides_api_base_and_key() -> None:
    environ = {
        "PI_LSP_MODEL": "openai/scripted",
        "PI_LSP_API_BASE": "http://127.0.0.1:1/v1",
        "PI_LSP_API_KEY": "secret",
    }
    config = resolve_model({"apiBase": "http://elsewhere/v1", "apiKey": "other"}, environ)
    assert config.api_base == "http://127.0.0.1:1/v1"
    assert (config.credential.source, config.credential.origin, config.credential.value) == (
        "environment",
        "PI_LSP_API_KEY",
        "secret",
    )
    assert config.key_status == "key"


def test_local_openai_compatible_server_gets_a_placeholder_key() -> None:
    local = {"model": "openai/qwen", "apiBase": "http://localhost:8080/v1"}
    assert resolve_model(local, {}).api_key == "no-key"
    assert resolve_model(local, {"OPENAI_API_KEY": "sk-real"}).api_key is None
    assert resolve_model({"model": "openai/gpt-4o"}, {}).api_key is None
    anthropic = {"model": "anthropic/claude", "apiBase": "http://proxy/v1"}
    assert resolve_model(anthropic, {}).api_key is None
