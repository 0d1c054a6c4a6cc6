"""Where a compaction cuts the path: pi 0.84.2's ``findCutPoint`` and its helpers.

Walking back from the newest entry, messages are added up until about ``keep_recent_tokens`` are
kept; the cut then lands on the nearest entry that may start the kept part (any context message
except a tool result, which must stay with its call). A cut inside a turn (on an assistant message)
is a "split turn": the start of that turn is summarized separately.

One deliberate difference from 0.84.2 (see ``find_cut_point``): when the budget is crossed inside
trailing tool results, the cut falls back to the last cut point instead of the first.

What an entry contributes is asked of ``messages_of`` (default: the entry's own messages); the
compaction planner passes the messages after context edits, so an entry a pi 1.6 context edit left
out is neither counted nor a place to cut.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from pi_lsp.compaction.tokens import CHARS4, TokenCounter
from pi_lsp.session.context import session_entry_to_context_messages
from pi_lsp.session.message_types import MessageRecord

Entry = Mapping[str, Any]
MessagesOf = Callable[[Entry], Sequence[MessageRecord]]

_CUT_POINT_ROLES = frozenset(
    {"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"}
)
_TURN_START_ROLES = frozenset(
    {"user", "bashExecution", "custom", "branchSummary", "compactionSummary"}
)


@attrs.frozen
class CutPoint:
    """Where the kept part starts, and the start of the turn it splits (-1 when it splits none)."""

    first_kept_entry_index: int
    turn_start_index: int
    is_split_turn: bool


def _has_role(
    entry: Entry, roles: frozenset[str], messages_of: MessagesOf = session_entry_to_context_messages
) -> bool:
    if entry.get("type") == "compaction":
        return False  # A compaction is a boundary, never a place to cut or a turn start.
    return any(_role(message) in roles for message in messages_of(entry))


def _role(message: MessageRecord) -> Any:
    role = message.get("role")
    return role if isinstance(role, str) else None


def is_turn_start_entry(
    entry: Entry, messages_of: MessagesOf = session_entry_to_context_messages
) -> bool:
    """True for entries whose message opens a turn (user-like roles, summaries, custom messages)."""
    return _has_role(entry, _TURN_START_ROLES, messages_of)


def find_valid_cut_points(
    entries: Sequence[Entry],
    start_index: int,
    end_index: int,
    messages_of: MessagesOf = session_entry_to_context_messages,
) -> list[int]:
    """Indices in ``[start_index, end_index)`` where the kept part may begin."""
    return [
        index
        for index in range(start_index, end_index)
        if _has_role(entries[index], _CUT_POINT_ROLES, messages_of)
    ]


def find_turn_start_index(
    entries: Sequence[Entry],
    entry_index: int,
    start_index: int,
    messages_of: MessagesOf = session_entry_to_context_messages,
) -> int:
    """The nearest turn start at or before ``entry_index`` (not before ``start_index``), or -1."""
    for index in range(entry_index, start_index - 1, -1):
        if is_turn_start_entry(entries[index], messages_of):
            return index
    return -1


def entry_tokens(
    entry: Entry,
    counter: TokenCounter,
    messages_of: MessagesOf = session_entry_to_context_messages,
) -> int:
    """Estimated tokens of everything an entry contributes to the context."""
    return sum(counter.estimate_message_tokens(message) for message in messages_of(entry))


def find_cut_point(
    entries: Sequence[Entry],
    start_index: int,
    end_index: int,
    keep_recent_tokens: int,
    counter: TokenCounter = CHARS4,
    messages_of: MessagesOf = session_entry_to_context_messages,
) -> CutPoint:
    """pi's ``findCutPoint`` in ``entries[start_index:end_index]``, keeping ~keep_recent_tokens."""
    cut_points = find_valid_cut_points(entries, start_index, end_index, messages_of)
    if not cut_points:
        return CutPoint(start_index, -1, False)

    accumulated_tokens = 0
    cut_index = cut_points[0]  # Budget never reached: keep everything from the first message.
    for index in range(end_index - 1, start_index - 1, -1):
        message_tokens = entry_tokens(entries[index], counter, messages_of)
        if message_tokens == 0:
            continue
        accumulated_tokens += message_tokens
        if accumulated_tokens >= keep_recent_tokens:
            later_cut_points = [cut_point for cut_point in cut_points if cut_point >= index]
            # pi 0.84.2 keeps cut_points[0] when the budget is crossed inside trailing tool results
            # (no cut point at or after them): the plan then keeps everything and frees nothing
            # (pi issues #7201, #9740). Like pi 1.6, cut at the last cut point instead, which keeps
            # the assistant tool call together with its results.
            cut_index = later_cut_points[0] if later_cut_points else cut_points[-1]
            break

    # Entries that add nothing to the context (model or thinking changes, labels) just before the
    # cut stay with the kept part.
    while cut_index > start_index:
        previous = entries[cut_index - 1]
        if previous.get("type") == "compaction" or messages_of(previous):
            break
        cut_index -= 1

    starts_turn = is_turn_start_entry(entries[cut_index], messages_of)
    turn_start_index = (
        -1 if starts_turn else find_turn_start_index(entries, cut_index, start_index, messages_of)
    )
    return CutPoint(cut_index, turn_start_index, not starts_turn and turn_start_index != -1)
