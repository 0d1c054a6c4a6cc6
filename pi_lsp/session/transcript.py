"""The conversation on the active path, for an editor's chat view: what a resumed session shows.

Unlike the LLM context (``context.py``), nothing is cut at a compaction: the user sees the whole
path from the root to the leaf, with each compaction and branch summary as an entry of its own
and custom messages the extension asked to display. Bookkeeping entries (model and thinking-level
changes, labels, names, the editor's file operations, pi 1.6's usage records and context edits)
are left out, and so are pi 1.6's system-role messages (the prompt state pi recorded, not
conversation).

An entry a pi 1.6 context edit changed carries ``context_edit``: ``"removed"`` (it stays in the
transcript, marked, but the model no longer sees it) or ``"replaced"`` (its ``message`` or
``content`` is what the model sees now).
"""

from __future__ import annotations

import bisect
import logging
from typing import Any

import attrs

from pi_lsp.errors import InvalidParamsError, echoed
from pi_lsp.protocol import MessagesResult, ToolCard, TranscriptEntry
from pi_lsp.session.path_index import SUMMARY_TYPES, active_path_index
from pi_lsp.session.projection import ProjectedEntry, effect_name
from pi_lsp.session.session import Session
from pi_lsp.session.stored_entry import StoredEntry
from pi_lsp.session.summary_cards import summary_card
from pi_lsp.session.tool_cards import ToolOutcome, tool_card

logger = logging.getLogger(__name__)


def transcript(
    session: Session, limit: int | None = None, before: str | None = None
) -> MessagesResult:
    """The visible entries of the active path, root first: only the last ``limit`` if given, and
    only those before the entry ``before`` (a cursor on the path) if given.

    Costs the entries returned, not the path's length: the path's visible entries are found once,
    from what opening the file read of each line, and followed as turns append (``path_index``).
    """
    index = active_path_index(session)
    shown = index.shown
    end = len(shown)
    if before is not None:
        position = index.position_of(before)
        if position is None:
            session.require_entry(before)
            raise InvalidParamsError(f"before: entry {echoed(before)} is not on the active path")
        end = bisect.bisect_left(shown, position)
    start = max(0, end - limit) if limit else 0
    effects = index.effects
    items = []
    for position in shown[start:end]:
        entry = index.entries[position]
        item = _transcript_item(entry, effects.get(entry.id), index.entries, position, session.cwd)
        if item is not None:
            items.append(item)
    return MessagesResult(session.id, session.leaf_id, len(shown), start, items)


def _transcript_item(
    entry: StoredEntry,
    effect: ProjectedEntry | None,
    path: list[StoredEntry],
    position: int,
    cwd: str,
) -> TranscriptEntry | None:
    timestamp = entry.get("timestamp")
    item = TranscriptEntry(
        entry.id,
        entry.type,
        timestamp if isinstance(timestamp, str) else None,
        context_edit=effect_name(effect) if effect is not None else None,
    )
    replaced = effect.messages if effect is not None and effect.replaced else None
    message = entry.get("message")
    if entry.type == "message" and isinstance(message, dict):
        if message.get("role") == "system":
            return None
        shown = dict(replaced[0]) if replaced else message
        card = _tool_card(shown, path, position, cwd) if shown.get("role") == "toolResult" else None
        return attrs.evolve(item, message=shown, tool_card=card)
    if entry.type in SUMMARY_TYPES:
        summary = entry.get("summary")
        return attrs.evolve(
            item, summary=summary if isinstance(summary, str) else None, card=summary_card(entry)
        )
    if entry.type == "custom_message" and entry.get("display") is not False:
        custom_type = entry.get("customType")
        return attrs.evolve(
            item,
            custom_type=custom_type if isinstance(custom_type, str) else None,
            content=replaced[0].get("content") if replaced else entry.get("content"),
        )
    return None


CALL_SEARCH_LIMIT = 64
"""How far back from a tool result its call is looked for (the batch's assistant message is
right before its results, with at most a few nested context entries between)."""


def _tool_card(message: dict, path: list[StoredEntry], position: int, cwd: str) -> ToolCard | None:
    """The card of the call a tool result answers (the call's arguments are in the assistant
    message before it); None, logged, if the result is too odd to make one of (the page is
    still sent)."""
    name = message.get("toolName")
    content = message.get("content")
    details = message.get("details")
    outcome = ToolOutcome(
        content if isinstance(content, list) else [],
        details if isinstance(details, dict) else None,
        message.get("isError") is True,
    )
    arguments = _call_arguments(path, position, message.get("toolCallId"))
    try:
        return tool_card(name if isinstance(name, str) else "", arguments, outcome, cwd)
    except Exception:
        logger.exception("no tool card for the result of %r", message.get("toolCallId"))
        return None


def _call_arguments(entries: list[StoredEntry], position: int, call_id: object) -> Any:
    for entry in reversed(entries[max(0, position - CALL_SEARCH_LIMIT) : position]):
        message = entry.get("message") if entry.type == "message" else None
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        parts = message.get("content")
        for part in parts if isinstance(parts, list) else ():
            if (
                isinstance(part, dict)
                and part.get("type") == "toolCall"
                and part.get("id") == call_id
            ):
                return part.get("arguments")
        return None  # the nearest answer did not make the call: its arguments are lost
    return None
