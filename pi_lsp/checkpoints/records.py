"""The ``pi-lsp.checkpoint`` entries: which files one tool call changed, by content hash.

The agent appends one such ``custom`` entry right before the result of a ``write`` or ``edit``
call that changed files, so the entry sits where the change happened in the tree: on every path
through that tool result, on none before it. pi ignores ``custom`` entries (they never reach the
model), so pi still opens the file with the same context. The entry holds paths and hashes only;
the contents are in the blob store::

    {"type": "custom", "customType": "pi-lsp.checkpoint", "data": {"toolCallId": "call_1",
     "toolName": "write", "files": [{"path": "sub/new.txt", "before": null, "after": "9f86…"}]}}

``before``/``after`` null means the file did not exist. A file whose contents were not kept
(binary, over the size limit) has ``unrestorable`` (the reason) instead of the hashes. Paths are
relative to the session's working directory when inside it (POSIX separators), else absolute.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath
from typing import Any

import attrs

CHECKPOINT_TYPE = "pi-lsp.checkpoint"


@attrs.frozen
class FileChange:
    """One file changed by one tool call."""

    path: str
    """As recorded: relative to the session's working directory, or absolute."""
    before: str | None = None
    """The hash of the content before the change; None: the file did not exist."""
    after: str | None = None
    """The hash of the content after the change; None: the file no longer exists."""
    unrestorable: str | None = None
    """Why the contents were not kept (``binary content``, ``larger than 5 MB``); the hashes
    are then None and the file cannot be restored."""

    def to_json(self) -> dict[str, Any]:
        if self.unrestorable is not None:
            return {"path": self.path, "unrestorable": self.unrestorable}
        return {"path": self.path, "before": self.before, "after": self.after}

    @classmethod
    def from_json(cls, data: Any) -> FileChange | None:
        """The change ``data`` describes; None for anything malformed (a damaged entry)."""
        if not isinstance(data, Mapping) or not isinstance(data.get("path"), str):
            return None
        reason = data.get("unrestorable")
        if isinstance(reason, str):
            return cls(data["path"], unrestorable=reason)
        before, after = data.get("before"), data.get("after")
        if not all(value is None or _is_hash(value) for value in (before, after)):
            return None
        return cls(data["path"], before, after)


def _is_hash(value: Any) -> bool:
    return isinstance(value, str) and len(value) == 64


def checkpoint_data(
    tool_call_id: str, tool_name: str, changes: Iterable[FileChange]
) -> dict[str, Any]:
    """The ``data`` of a checkpoint entry."""
    return {
        "toolCallId": tool_call_id,
        "toolName": tool_name,
        "files": [change.to_json() for change in changes],
    }


def changes_of(entry: Mapping[str, Any]) -> list[FileChange]:
    """The file changes a checkpoint entry records; [] for any other entry."""
    if entry.get("type") != "custom" or entry.get("customType") != CHECKPOINT_TYPE:
        return []
    data = entry.get("data")
    files = data.get("files") if isinstance(data, Mapping) else None
    if not isinstance(files, list):
        return []
    return [change for change in map(FileChange.from_json, files) if change is not None]


def recorded_path(path: str, cwd: str) -> str:
    """How ``path`` (absolute) is written into an entry: relative to ``cwd`` when inside it."""
    if cwd:
        relative = os.path.relpath(path, cwd)
        if relative != os.pardir and not relative.startswith(os.pardir + os.sep):
            return PurePosixPath(*relative.split(os.sep)).as_posix()
    return path


def absolute_path(recorded: str, cwd: str) -> str:
    """The absolute path an entry's ``path`` names (the inverse of ``recorded_path``)."""
    native = recorded.replace("/", os.sep) if os.sep != "/" else recorded
    if os.path.isabs(native) or not cwd:
        return os.path.normpath(native)
    return os.path.normpath(os.path.join(cwd, native))
