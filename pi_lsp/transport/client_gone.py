"""The editor goes away without saying ``shutdown``: its pipe closes, or its process dies.

An editor that crashes, or is killed, may leave the server running with a turn in flight and a
command still executing. Both ways of noticing lead to the same end, within a few seconds:

- **stdin reaches its end** (``WatchedInput``);
- **the process named in ``initialize``'s ``processId`` dies** (``watch_editor_process``), while
  the pipe may stay open (a child of the editor can hold it).

Then every turn is aborted and awaited, so it saves its partial answer (or its running command's
"aborted" result) as ``pi/abort`` would; commands are killed with their process groups, the
sessions are closed and the process exits. A watchdog ends the process after
``EXIT_GRACE_SECONDS`` even if a thread is stuck in a blocking call (litellm's import, a slow
socket) that would hold up a normal exit.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable
from typing import BinaryIO

from pi_lsp.tools.bash import kill_running_commands
from pi_lsp.transport.framing import resynchronised

logger = logging.getLogger(__name__)

EXIT_GRACE_SECONDS = 2.0
"""How long the turns get to save what they have once the client is gone."""
POLL_SECONDS = 0.5


class WatchedInput:
    """The server's stdin: at its end (the client is gone) it calls ``on_end`` once and then never
    returns, so the message loop keeps running while ``on_end`` saves what the turns have. Header
    lines come resynchronised after a frame of the wrong length (see ``framing.py``)."""

    def __init__(self, stream: BinaryIO, on_end: Callable[[], None]) -> None:
        self._stream = stream
        self._on_end = on_end
        self._ended = threading.Event()

    def readline(self) -> bytes:
        return self._unless_ended(resynchronised(self._stream.readline()))

    def read(self, size: int = -1) -> bytes:
        return self._unless_ended(self._stream.read(size) if size else b"", size != 0)

    def _unless_ended(self, data: bytes, expected: bool = True) -> bytes:
        if data or not expected:
            return data
        if not self._ended.is_set():
            self._ended.set()
            self._on_end()
        threading.Event().wait()  # this reader thread waits for the exit
        return data


def leave_when_stdin_ends(server) -> Callable[[], None]:
    """``on_end`` for ``WatchedInput``: leave as when the editor process dies."""

    def on_end() -> None:
        exit_soon("the client closed the connection")
        loop = server.event_loop
        if loop is None:
            _exit_now()
        loop.call_soon_threadsafe(lambda: loop.create_task(leave(server)))

    return on_end


def exit_soon(reason: str) -> None:
    """The backstop: end the process after ``EXIT_GRACE_SECONDS``, whatever still runs then."""
    logger.warning("%s: exiting within %.0f s", reason, EXIT_GRACE_SECONDS)

    def end() -> None:
        threading.Event().wait(EXIT_GRACE_SECONDS)
        _exit_now()

    threading.Thread(target=end, name="exit-watchdog", daemon=True).start()


def watch_the_client(server, editor_pid: int | None) -> None:
    """At ``initialize``: remember the serving loop, and watch the editor process if it is named
    (and is not this process itself)."""
    try:
        server.event_loop = asyncio.get_running_loop()
    except RuntimeError:  # initialize called outside a server (a test): nothing to watch
        return
    if editor_pid is not None and editor_pid != os.getpid():
        server.editor_watch = server.event_loop.create_task(
            watch_editor_process(server, editor_pid)
        )


async def watch_editor_process(server, pid: int) -> None:
    """Poll the editor process; once it is gone, save what the turns have and exit."""
    while is_running(pid):
        await asyncio.sleep(POLL_SECONDS)
    if server.connection_ended is None:
        exit_soon(f"the editor process {pid} is gone")
    else:
        logger.warning("the editor process %s is gone: closing its connection", pid)
    await leave(server)


async def leave(server) -> None:
    """Abort every turn and wait for it to save its partial answer, kill the commands, close the
    sessions and exit; in the shared server, end this client's connection instead."""
    await release(server)
    if server.connection_ended is not None:
        server.connection_ended()
        return
    _exit_now()


async def release(server) -> None:
    """Abort the client's turns, wait for them to save what they have, close its sessions."""
    services = server.services
    if services is not None:
        turns = [
            task
            for runtime in services.sessions.open_runtimes
            for task in (runtime.turn, runtime.summary_task)
            if task is not None and not task.done()
        ]
        services.agent.abort_all()
        if turns:
            await asyncio.wait(turns, timeout=EXIT_GRACE_SECONDS / 2)
        services.resources.stop()
        services.sessions.close_all()


def is_running(pid: int) -> bool:
    """Whether ``pid`` is a live process; a zombie its parent has not reaped is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            return stat.read().rsplit(")", 1)[-1].split()[:1] != ["Z"]
    except FileNotFoundError:
        return False
    except OSError:
        pass  # no /proc (macOS): ask the kernel
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _exit_now() -> None:
    # No logging.shutdown(): it takes every handler's lock, and the client's log handler may hold
    # its lock in a write to the pipe nobody reads any more. The log file is flushed per record.
    kill_running_commands()
    os._exit(0)
