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

from pi_lsp.project_memory.database import TIME_SHIFT
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
    top_parent: str | None
    """The parent id no entry has, where the active path stops (``None``: a root or a cycle):
    an entry given that id later extends the path upwards."""
    entries: int


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
    offset = _resume_offset(state, stat)
    try:
        data = _read_from(path, offset)
        with _transaction(connection):
            if state is None or not _continues(state, data):
                state = _fresh_state(connection, path, state, stat)
                if offset:
                    data = _read_from(path, 0)
            return _index_new_lines(connection, state, stat, data)
    except OSError:  # the file went away or became unreadable while it was read
        return 0


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
        "SELECT file, device, inode, indexed_bytes, mtime_ns, size, tail, session_id, leaf_row, "
        "top_parent, entries "
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


def _resume_offset(state: FileState | None, stat: os.stat_result) -> int:
    """Where to read from: a little before where the index stopped, when the file may only have
    grown since (its remembered bytes there are compared); else the start."""
    if state is None or (state.device, state.inode) != (stat.st_dev, stat.st_ino):
        return 0
    if stat.st_size < state.indexed_bytes:
        return 0
    return max(0, state.indexed_bytes - TAIL_BYTES)


def _continues(state: FileState, data: bytes) -> bool:
    """Whether ``data`` (read from ``_resume_offset``) starts with the bytes the index ended on."""
    remembered = min(state.indexed_bytes, TAIL_BYTES)
    return len(data) >= remembered and data[:remembered] == state.tail


def _fresh_state(
    connection: sqlite3.Connection, path: Path, state: FileState | None, stat: os.stat_result
) -> FileState:
    """A new, empty state for ``path``, its old rows dropped."""
    if state is not None:
        _delete_rows(connection, state.file)
        connection.execute("DELETE FROM files WHERE file = ?", (state.file,))
    cursor = connection.execute(
        "INSERT INTO files (path, device, inode, indexed_bytes, mtime_ns, size, tail) "
        "VALUES (?, ?, ?, 0, 0, -1, x'')",
        (str(path), stat.st_dev, stat.st_ino),
    )
    assert cursor.lastrowid is not None
    return FileState(cursor.lastrowid, stat.st_dev, stat.st_ino, 0, 0, -1, b"", None, None, None, 0)


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
        path_end = state.leaf_row, state.top_parent
        _record_progress(
            connection, state, stat, state.indexed_bytes, state.tail, path_end, state.entries
        )
        return 0
    session_id = state.session_id
    new_entries: list[StoredEntry] = []
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
        new_entries.append(entry)
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
    path_end = state.leaf_row, state.top_parent
    if new_entries:
        path_end = _insert_with_path(connection, state, new_entries)
    tail = data[max(0, complete_end - TAIL_BYTES) : complete_end]
    total = state.entries + len(new_entries)
    _record_progress(connection, state, stat, new_end, tail, path_end, total)
    return len(new_entries)


def _insert_with_path(
    connection: sqlite3.Connection, state: FileState, new_entries: list[StoredEntry]
) -> tuple[int, str | None]:
    """Insert ``new_entries`` marked on or off the active path, which now ends at the last of
    them; the new leaf's row and ``top_parent``. The rows of older entries are updated only when
    the path left them (a branch) or may have moved above them: a new entry reuses an id (the
    later entry wins it) or has the id the path's top lacked as its parent."""
    on_path, parent_outside = _path_in_batch(new_entries)
    ids = {entry.id for entry in new_entries if isinstance(entry.id, str)}
    above_moved = state.entries > 0 and (
        state.top_parent in ids or _reuses_an_id(connection, state.file, ids)
    )
    rows = [
        _insert_entry(connection, state.file, state.entries + index, entry, index in on_path)
        for index, entry in enumerate(new_entries)
    ]
    junction = _latest_row(connection, state.file, parent_outside) if parent_outside else None
    if junction is not None and junction in rows:
        junction = None  # a parent cycle back into the new entries: pi's walk ends there
    if junction is not None and junction == state.leaf_row and not above_moved:
        return rows[-1], state.top_parent
    if state.leaf_row is not None:  # the path left the old leaf: walk it again
        connection.execute(
            "UPDATE entries SET on_path = 0 WHERE file = ? AND on_path AND row NOT IN "
            f"({','.join('?' * len(rows))})",
            (state.file, *rows),
        )
    if junction is not None:
        _mark_path_up(connection, state.file, junction)
    return rows[-1], _top_parent(connection, state.file)


def _reuses_an_id(connection: sqlite3.Connection, file: int, ids: set[str]) -> bool:
    """Whether the file had an entry with one of ``ids`` already."""
    if not ids:
        return False
    found = connection.execute(
        f"SELECT 1 FROM entries WHERE file = ? AND entry_id IN ({','.join('?' * len(ids))}) "
        "LIMIT 1",
        (file, *ids),
    )
    return found.fetchone() is not None


def _top_parent(connection: sqlite3.Connection, file: int) -> str | None:
    """The parent id no entry has, of the row where the active path stops (only that row's
    parent can be missing: the walk goes on past every other)."""
    found = connection.execute(
        "SELECT child.parent_id FROM entries AS child WHERE child.file = :file AND child.on_path "
        "AND child.parent_id <> '' AND NOT EXISTS (SELECT 1 FROM entries AS parent "
        "WHERE parent.file = :file AND parent.entry_id = child.parent_id) LIMIT 1",
        {"file": file},
    ).fetchone()
    return found[0] if found else None


def _path_in_batch(new_entries: list[StoredEntry]) -> tuple[set[int], str | None]:
    """The positions of the new entries on the path up from the last one, and the parent id
    where that path leaves them (``None`` when it reaches a root among them)."""
    position: dict[str, int] = {}
    for index, entry in enumerate(new_entries):
        if isinstance(entry.id, str):
            position[entry.id] = index  # a later entry wins an id used twice
    on_path: set[int] = set()
    current: int | None = len(new_entries) - 1
    while current is not None and current not in on_path:
        on_path.add(current)
        parent = new_entries[current].parentId
        if not isinstance(parent, str) or not parent:
            return on_path, None
        current = position.get(parent)
        if current is None:
            return on_path, parent
    return on_path, None  # a cycle among the new entries


def _entries(data: bytes, start: int, end: int) -> Iterator[StoredEntry]:
    position = start
    while position < end:
        line_end = data.find(b"\n", position, end)
        if line_end > position and not data[position:line_end].isspace():
            entry = index_line(data, position, line_end)
            if entry is not None:
                yield entry
        position = line_end + 1


def _insert_entry(
    connection: sqlite3.Connection, file: int, seq: int, entry: StoredEntry, on_path: bool
) -> int:
    timestamp = entry_time_ms(entry)
    values = (
        file,
        seq,
        text_or_none(entry.id),
        text_or_none(entry.parentId),
        text_or_none(entry.type),
        entry_role(entry),
        timestamp,
        on_path,
    )
    row = _time_key(timestamp)
    try:
        connection.execute(_INSERT_ENTRY, (row, *values))
    except sqlite3.IntegrityError:  # another entry of the same millisecond has the row
        row = _free_key(connection, row)
        connection.execute(_INSERT_ENTRY, (row, *values))
    text = indexed_text(entry)
    if text:
        connection.execute("INSERT INTO entry_text (rowid, text) VALUES (?, ?)", (row, text))
    return row


_INSERT_ENTRY = (
    "INSERT INTO entries (row, file, seq, entry_id, parent_id, type, role, timestamp, on_path) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_MAX_MS = (1 << (63 - TIME_SHIFT)) - 1


def _time_key(timestamp_ms: int | None) -> int:
    """The row of an entry of this time (no time: the oldest possible)."""
    milliseconds = max(0, min(timestamp_ms or 0, _MAX_MS))
    return milliseconds << TIME_SHIFT


def _free_key(connection: sqlite3.Connection, key: int) -> int:
    """The next row after the entries of ``key``'s millisecond (a row past the millisecond, if
    a million entries share it, still sorts close to its time)."""
    highest = connection.execute(
        "SELECT max(row) FROM entries WHERE row >= ? AND row < ?", (key, key + (1 << TIME_SHIFT))
    ).fetchone()[0]
    candidate = (highest if highest is not None else key) + 1
    while connection.execute("SELECT 1 FROM entries WHERE row = ?", (candidate,)).fetchone():
        candidate += 1
    return candidate


def _record_progress(
    connection: sqlite3.Connection,
    state: FileState,
    stat: os.stat_result,
    indexed_bytes: int,
    tail: bytes,
    path_end: tuple[int | None, str | None],
    entries: int,
) -> None:
    """Store how far ``state``'s file is indexed; ``path_end`` is the leaf's row and the
    ``top_parent``."""
    connection.execute(
        "UPDATE files SET device = ?, inode = ?, indexed_bytes = ?, mtime_ns = ?, size = ?, "
        "tail = ?, leaf_row = ?, top_parent = ?, entries = ? WHERE file = ?",
        (
            stat.st_dev,
            stat.st_ino,
            indexed_bytes,
            stat.st_mtime_ns,
            stat.st_size,
            tail,
            *path_end,
            entries,
            state.file,
        ),
    )


def _mark_path_up(connection: sqlite3.Connection, file: int, start: int) -> None:
    """Mark the rows from ``start`` up to the root on the active path, as pi walks them: a parent
    id names its latest entry, and a row met again (a parent cycle) ends the walk.

    One statement: a branch off a long session walks thousands of ancestors, and a query each
    cost milliseconds per thousand."""
    connection.execute(_MARK_PATH_UP, {"file": file, "start": start})


_MARK_PATH_UP = """
WITH RECURSIVE up(row, parent_id) AS (
    SELECT row, parent_id FROM entries WHERE row = :start
    UNION
    SELECT parent.row, parent.parent_id FROM up JOIN entries AS parent ON parent.row = (
        SELECT latest.row FROM entries AS latest
        WHERE latest.file = :file AND latest.entry_id = up.parent_id AND up.parent_id <> ''
        ORDER BY latest.seq DESC LIMIT 1
    )
)
UPDATE entries SET on_path = 1 WHERE row IN (SELECT row FROM up)
"""


def _latest_row(connection: sqlite3.Connection, file: int, entry_id: str) -> int | None:
    found = connection.execute(
        "SELECT row FROM entries WHERE file = ? AND entry_id = ? ORDER BY seq DESC LIMIT 1",
        (file, entry_id),
    ).fetchone()
    return found[0] if found else None
