"""Copying a session file in (pi 1.6's ``/import``) and moving one to the system trash.

An imported file keeps its session id and cwd: it is copied byte for byte, under the name pi
would give it (``<header timestamp>_<id>.jsonl``), and never over a file that exists or a session
the directory already holds. A file that is not a pi session is refused before anything is
written. Deleting moves the file to the trash (``send2trash``: the freedesktop trash, macOS's,
Windows' recycle bin), so a mistake can be undone; where no trash can take it, nothing is deleted
and the error says so. A file another process is writing (pi, or a server in another window,
holds its lock) is refused.
"""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path

import attrs

from pi_lsp.errors import (
    InvalidParamsError,
    NotASessionError,
    SessionLockedError,
    SessionWriteError,
    echoed,
)
from pi_lsp.session.listing import list_sessions
from pi_lsp.session.store import parse_session_bytes
from pi_lsp.session.timestamps import file_name_timestamp


@attrs.frozen
class SessionHeader:
    id: str
    cwd: str
    timestamp: str | None


def read_header(path: Path) -> SessionHeader:
    """The header of the session file at ``path``; InvalidParams when it is not one."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise InvalidParamsError(
            f"cannot read {echoed(str(path))}: {error.strerror or error}"
        ) from None
    try:
        loaded = parse_session_bytes(data, path)
    except NotASessionError as error:
        raise InvalidParamsError(error.message) from None
    if not loaded.lines:
        raise InvalidParamsError(f"{echoed(str(path))} is empty: not a pi session file")
    header = loaded.lines[0]
    cwd, timestamp = header.get("cwd"), header.get("timestamp")
    return SessionHeader(
        header.id,
        cwd if isinstance(cwd, str) else "",
        timestamp if isinstance(timestamp, str) else None,
    )


def import_session(source: Path, session_dir: Path) -> tuple[SessionHeader, Path]:
    """Copy the session file ``source`` into ``session_dir``; its header and the new path."""
    header = read_header(source)
    already = next((info for info in list_sessions(session_dir) if info.id == header.id), None)
    if already is not None:
        raise InvalidParamsError(
            f"session {echoed(header.id)} is already in the session directory: {already.path}"
        )
    stamp = file_name_timestamp(header.timestamp) if header.timestamp else "imported"
    target = session_dir / f"{stamp}_{header.id}.jsonl"
    data = source.read_bytes()
    session_dir.mkdir(parents=True, exist_ok=True)
    try:
        with open(target, "xb") as stream:
            stream.write(data)
    except FileExistsError:
        raise InvalidParamsError(f"{echoed(str(target))} exists already") from None
    except OSError as error:
        target.unlink(missing_ok=True)
        raise SessionWriteError(
            f"could not import into {target}: {error.strerror or error}"
        ) from error
    return header, target


def move_to_trash(path: Path) -> None:
    """Move the session file ``path`` to the system trash; refused while another process writes
    it, and an error (nothing deleted) where no trash can take it."""
    read_header(path)
    _refuse_if_written(path)
    from send2trash import send2trash
    from send2trash.exceptions import TrashPermissionError

    try:
        send2trash(path)
    except TrashPermissionError as error:
        raise SessionWriteError(
            f"no trash can take {path} ({error}); nothing was deleted"
        ) from None
    except OSError as error:
        raise SessionWriteError(
            f"could not move {path} to the trash ({error.strerror or error}); nothing was deleted"
        ) from None


def _refuse_if_written(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise SessionLockedError(
                f"another process is writing this session; close it there first: {path}"
            ) from None
        raise
    finally:
        os.close(descriptor)
