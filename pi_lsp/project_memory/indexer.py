"""Bringing one session file's rows in the index up to date with the file.

A file is read from where the index stopped: appends cost only their own lines. The index
remembers the file's identity (device, inode) and the bytes just before where it stopped; a file
that changed identity, shrank, or whose remembered bytes changed (rewritten in place) is indexed
again from the start. Only complete lines are indexed: a last line without its newline is still
being written (or was torn by a crash, and the store repairs it before its next append).

The active path is pi's: from the file's last entry up through its parents (a later entry wins
an id used twice, and a parent cycle ends the walk). An append that continues the path marks only
itself; anything else (a branch) walks the whole path again.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import attrs

from pi_lsp.project_memory.extract import entry_role, entry_time_ms, indexed_text, text_or_none
from pi_lsp.session.store import is_session_header
from pi_lsp.session.stored_entry import StoredEntry, index_line

TAIL_BYTES = 64
"""How many bytes before the indexed end are remembered to notice a file rewritten in place."""


@attrs.frozen
class FileState:
    file: int
    device: int
    inode: int
    indexed_bytes: int
    mtime_ns: int
    size: int
    tail: bytes
    session_id: str | None
    leaf_row: int | None


def sync_file(connection: sqlite3.Connection, path: Path) -> int:
    """Index what ``path`` gained since it was last indexed; returns the entries added.

    A file gone is dropped from the index. Runs in one transaction."""
    try:
        stat = os.stat(path)
    except OSError:
        forget_file(connection, path)
        return 0
    state = _file_state(connection, path)
    if state is not None and _unchanged(state, stat):
        return 0
    with _transaction(connection):
        state = _reusable_state(connection, path, state, stat)
        try:
            data = _read_from(path, max(0, state.indexed_bytes - TAIL_BYTES))
        except OSError:
            return 0
        return _index_new_lines(connection, state, stat, data)


def forget_file(connection: sqlite3.Connection, path: Path) -> None:
    """Drop ``path`` and its entries from the index."""
    with _transaction(connection):
        row = connection.execute("SELECT file FROM files WHERE path = ?", (str(path),)).fetchone()
        if row is not None:
            _delete_rows(connection, row[0])
            connection.execute("DELETE FROM files WHERE file = ?", (row[0],))


def indexed_paths(connection: sqlite3.Connection) -> list[str]:
    return [row[0] for row in connection.execute("SELECT path FROM files")]


class _Transaction:
    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    def __enter__(self) -> None:
        if not self.connection.in_transaction:
            self.connection.execute("BEGIN IMMEDIATE")
            self.owned = True
        else:
            self.owned = False

    def __exit__(self, kind, value, traceback) -> None:
        if not self.owned:
            return
        self.connection.execute("ROLLBACK" if kind else "COMMIT")


def _transaction(connection: sqlite3.Connection) -> _Transaction:
    return _Transaction(connection)


def _file_state(connection: sqlite3.Connection, path: Path) -> FileState | None:
    row = connection.execute(
        "SELECT file, device, inode, indexed_bytes, mtime_ns, size, tail, session_id, leaf_row "
        "FROM files WHERE path = ?",
        (str(path),),
    ).fetchone()
    return FileState(*row) if row else None


def _unchanged(state: FileState, stat: os.stat_result) -> bool:
    return (
        (state.device, state.inode) == (stat.st_dev, stat.st_ino)
        and state.mtime_ns == stat.st_mtime_ns
        and state.size == stat.st_size
    )


def _reusable_state(
    connection: sqlite3.Connection, path: Path, state: FileState | None, stat: os.stat_result
) -> FileState:
    """``state`` when the file only grew since; else a fresh, empty state for it."""
    if state is not None and _same_prefix(path, state, stat):
        return state
    if state is not None:
        _delete_rows(connection, state.file)
        connection.execute("DELETE FROM files WHERE file = ?", (state.file,))
    cursor = connection.execute(
        "INSERT INTO files (path, device, inode, indexed_bytes, mtime_ns, size, tail) "
        "VALUES (?, ?, ?, 0, 0, -1, x'')",
        (str(path), stat.st_dev, stat.st_ino),
    )
    assert cursor.lastrowid is not None
    return FileState(cursor.lastrowid, stat.st_dev, stat.st_ino, 0, 0, -1, b"", None, None)


def _same_prefix(path: Path, state: FileState, stat: os.stat_result) -> bool:
    if (state.device, state.inode) != (stat.st_dev, stat.st_ino):
        return False
    if stat.st_size < state.indexed_bytes:
        return False
    start = max(0, state.indexed_bytes - TAIL_BYTES)
    try:
        with open(path, "rb") as stream:
            stream.seek(start)
            return stream.read(state.indexed_bytes - start) == state.tail
    except OSError:
        return False


def _delete_rows(connection: sqlite3.Connection, file: int) -> None:
    connection.execute(
        "DELETE FROM entry_text WHERE rowid IN (SELECT row FROM entries WHERE file = ?)", (file,)
    )
    connection.execute("DELETE FROM entries WHERE file = ?", (file,))


def _read_from(path: Path, offset: int) -> bytes:
    with open(path, "rb") as stream:
        stream.seek(offset)
        return stream.read()


def _index_new_lines(
    connection: sqlite3.Connection, state: FileState, stat: os.stat_result, data: bytes
) -> int:
    """Index the complete lines of ``data`` (the file from ``TAIL_BYTES`` before where the index
    stopped)."""
    skip = min(state.indexed_bytes, TAIL_BYTES)
    complete_end = data.rfind(b"\n") + 1
    new_end = state.indexed_bytes - skip + complete_end if complete_end > skip else None
    if new_end is None:
        _record_progress(connection, state, stat, state.indexed_bytes, state.tail, state.leaf_row)
        return 0
    session_id = state.session_id
    added = 0
    leaf_row = state.leaf_row
    name: str | None = None
    named = False
    for entry in _entries(data, skip, complete_end):
        if session_id is None:
            if state.indexed_bytes > 0 or not is_session_header(entry):
                break  # not a session file: it stays known, with nothing indexed
            session_id = entry.id
            continue
        if is_session_header(entry):
            continue  # a stray header further down: not an entry of the tree, as in the store
        leaf_row = _insert_entry(connection, state.file, entry)
        added += 1
        if entry.type == "session_info":
            value = entry.get("name")
            name = (value.strip() or None) if isinstance(value, str) else None
            named = True
    if session_id is not None and state.session_id is None:
        connection.execute(
            "UPDATE files SET session_id = ? WHERE file = ?", (session_id, state.file)
        )
    if named:
        connection.execute("UPDATE files SET name = ? WHERE file = ?", (name, state.file))
    if added and leaf_row is not None:
        _update_active_path(connection, state.file, state.leaf_row, leaf_row)
    tail = data[max(0, complete_end - TAIL_BYTES) : complete_end]
    _record_progress(connection, state, stat, new_end, tail, leaf_row)
    return added


def _entries(data: bytes, start: int, end: int) -> Iterator[StoredEntry]:
    position = start
    while position < end:
        line_end = data.find(b"\n", position, end)
        if line_end > position and not data[position:line_end].isspace():
            entry = index_line(data, position, line_end)
            if entry is not None:
                yield entry
        position = line_end + 1


def _insert_entry(connection: sqlite3.Connection, file: int, entry: StoredEntry) -> int:
    cursor = connection.execute(
        "INSERT INTO entries (file, entry_id, parent_id, type, role, timestamp) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (
            file,
            text_or_none(entry.id),
            text_or_none(entry.parentId),
            text_or_none(entry.type),
            entry_role(entry),
            entry_time_ms(entry),
        ),
    )
    row = cursor.lastrowid
    assert row is not None
    text = indexed_text(entry)
    if text:
        connection.execute("INSERT INTO entry_text (rowid, text) VALUES (?, ?)", (row, text))
    return row


def _record_progress(
    connection: sqlite3.Connection,
    state: FileState,
    stat: os.stat_result,
    indexed_bytes: int,
    tail: bytes,
    leaf_row: int | None,
) -> None:
    connection.execute(
        "UPDATE files SET device = ?, inode = ?, indexed_bytes = ?, mtime_ns = ?, size = ?, "
        "tail = ?, leaf_row = ? WHERE file = ?",
        (
            stat.st_dev,
            stat.st_ino,
            indexed_bytes,
            stat.st_mtime_ns,
            stat.st_size,
            tail,
            leaf_row,
            state.file,
        ),
    )


def _update_active_path(
    connection: sqlite3.Connection, file: int, old_leaf: int | None, new_leaf: int
) -> None:
    """Mark the path from ``new_leaf`` to the root; only the new part when it extends the old."""
    path = _walk_up(connection, file, new_leaf, stop_at=old_leaf)
    if path and path[-1] == old_leaf:
        path.pop()
    else:
        connection.execute("UPDATE entries SET on_path = 0 WHERE file = ? AND on_path", (file,))
    connection.executemany("UPDATE entries SET on_path = 1 WHERE row = ?", [(r,) for r in path])


def _walk_up(
    connection: sqlite3.Connection, file: int, start: int, *, stop_at: int | None
) -> list[int]:
    """The rows from ``start`` up to the root (or to ``stop_at``, included), as pi walks them."""
    rows: list[int] = []
    seen: set[int] = set()
    current: int | None = start
    while current is not None and current not in seen:
        seen.add(current)
        rows.append(current)
        if current == stop_at:
            break
        parent = connection.execute("SELECT parent_id FROM entries WHERE row = ?", (current,))
        parent_id = parent.fetchone()[0]
        current = _latest_row(connection, file, parent_id) if parent_id else None
    return rows


def _latest_row(connection: sqlite3.Connection, file: int, entry_id: str) -> int | None:
    found = connection.execute(
        "SELECT max(row) FROM entries WHERE file = ? AND entry_id = ?", (file, entry_id)
    ).fetchone()
    return found[0] if found else None
