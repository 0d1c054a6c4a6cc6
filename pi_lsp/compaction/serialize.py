"""pi 0.84.2's ``serializeConversation``: a conversation as plain text for the summarizer.

Summaries are asked for with the conversation pasted as text (``[User]: …``, ``[Assistant]: …``)
rather than as chat turns, so the model summarizes it instead of continuing it. 0.84.2 still
includes thinking blocks (``[Assistant thinking]:``); pi 1.2.0 and later leave them out, and so
does the text pi-lsp sends its summarizer (``include_thinking=False``: a model's private
reasoning is long, often wrong on the way, and not what the next model should build on), while
compaction plans (``pi-lsp session plan-compaction``) keep 0.84.2's text, which the conformance
tests compare with pi 0.84.2. Tool results are cut to 2000 characters, counted like JavaScript's
``String.length`` (UTF-16 code units).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pi_lsp.session.js_json import dumps, utf16_length
from pi_lsp.session.js_values import join, to_string
from pi_lsp.session.message_types import MessageRecord
from pi_lsp.session.messages import content_text

TOOL_RESULT_MAX_CHARS = 2000
_ARRAY_INDEX_LIMIT = 2**32 - 1


def serialize_conversation(
    messages: Iterable[MessageRecord], *, include_thinking: bool = True
) -> str:
    """Serialize LLM messages (``convert_to_llm`` output) into the summarizer's input text;
    ``include_thinking`` False is pi 1.2.0+'s form, without thinking blocks."""
    parts: list[str] = []
    for message in messages:
        role = message.get("role")
        if role == "user":
            text = content_text(message.get("content"), "")
            if text:
                parts.append(f"[User]: {text}")
        elif role == "assistant":
            parts.extend(_assistant_parts(message.get("content"), include_thinking))
        elif role == "toolResult":
            text = content_text(message.get("content"), "")
            if text:
                parts.append(f"[Tool result]: {truncate_for_summary(text, TOOL_RESULT_MAX_CHARS)}")
    return "\n\n".join(parts)


def _assistant_parts(content: Any, include_thinking: bool) -> list[str]:
    blocks = (
        [block for block in content if isinstance(block, Mapping)]
        if isinstance(content, list)
        else []
    )
    thinking_parts: list[Any] = []
    tool_calls: list[str] = []
    for block in blocks:
        if block.get("type") == "thinking":
            thinking_parts.append(block.get("thinking"))
        elif block.get("type") == "toolCall":
            arguments = ", ".join(
                f"{key}={dumps(value)}" for key, value in _object_entries(block.get("arguments"))
            )
            tool_calls.append(f"{to_string(block.get('name'))}({arguments})")
    parts = []
    if thinking_parts and include_thinking:
        parts.append(f"[Assistant thinking]: {join(thinking_parts, chr(10))}")
    if any(block.get("type") == "text" for block in blocks):
        parts.append(f"[Assistant]: {content_text(blocks)}")
    if tool_calls:
        parts.append(f"[Assistant tool calls]: {'; '.join(tool_calls)}")
    return parts


def truncate_for_summary(text: str, max_chars: int) -> str:
    """Keep the first ``max_chars`` UTF-16 code units and say how many were cut."""
    length = utf16_length(text)
    if length <= max_chars:
        return text
    return f"{utf16_slice(text, max_chars)}\n\n[... {length - max_chars} more characters truncated]"


def utf16_slice(text: str, end: int) -> str:
    """JavaScript's ``text.slice(0, end)``: it may split a surrogate pair, leaving half of it."""
    if text.isascii():
        return text[:end]
    return text.encode("utf-16-le", "surrogatepass")[: 2 * end].decode("utf-16-le", "surrogatepass")


def _object_entries(value: Any) -> list[tuple[str, Any]]:
    """``Object.entries``: integer-like keys first in ascending order, then the rest as inserted."""
    if isinstance(value, Mapping):
        items = [(str(key), item) for key, item in value.items()]
        indexes = sorted(
            (item for item in items if _is_array_index(item[0])), key=lambda item: int(item[0])
        )
        return indexes + [item for item in items if not _is_array_index(item[0])]
    if isinstance(value, (list, str)):
        return [(str(position), item) for position, item in enumerate(value)]
    return []


def _is_array_index(key: str) -> bool:
    return (
        key.isascii()
        and key.isdigit()
        and (key == "0" or key[0] != "0")
        and int(key) < _ARRAY_INDEX_LIMIT
    )
