"""Which models stream directly, the body they send, and how their failures read."""

from __future__ import annotations

import pytest

from pi_lsp.llm import direct
from pi_lsp.llm.config import ModelConfig
from pi_lsp.llm.failed_messages import auth_error_status, is_context_overflow, is_retryable_error
from pi_lsp.llm.provider_errors import (
    connection_error,
    describe_error,
    provider_error,
    timeout_error,
)


def model(call_model: str, api_base: str | None = "http://127.0.0.1:8000/v1") -> ModelConfig:
    provider, _, model_id = call_model.partition("/")
    return ModelConfig(model=call_model, provider=provider, model_id=model_id, api_base=api_base)


@pytest.mark.parametrize(
    ("call_model", "api_base", "direct_path"),
    [
        ("openai/qwen3-coder", "http://127.0.0.1:8000/v1", True),
        ("openai/gpt-4o", "https://gateway.example/v1", True),
        ("openai/gpt-4o", None, False),  # OpenAI itself: the Responses API
        ("gpt-4o", None, False),
        ("openai/o3-mini", "https://gateway.example/v1", True),
        ("openai/gpt-5-mini", "https://gateway.example/v1", True),
        ("openrouter/anthropic/claude-sonnet-4-5", None, True),
        ("groq/llama-3.3-70b-versatile", None, True),
        ("xai/grok-4", None, True),
        ("deepseek/deepseek-chat", None, True),
        ("mistral/mistral-large-latest", None, True),
        ("cerebras/gpt-oss-120b", None, True),
        ("ollama/llama3", None, True),
        ("ollama_chat/llama3", "http://127.0.0.1:11434/v1", True),
        ("openai/responses/gpt-5", None, False),  # the Responses API
        ("anthropic/claude-sonnet-4-5", "https://api.anthropic.com", False),
        ("gemini/gemini-2.5-pro", None, False),
        ("bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0", None, False),
        ("vertex_ai/gemini-2.5-pro", None, False),
        ("azure/gpt-4o", None, False),
    ],
)
def test_which_models_stream_directly(
    call_model: str, api_base: str | None, direct_path: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(direct.TRANSPORT_ENVIRONMENT_VARIABLE, raising=False)
    assert direct.serves(model(call_model, api_base)) is direct_path


def test_the_environment_can_send_everything_through_litellm(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(direct.TRANSPORT_ENVIRONMENT_VARIABLE, "litellm")
    assert not direct.serves(model("openai/qwen3-coder"))


@pytest.mark.parametrize(
    ("proxy_variables", "direct_path"),
    [
        ({"HTTPS_PROXY": "http://proxy.corp:3128"}, True),  # spoken: a CONNECT tunnel
        ({"ALL_PROXY": "socks5://proxy.corp:1080"}, False),  # not spoken: litellm
        ({"https_proxy": "socks5://proxy.corp:1080", "NO_PROXY": "gateway.example"}, True),
        ({"HTTP_PROXY": "socks5://proxy.corp:1080"}, True),  # only http:// goes through it
        ({"HTTPS_PROXY": "https://proxy.corp:3128"}, False),  # TLS to the proxy: litellm
    ],
)
def test_only_an_endpoint_behind_a_proxy_of_another_kind_goes_through_litellm(
    proxy_variables: dict[str, str], direct_path: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "REQUEST_METHOD"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    monkeypatch.delenv(direct.TRANSPORT_ENVIRONMENT_VARIABLE, raising=False)
    for name, value in proxy_variables.items():
        monkeypatch.setenv(name, value)
    assert direct.serves(model("openai/gpt-4o", "https://gateway.example/v1")) is direct_path


def test_models_json_openai_completions_models_stream_directly() -> None:
    configured = ModelConfig(
        model="local/qwen",
        provider="local",
        model_id="qwen",
        api_base="http://127.0.0.1:8080/v1",
        litellm_model="openai/qwen",
    )
    assert direct.serves(configured)


def test_request_body_is_what_litellm_sends() -> None:
    arguments = {
        "model": "openai/qwen",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c"}]},
        ],
        "stream": True,
        "max_retries": 0,
        "drop_params": True,
        "api_base": "http://h/v1",
        "api_key": "k",
        "timeout": 5.0,
        "max_tokens": 10,
        "extra_body": {"top_k": 3},
    }
    assert direct.request_body(arguments) == {
        "model": "qwen",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "tool_calls": [{"id": "c"}]},
        ],
        "stream": True,
        "max_tokens": 10,
        "top_k": 3,
    }


def classified(text: str) -> tuple[bool, bool, int | None]:
    message = {"stopReason": "error", "errorMessage": text}
    return (
        is_retryable_error(message),
        is_context_overflow(message, None),
        auth_error_status(message),
    )


@pytest.mark.parametrize(
    ("status", "body", "expected_text", "expected_class"),
    [
        (
            429,
            '{"error": {"message": "Rate limit reached"}}',
            "429 RateLimitError: OpenAIException - Rate limit reached",
            (True, False, None),
        ),
        (
            400,
            '{"error": {"message": "This model\'s maximum context length is 8192 tokens"}}',
            (
                "400 ContextWindowExceededError: OpenAIException - This model's maximum context "
                "length is 8192 tokens"
            ),
            (False, True, None),
        ),
        (
            401,
            '{"error": {"message": "Incorrect API key"}}',
            "401 AuthenticationError: OpenAIException - Incorrect API key",
            (False, False, 401),
        ),
        (
            400,
            "plain text, not JSON",
            "400 OpenAIException - plain text, not JSON",
            (False, False, None),
        ),
        (
            502,
            "{}",
            "502 BadGatewayError: OpenAIException - {}",
            (True, False, None),
        ),
    ],
)
def test_http_failures_read_as_litellm_maps_them(
    status: int, body: str, expected_text: str, expected_class: tuple[bool, bool, int | None]
) -> None:
    text = describe_error(provider_error(status, body))
    assert text == expected_text
    assert classified(text) == expected_class


def test_transport_failures_are_retryable() -> None:
    for error in (
        timeout_error(),
        connection_error(answered=True),
        connection_error(answered=False),
    ):
        assert classified(describe_error(error)) == (True, False, None)
