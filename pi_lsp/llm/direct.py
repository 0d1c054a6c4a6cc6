"""Streamed completions sent straight to an OpenAI-compatible endpoint: no per-chunk objects.

litellm turns every streamed chunk into pydantic objects (the openai SDK's, then its own
``ModelResponseStream``), which costs about 0.5 ms of CPU per chunk, and ``import litellm`` costs
seconds and a few hundred MB. For a model served by an OpenAI-compatible endpoint of its own (a
``models.json`` provider with ``api: "openai-completions"``, a local server, an ``openai/…``
model with an ``apiBase``) pi-lsp needs none of that: the request body is the one litellm would
send (``completion_arguments``, then ``request_body``), it goes out over ``http_stream`` (h11 on
asyncio's streams; connections are reused across turns), and each server-sent ``data:`` line is
decoded by jiter into plain dicts that ``AssistantStream`` turns into events.

``serves(model)`` decides. Everything else goes through litellm: other providers and the OpenAI
models litellm rewrites parameters for (``o1``…, ``gpt-5``…). ``PI_LSP_LLM_TRANSPORT=litellm``
sends every model through litellm, and so does an endpoint an ``HTTP(S)_PROXY`` variable would
route through a proxy (litellm's httpx client honours those variables; ``http_stream`` does not).

Failures read as litellm's do (``provider_error``): the HTTP status, litellm's exception name
for it and ``OpenAIException - <provider text>``, so ``errors.py`` classifies both paths alike.
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncGenerator, Mapping
from typing import Any

import h11
import jiter
import msgspec

from pi_lsp.llm import http_stream
from pi_lsp.llm.config import ModelConfig
from pi_lsp.llm.failures import (
    ProviderError,
    connection_error,
    provider_error,
    timeout_error,
)

TRANSPORT_ENVIRONMENT_VARIABLE = "PI_LSP_LLM_TRANSPORT"
# Model ids litellm rewrites parameters for (max_tokens → max_completion_tokens, no temperature…).
_REWRITTEN_MODELS = re.compile(r"^(?:o\d|gpt-5|gpt-4\.5)", re.IGNORECASE)
# completion_arguments keys that configure litellm itself rather than go into the body.
_CLIENT_ARGUMENTS = frozenset(
    {"model", "api_base", "api_key", "timeout", "max_retries", "drop_params", "extra_body"}
)
_DATA_PREFIX = b"data:"
_DONE = b"[DONE]"

_encode = msgspec.json.Encoder().encode


def serves(model: ModelConfig) -> bool:
    """Whether ``model`` streams through this module instead of litellm."""
    if os.environ.get(TRANSPORT_ENVIRONMENT_VARIABLE) == "litellm":
        return False
    prefix, slash, model_id = model.call_model.partition("/")
    return (
        bool(slash)
        and prefix == "openai"
        and bool(model.api_base)
        and not _REWRITTEN_MODELS.match(model_id)
        and not proxied(model.api_base or "")
    )


def proxied(url: str) -> bool:
    """Whether the environment's proxy variables send requests to ``url`` through a proxy."""
    if not any(name.lower().endswith("_proxy") for name in os.environ):
        return False
    import urllib.request  # 70 ms of imports, paid only where proxy variables are set

    scheme, _, rest = url.partition("://")
    host = rest.split("/", 1)[0]
    proxies = urllib.request.getproxies_environment()
    if not (proxies.get(scheme.lower()) or proxies.get("all")):
        return False
    return not urllib.request.proxy_bypass(host)  # on POSIX: NO_PROXY from the environment


def request_body(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON body litellm would send for ``completion_arguments``'s ``arguments``."""
    body = {key: value for key, value in arguments.items() if key not in _CLIENT_ARGUMENTS}
    body = {"model": str(arguments["model"]).partition("/")[2], **body}
    body["messages"] = [_without_empty_content(message) for message in body["messages"]]
    body.update(arguments.get("extra_body") or {})
    return body


def _without_empty_content(message: dict[str, Any]) -> dict[str, Any]:
    # An assistant message that only calls tools has no content: litellm leaves the key out.
    if message.get("content") is None and "content" in message:
        return {key: value for key, value in message.items() if key != "content"}
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
    url = str(model.api_base).rstrip("/") + "/chat/completions"
    timeout = arguments.get("timeout")
    request_headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
    # Like litellm's OpenAI client: without a key of its own, the environment's OpenAI key.
    api_key = arguments.get("api_key") or os.environ.get("OPENAI_API_KEY")
    if api_key:
        request_headers["Authorization"] = f"Bearer {api_key}"
    request_headers.update(headers)
    try:
        # No total timeout: a stream may run for minutes; each connect and read has ``timeout``.
        async with http_stream.post(
            url, _encode(request_body(arguments)), request_headers, timeout
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
    except ProviderError:
        raise
    except TimeoutError as error:
        raise timeout_error() from error
    except http_stream.AnswerCutOff as error:
        raise connection_error(answered=True) from error
    except (OSError, h11.ProtocolError) as error:
        raise connection_error(answered=False) from error


def _error_status(error: Any) -> int:
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, int) and 400 <= code < 600 else 500


def _error_text(chunk: Mapping[str, Any]) -> str:
    error = chunk["error"]
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    return _encode(error).decode()
