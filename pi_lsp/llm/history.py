"""pi's ``transformMessages``: the history cleanup that runs before every provider request.

Applied to pi LLM messages (``convert_to_llm``'s output) before they become chat messages:

- assistant messages that ended in ``error`` or ``aborted`` are skipped: they are unfinished turns
  (half a tool call, reasoning without an answer) that providers reject or the model would copy;
- a tool call left without a result (the turn was aborted, or the user spoke next) gets a
  synthetic error result "No result provided", because providers refuse unanswered tool calls;
- thinking from another model becomes plain text; thinking of the same model is kept only when it
  has text or a signature to replay; redacted thinking is kept for the same model only (its data
  is opaque to any other);
- tool-call ids from another model that OpenAI would refuse (``|``-joined Responses API ids, more
  than 40 characters) are shortened, and their results follow the new id.

"Same model" compares ``provider`` and ``model`` only, not ``api``: pi records the wire API
(``anthropic-messages``...), this adapter always records ``openai-completions``, yet litellm talks
to the same model either way.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any

from pi_lsp.session.message_types import LlmMessage

Message = Mapping[str, Any]

_MAX_TOOL_CALL_ID = 40
_UNSAFE_ID_CHARACTERS = re.compile(r"[^a-zA-Z0-9_-]")


def prepare_history(
    messages: Sequence[LlmMessage],
    provider: str | None,
    model_id: str | None,
    renamed_ids: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """The messages a provider request should carry, per the rules in the module docstring.

    ``renamed_ids`` (tool-call id → the id sent) carries the renames of earlier messages into
    these, and receives these messages' own (``converted_history.py`` converts in two parts)."""
    if renamed_ids is None:
        renamed_ids = {}
    transformed = [_transform(message, provider, model_id, renamed_ids) for message in messages]
    return _answer_orphaned_tool_calls(transformed)


def _transform(
    message: Message, provider: str | None, model_id: str | None, renamed_ids: dict[str, str]
) -> dict[str, Any]:
    copy = dict(message)
    if copy.get("content") is None:
        copy["content"] = []
    role = copy.get("role")
    if role == "toolResult":
        copy["toolCallId"] = renamed_ids.get(copy.get("toolCallId", ""), copy.get("toolCallId"))
    elif role == "assistant":
        same_model = copy.get("provider") == provider and copy.get("model") == model_id
        blocks = copy["content"] if isinstance(copy["content"], list) else []
        copy["content"] = [
            converted
            for block in blocks
            for converted in _transform_block(block, same_model, renamed_ids)
        ]
    return copy


def _transform_block(
    block: Mapping[str, Any], same_model: bool, renamed_ids: dict[str, str]
) -> list[dict[str, Any]]:
    kind = block.get("type")
    if kind == "thinking":
        return _transform_thinking(block, same_model)
    if kind == "toolCall" and not same_model:
        call = {key: value for key, value in block.items() if key != "thoughtSignature"}
        new_id = normalize_tool_call_id(str(call.get("id", "")))
        if new_id != call.get("id"):
            renamed_ids[str(call.get("id"))] = new_id
            call["id"] = new_id
        return [call]
    return [dict(block)]


def _transform_thinking(block: Mapping[str, Any], same_model: bool) -> list[dict[str, Any]]:
    if block.get("redacted"):
        # Opaque, and only the model that wrote it can read it (pi's rule).
        return [dict(block)] if same_model and block.get("thinkingSignature") else []
    thinking = block.get("thinking") or ""
    if same_model and block.get("thinkingSignature"):
        return [dict(block)]
    if not thinking.strip():
        return []
    if same_model:
        return [dict(block)]
    return [{"type": "text", "text": thinking}]


def normalize_tool_call_id(call_id: str) -> str:
    """A tool-call id OpenAI accepts: ``[a-zA-Z0-9_-]``, at most 40 characters."""
    if "|" not in call_id and len(call_id) <= _MAX_TOOL_CALL_ID:
        return call_id
    call_part, _, item_part = call_id.partition("|")
    combined = _UNSAFE_ID_CHARACTERS.sub("_", call_part)
    if item_part:
        combined += "_" + _UNSAFE_ID_CHARACTERS.sub("_", item_part)
    if len(combined) <= _MAX_TOOL_CALL_ID:
        return combined
    digest = hashlib.sha1(call_id.encode()).hexdigest()[:8]
    prefix = _UNSAFE_ID_CHARACTERS.sub("_", call_part)[: _MAX_TOOL_CALL_ID - len(digest) - 1]
    return f"{prefix or 'call'}_{digest}"


def _answer_orphaned_tool_calls(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = []
    pending: list[Mapping[str, Any]] = []
    answered: set[str] = set()

    def flush() -> None:
        result.extend(_no_result(call) for call in pending if call.get("id") not in answered)
        pending.clear()
        answered.clear()

    for message in messages:
        role = message.get("role")
        if role == "assistant":
            flush()
            if message.get("stopReason") in ("error", "aborted"):
                continue
            pending.extend(block for block in message["content"] if block.get("type") == "toolCall")
        elif role == "toolResult":
            answered.add(message.get("toolCallId", ""))
        elif role == "user":
            flush()
        result.append(message)
    flush()
    return result


def _no_result(call: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call.get("id"),
        "toolName": call.get("name"),
        "content": [{"type": "text", "text": "No result provided"}],
        "isError": True,
        "timestamp": int(time.time() * 1000),
    }
