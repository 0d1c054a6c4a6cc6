"""Forget, replace and restore one message of a session's future context: pi 1.6's context edits.

Each action appends one ``context_edit`` entry at the leaf (``session/context_edits.py`` says how
it is shaped); the target entry stays in the file as it was. Only an idle, writable session is
edited, so a running turn never sees its context change under it, and only an entry that is part
of the context at the leaf: one a compaction summarized away gives the model nothing to edit.
Extensions' hooks edit through ``extension_editor`` instead, inside the turn they run in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from pi_lsp.agent.runtime import SessionRuntime
from pi_lsp.errors import InvalidParamsError, echoed
from pi_lsp.session.context_edits import original_content, replacement_for, require_editable
from pi_lsp.session.projection import ContextEditEffect, ProjectedEntry, effect_name
from pi_lsp.session.session import Session

EditContext = Callable[[str, Any], str]
"""``edit_context(target_id, replacement)`` as extensions get it: the id of the edit entry."""


@attrs.frozen
class ContextEditOutcome:
    entry_id: str
    """The ``context_edit`` entry written (the new leaf)."""
    leaf_id: str | None
    effect: ContextEditEffect | None
    """What applies to the target now: left out, replaced, or (after a restore) nothing."""


def edit_context(
    runtime: SessionRuntime, target_id: str, replacement: str | None
) -> ContextEditOutcome:
    """Leave ``target_id`` out of future context (``replacement`` None) or replace its content."""
    _require_editable_now(runtime)
    session = runtime.session
    role = require_editable(_in_context(session, target_id).entry)
    return _append(runtime, target_id, replacement_for(role, replacement))


def restore_context(runtime: SessionRuntime, target_id: str) -> ContextEditOutcome:
    """Give ``target_id`` its stored content back in future context, after an edit."""
    _require_editable_now(runtime)
    projected = _in_context(runtime.session, target_id)
    require_editable(projected.entry)
    if projected.edit is None or not (projected.removed or projected.replaced):
        raise InvalidParamsError(
            f"entry {echoed(target_id)} is in the context as it was written: nothing to restore"
        )
    return _append(runtime, target_id, original_content(projected.entry))


def extension_editor(runtime: SessionRuntime) -> EditContext:
    """``event.edit_context`` for hooks running inside a turn: the same entry, the same checks
    but the idle one (the turn is the extension's own)."""

    def edit(target_id: str, replacement: Any) -> str:
        if replacement is not None and not isinstance(replacement, str):
            raise TypeError("edit_context: replacement must be a string or None")
        runtime.require_writable()
        role = require_editable(_in_context(runtime.session, target_id).entry)
        entry_id = runtime.session.append_context_edit(
            target_id, replacement_for(role, replacement)
        )
        return entry_id

    return edit


def _require_editable_now(runtime: SessionRuntime) -> None:
    runtime.require_writable()
    runtime.require_idle("edit the context")


def _in_context(session: Session, target_id: str) -> ProjectedEntry:
    """The projected entry of ``target_id`` at the leaf; typed errors when there is none."""
    target = session.require_entry(target_id)
    if not session.is_on_active_branch(target_id):
        raise InvalidParamsError(
            f"entry {echoed(target_id)} is not on the active branch of session {session.id}: "
            "navigate to it first"
        )
    for projected in session.projection():
        if projected.entry is target:
            return projected
    raise InvalidParamsError(
        f"entry {echoed(target_id)} is no longer part of the context: a compaction summarized it"
    )


def _append(
    runtime: SessionRuntime, target_id: str, replacement: dict | None
) -> ContextEditOutcome:
    session = runtime.session
    entry_id = session.append_context_edit(target_id, replacement)
    runtime.tree_changed()
    effect = next(
        (
            effect_name(projected) if projected.removed or projected.replaced else None
            for projected in session.projection()
            if projected.entry.get("id") == target_id
        ),
        None,
    )
    return ContextEditOutcome(entry_id, session.leaf_id, effect)
