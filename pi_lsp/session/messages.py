"""pi 0.84.2's ``messages.js``: the coding agent's own message roles and their LLM form.

Besides the provider roles (``user``, ``assistant``, ``toolResult``) pi keeps four roles of its own
in the context: ``bashExecution`` (a ``!command`` the user ran), ``custom`` (extension messages),
``branchSummary`` and ``compactionSummary``. ``convert_to_llm`` turns them into user messages with
the exact wrapper texts pi sends, which also feed conversation serialization for summaries.

Messages are plain dicts in pi's key order. A field pi leaves ``undefined`` (``display`` or
``details`` of a custom message without them) is left out, as ``JSON.stringify`` would.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, cast

from pi_lsp.session.js_values import (
    UNDEFINED,
    is_truthy,
    join,
    strict_equals,
    to_string,
    without_undefined,
)
from pi_lsp.session.message_types import (
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    LlmMessage,
    MessageRecord,
    UserMessage,
)
from pi_lsp.session.timestamps import iso_to_epoch_ms

COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:"
    "\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
# No newline before the closing tag, unlike the compaction wrapper: pi's text, kept as it is.
BRANCH_SUMMARY_SUFFIX = "</summary>"

_MAX_DATE_MS = 8.64e15


def bash_execution_to_text(message: MessageRecord) -> str:
    """The user-message text that stands for a ``bashExecution`` message in the LLM context."""
    text = f"Ran `{to_string(message.get('command', UNDEFINED))}`\n"
    output = message.get("output", UNDEFINED)
    if is_truthy(output):
        text += f"```\n{to_string(output)}\n```"
    else:
        text += "(no output)"
    exit_code = message.get("exitCode", UNDEFINED)
    if is_truthy(message.get("cancelled")):
        text += "\n\n(command cancelled)"
    elif exit_code is not None and exit_code is not UNDEFINED and not strict_equals(exit_code, 0):
        text += f"\n\nCommand exited with code {to_string(exit_code)}"
    full_output_path = message.get("fullOutputPath", UNDEFINED)
    if is_truthy(message.get("truncated")) and is_truthy(full_output_path):
        text += f"\n\n[Output truncated. Full output: {to_string(full_output_path)}]"
    return text


def create_branch_summary_message(
    summary: Any, from_id: Any, timestamp: Any
) -> BranchSummaryMessage:
    """A ``branchSummary`` message from a ``branch_summary`` entry's fields (ISO ``timestamp``)."""
    return cast(
        BranchSummaryMessage,
        without_undefined(
            {
                "role": "branchSummary",
                "summary": summary,
                "fromId": from_id,
                "timestamp": date_get_time(timestamp),
            }
        ),
    )


def create_compaction_summary_message(
    summary: Any, tokens_before: Any, timestamp: Any
) -> CompactionSummaryMessage:
    """A ``compactionSummary`` message from a ``compaction`` entry's fields (ISO ``timestamp``)."""
    return cast(
        CompactionSummaryMessage,
        without_undefined(
            {
                "role": "compactionSummary",
                "summary": summary,
                "tokensBefore": tokens_before,
                "timestamp": date_get_time(timestamp),
            }
        ),
    )


def create_custom_message(
    custom_type: Any, content: Any, display: Any, details: Any, timestamp: Any
) -> CustomMessage:
    """A ``custom`` message from a ``custom_message`` entry's fields (ISO ``timestamp``)."""
    return cast(
        CustomMessage,
        without_undefined(
            {
                "role": "custom",
                "customType": custom_type,
                "content": content,
                "display": display,
                "details": details,
                "timestamp": date_get_time(timestamp),
            }
        ),
    )


def date_get_time(value: Any) -> int | float | None:
    """``new Date(value).getTime()``; ``None`` stands for NaN (``JSON.stringify`` writes null)."""
    if value is UNDEFINED:
        return None
    if value is None:
        return 0
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        # TimeClip: out-of-range or non-finite times are NaN, others are truncated toward zero.
        if not math.isfinite(value) or abs(value) > _MAX_DATE_MS:
            return None
        return int(value)
    return iso_to_epoch_ms(value if isinstance(value, str) else to_string(value))


def convert_to_llm(messages: Iterable[MessageRecord]) -> list[LlmMessage]:
    """pi's ``convertToLlm``: provider messages pass through, pi's own roles become user text.

    pi 1.6 also passes its system-role messages (the prompt and tools pi recorded) through; here
    they are left out, as pi 0.84.2 leaves them out: a pi-lsp turn sends pi-lsp's own system
    prompt and tools, and summaries never serialize prompt state. A provider role passes through
    as the file holds it, taken to have pi's shape, as pi takes it.
    """
    converted: list[LlmMessage] = []
    for message in messages:
        llm_message = _to_llm_message(message)
        if llm_message is not None:
            converted.append(llm_message)
    return converted


def _to_llm_message(message: MessageRecord) -> LlmMessage | None:
    role = message.get("role", UNDEFINED)
    timestamp = message.get("timestamp", UNDEFINED)
    if role == "bashExecution":
        if is_truthy(message.get("excludeFromContext")):
            return None  # `!!command`: the user ran it for themselves, not for the model.
        return _user_message([{"type": "text", "text": bash_execution_to_text(message)}], timestamp)
    if role == "custom":
        content = message.get("content", UNDEFINED)
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        return _user_message(content, timestamp)
    if role == "branchSummary":
        text = (
            BRANCH_SUMMARY_PREFIX
            + to_string(message.get("summary", UNDEFINED))
            + BRANCH_SUMMARY_SUFFIX
        )
        return _user_message([{"type": "text", "text": text}], timestamp)
    if role == "compactionSummary":
        text = (
            COMPACTION_SUMMARY_PREFIX
            + to_string(message.get("summary", UNDEFINED))
            + COMPACTION_SUMMARY_SUFFIX
        )
        return _user_message([{"type": "text", "text": text}], timestamp)
    if role in ("user", "assistant", "toolResult"):
        return cast(LlmMessage, message)
    return None


def _user_message(content: Any, timestamp: Any) -> UserMessage:
    return cast(
        UserMessage,
        without_undefined({"role": "user", "content": content, "timestamp": timestamp}),
    )


def content_text(content: Any, separator: str = "\n") -> str:
    """pi-ai's ``contentText``: a string as is, else the text blocks joined with ``separator``."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return join(
        (
            block.get("text")
            for block in content
            if isinstance(block, Mapping) and block.get("type") == "text"
        ),
        separator,
    )
