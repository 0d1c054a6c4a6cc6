"""The ``openai-completions`` wire API: streamed chat completions sent by pi-lsp itself.

Every provider of the table (``providers.py``) that speaks OpenAI's chat completions comes here:
OpenAI itself (``gpt-4o``, ``gpt-5``, the ``o`` series), an OpenAI-compatible server given by
``OPENAI_BASE_URL`` or an ``apiBase``, a ``models.json`` provider with ``api:
"openai-completions"``, OpenRouter, Groq, xAI, DeepSeek, Mistral, Cerebras and Ollama. litellm
would turn every streamed chunk into pydantic objects (about 0.5 ms of CPU each) after an import of
seconds and a few hundred MB; here the body is built once (``completion_arguments``, then
``request_body`` with the provider's rules), it goes out over ``http_stream`` (h11 on asyncio's
streams; connections are reused across turns), and each server-sent ``data:`` line is decoded by
jiter into plain dicts that ``AssistantStream`` turns into events.

The provider's rules (``providers.py``): OpenAI's reasoning models take ``max_completion_tokens``
and no ``temperature``; the reasoning effort goes as ``reasoning_effort``, as OpenRouter's
``reasoning`` object, or not at all; ``stream_options`` only where the provider takes it. The key
is the model's credential, else the provider's own environment variable.

``serves(model)`` decides. ``PI_LSP_LLM_TRANSPORT=litellm`` sends every model through litellm, and
so does an endpoint the environment routes through a proxy ``http_stream`` does not speak (a
``socks5://`` one); ``http://`` proxies (``HTTPS_PROXY``…) are spoken here (``proxies.py``).

Failures read as litellm's do (``provider_error``): the HTTP status, litellm's exception name
for it and ``OpenAIException - <provider text>``, so ``failed_messages.py`` classifies both paths
alike.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from typing import Any

import jiter
import msgspec

from pi_lsp.llm import http_stream, providers
from pi_lsp.llm.config import ModelConfig
from pi_lsp.llm.messages import THOUGHT_SIGNATURE_FIELD
from pi_lsp.llm.provider_errors import (
    provider_error,
)

# completion_arguments keys that configure litellm itself rather than go into the body.
_CLIENT_ARGUMENTS = frozenset(
    {"model", "api_base", "api_key", "timeout", "max_retries", "drop_params", "extra_body"}
)
_DATA_PREFIX = b"data:"
_DONE = b"[DONE]"
TRANSPORT_ENVIRONMENT_VARIABLE = providers.TRANSPORT_ENVIRONMENT_VARIABLE

_encode = msgspec.json.Encoder().encode


def serves(model: ModelConfig) -> bool:
    """Whether ``model`` streams through this module instead of litellm."""
    return providers.sends_natively(model, "openai-completions")


def request_body(
    arguments: Mapping[str, Any], found: providers.Route | None = None
) -> dict[str, Any]:
    """The JSON body for ``completion_arguments``'s ``arguments`` sent along ``found``: what
    litellm would send, with the provider's rules (module docstring)."""
    body = {key: value for key, value in arguments.items() if key not in _CLIENT_ARGUMENTS}
    model_id = found.model_id if found else str(arguments["model"]).partition("/")[2]
    body = {"model": model_id, **body}
    body["messages"] = [_without_empty_content(message) for message in body["messages"]]
    body.update(arguments.get("extra_body") or {})
    if found is not None:
        _apply_provider_rules(body, found)
    return body


def _apply_provider_rules(body: dict[str, Any], found: providers.Route) -> None:
    provider = found.provider
    if provider.id == "openai" and providers.is_reasoning_model(found.model_id):
        if "max_tokens" in body:
            body["max_completion_tokens"] = body.pop("max_tokens")
        body.pop("temperature", None)
    if not provider.usage_in_streaming:
        body.pop("stream_options", None)
    if provider.store:
        body["store"] = False
    effort = body.pop("reasoning_effort", None)
    if effort is None or provider.reasoning == "none":
        return
    if provider.reasoning == "openrouter":
        body["reasoning"] = {"effort": effort}
    else:
        body["reasoning_effort"] = effort


def _without_empty_content(message: dict[str, Any]) -> dict[str, Any]:
    # An assistant message that only calls tools has no content: litellm leaves the key out.
    if message.get("content") is None and "content" in message:
        message = {key: value for key, value in message.items() if key != "content"}
    calls = message.get("tool_calls")
    if calls and any(THOUGHT_SIGNATURE_FIELD in call for call in calls):
        unsigned = [
            {k: v for k, v in call.items() if k != THOUGHT_SIGNATURE_FIELD} for call in calls
        ]
        message = {**message, "tool_calls": unsigned}
    return message


def preload(model: ModelConfig) -> None:
    """Load what the first request needs, off the event loop: the model table (whether the model
    reasons, its prices; about a tenth of a second)."""
    from pi_lsp.llm.models import model_info

    model_info(model)


async def stream_chunks(
    model: ModelConfig,
    arguments: Mapping[str, Any],
    headers: Mapping[str, str],
) -> AsyncGenerator[dict[str, Any], None]:
    """The endpoint's streamed chunks as dicts; a failure raises ``ProviderError``."""
    found = providers.route(model)
    if found is None:
        raise ValueError(f"{model.call_model} is not a model of the provider table")
    url = found.base_url + "/chat/completions"
    timeout = arguments.get("timeout")
    request_headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
    # Like the provider's SDK: without a key of its own, the provider's environment variable.
    api_key = arguments.get("api_key") or providers.environment_key(found.provider)
    if api_key:
        request_headers["Authorization"] = f"Bearer {api_key}"
    request_headers.update(headers)
    with http_stream.failures_as_provider_errors():
        # No total timeout: a stream may run for minutes; each connect and read has ``timeout``.
        async with http_stream.post(
            url, _encode(request_body(arguments, found)), request_headers, timeout
        ) as response:
            if response.status >= 400:
                raise provider_error(response.status, await response.text())
            async for line in response.lines():
                if not line.startswith(_DATA_PREFIX):
                    continue  # blank separators, comments (": keep-alive"), event names
                payload = line[len(_DATA_PREFIX) :].strip()
                if payload == _DONE:
                    response.saw_end()  # the connection is then kept for the next request
                    return
                chunk = jiter.from_json(payload)
                if isinstance(chunk, dict) and chunk.get("error") is not None:
                    raise provider_error(_error_status(chunk["error"]), _error_text(chunk))
                yield chunk


def _error_status(error: Any) -> int:
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, int) and 400 <= code < 600 else 500


def _error_text(chunk: Mapping[str, Any]) -> str:
    error = chunk["error"]
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    return _encode(error).decode()
