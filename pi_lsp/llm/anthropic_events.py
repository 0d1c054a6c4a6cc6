"""Anthropic Messages stream events → the chunk dicts ``AssistantStream`` reads, as litellm made.

litellm's Anthropic stream handler (``ModelResponseIterator``) turns every server-sent event into
a pydantic ``ModelResponseStream`` in the OpenAI chunk shape; ``AssistantStream`` then reads its
``choices[0].delta`` and ``usage``. ``ChunkTranslator`` makes the same chunks as plain dicts, with
litellm's rules, so both transports give the same events and messages:

- ``text_delta`` → ``content``; ``thinking_delta`` → ``reasoning_content``; ``signature_delta``
  → a ``thinking_blocks`` entry carrying the signature; ``redacted_thinking`` → a
  ``thinking_blocks`` entry carrying its data;
- a ``tool_use`` block opens tool call number *n* (counted from 0 over the tool blocks only, as
  litellm's ``tool_index``) with its id and name; its ``input_json_delta`` pieces are the
  arguments; a tool block that streamed no argument at all gets ``"{}"`` when it stops;
- ``message_start`` and ``message_delta`` carry usage, merged (``message_delta``'s is cumulative
  but may leave out what ``message_start`` said): ``prompt_tokens`` counts the cache reads and
  writes too, and the cache fields litellm reports are kept; ``message_delta``'s ``stop_reason``
  becomes the finish reason through the caller's map (litellm's: ``end_turn`` → ``stop``,
  ``tool_use`` → ``tool_calls``, ``max_tokens`` → ``length``…);
- an ``error`` event is raised as ``StreamErrorEvent`` with its type and message;
  ``ping``, ``message_stop`` and ``content_block_stop`` of other blocks give nothing.

Text and thinking deltas, nearly all of a stream, cost one small dict each and nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Chunk = dict[str, Any]


class StreamErrorEvent(Exception):
    """The stream's ``error`` event: its message."""


def _delta_chunk(delta: dict[str, Any], finish_reason: str | None = None) -> Chunk:
    choice: dict[str, Any] = {"index": 0, "delta": delta}
    if finish_reason is not None:
        choice["finish_reason"] = finish_reason
    return {"choices": [choice]}


class ChunkTranslator:
    """One stream's translation state (see the module docstring)."""

    def __init__(self, finish_reason_of: Callable[[str], str]) -> None:
        self._finish_reason_of = finish_reason_of
        self._usage: dict[str, Any] = {}
        self._block_type: str | None = None
        self._tool_index = -1
        self._tool_arguments_seen = False

    def chunk(self, event: Mapping[str, Any]) -> Chunk | None:
        """The chunk for one decoded event, or None when it carries nothing to read."""
        kind = event.get("type")
        if kind == "content_block_delta":
            return self._content_delta(event.get("delta") or {})
        if kind == "content_block_start":
            return self._block_start(event.get("content_block") or {})
        if kind == "content_block_stop":
            return self._block_stop()
        if kind == "message_start":
            usage = (event.get("message") or {}).get("usage")
            return {"choices": [], "usage": self._merged_usage(usage)} if usage else None
        if kind == "message_delta":
            return self._message_delta(event)
        if kind == "error":
            error = event.get("error") or {}
            if not isinstance(error, Mapping) or not error.get("message"):
                raise StreamErrorEvent(str(dict(event)))
            kind = error.get("type")
            raise StreamErrorEvent(f"{kind}: {error['message']}" if kind else error["message"])
        return None

    def _content_delta(self, delta: Mapping[str, Any]) -> Chunk | None:
        if "text" in delta:
            return _delta_chunk({"content": delta["text"]})
        if "partial_json" in delta:
            if self._block_type != "tool_use":
                return None
            arguments = delta["partial_json"]
            if arguments:
                self._tool_arguments_seen = True
            call = {"index": self._tool_index, "function": {"arguments": arguments}}
            return _delta_chunk({"tool_calls": [call]})
        thinking = delta.get("thinking")
        signature = delta.get("signature")
        fields: dict[str, Any] = {}
        if isinstance(thinking, str) and thinking:
            fields["reasoning_content"] = thinking
        if isinstance(signature, str) and signature:
            fields["thinking_blocks"] = [{"type": "thinking", "signature": signature}]
        return _delta_chunk(fields) if fields else None

    def _block_start(self, block: Mapping[str, Any]) -> Chunk | None:
        kind = block.get("type")
        self._block_type = kind if isinstance(kind, str) else None
        if kind == "text":
            text = block.get("text")
            return _delta_chunk({"content": text}) if text else None
        if kind == "tool_use":
            self._tool_index += 1
            self._tool_arguments_seen = False
            call = {
                "index": self._tool_index,
                "id": block.get("id"),
                "function": {"name": block.get("name"), "arguments": ""},
            }
            return _delta_chunk({"tool_calls": [call]})
        if kind == "redacted_thinking":
            redacted = {"type": "redacted_thinking", "data": block.get("data")}
            return _delta_chunk({"thinking_blocks": [redacted]})
        return None

    def _block_stop(self) -> Chunk | None:
        was_tool, self._block_type = self._block_type == "tool_use", None
        if was_tool and not self._tool_arguments_seen:
            call = {"index": self._tool_index, "function": {"arguments": "{}"}}
            return _delta_chunk({"tool_calls": [call]})
        return None

    def _message_delta(self, event: Mapping[str, Any]) -> Chunk:
        stop_reason = (event.get("delta") or {}).get("stop_reason") or "stop"
        chunk = _delta_chunk({}, self._finish_reason_of(stop_reason))
        usage = event.get("usage")
        if usage:
            chunk["usage"] = self._merged_usage(usage)
        return chunk

    def _merged_usage(self, usage: Mapping[str, Any]) -> dict[str, Any]:
        """The OpenAI-style usage litellm reports for the usage seen so far."""
        self._usage = {**self._usage, **usage}
        fields = self._usage
        cache_read = _count(fields.get("cache_read_input_tokens"))
        cache_write = _count(fields.get("cache_creation_input_tokens"))
        details: dict[str, Any] = {
            "cached_tokens": cache_read,
            "cache_creation_tokens": cache_write,
        }
        creation = fields.get("cache_creation")
        if isinstance(creation, Mapping):
            details["cache_creation_token_details"] = dict(creation)
        prompt = _count(fields.get("input_tokens")) + cache_read + cache_write
        output = _count(fields.get("output_tokens"))
        return {
            "prompt_tokens": prompt,
            "completion_tokens": output,
            "total_tokens": prompt + output,
            "prompt_tokens_details": details,
            "cache_read_input_tokens": cache_read,
            "cache_creation_input_tokens": cache_write,
        }


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
