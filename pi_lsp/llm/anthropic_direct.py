"""Streamed completions from Anthropic's Messages API without litellm's per-chunk objects.

litellm's Anthropic path turns every server-sent event into pydantic objects (its
``ModelResponseStream``, logging, repetition checks): several hundred microseconds of CPU per
streamed delta. Here litellm still does everything once per request — model name, key, headers
(``anthropic-version``, ``anthropic-beta`` where it adds one, ``x-api-key``), the OpenAI → Anthropic
request transformation with pi-lsp's ``cache_control`` breakpoints, thinking budget, tools,
images, signed thinking replayed, ``api_base`` and its ``/v1/messages`` suffix — by running
``litellm.acompletion`` with an HTTP client that records the request it is handed instead of
sending it (``_RecordingClient``). The recorded request goes out over ``http_stream`` (h11,
connections kept alive across turns), and each ``data:`` line is decoded by jiter and turned into
a plain chunk dict by ``anthropic_events.ChunkTranslator``.

Failures are mapped by litellm's own exception mapping (``exception_type``) from the same
``AnthropicError`` its handler raises for the same answer, so the error texts, statuses and pi's
retry and overflow classification are the litellm path's. ``serves`` decides: ``anthropic/…``
models, unless ``PI_LSP_LLM_TRANSPORT=litellm`` or a proxy variable routes the endpoint through a
proxy (``direct.proxied``); everything else goes through litellm as before, and so does a request
litellm sends without handing it to the recording client (its own stream is then read).
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import AsyncGenerator, Mapping
from typing import Any

import attrs
import h11
import jiter

from pi_lsp.llm import direct, http_stream
from pi_lsp.llm._litellm import (
    anthropic_exception,
    async_http_handler_class,
    finish_reason_mapper,
    load_litellm,
)
from pi_lsp.llm.anthropic_events import ChunkTranslator, StreamErrorEvent
from pi_lsp.llm.config import ModelConfig
from pi_lsp.llm.failures import timeout_error

DEFAULT_API_BASE = "https://api.anthropic.com"
_BASE_VARIABLES = ("ANTHROPIC_API_BASE", "ANTHROPIC_BASE_URL")
_DATA_PREFIX = b"data:"


def serves(model: ModelConfig) -> bool:
    """Whether ``model`` streams through this module instead of litellm's Anthropic handler."""
    if os.environ.get(direct.TRANSPORT_ENVIRONMENT_VARIABLE) == "litellm":
        return False
    if not model.call_model.startswith("anthropic/"):
        return False
    return not direct.proxied(_api_base(model))


def _api_base(model: ModelConfig) -> str:
    """The endpoint litellm sends ``model``'s requests to (before its ``/v1/messages`` suffix)."""
    if model.api_base:
        return model.api_base
    return next(
        (os.environ[name] for name in _BASE_VARIABLES if os.environ.get(name)), DEFAULT_API_BASE
    )


@attrs.frozen
class RecordedRequest:
    """What litellm would send: the URL, the JSON body and the headers."""

    url: str
    body: bytes
    headers: dict[str, str]


async def recorded_request(arguments: Mapping[str, Any]) -> tuple[RecordedRequest | None, Any]:
    """The request ``litellm.acompletion(**arguments)`` would send (see the module docstring),
    and litellm's answer: an unread stand-in, or, when litellm did not hand its request to the
    recording client, its own stream of the answer.

    litellm's own failures before sending (no key, a parameter it refuses) raise as they would.
    """
    litellm = load_litellm()
    client = _recording_client_class()()
    stream = await litellm.acompletion(**arguments, client=client)
    return client.recorded, stream


@functools.cache
def _recording_client_class() -> type:
    import httpx  # litellm's HTTP library, loaded with it

    class _Unsent:
        """Stands for the response: litellm wraps it in a stream that is never read."""

        headers = httpx.Headers()

        async def aiter_text(self) -> AsyncGenerator[str, None]:
            return
            yield ""  # pragma: no cover — an empty async generator

        async def aclose(self) -> None:
            return None

    class _RecordingClient(async_http_handler_class()):  # type: ignore[misc]
        """litellm's async HTTP client, recording the one POST it is asked for."""

        def __init__(self) -> None:  # no httpx client: nothing is sent
            self.recorded: RecordedRequest | None = None

        async def post(self, url: str, data: Any = None, headers: Any = None, **_: Any) -> Any:
            body = data.encode() if isinstance(data, str) else bytes(data or b"")
            self.recorded = RecordedRequest(url, body, dict(headers or {}))
            return _Unsent()

    return _RecordingClient


async def stream_chunks(
    model: ModelConfig, arguments: Mapping[str, Any]
) -> AsyncGenerator[Any, None]:
    """The stream's chunks as dicts in the shape litellm's chunks have (litellm's own chunks if
    it sent the request itself); failures raise the exception litellm would raise for them."""
    request, litellm_stream = await recorded_request(arguments)
    try:
        if request is None:  # litellm sent it some other way: its stream is the answer
            async for litellm_chunk in litellm_stream:
                yield litellm_chunk
            return
    finally:
        close = getattr(litellm_stream, "aclose", None)
        if close is not None:
            with contextlib.suppress(Exception):
                await close()
    translator = ChunkTranslator(finish_reason_mapper())
    try:
        async with http_stream.post(
            request.url, request.body, request.headers, arguments.get("timeout")
        ) as response:
            if response.status >= 400:
                raise _mapped(model, response.status, (await response.text()).encode())
            async for line in response.lines():
                if not line.startswith(_DATA_PREFIX):
                    continue  # "event:" names (the data repeats them), blank separators
                chunk = translator.chunk(jiter.from_json(line[len(_DATA_PREFIX) :].strip()))
                if chunk is not None:
                    yield chunk
    except StreamErrorEvent as error:
        raise _mapped(model, 500, str(error)) from error
    except TimeoutError as error:
        raise timeout_error() from error
    except (http_stream.AnswerCutOff, OSError, h11.ProtocolError) as error:
        raise _mapped(model, 500, f"Connection error: {error or type(error).__name__}") from error


def _mapped(model: ModelConfig, status: int, message: bytes | str) -> Exception:
    return anthropic_exception(model.call_model.partition("/")[2], status, message)
