"""Moving around the session tree: navigation (pi's ``/tree``), labels, names and forks.

Landing on a user message (or an injected custom message) puts the leaf on its parent and hands
the message's text back for the editor, so the user can re-edit and resend it, as pi does; landing
on any other entry continues from that entry. The session file only grows: moving the leaf writes
nothing until the next message is appended there.
"""

from __future__ import annotations

from typing import Any

import attrs

from pi_lsp.agent.runtime import SessionRuntime
from pi_lsp.session.messages import content_text


@attrs.frozen
class NavigationResult:
    """Where the leaf is now, the summary entry attached there, and text to put back in the editor."""

    leaf_id: str | None
    summary_entry_id: str | None = None
    editor_text: str | None = None


def navigate(runtime: SessionRuntime, target_id: str, *, summary: Any = None) -> NavigationResult:
    """Move the leaf to ``target_id``.

    With ``summary`` (a ``BranchSummary`` of the branch being left) the summary entry is attached
    where the user lands and becomes the leaf.
    """
    session = runtime.session
    if target_id == session.leaf_id:
        return NavigationResult(session.leaf_id)
    target = session.require_entry(target_id)
    editor_text = None
    new_leaf: str | None = target_id
    if (target.type == "message" and target.role == "user") or target.type == "custom_message":
        new_leaf = (
            target.parent_id if isinstance(target.parent_id, str) and target.parent_id else None
        )
        content = (
            target["message"].get("content") if target.type == "message" else target.get("content")
        )
        editor_text = content_text(content, "")
    summary_entry_id = None
    if summary is not None:
        summary_entry_id = session.branch_with_summary(
            new_leaf, summary.summary, summary.details, usage=summary.usage
        )
    elif new_leaf is None:
        session.reset_leaf()
    else:
        session.move_leaf(new_leaf)
    runtime.tree_changed()
    return NavigationResult(session.leaf_id, summary_entry_id, editor_text)


def set_label(runtime: SessionRuntime, entry_id: str, label: str | None) -> str:
    """Label (or with an empty label, unlabel) ``entry_id``; the id of the label entry."""
    runtime.require_writable()
    runtime.require_idle("change labels")
    label_entry_id = runtime.session.append_label(entry_id, label or None)
    runtime.tree_changed()
    return label_entry_id


def set_name(runtime: SessionRuntime, name: str) -> str:
    """Name the session; the id of the ``session_info`` entry."""
    runtime.require_writable()
    runtime.require_idle("rename the session")
    entry_id = runtime.session.append_session_info(name)
    runtime.tree_changed()
    return entry_id
