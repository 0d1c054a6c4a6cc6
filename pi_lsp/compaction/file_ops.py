"""Which files a stretch of conversation read and modified, as pi 0.84.2 tracks them for summaries.

Only the agent's ``read``, ``write`` and ``edit`` tool calls count, with their ``path`` argument
taken verbatim. A summary ends with the lists (``<read-files>`` / ``<modified-files>``) and stores
them in ``details``, from where the next summary picks them up, so the record is cumulative.

pi-lsp also counts what the user does in the editor: the server records opened and saved documents
as ``custom`` entries of type ``pi-lsp.editor-file-ops`` (pi ignores them), and summaries fold
them in alongside the tool calls.

Where pi's lists grow without bound (every path ever touched, in every later summary), pi-lsp's
summaries keep them useful (``summary_file_lists``, ``format_bounded_file_operations``):

- each path remembers when it was last touched (its message's or entry's timestamp; paths carried
  over from an earlier summary's ``details`` count as older than anything new), and the lists run
  from the most recently touched path to the oldest;
- a read file that no longer exists leaves the read list; a modified file that no longer exists
  stays, marked deleted in the text;
- the text shows ``file_list_limit`` paths per list and a line saying how many older ones it left
  out, while ``details`` keeps the complete lists (up to ``DETAILS_FILE_LIST_CAP`` each) for the
  next summary.

``compute_file_lists`` stays pi's (sorted, unbounded): plans are compared with pi's own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import attrs

from pi_lsp.session.js_values import is_truthy, to_string
from pi_lsp.session.message_types import MessageRecord
from pi_lsp.session.timestamps import iso_to_epoch_ms

EDITOR_FILE_OPS_TYPE = "pi-lsp.editor-file-ops"
"""``customType`` of the entries recording the documents the user opened and saved."""

DETAILS_FILE_LIST_CAP = 1000
"""The most paths per list a summary's ``details`` keeps (the most recently touched ones)."""

FileExists = Callable[[str], bool]
"""Whether a path, as the agent wrote it, names a file that exists now."""

Recency = tuple[float, float]
"""When a path was last touched, comparable: (time in ms, rank within that time)."""

CARRIED_OVER = float("-inf")
"""The time of paths carried over from an earlier summary: before anything touched since."""


class EditorFileOps(NamedTuple):
    """The ``readFiles`` and ``modifiedFiles`` of one editor file-operations entry."""

    read_files: list[str]
    modified_files: list[str]
    timestamp: float = 0.0
    """When the entry was written (ms since the epoch)."""


@attrs.define
class FileOps:
    """Paths seen per operation (pi's ``createFileOps``), and when each was last touched."""

    read: set[str] = attrs.field(factory=set)
    written: set[str] = attrs.field(factory=set)
    edited: set[str] = attrs.field(factory=set)
    last_touched: dict[str, Recency] = attrs.field(factory=dict, eq=False, repr=False)
    """Not part of pi's ``FileOps``: orders the bounded lists of pi-lsp's summary texts."""

    def touch(self, path: str, when: Recency) -> None:
        known = self.last_touched.get(path)
        if known is None or when > known:
            self.last_touched[path] = when


@attrs.frozen
class FileLists:
    """The final lists: a file that was read and then modified only counts as modified."""

    read_files: list[str]
    modified_files: list[str]


def extract_file_ops_from_message(message: MessageRecord, file_ops: FileOps) -> None:
    """Add the paths of an assistant message's read/write/edit tool calls to ``file_ops``, and, as
    pi 1.6 does, those of the calls a tool result records in ``nestedCalls`` (calls made by a
    script the tool ran)."""
    role = message.get("role")
    when = (_message_time(message), 0.0)
    if role == "toolResult":
        nested = message.get("nestedCalls")
        calls = nested.get("calls") if isinstance(nested, Mapping) else None
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, Mapping):
                _add_file_op(call.get("name"), call.get("arguments"), file_ops, when)
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
        _add_file_op(block["name"], block["arguments"], file_ops, when)


def _message_time(message: MessageRecord) -> float:
    timestamp = message.get("timestamp")
    if isinstance(timestamp, (int, float)) and not isinstance(timestamp, bool):
        return float(timestamp)
    return 0.0


def _add_file_op(name: Any, arguments: Any, file_ops: FileOps, when: Recency) -> None:
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
    else:
        return
    file_ops.touch(path, when)


def add_details_file_lists(details: Any, file_ops: FileOps, when: float = CARRIED_OVER) -> None:
    """Seed ``file_ops`` from an earlier summary's ``details`` (modified files count as edited).

    The lists of pi-lsp's summaries run from the most recently touched path down; their paths
    count as touched at ``when`` (by default, before anything else), keeping that order.
    """
    if not isinstance(details, Mapping):
        return
    read_files = details.get("readFiles")
    if isinstance(read_files, list):
        _add_all(file_ops.read, read_files)
        _touch_in_order(file_ops, read_files, when)
    modified_files = details.get("modifiedFiles")
    if isinstance(modified_files, list):
        _add_all(file_ops.edited, modified_files)
        _touch_in_order(file_ops, modified_files, when)


def _touch_in_order(file_ops: FileOps, newest_first: list[Any], when: float) -> None:
    for rank, path in enumerate(newest_first):
        if isinstance(path, str):
            file_ops.touch(path, (when, -float(rank)))


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
        timestamp = entry.get("timestamp")
        found.append(
            EditorFileOps(
                _paths(data.get("readFiles")),
                _paths(data.get("modifiedFiles")),
                entry_time(timestamp),
            )
        )
    return found


def entry_time(timestamp: Any) -> float:
    """An entry's ISO ``timestamp`` in ms since the epoch (0 when it is not a date)."""
    milliseconds = iso_to_epoch_ms(timestamp)
    return float(milliseconds) if milliseconds is not None else 0.0


def with_editor_file_ops(file_ops: FileOps, editor_file_ops: Sequence[EditorFileOps]) -> FileOps:
    """A copy of ``file_ops`` with the editor's reads and modifications added; ``file_ops`` itself
    belongs to a plan and stays as it was."""
    merged = FileOps(
        set(file_ops.read),
        set(file_ops.written),
        set(file_ops.edited),
        dict(file_ops.last_touched),
    )
    for operations in editor_file_ops:
        read_files, modified_files = operations[0], operations[1]
        when = (operations[2] if len(operations) > 2 else 0.0, 0.0)
        _add_all(merged.read, read_files)
        # A saved document counts like the agent's edit; compute_file_lists then drops it from
        # the read list, wherever the read came from.
        _add_all(merged.edited, modified_files)
        for path in (*read_files, *modified_files):
            if isinstance(path, str):
                merged.touch(path, when)
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


# ------------------------------------------------------------------ pi-lsp's bounded lists


@attrs.frozen
class SummaryFileLists:
    """A summary's file lists, most recently touched first: complete (up to
    ``DETAILS_FILE_LIST_CAP``) for ``details``, with the modified files that no longer exist."""

    read_files: list[str]
    modified_files: list[str]
    deleted_files: frozenset[str] = frozenset()

    def details(self) -> dict[str, list[str]]:
        return {"readFiles": list(self.read_files), "modifiedFiles": list(self.modified_files)}


def summary_file_lists(
    file_ops: FileOps, file_exists: FileExists | None = None, cap: int = DETAILS_FILE_LIST_CAP
) -> SummaryFileLists:
    """The lists a summary stores: a read-then-modified file counts as modified (as in pi); read
    files that no longer exist are left out; the newest ``cap`` paths of each list are kept.
    Without ``file_exists`` every path counts as existing."""
    modified = file_ops.edited | file_ops.written
    read_only = [path for path in file_ops.read if path not in modified]
    if file_exists is not None:
        read_only = [path for path in read_only if path_exists(file_exists, path)]
    newest_read = _newest_first(read_only, file_ops.last_touched)[:cap]
    newest_modified = _newest_first(modified, file_ops.last_touched)[:cap]
    deleted = (
        frozenset(path for path in newest_modified if not path_exists(file_exists, path))
        if file_exists is not None
        else frozenset()
    )
    return SummaryFileLists(newest_read, newest_modified, deleted)


def path_exists(file_exists: FileExists, path: str) -> bool:
    """``file_exists(path)``, with a path that cannot be checked counting as gone."""
    try:
        return file_exists(path)
    except (OSError, ValueError):
        return False


def _newest_first(paths: Iterable[str], last_touched: Mapping[str, Recency]) -> list[str]:
    """Most recently touched first; paths touched at the same moment in pi's order."""
    alphabetical = js_default_sort(paths)
    return sorted(
        alphabetical, key=lambda path: last_touched.get(path, (CARRIED_OVER, 0.0)), reverse=True
    )


def format_bounded_file_operations(
    lists: SummaryFileLists, limit: int, deleted_marker: str = " (deleted)"
) -> str:
    """The blocks appended to a summary text: the newest ``limit`` paths of each list, deleted
    files marked, then how many older paths were left out; empty when there are no files."""
    sections = []
    if lists.read_files:
        sections.append(_block("read-files", lists.read_files, limit, frozenset(), ""))
    if lists.modified_files:
        sections.append(
            _block(
                "modified-files", lists.modified_files, limit, lists.deleted_files, deleted_marker
            )
        )
    if not sections:
        return ""
    return "\n\n" + "\n\n".join(sections)


def _block(tag: str, paths: list[str], limit: int, deleted: frozenset[str], marker: str) -> str:
    shown = [path + marker if path in deleted else path for path in paths[:limit]]
    left_out = len(paths) - len(shown)
    if left_out:
        older = "older file" if left_out == 1 else "older files"
        shown.append(f"({left_out} {older} not listed)")
    return f"<{tag}>\n" + "\n".join(shown) + f"\n</{tag}>"
