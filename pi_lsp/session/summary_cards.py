"""What the chats show of a compaction or a branch summary: a card read from its entry.

The summary, the read and modified files of its ``details`` (pi's ``readFiles`` and
``modifiedFiles``), the tokens before it (a compaction's ``tokensBefore``) and what the summary
cost (its ``usage.cost.total``, when pi-lsp or pi recorded one). The model that wrote it and the
context size after it are known only when it is written, so the live event adds them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeGuard

from pi_lsp.protocol import SummaryCard

SUMMARY_ENTRY_TYPES = ("compaction", "branch_summary")


def summary_card(
    entry: Mapping[str, Any], *, tokens_after: int | None = None, model: str | None = None
) -> SummaryCard | None:
    """The card of a compaction or branch summary entry (None for other entries); the live
    events give ``tokens_after`` and ``model``."""
    if entry.get("type") not in SUMMARY_ENTRY_TYPES:
        return None
    summary = entry.get("summary")
    details = entry.get("details")
    tokens_before = entry.get("tokensBefore")
    return SummaryCard(
        summary=summary if isinstance(summary, str) else "",
        read_files=_paths(details, "readFiles"),
        modified_files=_paths(details, "modifiedFiles"),
        tokens_before=int(tokens_before) if _is_number(tokens_before) else None,
        tokens_after=tokens_after,
        model=model,
        cost=_cost(entry.get("usage")),
    )


def _paths(details: Any, key: str) -> list[str]:
    values = details.get(key) if isinstance(details, Mapping) else None
    return [value for value in values if isinstance(value, str)] if isinstance(values, list) else []


def _cost(usage: Any) -> float | None:
    cost = usage.get("cost") if isinstance(usage, Mapping) else None
    total = cost.get("total") if isinstance(cost, Mapping) else None
    return float(total) if _is_number(total) else None


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
