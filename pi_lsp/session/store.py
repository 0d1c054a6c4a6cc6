"""Reading and writing one session file: the only code that touches session bytes on disk.

Invariants:
- A line is written whole: one ``write()`` of the line and its ``\\n`` (a first write that creates
  the file writes the header and every buffered entry at once).
- The file is append-only. It is rewritten only to migrate a legacy version, and then by writing a
  new file and renaming it over the old one, so a crash leaves either the old or the new file.
- One process writes a session file: the writer holds an exclusive advisory ``flock`` on it for as
  long as it is open. Another writer gets ``SessionLockedError``; readers never lock.
- A non-empty file that is not a pi session is refused and never modified.
- A last line without ``\\n`` (a crash mid-write) is tolerated: it is skipped if it does not parse,
  and a ``\\n`` goes in front of the next append so the new entry starts on its own line.
- A write that fails part-way (a full disk) is cut back off the file, so the lines before it stay
  exactly as they were and the next append lands on a clean line.
"""

from __future__ import annotations

import errno
import fcntl
import gc
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import attrs

from pi_lsp.errors import NotASessionError, SessionLockedError, SessionWriteError
from pi_lsp.session.migrations import migrate_to_current_version
from pi_lsp.session.stored_entry import StoredEntry, index_line, index_lines


@attrs.define
class LoadReport:
    """What loading found besides entries; problems are reported here, never raised."""

    blank_lines: int = 0
    unparseable_lines: list[int] = attrs.Factory(list)
    """1-based line numbers that were not JSON objects (pi skips them silently)."""
    torn_last_line: bool = False
    """The file did not end with a newline (a crash mid-write); repaired before the next append."""
    migrated_from_version: int | None = None
    duplicate_ids: list[str] = attrs.Factory(list)
    """Ids used by more than one entry; as in pi, the later entry wins lookups."""
    unknown_entry_types: dict[str, int] = attrs.Factory(dict)
    """Entries per type pi-lsp does not know (from a later pi): kept, shown, not in context."""

    def to_json(self) -> dict:
        return {
            "blankLines": self.blank_lines,
            "unparseableLines": self.unparseable_lines,
            "tornLastLine": self.torn_last_line,
            "migratedFromVersion": self.migrated_from_version,
            "duplicateIds": self.duplicate_ids,
            "unknownEntryTypes": self.unknown_entry_types,
        }


@attrs.define
class LoadedFile:
    """The parsed lines of a session file, in file order (header first)."""

    lines: list[StoredEntry]
    report: LoadReport


@contextmanager
def paused_garbage_collection() -> Iterator[None]:
    """Pause the cyclic garbage collector while a large session is indexed or walked.

    Those steps allocate ~100k small objects that form no cycles; left on, the collector rescans
    every live object again and again while they pile up, which costs more than the work itself.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def collect_young_objects() -> None:
    """Collect the young generations once, now that a session is indexed.

    The index's containers (a list and dicts of every entry) were created with the collector
    paused, so they are still young: left alone, the next two automatic collections would each
    trace them, 20-30 ms at 100k entries, inside whatever request comes next (the editors' first
    view). One collection here traces them once and moves them to the old generation."""
    gc.collect(1)


def is_session_header(entry: StoredEntry) -> bool:
    return entry.type == "session" and isinstance(entry.id, str)


def parse_session_bytes(data: bytes, path: Path) -> LoadedFile:
    """Index a session file's bytes; raises ``NotASessionError`` for foreign non-empty content.

    Entries keep a reference to ``data`` and their offsets in it; no line is copied.
    """
    report = LoadReport()
    lines = index_lines(data)
    if lines is None or not _attach_spans(lines, data, report):
        report = LoadReport()  # some line is not a JSON object: look at each line on its own
        lines = []
        for start, end, line_number in _iterate_line_spans(data, report):
            entry = index_line(data, start, end)
            if entry is None:
                report.unparseable_lines.append(line_number)
            else:
                lines.append(entry)
    has_content = bool(lines) or bool(report.unparseable_lines)
    if has_content and (not lines or not is_session_header(lines[0])):
        raise NotASessionError(
            f"not a pi session file (its first JSON line is not a session header): {path}"
        )
    return LoadedFile(lines, report)


def _attach_spans(lines: list[StoredEntry], data: bytes, report: LoadReport) -> bool:
    """Give each indexed line its offsets in ``data``;
    ``False`` if lines and entries do not pair up."""
    entries = iter(lines)
    count = 0
    for start, end, _ in _iterate_line_spans(data, report):
        entry = next(entries, None)
        if entry is None:
            return False
        entry.attach(data, start, end)
        count += 1
    return count == len(lines)


def _iterate_line_spans(data: bytes, report: LoadReport):
    """(start, end, 1-based line number) of every non-blank
    line; counts blank lines and a torn end."""
    find = data.find
    size = len(data)
    start = 0
    line_number = 0
    while start < size:
        line_number += 1
        end = find(b"\n", start)
        if end == -1:
            end = size
            report.torn_last_line = True
        if end == start or (data[start] in _WHITESPACE and data[start:end].isspace()):
            report.blank_lines += 1
        else:
            yield start, end, line_number
        start = end + 1


_WHITESPACE = frozenset(b" \t\r\x0b\x0c")


def migrate_if_needed(loaded: LoadedFile) -> bool:
    """Migrate legacy versions in memory; ``True`` when the lines changed and need rewriting."""
    if not loaded.lines:
        return False
    version = loaded.lines[0].body.get("version")
    bodies = [dict(entry.body) for entry in loaded.lines] if _is_legacy(version) else None
    if bodies is None or not migrate_to_current_version(bodies):
        return False
    loaded.lines = [StoredEntry.from_dict(body) for body in bodies]
    loaded.report.migrated_from_version = int(version) if isinstance(version, (int, float)) else 1
    return True


def _is_legacy(version: object) -> bool:
    return version is None or (
        isinstance(version, (int, float)) and not isinstance(version, bool) and version < 3
    )


class SessionWriter:
    """An open, locked, append-only handle on one session file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._descriptor: int | None = None
        self._needs_newline = False

    @property
    def is_open(self) -> bool:
        return self._descriptor is not None

    def open_existing(self) -> bytes:
        """Lock the existing file for writing and return its bytes (read after the lock is held)."""
        descriptor = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
        self._lock(descriptor)
        data = _read_all(descriptor)
        self._descriptor = descriptor
        self._needs_newline = bool(data) and not data.endswith(b"\n")
        return data

    def create(self, first_lines: Sequence[bytes | memoryview]) -> None:
        """Create the file (it must not exist) and write the first lines in one write."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(
            self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644
        )
        self._lock(descriptor)
        self._descriptor = descriptor
        self.append(first_lines)

    def append(self, lines: Sequence[bytes | memoryview]) -> None:
        """Append complete lines with a single write; repairs a torn last line first."""
        if self._descriptor is None:
            raise SessionWriteError(f"session file is not open for writing: {self.path}")
        payload = b"\n".join(lines) + b"\n"
        if self._needs_newline:
            payload = b"\n" + payload
        size_before = os.fstat(self._descriptor).st_size
        try:
            _write_all(self._descriptor, payload)
        except OSError:
            self._undo_partial_write(size_before)
            raise
        self._needs_newline = False

    def _undo_partial_write(self, size_before: int) -> None:
        """After a failed write (a full disk), cut off what part of it reached the file; if even
        that fails, the next append starts on a line of its own."""
        assert self._descriptor is not None
        try:
            if os.fstat(self._descriptor).st_size > size_before:
                os.ftruncate(self._descriptor, size_before)
        except OSError:
            self._needs_newline = True

    def replace_contents(self, lines: Sequence[bytes | memoryview]) -> None:
        """Atomically replace the file with ``lines``
        (used only for migrations), keeping the lock."""
        temporary = self.path.with_name(f".{self.path.name}.migrating")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
        try:
            self._lock(descriptor)
            _write_all(descriptor, b"\n".join(lines) + b"\n")
            os.fsync(descriptor)
            os.replace(temporary, self.path)
        except BaseException:
            os.close(descriptor)
            temporary.unlink(missing_ok=True)
            raise
        if self._descriptor is not None:
            os.close(self._descriptor)
        self._descriptor = descriptor
        self._needs_newline = False

    def close(self) -> None:
        if self._descriptor is not None:
            os.close(self._descriptor)  # closing releases the flock
            self._descriptor = None

    def _lock(self, descriptor: int) -> None:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            os.close(descriptor)
            if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise SessionLockedError(
                    "another process is writing this session; "
                    f"open it read-only instead: {self.path}"
                ) from None
            raise


def read_session_bytes(path: Path) -> bytes:
    """Read a session file without locking it (readers never block writers)."""
    return path.read_bytes()


def _read_all(descriptor: int) -> bytes:
    chunks: list[bytes] = []
    offset = 0
    while True:
        chunk = os.pread(descriptor, 1 << 22, offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)


def _write_all(descriptor: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        written = os.write(descriptor, view)
        view = view[written:]
