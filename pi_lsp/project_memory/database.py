"""The index database: its schema, opening it, and rebuilding it when it cannot be trusted.

Tables: ``files`` (one row per session file: identity, how many bytes are indexed, the session's
id and name), ``entries`` (one row per entry: ids, type, role, time, its place in the file,
whether it is on the file's active path) and ``entry_text``, an FTS5 table whose rowid is the
entry's row. An entry's row is its time (milliseconds shifted left by ``TIME_SHIFT`` bits, plus a
counter for entries of the same millisecond): FTS5 walks a word's matches in rowid order, so the
newest matches of even the commonest word are read first and the walk stops at the limit.
The database is in WAL mode, so searches read while the indexer writes. A file that is not a
database, a schema of another version, or a failed integrity check means the index is deleted
and built again: it is a cache of the session files, which stay the truth.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from pathlib import Path

logger = logging.getLogger(__name__)

SCHEMA_VERSION = "3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    file INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    session_id TEXT,
    name TEXT,
    device INTEGER NOT NULL,
    inode INTEGER NOT NULL,
    indexed_bytes INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    tail BLOB NOT NULL,
    leaf_row INTEGER,
    top_parent TEXT,
    entries INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS entries (
    row INTEGER PRIMARY KEY,
    file INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    entry_id TEXT,
    parent_id TEXT,
    type TEXT,
    role TEXT,
    timestamp INTEGER,
    on_path INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS entries_by_entry_id ON entries (file, entry_id, seq);
CREATE VIRTUAL TABLE IF NOT EXISTS entry_text
    USING fts5 (text, tokenize = 'unicode61 remove_diacritics 2');
"""


BUSY_TIMEOUT_SECONDS = 10.0
"""How long a write waits for another process's (two windows on one workspace share an index)."""
OPEN_RETRY_SECONDS = 0.05
"""The pause between attempts to open an index another process holds."""
TIME_SHIFT = 8
"""Bits of an entry's row below its time: 256 entries per millisecond (more take the next
millisecond's rows), and small gaps between rows keep FTS5's lists of rowids short."""


class IndexUnusable(Exception):
    """The database could not be opened or failed its check."""


def connect(path: Path, *, check: bool = False) -> sqlite3.Connection:
    """A connection to the index at ``path``, created with its schema when missing; rebuilt
    (deleted and created again) when it is damaged or of another schema version."""
    try:
        return _connect_when_free(path, check=check)
    except sqlite3.OperationalError as error:
        if _is_busy(error):
            raise  # another process writes the index: nothing is wrong with it
        logger.warning("rebuilding the session index %s: %s", path, error)
        remove_database(path)
        return _connect(path, check=False)
    except (sqlite3.DatabaseError, IndexUnusable) as error:
        logger.warning("rebuilding the session index %s: %s", path, error)
        remove_database(path)
        return _connect(path, check=False)


def _connect_when_free(path: Path, *, check: bool) -> sqlite3.Connection:
    """:func:`_connect`, again while another process holds the database: switching to WAL and
    creating the schema can fail at once with "database is locked" (SQLite does not always wait
    out its busy timeout there) while a second window opens the index it is creating."""
    deadline = time.monotonic() + BUSY_TIMEOUT_SECONDS
    while True:
        try:
            return _connect(path, check=check)
        except sqlite3.OperationalError as error:
            if not _is_busy(error) or time.monotonic() >= deadline:
                raise
        time.sleep(OPEN_RETRY_SECONDS)


def _is_busy(error: sqlite3.OperationalError) -> bool:
    return "locked" in str(error) or "busy" in str(error)


def _connect(path: Path, *, check: bool) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(
        path, check_same_thread=False, isolation_level=None, timeout=BUSY_TIMEOUT_SECONDS
    )
    try:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        if check:
            verdict = connection.execute("PRAGMA quick_check(1)").fetchone()[0]
            if verdict != "ok":
                raise IndexUnusable(f"integrity check failed: {verdict}")
        version = _stored_version(connection)
        if version is not None and version != SCHEMA_VERSION:
            raise IndexUnusable(f"schema version {version}, this pi-lsp writes {SCHEMA_VERSION}")
        connection.executescript(_SCHEMA)
        connection.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', ?)", (SCHEMA_VERSION,)
        )
    except BaseException:
        connection.close()
        raise
    return connection


def _stored_version(connection: sqlite3.Connection) -> str | None:
    has_meta = connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
    ).fetchone()
    if not has_meta:
        return None
    row = connection.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    return row[0] if row else None


def remove_database(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
