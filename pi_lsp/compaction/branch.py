"""Planning a branch summary: pi 0.84.2's ``collectEntriesForBranchSummary`` and friends.

When the user leaves a branch for another point of the tree, the abandoned entries (from the old
leaf back to the common ancestor with the target) can be summarized. Messages are taken newest
first until the token budget is spent, so a long branch loses its oldest part, not its latest.
As in pi 1.6, the latest context edit per target among the abandoned entries applies: a message
it left out is neither summarized nor counted, nor are its tool calls file operations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from pi_lsp.compaction.file_ops import (
    FileOps,
    add_details_file_lists,
    compute_file_lists,
    entry_time,
    extract_file_ops_from_message,
)
from pi_lsp.compaction.settings import BranchSummarySettings
from pi_lsp.compaction.tokens import CHARS4, TokenCounter
from pi_lsp.session.context import EntryLookup, branch_path
from pi_lsp.session.js_values import UNDEFINED, is_truthy, strict_equals
from pi_lsp.session.message_types import MessageRecord
from pi_lsp.session.messages import (
    create_branch_summary_message,
    create_compaction_summary_message,
    create_custom_message,
)
from pi_lsp.session.projection import edit_of, latest_edits, project_entry

Entry = Mapping[str, Any]

DEFAULT_BRANCH_TOKEN_BUDGET = BranchSummarySettings().token_budget()
"""pi's budget when the model declares no context window: 128000 − 16384."""


@attrs.frozen
class BranchEntries:
    """The abandoned entries, oldest first, and where the two paths meet (None: no common root)."""

    entries: list[Entry]
    common_ancestor_id: Any


@attrs.frozen
class PreparedBranchEntries:
    """pi's ``prepareBranchEntries`` result: what fits the budget, and all file operations seen."""

    messages: list[MessageRecord]
    file_ops: FileOps
    total_tokens: int


@attrs.frozen
class BranchSummaryPlan:
    """Everything a branch summary needs before the LLM call."""

    common_ancestor_id: Any
    entries: list[Entry]
    messages: list[MessageRecord]
    total_tokens: int
    file_ops: FileOps

    def to_json(self) -> dict[str, Any]:
        file_lists = compute_file_lists(self.file_ops)
        return {
            "commonAncestorId": self.common_ancestor_id,
            "entryIds": [entry.get("id") for entry in self.entries],
            "messages": list(self.messages),
            "totalTokens": self.total_tokens,
            "readFiles": file_lists.read_files,
            "modifiedFiles": file_lists.modified_files,
        }


def collect_entries_for_branch_summary(
    by_id: EntryLookup, old_leaf_id: Any, target_id: Any
) -> BranchEntries:
    """The entries between the common ancestor (exclusive) and ``old_leaf_id`` (inclusive).

    ``target_id`` must be an entry id: pi's ``getBranch(undefined)`` would fall back to the
    session's current leaf, which this pure function does not know, so an unknown target shares
    no ancestor.
    """
    if not is_truthy(old_leaf_id):
        return BranchEntries([], None)

    old_path_ids = set()
    for entry in branch_path(by_id, old_leaf_id):
        try:
            old_path_ids.add(entry.get("id"))
        except TypeError:
            continue
    common_ancestor_id: Any = None
    for entry in reversed(branch_path(by_id, target_id)):
        if _contains(old_path_ids, entry.get("id")):
            common_ancestor_id = entry.get("id")
            break

    entries: list[Entry] = []
    visited: set[Any] = set()
    current = old_leaf_id
    # The visited set ends the walk on a parent cycle, which pi would follow forever.
    while (
        is_truthy(current)
        and not strict_equals(current, common_ancestor_id)
        and not _contains(visited, current)
    ):
        found = _lookup(by_id, current)
        if found is None:
            break
        entries.append(found)
        visited.add(current)
        current = found.get("parentId", UNDEFINED)
    entries.reverse()
    return BranchEntries(entries, common_ancestor_id)


def branch_entry_message(entry: Entry, edit: Entry | None = None) -> MessageRecord | None:
    """pi's ``getMessageFromEntry`` for branch summaries, with ``edit`` (a context edit of the
    entry) applied to messages and custom messages as pi 1.6 applies it.

    Tool results are left out (their call's arguments say enough), and unlike the context, empty
    summaries and null content pass unchanged.
    """
    entry_type = entry.get("type")
    if edit is not None and entry_type in ("message", "custom_message"):
        if entry_type == "message" and _role(entry) == "toolResult":
            return None
        projected = project_entry(entry, edit)
        return projected[0] if projected else None
    if entry_type == "message":
        message = entry.get("message")
        if not isinstance(message, Mapping) or message.get("role") == "toolResult":
            return None
        return message
    if entry_type == "custom_message":
        return create_custom_message(
            entry.get("customType", UNDEFINED),
            entry.get("content", UNDEFINED),
            entry.get("display", UNDEFINED),
            entry.get("details", UNDEFINED),
            entry.get("timestamp", UNDEFINED),
        )
    if entry_type == "branch_summary":
        return create_branch_summary_message(
            entry.get("summary", UNDEFINED),
            entry.get("fromId", UNDEFINED),
            entry.get("timestamp", UNDEFINED),
        )
    if entry_type == "compaction":
        return create_compaction_summary_message(
            entry.get("summary", UNDEFINED),
            entry.get("tokensBefore", UNDEFINED),
            entry.get("timestamp", UNDEFINED),
        )
    return None


def prepare_branch_entries(
    entries: Sequence[Entry], token_budget: int = 0, counter: TokenCounter = CHARS4
) -> PreparedBranchEntries:
    """pi's ``prepareBranchEntries``: newest messages first, within ``token_budget`` (0: none)."""
    file_ops = FileOps()
    # File lists of earlier branch summaries count even when their entries do not fit the budget.
    for entry in entries:
        if (
            entry.get("type") == "branch_summary"
            and not is_truthy(entry.get("fromHook"))
            and is_truthy(entry.get("details"))
        ):
            # Their paths were touched before the summary was written, after older entries.
            add_details_file_lists(entry["details"], file_ops, entry_time(entry.get("timestamp")))

    edits = latest_edits(entries)
    newest_first: list[MessageRecord] = []
    total_tokens = 0
    for entry in reversed(entries):
        message = branch_entry_message(entry, edit_of(edits, entry))
        if message is None:
            continue
        extract_file_ops_from_message(message, file_ops)
        tokens = counter.estimate_message_tokens(message)
        if token_budget > 0 and total_tokens + tokens > token_budget:
            # A summary is dense context: squeeze it in while there is still some room.
            if (
                entry.get("type") in ("compaction", "branch_summary")
                and total_tokens < token_budget * 0.9
            ):
                newest_first.append(message)
                total_tokens += tokens
            break
        newest_first.append(message)
        total_tokens += tokens
    newest_first.reverse()
    return PreparedBranchEntries(newest_first, file_ops, total_tokens)


def plan_branch_summary(
    by_id: EntryLookup,
    old_leaf_id: Any,
    target_id: Any,
    token_budget: int = DEFAULT_BRANCH_TOKEN_BUDGET,
    counter: TokenCounter = CHARS4,
) -> BranchSummaryPlan:
    """Collect the abandoned entries and fit them into the budget."""
    collected = collect_entries_for_branch_summary(by_id, old_leaf_id, target_id)
    prepared = prepare_branch_entries(collected.entries, token_budget, counter)
    return BranchSummaryPlan(
        common_ancestor_id=collected.common_ancestor_id,
        entries=collected.entries,
        messages=prepared.messages,
        total_tokens=prepared.total_tokens,
        file_ops=prepared.file_ops,
    )


def _role(entry: Entry) -> Any:
    message = entry.get("message")
    return message.get("role") if isinstance(message, Mapping) else None


def _lookup(by_id: EntryLookup, entry_id: Any) -> Entry | None:
    try:
        return by_id.get(entry_id)
    except TypeError:
        return None


def _contains(ids: set[Any], entry_id: Any) -> bool:
    try:
        return entry_id in ids
    except TypeError:
        return False
