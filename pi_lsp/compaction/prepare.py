"""Planning a compaction: pi 0.84.2's ``prepareCompaction``, everything short of the LLM call.

Given the root→leaf path, it decides what to summarize (from the previous compaction's first kept
entry up to the cut point), what to keep verbatim, the previous summary to update, the files read
and modified, and ``tokensBefore`` (the context size now, estimated from the rebuilt context). It
returns ``None`` when there is nothing to compact: the path ends with a compaction, the cut entry
has no id (an unmigrated session), or no message falls before the cut.

Sessions written by pi 1.6 hold context edits and system messages. Planning sees each entry as the
context does after the path's edits: what an edit left out is neither counted, nor summarized,
nor a source of file operations, and a replaced entry counts with its new content. System messages
are prompt state, not conversation: they are never summarized. Reported usage older than the
latest context edit is not trusted for ``tokensBefore`` (it still counts what the edit removed).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from pi_lsp.compaction.cut_point import find_cut_point
from pi_lsp.compaction.file_ops import (
    FileOps,
    add_details_file_lists,
    compute_file_lists,
    extract_file_ops_from_message,
)
from pi_lsp.compaction.serialize import serialize_conversation
from pi_lsp.compaction.settings import CompactionSettings
from pi_lsp.compaction.tokens import CHARS4, TokenCounter, estimate_tokens_after_edits
from pi_lsp.session.context import build_session_context, entry_ids, first_index_with_id
from pi_lsp.session.js_values import UNDEFINED, is_truthy
from pi_lsp.session.message_types import MessageRecord
from pi_lsp.session.messages import convert_to_llm
from pi_lsp.session.projection import edits_on_path, project_entry

Entry = Mapping[str, Any]


@attrs.frozen
class CompactionPreparation:
    """pi's ``CompactionPreparation``: the input of the summarization step."""

    first_kept_entry_id: str
    messages_to_summarize: list[MessageRecord]
    turn_prefix_messages: list[MessageRecord]
    is_split_turn: bool
    tokens_before: int | float
    previous_summary: Any  # the previous compaction's summary (normally a string), None without one
    file_ops: FileOps
    settings: CompactionSettings

    @property
    def serialized(self) -> str:
        """The summarizer's view of ``messages_to_summarize``."""
        return serialize_conversation(convert_to_llm(self.messages_to_summarize))

    def to_json(self) -> dict[str, Any]:
        file_lists = compute_file_lists(self.file_ops)
        return {
            "firstKeptEntryId": self.first_kept_entry_id,
            "isSplitTurn": self.is_split_turn,
            "tokensBefore": self.tokens_before,
            "previousSummary": self.previous_summary,
            "messagesToSummarize": list(self.messages_to_summarize),
            "turnPrefixMessages": list(self.turn_prefix_messages),
            "readFiles": file_lists.read_files,
            "modifiedFiles": file_lists.modified_files,
            "serialized": self.serialized,
        }


def prepare_compaction(
    path_entries: Sequence[Entry], settings: CompactionSettings, counter: TokenCounter = CHARS4
) -> CompactionPreparation | None:
    """pi's ``prepareCompaction(pathEntries, settings)``; ``None`` when there is nothing to do."""
    if path_entries and path_entries[-1].get("type") == "compaction":
        return None  # Already compacted.

    previous_compaction_index = _last_compaction_index(path_entries)
    previous_summary: Any = None
    boundary_start = 0
    if previous_compaction_index >= 0:
        previous_compaction = path_entries[previous_compaction_index]
        previous_summary = previous_compaction.get("summary")
        # Re-summarize from the previous compaction's first kept entry: those kept messages are
        # part of the context and would otherwise be lost at the next compaction.
        first_kept_id = previous_compaction.get("firstKeptEntryId", UNDEFINED)
        first_kept_index = first_index_with_id(
            entry_ids(path_entries), first_kept_id, len(path_entries)
        )
        boundary_start = (
            first_kept_index if first_kept_index >= 0 else previous_compaction_index + 1
        )
    boundary_end = len(path_entries)

    tokens_before = estimate_tokens_after_edits(
        path_entries, build_session_context(path_entries).messages, counter
    )
    messages_of = planning_messages(path_entries)
    cut_point = find_cut_point(
        path_entries,
        boundary_start,
        boundary_end,
        settings.keep_recent_tokens,
        counter,
        messages_of,
    )

    first_kept_entry = path_entries[cut_point.first_kept_entry_index] if path_entries else None
    if first_kept_entry is None or not is_truthy(first_kept_entry.get("id")):
        return None  # A session from before entry ids needs migration first.

    history_end = (
        cut_point.turn_start_index if cut_point.is_split_turn else cut_point.first_kept_entry_index
    )
    messages_to_summarize = _messages_for_summary(
        path_entries[boundary_start:history_end], messages_of
    )
    turn_prefix_messages: list[MessageRecord] = []
    if cut_point.is_split_turn:
        turn_prefix_messages = _messages_for_summary(
            path_entries[cut_point.turn_start_index : cut_point.first_kept_entry_index],
            messages_of,
        )
    if not messages_to_summarize and not turn_prefix_messages:
        return None

    file_ops = FileOps()
    if previous_compaction_index >= 0:
        previous_compaction = path_entries[previous_compaction_index]
        # Only pi's own summaries carry trustworthy file lists (fromHook marks an extension's).
        if not is_truthy(previous_compaction.get("fromHook")) and is_truthy(
            previous_compaction.get("details")
        ):
            add_details_file_lists(previous_compaction["details"], file_ops)
    for message in messages_to_summarize:
        extract_file_ops_from_message(message, file_ops)
    if cut_point.is_split_turn:
        for message in turn_prefix_messages:
            extract_file_ops_from_message(message, file_ops)

    return CompactionPreparation(
        first_kept_entry_id=first_kept_entry["id"],
        messages_to_summarize=messages_to_summarize,
        turn_prefix_messages=turn_prefix_messages,
        is_split_turn=cut_point.is_split_turn,
        tokens_before=tokens_before,
        previous_summary=previous_summary,
        file_ops=file_ops,
        settings=settings,
    )


def _last_compaction_index(path_entries: Sequence[Entry]) -> int:
    for index in range(len(path_entries) - 1, -1, -1):
        if path_entries[index].get("type") == "compaction":
            return index
    return -1


def planning_messages(path_entries: Sequence[Entry]) -> Callable[[Entry], list[MessageRecord]]:
    """What each entry gives the context after the path's context edits, system messages left out
    (an entry's system message, or a compaction's snapshot, always comes first)."""
    edit_of = edits_on_path(list(path_entries))

    def messages_of(entry: Entry) -> list[MessageRecord]:
        messages = project_entry(entry, edit_of(entry))
        if messages and messages[0].get("role") == "system":
            return messages[1:]
        return messages

    return messages_of


def _messages_for_summary(
    entries: Sequence[Entry], messages_of: Callable[[Entry], list[MessageRecord]]
) -> list[MessageRecord]:
    """The first context message of each entry; compaction entries are left out (their summary is
    passed on as the previous summary instead)."""
    messages: list[MessageRecord] = []
    for entry in entries:
        if entry.get("type") == "compaction":
            continue
        entry_messages = messages_of(entry)
        if entry_messages:
            messages.append(entry_messages[0])
    return messages
