"""Listing the sessions of a directory with pi's ``SessionInfo`` fields (what ``/resume`` shows),
as ``pi/sessions`` sends them (pi's ``allMessagesText``, which only its search reads, is left out).

Each file is read once, streaming; files that are not pi sessions are skipped, never opened for
writing. Sorted by last activity, newest first.
"""

from __future__ import annotations

import os
from pathlib import Path

from pi_lsp.protocol import SessionInfo
from pi_lsp.session.messages import content_text
from pi_lsp.session.stored_entry import StoredEntry, index_line
from pi_lsp.session.timestamps import epoch_ms_to_iso, iso_to_epoch_ms


def list_sessions(session_dir: str | os.PathLike) -> list[SessionInfo]:
    """Every pi session in ``session_dir`` (not recursive), newest activity first."""
    directory = Path(session_dir)
    if not directory.is_dir():
        return []
    infos = []
    for path in directory.iterdir():
        if path.name.endswith(".jsonl") and path.is_file():
            info = read_session_info(path)
            if info is not None:
                infos.append(info)
    infos.sort(key=lambda info: iso_to_epoch_ms(info.modified) or 0, reverse=True)
    return infos


def read_session_info(path: Path) -> SessionInfo | None:
    """pi's ``buildSessionInfo``: ``None`` for unreadable files and files that are not sessions."""
    try:
        mtime_ms = int(path.stat().st_mtime * 1000)
        with path.open("rb") as stream:
            return _summarize(path, (line.rstrip(b"\r\n") for line in stream), mtime_ms)
    except OSError:
        return None


def _summarize(path: Path, lines, mtime_ms: int) -> SessionInfo | None:
    header: StoredEntry | None = None
    name: str | None = None
    message_count = 0
    first_message = ""
    last_activity: int | None = None
    for raw in lines:
        if not raw.strip():
            continue
        entry = index_line(raw, 0, len(raw))
        if entry is None:
            continue
        if header is None:
            if entry.type != "session":
                return None
            header = entry
            continue
        if entry.type == "session_info":
            value = entry.get("name")
            name = (value.strip() or None) if isinstance(value, str) else None
        if entry.type != "message":
            continue
        message_count += 1
        if entry.role not in ("user", "assistant"):
            continue
        message = entry.get("message")
        if not isinstance(message, dict) or "content" not in message:
            continue
        activity = _activity_time(entry, message)
        if activity is not None:
            last_activity = max(last_activity or 0, activity)
        if not first_message and entry.role == "user":
            first_message = content_text(message.get("content"), " ")
    if header is None:
        return None
    return _info(path, header, name, message_count, first_message, last_activity, mtime_ms)


def _info(path, header, name, message_count, first_message, last_activity, mtime_ms) -> SessionInfo:
    header_time = iso_to_epoch_ms(header.get("timestamp"))
    if last_activity is not None and last_activity > 0:
        modified_ms = last_activity
    elif header_time is not None:
        modified_ms = header_time
    else:
        modified_ms = mtime_ms
    cwd = header.get("cwd")
    parent = header.get("parentSession")
    return SessionInfo(
        path=str(path),
        id=header.id,
        cwd=cwd if isinstance(cwd, str) else "",
        name=name,
        parent_session_path=parent if isinstance(parent, str) else None,
        created=epoch_ms_to_iso(header_time) if header_time is not None else None,
        modified=epoch_ms_to_iso(modified_ms),
        message_count=message_count,
        first_message=first_message or "(no messages)",
    )


def _activity_time(entry: StoredEntry, message: dict) -> int | None:
    timestamp = message.get("timestamp")
    if isinstance(timestamp, (int, float)) and not isinstance(timestamp, bool):
        return int(timestamp)
    return iso_to_epoch_ms(entry.get("timestamp"))
