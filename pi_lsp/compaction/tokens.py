"""Token counts for compaction decisions: pi's estimates and provider-reported usage.

Two tokenizers, chosen by name:

- ``chars4`` is pi 0.84.2's ``estimateTokens`` exactly: characters (UTF-16 code units, JavaScript's
  ``String.length``) divided by four and rounded up, 4800 characters per image. Plans made with it
  agree with pi's to the token.
- ``tiktoken`` counts the same pieces of text with OpenAI's ``o200k_base`` encoding (1200 tokens per
  image). It is closer to what providers bill for code, CJK text and JSON, at the cost of agreeing
  with pi only approximately.

Where pi would throw on a malformed message (a text block without text), the missing piece counts
as empty instead, so one damaged line cannot stop a session from compacting.
"""

from __future__ import annotations

import functools
import importlib.util
import math
import os
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeGuard

import attrs

from pi_lsp.session.js_json import dumps, utf16_length
from pi_lsp.session.js_values import UNDEFINED, is_truthy
from pi_lsp.session.message_types import MessageRecord

ESTIMATED_IMAGE_CHARS = 4800
ESTIMATED_IMAGE_TOKENS = 1200
TIKTOKEN_ENCODING = "o200k_base"


class TokenCounter(Protocol):
    """Estimates how many tokens one AgentMessage adds to the context."""

    name: str

    def estimate_message_tokens(self, message: MessageRecord) -> int: ...


@attrs.frozen
class MessageText:
    """What a message contributes to its estimate: pieces of text and a number of images."""

    pieces: list[str]
    image_count: int = 0


class Chars4Counter:
    """pi's ``estimateTokens``: ``ceil(chars / 4)``."""

    name = "chars4"

    def estimate_message_tokens(self, message: MessageRecord) -> int:
        text = message_text_for_estimate(message)
        chars = (
            sum(utf16_length(piece) for piece in text.pieces)
            + ESTIMATED_IMAGE_CHARS * text.image_count
        )
        return math.ceil(chars / 4)


class TiktokenCounter:
    """The same pieces of text as ``chars4``, counted with tiktoken's ``o200k_base``."""

    name = "tiktoken"

    def estimate_message_tokens(self, message: MessageRecord) -> int:
        text = message_text_for_estimate(message)
        encoding = _tiktoken_encoding()
        tokens = sum(
            len(encoding.encode(piece, disallowed_special=())) for piece in text.pieces if piece
        )
        return tokens + ESTIMATED_IMAGE_TOKENS * text.image_count


CHARS4 = Chars4Counter()
TIKTOKEN = TiktokenCounter()
TOKENIZERS: dict[str, TokenCounter] = {CHARS4.name: CHARS4, TIKTOKEN.name: TIKTOKEN}


def get_token_counter(name: str) -> TokenCounter:
    """The counter called ``name`` (``chars4`` or ``tiktoken``)."""
    try:
        return TOKENIZERS[name]
    except KeyError:
        raise ValueError(
            f"unknown tokenizer {name!r} (expected one of: {', '.join(TOKENIZERS)})"
        ) from None


def estimate_tokens(message: MessageRecord) -> int:
    """pi's ``estimateTokens`` (the ``chars4`` counter)."""
    return CHARS4.estimate_message_tokens(message)


def message_text_for_estimate(message: MessageRecord) -> MessageText:
    """The text pieces (and images) pi's ``estimateTokens`` measures for each role."""
    role = message.get("role")
    if role in ("user", "custom", "toolResult"):
        return _text_and_images(message.get("content"))
    if role == "assistant":
        pieces: list[str] = []
        for block in _blocks(message.get("content")):
            block_type = block.get("type")
            if block_type == "text":
                pieces.append(_string(block.get("text")))
            elif block_type == "thinking":
                pieces.append(_string(block.get("thinking")))
            elif block_type == "toolCall":
                pieces.append(_string(block.get("name")))
                if "arguments" in block:
                    pieces.append(dumps(block["arguments"]))
        return MessageText(pieces)
    if role == "bashExecution":
        return MessageText([_string(message.get("command")), _string(message.get("output"))])
    if role in ("branchSummary", "compactionSummary"):
        return MessageText([_string(message.get("summary"))])
    return MessageText([])


def _text_and_images(content: Any) -> MessageText:
    if isinstance(content, str):
        return MessageText([content])
    pieces: list[str] = []
    images = 0
    for block in _blocks(content):
        block_type = block.get("type")
        if block_type == "text" and is_truthy(block.get("text")):
            pieces.append(_string(block.get("text")))
        elif block_type == "image":
            images += 1
    return MessageText(pieces, images)


def _blocks(content: Any) -> list[Mapping[str, Any]]:
    if not isinstance(content, list):
        return []
    return [block for block in content if isinstance(block, Mapping)]


def _string(value: Any) -> str:
    return value if isinstance(value, str) else ""


@functools.cache
def _tiktoken_encoding() -> Any:
    # litellm ships tiktoken's encoding files; pointing tiktoken at them keeps this offline. Found
    # without importing litellm, which takes seconds.
    spec = importlib.util.find_spec("litellm")
    if spec is not None and spec.submodule_search_locations:
        bundled = os.path.join(
            next(iter(spec.submodule_search_locations)), "litellm_core_utils", "tokenizers"
        )
        os.environ["TIKTOKEN_CACHE_DIR"] = bundled
    import tiktoken

    return tiktoken.get_encoding(TIKTOKEN_ENCODING)


# ---------------------------------------------------------------------------------------------
# Usage reported by the provider
# ---------------------------------------------------------------------------------------------


def calculate_context_tokens(usage: Mapping[str, Any]) -> int | float:
    """``totalTokens``, else input + output + cache read + cache write (NaN if one is missing)."""
    total = usage.get("totalTokens")
    if is_truthy(total):
        return total if _is_number(total) else math.nan
    parts = [usage.get(key, UNDEFINED) for key in ("input", "output", "cacheRead", "cacheWrite")]
    # JavaScript adds null as 0 and booleans as 0/1, but undefined (or an object) as NaN; NaN usage
    # is never trusted.
    parts = [0 if part is None else int(part) if isinstance(part, bool) else part for part in parts]
    if not all(_is_number(part) for part in parts):
        return math.nan
    return sum(parts)


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def get_assistant_usage(message: MessageRecord) -> Mapping[str, Any] | None:
    """The usage of an assistant message that completed (not aborted, not failed), if non-zero."""
    if message.get("role") != "assistant" or "usage" not in message:
        return None
    usage = message["usage"]
    if message.get("stopReason") in ("aborted", "error") or not is_truthy(usage):
        return None
    if not isinstance(usage, Mapping) or not calculate_context_tokens(usage) > 0:
        return None
    return usage


def get_last_assistant_usage(entries: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The usage of the newest ``message`` entry that has trustworthy usage."""
    for entry in reversed(entries):
        if entry.get("type") == "message":
            message = entry.get("message")
            usage = get_assistant_usage(message) if isinstance(message, Mapping) else None
            if usage is not None:
                return usage
    return None


@attrs.frozen
class ContextTokenEstimate:
    """Context size: the last reported usage plus estimates of the messages after it."""

    tokens: int | float
    usage_tokens: int | float
    trailing_tokens: int
    last_usage_index: int | None

    def to_json(self) -> dict[str, Any]:
        return {
            "tokens": self.tokens,
            "usageTokens": self.usage_tokens,
            "trailingTokens": self.trailing_tokens,
            "lastUsageIndex": self.last_usage_index,
        }


def estimate_context_tokens(
    messages: Sequence[MessageRecord], counter: TokenCounter = CHARS4
) -> ContextTokenEstimate:
    """pi's ``estimateContextTokens``; without any usable usage every message is estimated."""
    for index in range(len(messages) - 1, -1, -1):
        usage = get_assistant_usage(messages[index])
        if usage is not None:
            usage_tokens = calculate_context_tokens(usage)
            trailing = sum(
                counter.estimate_message_tokens(message) for message in messages[index + 1 :]
            )
            return ContextTokenEstimate(usage_tokens + trailing, usage_tokens, trailing, index)
    estimated = sum(counter.estimate_message_tokens(message) for message in messages)
    return ContextTokenEstimate(estimated, 0, estimated, None)


def estimate_tokens_after_edits(
    path_entries: Sequence[Mapping[str, Any]],
    messages: Sequence[MessageRecord],
    counter: TokenCounter = CHARS4,
    distrusted_types: tuple[str, ...] = ("context_edit",),
) -> int | float:
    """``estimate_context_tokens(messages)``, unless one of ``distrusted_types`` (by default a
    pi 1.6 context edit) lies on the path after the newest answer that reported usage: that usage
    then measured a context that no longer exists, and every message is estimated instead."""
    if usage_predates(path_entries, distrusted_types):
        return sum(counter.estimate_message_tokens(message) for message in messages)
    return estimate_context_tokens(messages, counter).tokens


def context_usage_index(
    path_entries: Sequence[Mapping[str, Any]], messages: Sequence[MessageRecord]
) -> int | None:
    """The message whose reported usage ``estimate_tokens_after_edits`` starts from; None when it
    estimates every message (no usable usage, or a context edit came after it)."""
    if usage_predates(path_entries, ("context_edit",)):
        return None
    for index in range(len(messages) - 1, -1, -1):
        if get_assistant_usage(messages[index]) is not None:
            return index
    return None


def usage_predates(path_entries: Sequence[Mapping[str, Any]], entry_types: tuple[str, ...]) -> bool:
    """Whether an entry of one of ``entry_types`` follows the newest answer with usable usage."""
    for entry in reversed(path_entries):
        entry_type = entry.get("type")
        if entry_type in entry_types:
            return True
        if entry_type == "message":
            message = entry.get("message")
            if isinstance(message, Mapping) and get_assistant_usage(message) is not None:
                return False
    return False
