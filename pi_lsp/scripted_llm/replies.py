"""The replies a scripted LLM server can give, and the helpers tests build them with.

A ``Reply`` is one scripted answer to one ``POST /v1/chat/completions``: either an HTTP error
(status + OpenAI-style error body) or a stream of OpenAI ``delta`` dicts ending with a
``finish_reason``, optionally slowed down, cut short or broken by an in-stream error event. The
same replies are described in JSON script files (``{"kind": "text", "text": "Hi"}``), so a server
running in another process can be scripted exactly like the in-process one.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

Delta = dict[str, Any]
ToolCallScript = tuple[str, str, Mapping[str, Any]]


@attrs.frozen
class Reply:
    """One scripted answer: what to stream (or which error to return) and how fast."""

    deltas: tuple[Delta, ...] = ()
    finish_reason: str | None = "stop"
    status: int = 200
    error_body: Mapping[str, Any] | None = None
    # Explicit usage numbers; None derives them from the sizes of the request and the answer.
    usage: Mapping[str, Any] | None = None
    chunk_delay: float = 0.0
    # Seconds to wait after the headers and before the first chunk (a provider that stalls).
    hang_seconds: float = 0.0
    # An OpenAI-style error object sent as an SSE event after the deltas (a mid-stream failure).
    stream_error: Mapping[str, Any] | None = None
    # Close the connection after the deltas without a finish_reason (a dropped stream).
    drop_connection: bool = False
    # Hold the answer after its first delta until the test releases this gate (``gates.py``).
    gate: str | None = None

    @property
    def is_http_error(self) -> bool:
        return self.status >= 400


def _split(text: str, chunks: int) -> list[str]:
    if not text:
        return []
    size = max(1, math.ceil(len(text) / max(1, chunks)))
    return [text[start : start + size] for start in range(0, len(text), size)]


def _text_deltas(text: str, chunks: int, reasoning: str | None) -> list[Delta]:
    deltas: list[Delta] = [{"role": "assistant"}]
    if reasoning:
        deltas += [{"reasoning_content": part} for part in _split(reasoning, chunks)]
    deltas += [{"content": part} for part in _split(text, chunks)]
    return deltas


def text(
    text: str,
    *,
    chunks: int = 3,
    reasoning: str | None = None,
    usage: Mapping[str, Any] | None = None,
    chunk_delay: float = 0.0,
) -> Reply:
    """A streamed answer: optional ``reasoning_content`` deltas, then ``text`` in ``chunks``."""
    return Reply(
        deltas=tuple(_text_deltas(text, chunks, reasoning)),
        usage=usage,
        chunk_delay=chunk_delay,
    )


def length_stop(
    text: str = "This answer was cut",
    *,
    chunks: int = 3,
    usage: Mapping[str, Any] | None = None,
) -> Reply:
    """An answer that ends with ``finish_reason: "length"`` (the output token limit was reached)."""
    return Reply(
        deltas=tuple(_text_deltas(text, chunks, None)), finish_reason="length", usage=usage
    )


def _tool_call_deltas(index: int, call: ToolCallScript, argument_chunks: int) -> list[Delta]:
    call_id, name, arguments = call
    encoded = json.dumps(dict(arguments))
    parts = _split(encoded, argument_chunks) or [""]
    first = {
        "index": index,
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": parts[0]},
    }
    rest = [{"index": index, "function": {"arguments": part}} for part in parts[1:]]
    return [{"tool_calls": [entry]} for entry in [first, *rest]]


def tool_calls(
    calls: Sequence[ToolCallScript],
    *,
    text: str | None = None,
    argument_chunks: int = 3,
    usage: Mapping[str, Any] | None = None,
    chunk_delay: float = 0.0,
) -> Reply:
    """Tool calls ``(id, name, arguments)`` whose JSON arguments arrive over several chunks."""
    deltas = _text_deltas(text or "", 2, None)
    for index, call in enumerate(calls):
        deltas += _tool_call_deltas(index, call, argument_chunks)
    return Reply(
        deltas=tuple(deltas), finish_reason="tool_calls", usage=usage, chunk_delay=chunk_delay
    )


def error(
    status: int = 500,
    message: str = "Internal server error",
    *,
    error_type: str | None = None,
    code: str | None = None,
) -> Reply:
    """An HTTP error with an OpenAI-style body ``{"error": {"message", "type", "code"}}``."""
    default_type = {429: "rate_limit_error", 400: "invalid_request_error"}.get(
        status, "server_error"
    )
    body = {
        "error": {
            "message": message,
            "type": error_type or default_type,
            "param": None,
            "code": code,
        }
    }
    return Reply(finish_reason=None, status=status, error_body=body)


def context_overflow(max_tokens: int = 8192, requested: int = 10240) -> Reply:
    """OpenAI's 400 ``context_length_exceeded`` answer to a prompt longer than the window."""
    message = (
        f"This model's maximum context length is {max_tokens} tokens. However, your messages "
        f"resulted in {requested} tokens. Please reduce the length of the messages."
    )
    return error(400, message, error_type="invalid_request_error", code="context_length_exceeded")


def hang(seconds: float = 30.0, *, text: str = "", chunks: int = 1) -> Reply:
    """Send the headers (and ``text``, if any), then stall for ``seconds`` before finishing."""
    return Reply(deltas=tuple(_text_deltas(text, chunks, None)), hang_seconds=seconds)


def slow_text(text: str, *, chunks: int = 10, chunk_delay: float = 0.2) -> Reply:
    """A streamed answer with ``chunk_delay`` seconds between chunks (for abort tests)."""
    return Reply(deltas=tuple(_text_deltas(text, chunks, None)), chunk_delay=chunk_delay)


def mid_stream_error(
    text: str = "Partial ans", *, status: int = 500, message: str = "Internal server error"
) -> Reply:
    """Stream ``text`` and then an SSE error event instead of a finish_reason."""
    error_object = {"message": message, "type": "server_error", "code": status}
    return Reply(
        deltas=tuple(_text_deltas(text, 2, None)), finish_reason=None, stream_error=error_object
    )


def dropped_stream(text: str = "Partial ans") -> Reply:
    """Stream ``text`` and close the connection without a finish_reason."""
    return Reply(
        deltas=tuple(_text_deltas(text, 2, None)), finish_reason=None, drop_connection=True
    )


def usage_for(reply: Reply, messages: Sequence[Any]) -> dict[str, Any]:
    """The reply's OpenAI usage; missing numbers are estimated at four characters per token."""
    given = dict(reply.usage or {})
    answer_chars = sum(len(json.dumps(delta)) for delta in reply.deltas if "role" not in delta)
    prompt = given.get("prompt_tokens", math.ceil(len(json.dumps(list(messages))) / 4))
    completion = given.get("completion_tokens", math.ceil(answer_chars / 4))
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": given.get("total_tokens", prompt + completion),
    }
    for key in ("prompt_tokens_details", "completion_tokens_details"):
        if key in given:
            usage[key] = given[key]
    return usage


_HELPERS: dict[str, Callable[..., Any]] = {
    "text": text,
    "length_stop": length_stop,
    "tool_calls": tool_calls,
    "error": error,
    "context_overflow": context_overflow,
    "hang": hang,
    "slow_text": slow_text,
    "mid_stream_error": mid_stream_error,
    "dropped_stream": dropped_stream,
}


def gated(reply: Reply, gate: str) -> Reply:
    """``reply``, held after its first delta until the test releases ``gate``."""
    return attrs.evolve(reply, gate=gate)


def reply_from_json(entry: Mapping[str, Any]) -> Reply:
    """A reply from a script entry: ``{"kind": <helper name>, ...that helper's arguments}``.

    ``tool_calls`` entries give their calls as ``[[id, name, {arguments}], ...]`` (JSON has no
    tuples); the ``text`` helper's first argument is the ``text`` key. Any entry may name a
    ``gate`` that holds it open (``gated``).
    """
    arguments = dict(entry)
    gate = arguments.pop("gate", None)
    if gate is not None:
        return gated(reply_from_json(arguments), str(gate))
    kind = arguments.pop("kind", None)
    helper = _HELPERS.get(str(kind))
    if helper is None:
        raise ValueError(f"unknown scripted reply kind {kind!r}; known: {sorted(_HELPERS)}")
    if kind == "tool_calls":
        arguments["calls"] = [tuple(call) for call in arguments.get("calls", [])]
    return helper(**arguments)
