"""Serving LSP over the process's stdin and stdout, with stdin read on the event loop.

pygls reads stdin on a worker thread, one blocking call per header line and per body; each call
is a round trip between that thread and the event loop, and a request waits through three or four
of them before its handler starts (about half a millisecond of every ``pi/prompt``). Where stdin
is a pipe or a socket, as editors start language servers, it is read on the loop instead, like
the TCP connections of ``tcp``: the header lines resynchronise after a frame of the wrong
length (``framing.py``), and at the end of the input ``on_end`` is called once while the loop
keeps running, so the turns can save what they have (``client_gone.py``). Anything else (a file,
a terminal, which must not be made non-blocking under the user's shell, and Windows) keeps
pygls's thread.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import sys
from collections.abc import Callable
from typing import BinaryIO

from pygls.io_ import StdoutWriter
from pygls.server import JsonRPCServer

from pi_lsp.transport.client_gone import WatchedInput
from pi_lsp.transport.framing import ResynchronisingReader, serve_messages

logger = logging.getLogger(__name__)

LINE_LIMIT = 64 * 1024
"""The longest header line read as one (a longer one is leftover bytes, skipped)."""


def serve_stdio(
    server: JsonRPCServer, stdin: BinaryIO, stdout: BinaryIO, on_end: Callable[[], None]
) -> None:
    """Serve ``server`` over ``stdin`` and ``stdout`` until the client exits."""
    if not reads_on_the_loop(stdin):
        server.start_io(stdin=WatchedInput(stdin, on_end), stdout=stdout)  # type: ignore[arg-type]
        return
    server.protocol.set_writer(StdoutWriter(stdout))
    try:
        asyncio.run(_serve(server, stdin, on_end))
    except BrokenPipeError:
        logger.error("the connection to the client is lost; stopping")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()


def reads_on_the_loop(stdin: BinaryIO) -> bool:
    """Whether ``stdin`` is a pipe or a socket (what the event loop can wait on). Not on Windows:
    its event loop reads pipes only through overlapped handles, which an editor's pipe to its
    child need not be."""
    if sys.platform == "win32":
        return False
    try:
        mode = os.fstat(stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


async def _serve(server: JsonRPCServer, stdin: BinaryIO, on_end: Callable[[], None]) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    await serve_messages(server, EndWatchingReader(reader, on_end))


class EndWatchingReader(ResynchronisingReader):
    """``ResynchronisingReader`` that, at the end of the input, calls ``on_end`` once and then
    never returns: the loop goes on serving while the server leaves."""

    def __init__(self, reader: asyncio.StreamReader, on_end: Callable[[], None]) -> None:
        super().__init__(reader)
        self._on_end = on_end
        self._ended = False

    async def readline(self) -> bytes:
        line = await super().readline()
        if not line:
            await self._end()
        return line

    async def readexactly(self, size: int) -> bytes:
        try:
            return await super().readexactly(size)
        except asyncio.IncompleteReadError:
            await self._end()
            raise

    async def _end(self) -> None:
        if not self._ended:
            self._ended = True
            self._on_end()
        await asyncio.Event().wait()  # the process exits meanwhile
