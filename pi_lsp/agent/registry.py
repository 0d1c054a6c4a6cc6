"""The sessions a server has open: finding, creating, opening, forking and listing them.

Requests name a session by id; without one they act on the workspace's current session (the one
last opened or created here, else the most recently modified file in the session directory, else
a new one). A session file already being written by another process, or one that cannot be
written (a read-only directory or disk), is opened read-only: it can be viewed and navigated
locally, but not prompted, and the reason says why. Only files that resolve inside the session
directory or an allowed directory are opened or listed (see ``session/confinement.py``).

Entries of kinds pi-lsp does not know (a later pi's) never stop a session from opening or being
continued: they stay in the file and the tree and add nothing to the context. The log gets one
notice per such kind, the first time a session holding it is opened.

Sessions nothing needs any more are closed as others open (``idle_sessions.py``); a request that
names one opens it again.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from pi_lsp.agent import idle_sessions
from pi_lsp.agent.events import EventStream, Sender
from pi_lsp.agent.runtime import SessionRuntime
from pi_lsp.errors import SessionLockedError, SessionNotFoundError, echoed
from pi_lsp.llm.config import litellm_model_string
from pi_lsp.session.confinement import is_inside, require_inside
from pi_lsp.session.fork import fork_session
from pi_lsp.session.listing import SessionInfo, list_sessions, read_session_info
from pi_lsp.session.session import Session

logger = logging.getLogger(__name__)

_NOT_WRITABLE = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})
"""Why opening a session file for writing may fail while reading it still works."""


def chosen_model(session: Session) -> str | None:
    """The model picked for the session (its active path's last ``model_change``, written by
    ``pi/setModel`` or pi's ``/model``) as a litellm model string; None when none was picked,
    so the configured model applies."""
    for entry in reversed(session.branch()):
        if entry.type == "model_change":
            provider, model_id = entry.get("provider"), entry.get("modelId")
            if isinstance(provider, str) and isinstance(model_id, str) and provider and model_id:
                return litellm_model_string(provider, model_id)
            return None
    return None


class SessionRegistry:
    """Every session this server has open, by id."""

    def __init__(
        self,
        session_dir: Path,
        cwd: str,
        send_event: Sender,
        *,
        default_thinking_level: Callable[[], str] = lambda: "medium",
        allowed_session_dirs: tuple[Path, ...] = (),
        idle_sessions_kept: int = idle_sessions.KEPT,
        idle_seconds: float = idle_sessions.IDLE_SECONDS,
        on_session_written: Callable[[Path], None] | None = None,
    ) -> None:
        self.session_dir = session_dir
        self.allowed_session_dirs = allowed_session_dirs
        """Directories besides ``session_dir`` whose session files may be opened by path."""
        self.cwd = cwd
        self._send_event = send_event
        self.default_thinking_level = default_thinking_level
        """The thinking level a new session starts with,
        asked at creation (settings change live)."""
        self._runtimes: dict[str, SessionRuntime] = {}
        self._current: SessionRuntime | None = None
        self._last_used: dict[str, float] = {}
        """``time.monotonic()`` when each open session was last asked for."""
        self._pinned: set[str] = set()
        self._closed_tree_versions: dict[str, int] = {}
        """The tree version each session closed as idle had: opened again, it goes on above it,
        so an editor still holding its tree sees a gap and fetches it again."""
        self._idle_sessions_kept = idle_sessions_kept
        self._idle_seconds = idle_seconds
        self._noted_unknown_types: set[str] = set()
        self._on_session_written = on_session_written
        """Told each session file's path after every write (the session index)."""

    @property
    def open_runtimes(self) -> list[SessionRuntime]:
        return list(self._runtimes.values())

    def get(self, session_id: str | None) -> SessionRuntime:
        """The session with ``session_id``, or the current one when it is ``None``.

        Naming a session in a request does not make it current; only ``open``, ``create`` and
        ``fork`` (and ``open_path``) do.
        """
        if session_id is None:
            return self.current()
        runtime = self._runtimes.get(session_id)
        if runtime is not None:
            return self._touched(runtime)
        info = next(
            (info for info in list_sessions(self.session_dir) if info.id == session_id), None
        )
        if info is None:
            raise SessionNotFoundError(f"no session {echoed(session_id)} in {self.session_dir}")
        return self.open_path(Path(info.path), make_current=False)

    def open(self, session_id: str) -> SessionRuntime:
        """The session with ``session_id``, made the current one (``pi/openSession``)."""
        runtime = self.get(session_id)
        self._current = runtime
        return runtime

    def current(self) -> SessionRuntime:
        if self._current is None:
            newest = self._most_recent_file()
            self._current = self.open_path(newest) if newest else self.create()
        return self._touched(self._current)

    def pin(self, runtime: SessionRuntime) -> None:
        """Keep ``runtime`` open for as long as the server runs (a client holds it by id)."""
        self._pinned.add(runtime.id)

    def create(self) -> SessionRuntime:
        """A new session in the session directory (written at its first message)."""
        session = Session.create(self.session_dir, self.cwd)
        session.append_thinking_level_change(self.default_thinking_level())
        return self._adopt(session)

    def open_path(self, path: Path, *, make_current: bool = True) -> SessionRuntime:
        """Open a session file (pi's own files too); read-only if another process writes it.

        Refused (InvalidParams) when the file resolves outside the session directory and the
        allowed directories, symlinks followed.
        """
        resolved = Path(os.path.abspath(path))
        require_inside(resolved, self.session_dir, self.allowed_session_dirs)
        for runtime in self._runtimes.values():
            if runtime.session.path == resolved:
                if make_current:
                    self._current = runtime
                return self._touched(runtime)
        if not resolved.is_file():
            raise SessionNotFoundError(f"no session file at {echoed(str(resolved))}")
        read_only_reason = None
        try:
            session = Session.open(resolved)
        except SessionLockedError as error:
            session = Session.open(resolved, writable=False)
            read_only_reason = error.message
        except OSError as error:
            if error.errno not in _NOT_WRITABLE:
                raise
            session = Session.open(resolved, writable=False)
            read_only_reason = (
                f"the session file cannot be written ({error.strerror}); "
                f"it is open for reading only: {resolved}"
            )
        return self._adopt(session, read_only_reason, make_current=make_current)

    def fork(self, source: SessionRuntime, entry_id: str) -> SessionRuntime:
        return self._adopt(fork_session(source.session, entry_id))

    def list(self) -> list[SessionInfo]:
        """The sessions written to the session directory, newest first (as pi's ``/resume``
        lists them). A symlink there that points out of the directory is left out: its file is
        not the server's to read."""
        return [
            info for info in list_sessions(self.session_dir) if self._is_openable(Path(info.path))
        ]

    def find(self, session_id: str) -> SessionRuntime | None:
        """The open session ``session_id``, if it is open."""
        return self._runtimes.get(session_id)

    def unpin(self, runtime: SessionRuntime) -> None:
        """No client holds ``runtime`` by id any more: it closes when idle, as others do."""
        self._pinned.discard(runtime.id)

    @contextlib.contextmanager
    def released(self, runtime: SessionRuntime | None) -> Iterator[None]:
        """``runtime`` closed (its file released) while the block moves or removes the file;
        should the block fail, opened again, current and held as it was."""
        if runtime is None or runtime.session.path is None:
            yield
            return
        path, was_current = runtime.session.path, self._current is runtime
        was_pinned = runtime.id in self._pinned
        self.close(runtime)
        try:
            yield
        except BaseException:
            reopened = self.open_path(path, make_current=was_current)
            if was_pinned:
                self.pin(reopened)
            raise

    def close(self, runtime: SessionRuntime) -> None:
        """The client is done with the session: closed now (opening it again reads the file)."""
        self.unpin(runtime)
        if self._runtimes.get(runtime.id) is not runtime:
            return
        runtime.close()
        del self._runtimes[runtime.id]
        self._last_used.pop(runtime.id, None)
        self._closed_tree_versions[runtime.id] = runtime.tree_changes.version
        if self._current is runtime:
            self._current = None

    def close_all(self) -> None:
        for runtime in self._runtimes.values():
            runtime.close()
        self._runtimes.clear()
        self._last_used.clear()
        self._current = None

    def _adopt(
        self, session: Session, read_only_reason: str | None = None, *, make_current: bool = True
    ) -> SessionRuntime:
        self._note_unknown_entry_types(session)
        if self._on_session_written is not None:
            session.on_written = self._on_session_written
            if session.path is not None and session.is_persisted:
                self._on_session_written(session.path)  # a fork was written before adoption
        runtime = SessionRuntime(
            session, EventStream(session.id, self._send_event), read_only_reason
        )
        runtime.model_override = chosen_model(
            session
        )  # a resumed or forked session keeps its model
        if session.id in self._closed_tree_versions:
            runtime.tree_changes.version = self._closed_tree_versions.pop(session.id) + 1
        self._runtimes[session.id] = runtime
        if make_current:
            self._current = runtime
        self._close_idle(opening=self._touched(runtime))
        return runtime

    def _touched(self, runtime: SessionRuntime) -> SessionRuntime:
        self._last_used[runtime.id] = time.monotonic()
        return runtime

    def _close_idle(self, opening: SessionRuntime) -> None:
        kept_open = {*self._pinned, *([self._current.id] if self._current else [])}
        closing = idle_sessions.sessions_to_close(
            self._runtimes.values(),
            kept_open=kept_open,
            opening=opening,
            last_used=self._last_used,
            now=time.monotonic(),
            kept=self._idle_sessions_kept,
            idle_seconds=self._idle_seconds,
        )
        for runtime in closing:
            logger.info("closing session %s: idle, and not among the last used", runtime.id)
            runtime.close()
            del self._runtimes[runtime.id]
            del self._last_used[runtime.id]
            self._closed_tree_versions[runtime.id] = runtime.tree_changes.version

    def _note_unknown_entry_types(self, session: Session) -> None:
        for entry_type, count in session.report.unknown_entry_types.items():
            if entry_type in self._noted_unknown_types:
                continue
            self._noted_unknown_types.add(entry_type)
            logger.info(
                "session %s has %d entr%s of kind %r, which pi-lsp does not know (a later pi "
                "wrote them?): kept in the file and the tree, left out of the context",
                session.id,
                count,
                "y" if count == 1 else "ies",
                entry_type,
            )

    def _most_recent_file(self) -> Path | None:
        """pi's ``findMostRecentSession``: the newest
        ``*.jsonl`` by mtime that has a valid header."""
        if not self.session_dir.is_dir():
            return None
        candidates = sorted(
            (
                path
                for path in self.session_dir.glob("*.jsonl")
                if path.is_file() and self._is_openable(path)
            ),
            key=lambda path: path.stat().st_mtime,
            reverse=True,
        )
        for path in candidates:
            info = read_session_info(path)
            if info is not None and (
                not info.cwd or info.cwd == self.cwd or self._is_default_dir()
            ):
                return path
        return None

    def _is_openable(self, path: Path) -> bool:
        return is_inside(path, (self.session_dir, *self.allowed_session_dirs))

    def _is_default_dir(self) -> bool:
        return self.session_dir == Path(self.cwd) / ".pi" / "sessions"
