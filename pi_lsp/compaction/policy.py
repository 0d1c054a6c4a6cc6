"""When to compact: the threshold, stale usage and overflow recovery, decided in one place.

Pure functions of the active path (the branch's entries, root first) and numbers; the agent asks
them at its three moments (before a prompt, between the tool rounds of a turn, after a turn) and
when the provider refuses the context.

- **Threshold**: compact when the context has grown into the reserve at the top of the window
  (``tokens > context_window - reserve_tokens``), pi's ``shouldCompact``, or past the user's own
  ``compaction.threshold`` (``"80%"`` of the window, or a token count) when that comes first.
  ``compaction_start`` is that figure; the editors' context meters mark it.
- **Stale usage**: usage reported before the latest compaction describes a context that no longer
  exists, so it never triggers another compaction (pi #1860), and the context size is then
  estimated from the messages alone; right after a compaction the size shown is unknown. Usage
  reported before a later context edit (pi 1.6) still counts what the edit removed: the size is
  then estimated from the messages, for the threshold and for what is shown, as pi 1.6 does.
- **Overflow**: when the provider refuses the context, compact and retry the answer once; a second
  overflow in the same turn is reported, never looped on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any

from pi_lsp.compaction.settings import CompactionSettings
from pi_lsp.compaction.tokens import (
    TokenCounter,
    calculate_context_tokens,
    estimate_context_tokens,
    estimate_tokens_after_edits,
    get_assistant_usage,
    usage_predates,
)
from pi_lsp.session.message_types import MessageRecord

Entry = Mapping[str, Any]


class Moment(Enum):
    """When the agent asks whether to compact."""

    BEFORE_PROMPT = "before_prompt"
    """The last turn's answer already filled the window: compact before adding to it."""
    BETWEEN_ROUNDS = "between_rounds"
    """A long turn grew the context with tool results since its last answer."""
    AFTER_TURN = "after_turn"
    """The turn's last answer reported a context in the reserve."""


def compaction_start(context_window: float, settings: CompactionSettings) -> float:
    """The context size past which automatic compaction starts: pi's ``window − reserveTokens``,
    or the user's threshold when it is lower."""
    start = context_window - settings.reserve_tokens
    if settings.threshold is not None:
        start = min(start, settings.threshold.tokens_for(int(context_window)))
    return start


def should_compact(
    context_tokens: float | None, context_window: float, settings: CompactionSettings
) -> bool:
    """Compact when enabled and the context has grown past ``compaction_start``."""
    if not settings.enabled or context_tokens is None:
        return False
    return context_tokens > compaction_start(context_window, settings)


STALE_AFTER = ("compaction", "context_edit")
"""Entries after which the usage an earlier answer reported no longer measures the context."""


def usage_is_stale(branch: Sequence[Entry]) -> bool:
    """Whether the latest compaction or context edit is newer than the latest answer with usable
    usage."""
    return usage_predates(branch, STALE_AFTER)


def context_tokens(
    branch: Sequence[Entry], messages: Sequence[MessageRecord], counter: TokenCounter
) -> int | None:
    """The context size at the leaf: the last answer's usage plus estimates of what came after;
    every message estimated when that usage is stale. None for an empty context."""
    if not messages:
        return None
    if usage_is_stale(branch):
        return sum(counter.estimate_message_tokens(message) for message in messages)
    return int(estimate_context_tokens(messages, counter).tokens)


def shown_context_tokens(
    branch: Sequence[Entry], messages: Sequence[MessageRecord], counter: TokenCounter
) -> int | None:
    """The context size to show a user: unknown (None) right after a compaction, until the model
    answers again, as in pi; otherwise the last usage plus estimates (every message estimated
    after a context edit)."""
    if usage_predates(branch, ("compaction",)):
        return None
    return int(estimate_tokens_after_edits(branch, messages, counter))


def needs_compaction(
    moment: Moment,
    branch: Sequence[Entry],
    messages: Sequence[MessageRecord],
    counter: TokenCounter,
    context_window: int,
    settings: CompactionSettings,
) -> bool:
    """Whether to compact now, at ``moment``."""
    if not settings.enabled:
        return False
    if moment is Moment.BETWEEN_ROUNDS or _edited_since_last_answer(branch):
        tokens = context_tokens(branch, messages, counter)
    else:
        tokens = _last_answer_tokens(branch, skip_aborted=moment is Moment.BEFORE_PROMPT)
    return should_compact(tokens, context_window, settings)


def may_recover_from_overflow(settings: CompactionSettings, already_recovered: bool) -> bool:
    """Whether an overflow may be answered by compacting and retrying: once per turn."""
    return settings.enabled and not already_recovered


def _last_answer_tokens(branch: Sequence[Entry], *, skip_aborted: bool) -> int | None:
    """The context size the newest answer reported; None when it reported none (it failed, or an
    aborted one unless ``skip_aborted`` looks past it) or a compaction came after it."""
    for entry in reversed(branch):
        if entry.get("type") == "compaction":
            return None
        message = entry.get("message") if entry.get("type") == "message" else None
        if not isinstance(message, Mapping) or message.get("role") != "assistant":
            continue
        tokens = _answer_tokens(entry)
        if tokens is None and skip_aborted and message.get("stopReason") == "aborted":
            continue
        return tokens
    return None


def _edited_since_last_answer(branch: Sequence[Entry]) -> bool:
    """Whether a context edit (and no compaction) came after the newest answer that reported
    usage: that answer's figure then counts what the edit removed."""
    for entry in reversed(branch):
        entry_type = entry.get("type")
        if entry_type == "compaction":
            return False
        if entry_type == "context_edit":
            return True
        if _answer_tokens(entry) is not None:
            return False
    return False


def _answer_tokens(entry: Entry) -> int | None:
    """The context size an assistant answer reported, if it completed with non-zero usage."""
    message = entry.get("message") if entry.get("type") == "message" else None
    usage = get_assistant_usage(message) if isinstance(message, Mapping) else None
    return None if usage is None else int(calculate_context_tokens(usage))
