"""``ProjectMemory``: the index of a workspace's sessions, built and kept current in the background.

One worker thread owns the writing connection. It indexes every session file of the watched
directories at start, then whatever it is told changed (``notice``: this server's appends, the
watcher's reports), once the files have been quiet for ``settle_seconds`` (after a turn, not
during it), and, every ``sweep_seconds``, whatever a directory listing shows changed (a
missed event, a directory that appeared). Requests never wait for it: ``search`` reads through
a connection of its own (WAL lets it read while the worker writes) and reports how far indexing
has got. A database found damaged at start or while indexing is deleted and built again.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import attrs

from pi_lsp.project_memory.database import connect, remove_database
from pi_lsp.project_memory.indexer import forget_file, sync_file
from pi_lsp.project_memory.search import (
    EVERYTHING,
    Order,
    SearchFilter,
    SearchPage,
    search_index,
)

logger = logging.getLogger(__name__)

SESSION_SUFFIX = ".jsonl"
SETTLE_SECONDS = 0.3
LONGEST_SETTLE_SECONDS = 5.0
_REBUILD = "\0rebuild"
"""The queue's marker for "throw the database away and start again" (no path holds a NUL)."""


FileIdentity = tuple[int, int, int, int]
"""A file's device, inode, modification time (ns) and size: what a sweep compares."""


def _identity(path: str) -> FileIdentity | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_dev, stat.st_ino, stat.st_mtime_ns, stat.st_size)


@attrs.frozen
class IndexProgress:
    complete: bool
    """Every known file is indexed as it was when last seen."""
    indexed_files: int
    known_files: int


@attrs.frozen
class SearchResult:
    page: SearchPage
    progress: IndexProgress


class ProjectMemory:
    """The session index of one workspace."""

    def __init__(
        self,
        database: Path,
        session_dirs: Callable[[], Sequence[Path]],
        *,
        sweep_seconds: float = 30.0,
        settle_seconds: float = SETTLE_SECONDS,
        longest_settle_seconds: float = LONGEST_SETTLE_SECONDS,
    ) -> None:
        self.database = database
        self.settle_seconds = settle_seconds
        """How long the files must be quiet before a pass indexes what changed: a turn appends in
        a burst, so one pass reads the whole turn after it, off the turn's path."""
        self.longest_settle_seconds = longest_settle_seconds
        """How long a change waits at most, should the files never be quiet that long."""
        self._last_change = 0.0
        self.session_dirs: Callable[[], list[Path]] = lambda: list(session_dirs())
        """The directories indexed (asked again at every sweep: settings change live)."""
        self.sweep_seconds = sweep_seconds
        self._changed = threading.Condition()
        self._pending: dict[str, None] = {}
        self._busy = False
        self._started = False
        self._stopping = False
        self._initial_scan_done = False
        self._known_paths: set[str] = set()
        self._own_writes: dict[str, FileIdentity | None] = {}
        """Each file this server wrote, as it was after its last write (``notice_reported``)."""
        self._generation = 0
        self._reader: sqlite3.Connection | None = None
        self._reader_generation = -1
        self._reader_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.sweeps = 0
        """How many sweeps have queued what they found (tests wait on it)."""

    # ------------------------------------------------------------------ public

    def start(self) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="pi-lsp session index", daemon=True)
        self._thread.start()

    def notice(self, path: str | os.PathLike) -> None:
        """``path`` changed (an append, a rewrite, a deletion): index it again soon."""
        absolute = os.path.abspath(path)
        self._last_change = time.monotonic()
        # Already queued: the pass that takes it reads this change too (it reads the file after
        # taking the queue). A turn appends several entries; this keeps each append's cost to a
        # lookup instead of a lock, a check of the settings' directories and a thread wake-up.
        if absolute in self._pending:
            return
        if not absolute.endswith(SESSION_SUFFIX) or not self._is_watched(absolute):
            return
        with self._changed:
            waiting = not self._pending
            self._pending[absolute] = None
            self._known_paths.add(absolute)
            if waiting:  # the worker waits for a first change; while it settles, it needs none
                self._changed.notify_all()

    def notice_own_write(self, path: str | os.PathLike) -> None:
        """This server appended to ``path``: index it soon, and skip the watch's report of it."""
        absolute = os.path.abspath(path)
        self._own_writes[absolute] = _identity(absolute)
        self.notice(absolute)

    def notice_reported(self, path: str | os.PathLike) -> None:
        """The watch saw ``path`` change: index it soon, unless the change is this server's own
        append, already noticed (the file is as this server last left it)."""
        absolute = os.path.abspath(path)
        own = self._own_writes.get(absolute)
        if own is not None and own == _identity(absolute):
            return
        self.notice(absolute)

    def search(
        self,
        query: str,
        *,
        limit: int = 20,
        order: Order = "newest",
        only: SearchFilter = EVERYTHING,
    ) -> SearchResult:
        progress = self.progress()
        if not self._started:
            return SearchResult(SearchPage(0, []), progress)
        with self._reader_lock:
            try:
                page = search_index(
                    self._read_connection(), query, limit=limit, order=order, only=only
                )
            except sqlite3.OperationalError as error:  # busy: another process writes the index
                logger.info("session search failed for now: %s", error)
                self._drop_reader()
                page = SearchPage(0, [])
            except sqlite3.DatabaseError as error:
                logger.warning("session search failed (the index is rebuilt): %s", error)
                self._drop_reader()
                self.rebuild()
                page = SearchPage(0, [])
        return SearchResult(page, progress)

    def session_file(self, session_id: str) -> Path | None:
        """The indexed file of the session ``session_id`` (the newest, should two share an id)."""
        if not self._started:
            return None
        with self._reader_lock:
            try:
                row = (
                    self._read_connection()
                    .execute(
                        "SELECT path FROM files WHERE session_id = ? ORDER BY file DESC LIMIT 1",
                        (session_id,),
                    )
                    .fetchone()
                )
            except sqlite3.DatabaseError:
                return None
        return Path(row[0]) if row else None

    def progress(self) -> IndexProgress:
        with self._changed:
            waiting = {path for path in self._pending if path != _REBUILD}
            complete = self._initial_scan_done and not self._pending and not self._busy
            known = len(self._known_paths | waiting)
            return IndexProgress(complete, known - len(waiting), known)

    def wait_until_current(self, timeout: float | None = None) -> bool:
        """Block until nothing is pending (tests and benchmarks); ``False`` on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._changed:
            while not (self._initial_scan_done and not self._pending and not self._busy):
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._changed.wait(remaining)
            return True

    def rebuild(self) -> None:
        """Throw the database away and index everything again."""
        with self._changed:
            self._pending[_REBUILD] = None
            self._changed.notify()

    def close(self) -> None:
        with self._changed:
            self._stopping = True
            self._changed.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._drop_reader()

    # ------------------------------------------------------------------ worker

    def _run(self) -> None:
        try:
            connection = connect(self.database, check=True)
        except Exception:
            logger.exception("the session index cannot be opened: session search is off")
            return
        self._started = True
        try:
            self._serve(connection)
        finally:
            connection.close()

    def _serve(self, connection: sqlite3.Connection) -> None:
        self._queue(self._sweep(connection))
        with self._changed:
            self._initial_scan_done = True
            self._changed.notify_all()
        next_sweep = time.monotonic() + self.sweep_seconds
        while True:
            batch = self._next_batch(next_sweep)
            if batch is None:
                return
            if not batch:
                self._queue(self._sweep(connection))
                self.sweeps += 1
                next_sweep = time.monotonic() + self.sweep_seconds
                continue
            connection = self._index(connection, batch)
            with self._changed:
                self._busy = False
                self._changed.notify_all()

    def _next_batch(self, next_sweep: float) -> list[str] | None:
        """The paths to index next; empty when a sweep is due, ``None`` when stopping."""
        with self._changed:
            while not self._pending and not self._stopping:
                remaining = next_sweep - time.monotonic()
                if remaining <= 0:
                    return []
                self._changed.wait(remaining)
            latest = time.monotonic() + self.longest_settle_seconds
            while not self._stopping:
                quiet = self._last_change + self.settle_seconds
                remaining = min(quiet, latest) - time.monotonic()
                if remaining <= 0:
                    break
                self._changed.wait(remaining)
            if self._stopping:
                return None
            batch = list(self._pending)
            self._pending.clear()
            self._busy = True
            return batch

    def _index(self, connection: sqlite3.Connection, batch: list[str]) -> sqlite3.Connection:
        for position, path in enumerate(batch):
            if self._stopping:
                break
            try:
                if path == _REBUILD:
                    raise sqlite3.DatabaseError("a rebuild was asked for")
                sync_file(connection, Path(path))
            except sqlite3.OperationalError as error:
                # Locked past the timeout (another window's server writes the same index), or
                # out of disk: nothing is wrong with the index, so try again at the next pass.
                logger.info("session index busy, indexing again later: %s", error)
                self._queue(batch[position:])
                return connection
            except sqlite3.DatabaseError as error:
                logger.warning("rebuilding the session index %s: %s", self.database, error)
                return self._rebuilt(connection)
            except Exception:
                logger.exception("could not index %s", path)
        return connection

    def _rebuilt(self, connection: sqlite3.Connection) -> sqlite3.Connection:
        connection.close()
        remove_database(self.database)
        self._generation += 1
        fresh = connect(self.database)
        self._queue(self._sweep(fresh))
        return fresh

    def _queue(self, paths: Iterable[str]) -> None:
        with self._changed:
            for path in paths:
                self._pending[path] = None
            self._changed.notify_all()

    def _sweep(self, connection: sqlite3.Connection) -> list[str]:
        """The files that differ from what the index holds: new, changed or gone."""
        on_disk = self._session_files()
        with self._changed:
            self._known_paths = set(on_disk)
        indexed = {
            path: (device, inode, mtime_ns, size)
            for path, device, inode, mtime_ns, size in connection.execute(
                "SELECT path, device, inode, mtime_ns, size FROM files"
            )
        }
        # Oldest first: rows are times, and an index grown in time order is written at its end.
        changed = sorted(
            (path for path, identity in on_disk.items() if indexed.get(path) != identity),
            key=lambda path: on_disk[path][2],
        )
        gone = [path for path in indexed if path not in on_disk]
        for path in gone:
            forget_file(connection, Path(path))
        return changed

    def _session_files(self) -> dict[str, FileIdentity]:
        files: dict[str, FileIdentity] = {}
        for directory in self.session_dirs():
            try:
                listing = os.scandir(directory)
            except OSError:
                continue
            with listing:
                for item in listing:
                    if not item.name.endswith(SESSION_SUFFIX):
                        continue
                    try:
                        stat = item.stat()
                    except OSError:
                        continue
                    if item.is_file():
                        files[os.path.abspath(item.path)] = (
                            stat.st_dev,
                            stat.st_ino,
                            stat.st_mtime_ns,
                            stat.st_size,
                        )
        return files

    def _is_watched(self, path: str) -> bool:
        folder = os.path.dirname(path)
        return any(folder == os.path.abspath(directory) for directory in self.session_dirs())

    # ------------------------------------------------------------------ reading

    def _read_connection(self) -> sqlite3.Connection:
        if self._reader is None or self._reader_generation != self._generation:
            self._drop_reader()
            self._reader = sqlite3.connect(
                f"{self.database.absolute().as_uri()}?mode=ro", uri=True, check_same_thread=False
            )
            self._reader_generation = self._generation
        return self._reader

    def _drop_reader(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None
