"""Streamed completions from Anthropic's Messages API, sent by pi-lsp itself (no litellm).

The request is built once by ``anthropic_request`` from the chat messages every transport gets
(pi-lsp's ``cache_control`` breakpoints, thinking with its signatures, tools, images); it goes out
over ``http_stream`` (h11, connections kept alive across turns), and each ``data:`` line is
decoded by jiter and turned into a plain chunk dict by ``anthropic_events.ChunkTranslator``.

Failures read as the OpenAI-compatible path's do: the HTTP status, the exception name litellm
gives that status, then ``AnthropicException - <error type>: <message>``, so ``failed_messages.py``
classifies them as pi does (401/403 a refused key, 429, 5xx and ``overloaded_error`` retryable,
``prompt is too long`` and ``request_too_large`` a context overflow). ``serves`` decides:
``anthropic/…`` models (and ``models.json`` ``anthropic-messages`` providers), unless
``PI_LSP_LLM_TRANSPORT=litellm`` or the endpoint is behind a proxy ``http_stream`` does not speak
(``providers.sends_natively``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Mapping
from typing import Any

import h11
import jiter

from pi_lsp.llm import anthropic_request, http_stream, providers
from pi_lsp.llm.anthropic_events import ChunkTranslator, StreamErrorEvent
from pi_lsp.llm.config import ModelConfig
from pi_lsp.llm.provider_errors import ProviderError, timeout_error

_DATA_PREFIX = b"data:"
_FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "pause_turn": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}
"""Anthropic's ``stop_reason`` → the OpenAI ``finish_reason`` the stream reads (litellm's map)."""
_EXCEPTION_NAMES = {
    400: "BadRequestError",
    401: "AuthenticationError",
    403: "PermissionDeniedError",
    404: "NotFoundError",
    408: "Timeout",
    413: "RequestTooLargeError",
    422: "BadRequestError",
    429: "RateLimitError",
    500: "InternalServerError",
    502: "BadGatewayError",
    503: "ServiceUnavailableError",
    504: "Timeout",
    529: "OverloadedError",
}


def serves(model: ModelConfig) -> bool:
    """Whether ``model`` streams through this module instead of litellm."""
    return providers.sends_natively(model, "anthropic-messages")


async def stream_chunks(
    model: ModelConfig, arguments: Mapping[str, Any], headers: Mapping[str, str]
) -> AsyncGenerator[dict[str, Any], None]:
    """The stream's chunks as dicts in the OpenAI chunk shape; a failure raises
    ``ProviderError``. ``arguments`` are ``stream.completion_arguments``'s."""
    found = providers.route(model)
    if found is None:
        raise ValueError(f"{model.call_model} is not an Anthropic model")
    try:
        request_headers = anthropic_request.request_headers(arguments.get("api_key"), headers)
    except anthropic_request.MissingKeyError as error:
        raise ProviderError(401, str(error)) from error
    body = anthropic_request.request_body(
        model,
        found.model_id,
        arguments["messages"],
        arguments.get("tools") or (),
        effort=arguments.get("reasoning_effort"),
        max_tokens=arguments.get("max_tokens") or arguments.get("max_completion_tokens"),
    )
    url = anthropic_request.messages_url(found.base_url)
    translator = ChunkTranslator(lambda reason: _FINISH_REASONS.get(reason, "stop"))
    try:
        async with http_stream.post(
            url, json.dumps(body).encode(), request_headers, arguments.get("timeout")
        ) as response:
            if response.status >= 400:
                raise answer_error(response.status, await response.text())
            async for line in response.lines():
                if not line.startswith(_DATA_PREFIX):
                    continue  # "event:" names (the data repeats them), blank separators
                chunk = translator.chunk(jiter.from_json(line[len(_DATA_PREFIX) :].strip()))
                if chunk is not None:
                    yield chunk
    except StreamErrorEvent as error:
        raise ProviderError(
            500, f"500 InternalServerError: AnthropicException - {error}"
        ) from error
    except TimeoutError as error:
        raise timeout_error() from error
    except (http_stream.AnswerCutOff, OSError, h11.ProtocolError) as error:
        text = f"Connection error: {error or type(error).__name__}"
        raise ProviderError(500, f"500 AnthropicException - {text}") from error


def answer_error(status: int, body: str) -> ProviderError:
    """The error for an answer of ``status`` with Anthropic's error ``body``."""
    name = _EXCEPTION_NAMES.get(status, "APIError")
    try:
        error = json.loads(body).get("error") or {}
        text = f"{error.get('type', 'error')}: {error.get('message', '')}"
    except (ValueError, AttributeError):
        text = body.strip()
    if status == 400 and "prompt is too long" in text:
        name = "ContextWindowExceededError"
    return ProviderError(status, f"{status} {name}: AnthropicException - {text}")
