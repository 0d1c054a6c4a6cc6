"""Nested AGENTS.md in a session: what must be in the context, and what the turn loop appends.

When the agent's ``read``, ``edit``, ``write``, ``ls``, ``find`` or ``grep`` touches something below
a directory of the workspace that holds a context file (``resources/nested_context_files.py``),
that file's text reaches the model before its next request, as a ``custom_message`` entry of type
``pi-lsp.context-file`` (``display: true``, so the tree and the chat show it). pi 0.84.2 turns
``custom_message`` entries into user messages of its context too, so a session resumed in pi keeps
them.

What is due is worked out from the context at the leaf, never from memory of this process, so it
follows the session through branches, compactions and restarts:

- a file is *required* when a tool call still in the context touched something below its
  directory;
- it is *present* when an injection of it is still in the context (not summarized away by a
  compaction, not left out by a context edit), and *current* when that injection's fingerprint
  matches the file's text now;
- before each model request the turn loop appends an entry for every required file that is not
  present (once per branch), or present with other text (the file changed: the new text is marked
  as replacing the earlier one). A touch summarized away no longer requires anything; the next
  touch brings the file back.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from pi_lsp import protocol
from pi_lsp.resources.nested_context_files import (
    NESTED_CONTEXT_FILE_TYPE,
    NestedContextFile,
    context_file_path_in,
    directories_below_root,
    injection_text,
    read_nested_context_file,
)
from pi_lsp.session.message_types import CustomMessage
from pi_lsp.session.projection import ProjectedEntry, project_path
from pi_lsp.tools.paths import resolve_to_cwd

TOUCHING_TOOLS = frozenset({"read", "edit", "write", "ls", "find", "grep"})
"""The tools whose ``path`` argument brings a nested context file in."""

Entry = Mapping[str, Any]

DIRECTORIES_CACHE_SIZE = 10_000


@attrs.frozen
class Injection:
    """A context file to bring to the model now."""

    context_file: NestedContextFile
    replaces_earlier: bool
    """An earlier version of the file is still in the context."""

    def details(self) -> dict[str, str]:
        return {
            "path": self.context_file.path,
            "directory": self.context_file.directory,
            "fingerprint": self.context_file.fingerprint,
        }

    def text(self) -> str:
        return injection_text(self.context_file, replaces_earlier=self.replaces_earlier)


class NestedContextFiles:
    """Finds the nested context files a session's context needs (module docstring)."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = Path(os.path.abspath(workspace))
        self._read_cache: dict[Path, tuple[tuple[int, int], NestedContextFile | None]] = {}
        self._lookup_cache: dict[Path, Path | None] = {}
        self._directories_cache: dict[str, tuple[Path, ...]] = {}
        """A tool call's ``path`` argument → the directories below the root it lies in; the
        same paths come back in every request of a session."""
        self._scan = _ProjectionScan()

    def due(self, path_entries: Sequence[Entry]) -> list[Injection]:
        """What to append before the next request, for the active path ``path_entries``."""
        return self.due_in_projection(project_path(path_entries))

    def due_in_projection(self, projected: Sequence[ProjectedEntry]) -> list[Injection]:
        """``due`` for the active path's projection (``Session.projection``, kept between
        requests, so a long session is not projected again for every request)."""
        self._scan.update(projected)
        present = self._scan.present
        injections = []
        for file_path in self._required(self._scan.touched):
            context_file = self._read(file_path)
            if context_file is None:
                continue
            injected = present.get(context_file.path)
            if injected is not None and injected[1] == context_file.fingerprint:
                continue
            injections.append(Injection(context_file, replaces_earlier=injected is not None))
        return injections

    def loaded(self, path_entries: Sequence[Entry]) -> list[protocol.NestedContextFile]:
        """The nested context files in the context at the leaf, in the order they came."""
        loaded = []
        for path, (entry_id, injected_fingerprint) in _present(project_path(path_entries)).items():
            context_file = self._read(self.workspace / path)
            current = context_file is not None and context_file.fingerprint == injected_fingerprint
            loaded.append(protocol.NestedContextFile(path, entry_id, current))
        return loaded

    def _required(self, touched_raw_paths: Iterable[str]) -> list[Path]:
        """The context files governing what the context's tool calls touched, outermost first,
        in the order of the first touch. Directory lookups are remembered for one call only: a
        context file may appear between two requests."""
        self._lookup_cache.clear()
        required: dict[Path, None] = {}
        for raw_path in touched_raw_paths:
            for directory in self._directories_of(raw_path):
                context_file = self._context_file_in(directory)
                if context_file is not None:
                    required.setdefault(context_file, None)
        return list(required)

    def _directories_of(self, raw_path: str) -> tuple[Path, ...]:
        directories = self._directories_cache.get(raw_path)
        if directories is None:
            if len(self._directories_cache) >= DIRECTORIES_CACHE_SIZE:
                self._directories_cache.clear()
            try:
                touched = resolve_to_cwd(raw_path, self.workspace)
            except (ValueError, OSError):
                directories = ()
            else:
                directories = tuple(directories_below_root(touched, self.workspace))
            self._directories_cache[raw_path] = directories
        return directories

    def _context_file_in(self, directory: Path) -> Path | None:
        if directory not in self._lookup_cache:
            self._lookup_cache[directory] = context_file_path_in(directory)
        return self._lookup_cache[directory]

    def _read(self, path: Path) -> NestedContextFile | None:
        """The file as it is now; unchanged files (same mtime and size) are not read again."""
        try:
            status = path.stat()
        except OSError:
            self._read_cache.pop(path, None)
            return None
        stamp = (status.st_mtime_ns, status.st_size)
        cached = self._read_cache.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        context_file = read_nested_context_file(path, self.workspace)
        self._read_cache[path] = (stamp, context_file)
        return context_file


def injection_message(injection: Injection, entry: Entry) -> CustomMessage:
    """The context message an injection entry gives (for the ``message_end`` event)."""
    return CustomMessage(
        role="custom",
        customType=NESTED_CONTEXT_FILE_TYPE,
        content=injection.text(),
        display=True,
        details=injection.details(),
        timestamp=entry.get("timestamp"),
    )


class _ProjectionScan:
    """What the context at the leaf touched and holds, kept from one request to the next: the
    projection only grows between requests (``Session.projection``), so only its new entries are
    read; any other projection (another branch, a compaction) is read whole."""

    def __init__(self) -> None:
        self._scanned: list[ProjectedEntry] = []
        self.touched: dict[str, None] = {}
        """The ``path`` arguments of the touching tool calls, in the order of the first touch."""
        self.present: dict[str, tuple[str, str]] = {}
        """``path → (entry id, fingerprint)`` of the newest injection of each file."""

    def update(self, projected: Sequence[ProjectedEntry]) -> None:
        done = len(self._scanned)
        if len(projected) < done or list(projected[:done]) != self._scanned:
            self._scanned, self.touched, self.present = [], {}, {}
            done = 0
        added = projected[done:]
        self.touched.update(dict.fromkeys(_touched_raw_paths(added)))
        _add_present(self.present, added)
        self._scanned.extend(added)


def _present(projected: Sequence[ProjectedEntry]) -> dict[str, tuple[str, str]]:
    """``path → (entry id, fingerprint)`` of the newest injection of each file in the context."""
    present: dict[str, tuple[str, str]] = {}
    _add_present(present, projected)
    return present


def _add_present(present: dict[str, tuple[str, str]], projected: Sequence[ProjectedEntry]) -> None:
    """``_present`` of ``projected`` added to ``present``, newer injections moved to the end."""
    for item in projected:
        entry = item.entry
        if entry.get("type") != "custom_message" or not item.messages:
            continue
        if entry.get("customType") != NESTED_CONTEXT_FILE_TYPE:
            continue
        details = entry.get("details")
        if not isinstance(details, Mapping):
            continue
        path, fingerprint = details.get("path"), details.get("fingerprint")
        entry_id = entry.get("id")
        if isinstance(path, str) and isinstance(fingerprint, str) and isinstance(entry_id, str):
            present.pop(path, None)  # re-inserted: the order is that of the newest injections
            present[path] = (entry_id, fingerprint)


def _touched_raw_paths(projected: Sequence[ProjectedEntry]) -> Iterable[str]:
    """The ``path`` arguments of the touching tool calls in the context, as the model wrote them."""
    for item in projected:
        for message in item.messages:
            if message.get("role") != "assistant":
                continue
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                raw_path = _touched_raw_path(block)
                if raw_path is not None:
                    yield raw_path


def _touched_raw_path(block: Any) -> str | None:
    if not isinstance(block, Mapping) or block.get("type") != "toolCall":
        return None
    if block.get("name") not in TOUCHING_TOOLS:
        return None
    arguments = block.get("arguments")
    raw = arguments.get("path") if isinstance(arguments, Mapping) else None
    if not isinstance(raw, str) or not raw:
        return None  # an omitted path is the workspace root: nothing nested
    return raw
