"""The context of a session's active path, kept between requests and extended as entries are added.

Every model request needs the context at the leaf, and the nested context files need its
projection; on a long session rebuilding both from the whole root→leaf path costs milliseconds
per request (about 10k entries walked, their types and ids listed, the newest compaction found).
Appending to the leaf only adds entries at the end of that path, and what an added entry gives
does not depend on the entries after it, so the projection built for the path so far stays
right: only the new entries are projected and added.

Two kinds of entry change what earlier entries give, and rebuild everything when one is added:
a compaction (it replaces what came before it) and a context edit (it removes or replaces an
earlier entry's messages). A path that is not the one the cache was built for (the leaf moved:
navigation, a branch, a fork) is rebuilt too. The result is the same as
``context.build_context_from_path`` and ``projection.project_path`` on the whole path; a unit test
holds the two to it on random sessions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pi_lsp.session.context import SessionContext, context_settings, model_set_by
from pi_lsp.session.js_values import UNDEFINED
from pi_lsp.session.message_types import MessageRecord
from pi_lsp.session.paths import entry_types
from pi_lsp.session.projection import (
    CONTEXT_EDIT,
    ProjectedEntry,
    context_entries,
    edit_of,
    latest_edits,
    project_entry,
    project_path,
)

Entry = Mapping[str, Any]

REPROJECTING_TYPES = frozenset({"compaction", CONTEXT_EDIT})
"""Entry types that change what the entries before them give: adding one rebuilds the cache."""


class ActivePathContext:
    """The projection, messages, thinking level and model of one root→leaf path list.

    The path is the session's own list, which appends extend in place; ``follows`` tells whether
    a path is still that list, and ``catch_up`` adds what was appended since.
    """

    def __init__(self, path: list[Any]) -> None:
        self._path = path
        self._covered = 0
        self._projected: list[ProjectedEntry] = []
        self._messages: list[MessageRecord] = []
        self._edits: dict[Any, Entry] = {}
        self._thinking_level: Any = "off"
        self._model: dict[str, Any] | None = None
        self._named_thinking_level: str | None = None
        self._rebuild()

    def follows(self, path: list[Any]) -> bool:
        """Whether ``path`` is the list this context was built for (appends keep it so)."""
        return path is self._path

    def context(self) -> SessionContext:
        """The context at the end of the path, as ``build_context_from_path`` gives it."""
        self.catch_up()
        return SessionContext(
            messages=list(self._messages), thinking_level=self._thinking_level, model=self._model
        )

    def projection(self) -> list[ProjectedEntry]:
        """What each context entry gives at the end of the path, as ``project_path`` gives it."""
        self.catch_up()
        return list(self._projected)

    def named_thinking_level(self) -> str | None:
        """The level of the last thinking level change on the path that names one as a string
        (``context`` gives the last change's value, whatever it is)."""
        self.catch_up()
        return self._named_thinking_level

    def catch_up(self) -> None:
        """Take in the entries appended to the path since the last call."""
        added = self._path[self._covered :]
        if not added:
            return
        if not REPROJECTING_TYPES.isdisjoint(entry_types(added)):
            self._rebuild()
            return
        for entry in added:
            edit = edit_of(self._edits, entry)
            projected = ProjectedEntry(entry, project_entry(entry, edit), edit)
            self._projected.append(projected)
            self._messages.extend(projected.messages)
            self._take_settings(entry)
        self._covered += len(added)

    def _rebuild(self) -> None:
        path = self._path
        self._covered = len(path)
        self._projected = project_path(path)
        self._messages = [message for item in self._projected for message in item.messages]
        self._edits = latest_edits(context_entries(path))
        self._thinking_level, self._model = context_settings(path)
        self._named_thinking_level = None
        for entry_type, entry in zip(reversed(entry_types(path)), reversed(path), strict=True):
            if entry_type == "thinking_level_change" and _names_level(entry):
                self._named_thinking_level = entry["thinkingLevel"]
                break

    def _take_settings(self, entry: Entry) -> None:
        """The thinking level and model after ``entry``: the last ones set win, as in pi."""
        entry_type = entry.get("type")
        if entry_type == "thinking_level_change":
            self._thinking_level = entry.get("thinkingLevel", UNDEFINED)
            if _names_level(entry):
                self._named_thinking_level = entry["thinkingLevel"]
        else:
            model = model_set_by(entry_type, entry)
            if model is not None:  # {} too: a change that names nothing still sets it
                self._model = model


def _names_level(entry: Entry) -> bool:
    return isinstance(entry.get("thinkingLevel"), str)
