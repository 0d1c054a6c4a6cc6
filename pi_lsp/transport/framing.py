"""Finding the next message again after a frame whose ``Content-Length`` was wrong.

pygls reads LSP's framing line by line and takes a header only when the whole line is
``Content-Length: N``. After a frame whose length is wrong, the bytes left over (the end of a body
that was too short, or of the message a too-long body swallowed the start of) run into the next
frame's header line, which then never matches: every later message is lost too, and the server,
alive but deaf, answers nothing again. Cutting a header line at the ``Content-Length:`` it
contains drops only those leftover bytes; the next whole frame is read and answered. The frame
with the wrong length itself gets JSON-RPC's Parse error (pygls reads it as a body that is not
JSON), and a message it swallowed cannot be answered: its id was never read.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

from pygls.io_ import run_async

logger = logging.getLogger(__name__)

CONTENT_LENGTH = b"Content-Length:"


def resynchronised(line: bytes) -> bytes:
    """A header line without the leftover bytes a wrong-length frame left in front of it."""
    start = line.find(CONTENT_LENGTH)
    if start <= 0:
        return line
    logger.warning(
        "skipped %d bytes before a Content-Length header (a message before had a wrong length)",
        start,
    )
    return line[start:]


class ResynchronisingReader:
    """An ``asyncio.StreamReader`` as pygls' read loop uses it, with header lines resynchronised.

    A line past the stream's limit (only leftover bytes are that long) is skipped as the junk it
    is instead of ending the connection.
    """

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    async def readline(self) -> bytes:
        try:
            return resynchronised(await self._reader.readline())
        except ValueError:  # a line past the reader's limit: leftover bytes, already dropped
            logger.warning("skipped an overlong line between messages")
            return b"\n"

    async def readexactly(self, size: int) -> bytes:
        return await self._reader.readexactly(size)


async def serve_messages(server: Any, reader: ResynchronisingReader) -> None:
    """pygls's read loop: every message ``reader`` reads, handled by ``server`` (a pygls server)
    until the input ends; a message that fails is reported to the server, and reading goes on."""
    await run_async(
        stop_event=threading.Event(),
        reader=reader,
        protocol=server.protocol,
        logger=logger,
        error_handler=server.report_server_error,
    )
