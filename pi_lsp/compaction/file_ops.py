"""Which files a stretch of conversation read and modified, as pi 0.84.2 tracks them for summaries.

Only the agent's ``read``, ``write`` and ``edit`` tool calls count, with their ``path`` argument
taken verbatim. A summary ends with the lists (``<read-files>`` / ``<modified-files>``) and stores
them in ``details``, from where the next summary picks them up, so the record is cumulative.

pi-lsp also counts what the user does in the editor: the server records opened and saved documents
as ``custom`` entries of type ``pi-lsp.editor-file-ops`` (pi ignores them), and summaries fold
them in alongside the tool calls.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from pi_lsp.session.js_values import is_truthy, join, to_string

EDITOR_FILE_OPS_TYPE = "pi-lsp.editor-file-ops"
"""``customType`` of the entries recording the documents the user opened and saved."""

EditorFileOps = tuple[list[str], list[str]]
"""The ``(readFiles, modifiedFiles)`` of one editor file-operations entry."""


@attrs.define
class FileOps:
    """Paths seen per operation (pi's ``createFileOps``)."""

    read: set[str] = attrs.field(factory=set)
    written: set[str] = attrs.field(factory=set)
    edited: set[str] = attrs.field(factory=set)


@attrs.frozen
class FileLists:
    """The final lists: a file that was read and then modified only counts as modified."""

    read_files: list[str]
    modified_files: list[str]


def extract_file_ops_from_message(message: Mapping[str, Any], file_ops: FileOps) -> None:
    """Add the paths of an assistant message's read/write/edit tool calls to ``file_ops``, and, as
    pi 1.6 does, those of the calls a tool result records in ``nestedCalls`` (calls made by a
    script the tool ran)."""
    role = message.get("role")
    if role == "toolResult":
        nested = message.get("nestedCalls")
        calls = nested.get("calls") if isinstance(nested, Mapping) else None
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, Mapping):
                _add_file_op(call.get("name"), call.get("arguments"), file_ops)
        return
    if role != "assistant":
        return
    content = message.get("content")
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, Mapping) or block.get("type") != "toolCall":
            continue
        if "arguments" not in block or "name" not in block:
            continue
        _add_file_op(block["name"], block["arguments"], file_ops)


def _add_file_op(name: Any, arguments: Any, file_ops: FileOps) -> None:
    if not is_truthy(arguments):
        return
    path = arguments.get("path") if isinstance(arguments, Mapping) else None
    if not isinstance(path, str) or not path:
        return
    if name == "read":
        file_ops.read.add(path)
    elif name == "write":
        file_ops.written.add(path)
    elif name == "edit":
        file_ops.edited.add(path)


def add_details_file_lists(details: Any, file_ops: FileOps) -> None:
    """Seed ``file_ops`` from an earlier summary's ``details`` (modified files count as edited)."""
    if not isinstance(details, Mapping):
        return
    read_files = details.get("readFiles")
    if isinstance(read_files, list):
        _add_all(file_ops.read, read_files)
    modified_files = details.get("modifiedFiles")
    if isinstance(modified_files, list):
        _add_all(file_ops.edited, modified_files)


def editor_file_ops_in(entries: Iterable[Mapping[str, Any]]) -> list[EditorFileOps]:
    """The read and modified lists of the editor file-operations entries among ``entries``.

    Malformed data (a hand-edited line) is skipped rather than trusted: only string paths count.
    """
    found: list[EditorFileOps] = []
    for entry in entries:
        if entry.get("type") != "custom" or entry.get("customType") != EDITOR_FILE_OPS_TYPE:
            continue
        data = entry.get("data")
        if not isinstance(data, Mapping):
            continue
        found.append((_paths(data.get("readFiles")), _paths(data.get("modifiedFiles"))))
    return found


def with_editor_file_ops(file_ops: FileOps, editor_file_ops: Sequence[EditorFileOps]) -> FileOps:
    """A copy of ``file_ops`` with the editor's reads and modifications added; ``file_ops`` itself
    belongs to a plan and stays as it was."""
    merged = FileOps(set(file_ops.read), set(file_ops.written), set(file_ops.edited))
    for read_files, modified_files in editor_file_ops:
        _add_all(merged.read, read_files)
        # A saved document counts like the agent's edit; compute_file_lists then drops it from
        # the read list, wherever the read came from.
        _add_all(merged.edited, modified_files)
    return merged


def _paths(values: Any) -> list[str]:
    if not isinstance(values, list):
        return []
    return [value for value in values if isinstance(value, str) and value]


def _add_all(paths: set[str], values: Iterable[Any]) -> None:
    for value in values:
        try:
            paths.add(value)
        except TypeError:
            continue  # An object in a hand-edited list cannot be a path.


def compute_file_lists(file_ops: FileOps) -> FileLists:
    """pi's ``computeFileLists``: both lists sorted as JavaScript's default ``sort()`` does."""
    modified = file_ops.edited | file_ops.written
    read_only = [path for path in file_ops.read if path not in modified]
    return FileLists(
        read_files=js_default_sort(read_only), modified_files=js_default_sort(modified)
    )


def js_default_sort(values: Iterable[Any]) -> list[Any]:
    """``Array.prototype.sort()`` without comparator: by ``String(value)``, in UTF-16 code units.

    Python orders strings by code point, which differs from UTF-16 order once characters outside
    the Basic Multilingual Plane meet characters from U+E000 to U+FFFF.
    """
    return sorted(values, key=_utf16_sort_key)


def _utf16_sort_key(value: Any) -> bytes:
    return to_string(value).encode("utf-16-be", "surrogatepass")


def format_file_operations(read_files: list[str], modified_files: list[str]) -> str:
    """The blocks appended to a summary text; empty when there are no files."""
    sections = []
    if read_files:
        sections.append("<read-files>\n" + join(read_files, "\n") + "\n</read-files>")
    if modified_files:
        sections.append("<modified-files>\n" + join(modified_files, "\n") + "\n</modified-files>")
    if not sections:
        return ""
    return "\n\n" + "\n\n".join(sections)
