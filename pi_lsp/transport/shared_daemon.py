"""The shared server process (``pi-lsp --serve-shared``): one language server per connection.

One process per user and environment (``shared_address``): a lock file makes sure of it, and a
socket left behind by a server that died is replaced. Each connection must come from the user's own
processes (``SO_PEERCRED``) and starts with the forwarder's handshake line; it then gets a
language server of its own (``build_server``) — its own workspace, services, sessions, resource
watch and log handler (records reach only the client whose work logged them) — on this process's
event loop. When the client goes (``exit``, the end of its stream, or its editor process gone),
its turns are aborted and saved and its sessions closed, as a stdio server does before exiting;
the process itself exits once no client has been connected for the idle time
(``PI_LSP_SHARED_IDLE_SECONDS``, 10 minutes by default).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
import socket
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

from pygls.protocol import lsp_method

from pi_lsp.logs import CONNECTION
from pi_lsp.server import PiLanguageServer, PiProtocol, build_server
from pi_lsp.transport import shared_address
from pi_lsp.transport.client_gone import release
from pi_lsp.transport.framing import ResynchronisingReader, serve_messages

logger = logging.getLogger(__name__)

HANDSHAKE_TIMEOUT_SECONDS = 10.0
MAX_HANDSHAKE_BYTES = 65536
LOCK_WAIT_SECONDS = 10.0


class ConnectionProtocol(PiProtocol):
    """``exit`` ends this client's connection, not the process serving the others."""

    @lsp_method("exit")
    def lsp_exit(self, *args: Any) -> Generator[Any, Any, None]:
        if (user_handler := self.fm.features.get("exit")) is not None:
            yield user_handler, args, None
        ended = getattr(self._server, "connection_ended", None)
        if ended is not None:
            ended()


class SharedServer:
    def __init__(self, path: Path, idle_seconds: float) -> None:
        self.path = path
        self.idle_seconds = idle_seconds
        self.clients = 0
        self._idle = asyncio.Event()
        self._idle_timer: asyncio.TimerHandle | None = None

    async def run(self, listening: socket.socket) -> None:
        server = await asyncio.start_unix_server(self._serve, sock=listening, limit=1 << 24)
        self._arm_idle_timer()
        async with server:
            while True:
                await self._idle.wait()
                if self.clients == 0:
                    break
                self._idle.clear()  # a client came as the timer ran out
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()  # from now on, a new start starts a new server
        logger.info("no client for %.0f s: the shared server exits", self.idle_seconds)

    def _arm_idle_timer(self) -> None:
        if self._idle_timer is not None:
            self._idle_timer.cancel()
        self._idle_timer = asyncio.get_running_loop().call_later(self.idle_seconds, self._idle.set)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.clients += 1
        if self._idle_timer is not None:
            self._idle_timer.cancel()
        try:
            connection = writer.get_extra_info("socket")
            uid = shared_address.peer_uid(connection) if connection is not None else None
            if uid is not None and uid != os.getuid():
                logger.warning("refused a connection from uid %s", uid)
                return
            handshake = await _read_handshake(reader)
            if handshake is None:
                logger.warning("refused a connection without a handshake")
                return
            CONNECTION.set(object())  # this task and every task it starts: this client's
            logger.info("serving a client for process %s", handshake.get("pid"))
            cwd = handshake.get("cwd")
            await serve_client(reader, writer, cwd if isinstance(cwd, str) else None)
        finally:
            with contextlib.suppress(ConnectionError, OSError):
                writer.close()
            self.clients -= 1
            if self.clients == 0:
                self._arm_idle_timer()


async def _read_handshake(reader: asyncio.StreamReader) -> dict[str, Any] | None:
    """The forwarder's first line, a JSON object; ``None`` if it sends anything else."""
    try:
        line = await asyncio.wait_for(reader.readline(), HANDSHAKE_TIMEOUT_SECONDS)
        handshake = json.loads(line[:MAX_HANDSHAKE_BYTES])
    except (TimeoutError, ValueError, ConnectionError):
        return None
    return handshake if isinstance(handshake, dict) else None


async def serve_client(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, working_directory: str | None
) -> None:
    """One client's language server, on this connection, until the client is gone."""
    server = build_server(ConnectionProtocol)
    server.working_directory = working_directory
    ended = asyncio.Event()
    server.connection_ended = ended.set
    server.protocol.set_writer(writer)
    # Header lines resynchronise after a frame of the wrong length, as over stdio and TCP.
    reading = asyncio.ensure_future(serve_messages(server, ResynchronisingReader(reader)))
    waiting = asyncio.ensure_future(ended.wait())
    try:
        await asyncio.wait({reading, waiting}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        reading.cancel()
        waiting.cancel()
        await _close(server)


async def _close(server: PiLanguageServer) -> None:
    """What a stdio server does before it exits: save the turns, close the sessions."""
    try:
        await release(server)
    except Exception:
        logger.exception("closing a client's sessions failed")
    for task in (server.resource_watch, server.configuration_pull, server.editor_watch):
        if task is not None:
            task.cancel()
    if server.log_handler is not None:
        logging.getLogger("pi_lsp").removeHandler(server.log_handler)
    server.shutdown()


def listen(path: Path) -> tuple[socket.socket, Any] | None:
    """The listening socket at ``path`` and the lock that makes this process its only server;
    ``None`` if another server holds the lock."""
    lock = open(path.with_suffix(".lock"), "a+b")  # noqa: SIM115 (held for the process's life)
    os.chmod(lock.name, 0o600)
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            # Another server holds it: serving (then leave it the clients), or on its way out.
            if _accepts(path) or time.monotonic() > deadline:
                lock.close()
                return None
            time.sleep(0.05)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # left by a server that is gone (we hold the lock)
    listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    previous = os.umask(0o177)  # the socket is created 0600, with no moment open to others
    try:
        listening.bind(str(path))
    finally:
        os.umask(previous)
    listening.listen(64)
    return listening, lock


def _accepts(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
        except OSError:
            return False
        return True


def run(log_file: str | None, verbose: bool) -> int:
    """``pi-lsp --serve-shared``."""
    from pi_lsp.logs import configure_logging

    configure_logging(log_file, verbose=verbose)
    path = shared_address.socket_path(os.environ)
    held = listen(path)
    if held is None:
        logger.info("another shared server serves %s", path)
        return 0
    listening, lock = held
    logger.info("shared server listening on %s", path)
    try:
        asyncio.run(SharedServer(path, shared_address.idle_seconds(os.environ)).run(listening))
    finally:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        lock.close()
    return 0
