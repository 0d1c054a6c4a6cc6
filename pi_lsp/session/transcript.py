"""The conversation on the active path, for an editor's chat view: what a resumed session shows.

Unlike the LLM context (``context.py``), nothing is cut at a compaction: the user sees the whole
path from the root to the leaf, with each compaction and branch summary as an entry of its own
and custom messages the extension asked to display. Bookkeeping entries (model and thinking-level
changes, labels, names, the editor's file operations) are left out.
"""

from __future__ import annotations

from typing import Any

from pi_lsp.session.session import Session
from pi_lsp.session.stored_entry import StoredEntry

SUMMARY_TYPES = ("compaction", "branch_summary")


def transcript_document(session: Session, limit: int | None = None) -> dict[str, Any]:
    """``{"leafId", "total", "entries"}``: the visible
    entries root first, the last ``limit`` of them."""
    visible = [item for item in map(_transcript_item, session.branch()) if item is not None]
    shown = visible[-limit:] if limit else visible
    return {"leafId": session.leaf_id, "total": len(visible), "entries": shown}


def _transcript_item(entry: StoredEntry) -> dict[str, Any] | None:
    item: dict[str, Any] = {
        "entryId": entry.id,
        "type": entry.type,
        "timestamp": entry.get("timestamp"),
    }
    if entry.type == "message" and isinstance(entry.get("message"), dict):
        return {**item, "message": entry["message"]}
    if entry.type in SUMMARY_TYPES:
        return {**item, "summary": entry.get("summary")}
    if entry.type == "custom_message" and entry.get("display") is not False:
        return {**item, "customType": entry.get("customType"), "content": entry.get("content")}
    return None
