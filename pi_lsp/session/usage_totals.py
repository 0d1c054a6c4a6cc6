"""What a session has spent: the tokens and dollars of every model call recorded in its file.

Every branch counts, abandoned ones too (their calls were paid for), and so do the summaries:
assistant messages carry pi's ``usage``; compaction and branch-summary entries carry the usage of
the calls that wrote them; ``usage`` entries (pi 1.x) their own. ``UsageTally`` adds entries as
the file grows, so asking again after a turn only reads the new ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from pi_lsp.session.stored_entry import MessageHead, StoredEntry

_SUMMARY_ENTRY_TYPES = ("compaction", "branch_summary", "usage")


@attrs.frozen
class UsageTotals:
    """Tokens by kind, and the dollar cost of them all."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0

    @property
    def prompt_tokens(self) -> int:
        return self.input + self.cache_read + self.cache_write

    @property
    def cached_percent(self) -> float | None:
        """The share of prompt tokens read from the provider's cache; None before any call."""
        if not self.prompt_tokens:
            return None
        return round(self.cache_read / self.prompt_tokens * 100, 1)

    def plus(self, usage: Mapping[str, Any]) -> UsageTotals:
        cost = usage.get("cost")
        total: Any = cost.get("total") if isinstance(cost, Mapping) else None
        return UsageTotals(
            self.input + _count(usage.get("input")),
            self.output + _count(usage.get("output")),
            self.cache_read + _count(usage.get("cacheRead")),
            self.cache_write + _count(usage.get("cacheWrite")),
            self.cost + (float(total) if _is_number(total) and total > 0 else 0.0),
        )


def entry_usage(entry: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The usage an entry records, if it records one.

    A stored entry is read without keeping its decoded body: totals walk every entry of the
    file, and caching each body would hold a big session's whole text in memory."""
    kind = entry.get("type")
    if kind != "message" and kind not in _SUMMARY_ENTRY_TYPES:
        return None
    if isinstance(entry, StoredEntry):
        head = entry.message_head
        if kind == "message" and type(head) is MessageHead and head.role != "assistant":
            return None
        entry = entry.peek()
    if kind == "message":
        message = entry.get("message")
        if isinstance(message, Mapping) and message.get("role") == "assistant":
            usage = message.get("usage")
            return usage if isinstance(usage, Mapping) else None
        return None
    usage = entry.get("usage")
    return usage if isinstance(usage, Mapping) else None


def usage_totals(
    entries: Sequence[Mapping[str, Any]], totals: UsageTotals | None = None
) -> UsageTotals:
    """``totals`` (default: none yet) plus the usage recorded by ``entries``."""
    totals = totals or UsageTotals()
    for entry in entries:
        usage = entry_usage(entry)
        if usage is not None:
            totals = totals.plus(usage)
    return totals


class UsageTally:
    """Running totals over an append-only list of entries."""

    def __init__(self) -> None:
        self._entries: Sequence[Mapping[str, Any]] | None = None
        self._counted = 0
        self._totals = UsageTotals()

    def totals(self, entries: Sequence[Mapping[str, Any]]) -> UsageTotals:
        """The totals of ``entries``; only entries appended since the last call are read."""
        if entries is not self._entries or len(entries) < self._counted:
            self._entries, self._counted, self._totals = entries, 0, UsageTotals()
        if len(entries) > self._counted:
            self._totals = usage_totals(entries[self._counted :], self._totals)
            self._counted = len(entries)
        return self._totals


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
