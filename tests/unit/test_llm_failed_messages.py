"""Failed-message classification as pi does it: overflow, retryable, backoff; error texts."""

from __future__ import annotations

from typing import Any

import pytest

from pi_lsp.llm.failed_messages import (
    is_context_overflow,
    is_recoverable_length,
    is_retryable_error,
    retry_delay_ms,
)
from pi_lsp.llm.provider_errors import describe_error


def failed(error_message: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [],
        "stopReason": "error",
        "errorMessage": error_message,
        "usage": usage(0, 0),
    }


def usage(input_tokens: int, output: int, cache_read: int = 0) -> dict[str, Any]:
    return {"input": input_tokens, "output": output, "cacheRead": cache_read, "cacheWrite": 0}


def finished(
    stop_reason: str, input_tokens: int, output: int, cache_read: int = 0
) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [],
        "stopReason": stop_reason,
        "usage": usage(input_tokens, output, cache_read),
    }


OVERFLOW_TEXTS = [
    "prompt is too long: 213462 tokens > 200000 maximum",
    "Your input exceeds the context window of this model",
    "Requested token count exceeds the model's maximum context length of 131072 tokens",
    "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)",
    "This model's maximum prompt length is 131072 but the request contains 537812 tokens",
    "Please reduce the length of the messages or completion",
    "This endpoint's maximum context length is 8192 tokens. However, you requested about 9000",
    "the request exceeds the available context size, try increasing it",
    "prompt token count of 140000 exceeds the limit of 128000",
    "Your request exceeded model token limit: 262144 (requested: 300000)",
    "413 status code (no body)",
    (
        "400 ContextWindowExceededError: OpenAIException - "
        "This model's maximum context length is 8192 tokens."
    ),
    "litellm.ContextWindowExceededError: something new",
    "error code: context_length_exceeded",
    "prompt too long; exceeded max context length by 100 tokens",
]


@pytest.mark.parametrize("text", OVERFLOW_TEXTS)
def test_overflow_errors(text: str) -> None:
    assert is_context_overflow(failed(text), None)
    assert not is_retryable_error(failed(text))


@pytest.mark.parametrize(
    "text",
    [
        "ThrottlingException: Too many tokens, please wait before trying again. rate limit",
        "429 Too many requests: too many tokens per minute",
    ],
)
def test_rate_limits_mentioning_tokens_are_not_overflow(text: str) -> None:
    assert not is_context_overflow(failed(text), None)
    assert is_retryable_error(failed(text))


def test_bedrock_throttling_is_neither_overflow_nor_retryable_as_in_pi() -> None:
    message = failed("Throttling error: Too many tokens")
    assert not is_context_overflow(message, None)
    assert not is_retryable_error(message)


def test_overflow_needs_an_error_stop() -> None:
    message = failed("prompt is too long")
    message["stopReason"] = "stop"
    assert not is_context_overflow(message, None)


def test_silent_overflow_by_usage() -> None:
    assert is_context_overflow(finished("stop", 120_000, 10, cache_read=9_000), 128_000)
    assert not is_context_overflow(finished("stop", 120_000, 10), 128_000)
    assert not is_context_overflow(finished("stop", 200_000, 10), None)
    assert not is_context_overflow(finished("toolUse", 200_000, 10), 128_000)


def test_length_stop_with_no_output_and_a_filled_window_is_overflow() -> None:
    assert is_context_overflow(finished("length", 127_000, 0), 128_000)
    assert not is_context_overflow(finished("length", 127_000, 5), 128_000)
    assert not is_context_overflow(finished("length", 100_000, 0), 128_000)


def test_a_length_stop_below_the_models_own_limit_is_recoverable() -> None:
    # pi 1.6's isRecoverableLength: below the model's maxTokens, never with an unknown limit.
    assert is_recoverable_length(finished("length", 1_000, 200), 1_000)
    assert not is_recoverable_length(finished("length", 1_000, 1_000), 1_000)
    assert not is_recoverable_length(finished("length", 1_000, 200), None)
    assert not is_recoverable_length(finished("stop", 1_000, 200), 1_000)


@pytest.mark.parametrize(
    "text",
    [
        "429 RateLimitError: OpenAIException - Rate limit reached",
        "503 ServiceUnavailableError: OpenAIException - overloaded",
        "500 InternalServerError: OpenAIException - Connection error.",
        "500 APIConnectionError: OpenAIException - Internal server error",
        "408 APITimeoutError - Request timed out.",
        "Overloaded",
        "fetch failed",
        "socket hang up",
        "Stream ended without finish_reason",
        "TimeoutError",
    ],
)
def test_retryable_errors(text: str) -> None:
    assert is_retryable_error(failed(text))


@pytest.mark.parametrize(
    "text",
    [
        "400 BadRequestError: OpenAIException - Invalid value for 'tools'",
        "401 AuthenticationError: Incorrect API key provided",
        "429 RateLimitError: You exceeded your current quota (insufficient_quota)",
        "Provider finish_reason: content_filter",
    ],
)
def test_final_errors(text: str) -> None:
    assert not is_retryable_error(failed(text))


def test_only_error_messages_are_retryable() -> None:
    message = failed("503 overloaded")
    message["stopReason"] = "aborted"
    assert not is_retryable_error(message)
    assert not is_retryable_error({"stopReason": "error"})


def test_silent_overflow_excludes_retry_when_the_window_is_given() -> None:
    message = finished("stop", 200_000, 0)
    assert not is_retryable_error(message, 128_000)


def test_retry_delays_double() -> None:
    assert [retry_delay_ms(attempt) for attempt in (1, 2, 3)] == [2000, 4000, 8000]
    assert retry_delay_ms(2, base_delay_ms=500) == 1000
    assert retry_delay_ms(0) == 2000


class FakeLitellmError(Exception):
    status_code = 429


FakeLitellmError.__module__ = "litellm.exceptions"


def test_describe_error_strips_litellm_class_chains_and_adds_the_status() -> None:
    error = FakeLitellmError(
        "litellm.RateLimitError: RateLimitError: OpenAIException - slow down"
        " Original exception: RateLimitError: again\nReceived Model Group=x"
    )
    assert describe_error(error) == "429 RateLimitError: OpenAIException - slow down"


def test_describe_error_keeps_foreign_class_names() -> None:
    assert describe_error(ConnectionResetError("peer went away")) == (
        "ConnectionResetError: peer went away"
    )
    assert describe_error(TimeoutError()) == "TimeoutError"
