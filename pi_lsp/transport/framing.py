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


HEADER_LINE_MAX = 64
"""A ``Content-Length`` header line is never longer: one found farther from the end of dropped
bytes is text inside them, not a header."""


class ResynchronisingReader:
    """An ``asyncio.StreamReader`` as pygls' read loop uses it, with header lines resynchronised.

    Leftover bytes past the stream's limit (only leftover bytes are that long) are dropped as the
    junk they are instead of ending the connection; a header that starts in their last bytes is
    kept. (``StreamReader.readline`` would drop its whole buffer, and with it the next frames
    already read: the messages behind a long lost one went unanswered.)
    """

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    async def readline(self) -> bytes:
        carried = b""
        while True:
            try:
                line = await self._reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as error:  # the input ended: what was left
                return resynchronised(carried + error.partial)
            except asyncio.LimitOverrunError as error:
                dropped = carried + await self._reader.readexactly(error.consumed)
                carried = _possible_header_start(dropped)
                logger.warning("skipped %d bytes of an overlong line", len(dropped) - len(carried))
                continue
            return resynchronised(carried + line)

    async def readexactly(self, size: int) -> bytes:
        return await self._reader.readexactly(size)


def _possible_header_start(dropped: bytes) -> bytes:
    """The end of ``dropped`` that may begin the next header line: from its last
    ``Content-Length:`` when that is near the end, else its end that begins one, if any."""
    start = dropped.rfind(CONTENT_LENGTH)
    if start >= 0 and len(dropped) - start <= HEADER_LINE_MAX:
        return dropped[start:]
    for size in range(len(CONTENT_LENGTH) - 1, 0, -1):
        if dropped.endswith(CONTENT_LENGTH[:size]):
            return dropped[-size:]
    return b""


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
