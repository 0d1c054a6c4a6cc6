"""The tools' files through the ACP client (``fs/read_text_file``, ``fs/write_text_file``).

When the client offers them, ``read`` sees its unsaved buffers and ``write``/``edit`` go through
it, as the LSP ``EditorBridge`` does with open documents. Paths are absolute, as ACP requires.
When it offers terminals, ``bash`` runs its commands in them (``terminal.py``). The session a
tool runs for is the one whose ``session/prompt`` started the turn (a context variable the turn's
task inherits). A failed client call falls back to the disk (or to running the command itself).
Each request goes after every update queued before it (``flush``): a client sees the tool call
and the text that explain a read, a write or a command before the request itself.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from acp import RequestError

from pi_lsp.acp.terminal import AcpTerminal, start_command
from pi_lsp.tools.base import NoEditor

logger = logging.getLogger(__name__)

prompting_session: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "prompting_session", default=None
)
"""The ACP session whose prompt runs in this task."""

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp"})
"""Files ``read`` returns as images: read from the disk, never as text."""


class AcpFiles(NoEditor):
    """A ``ClientFileSystem`` over the ACP client's ``fs/*`` methods and ``ClientTerminals`` over
    its ``terminal/*``; as an ``EditorBridge`` it has no open documents (ACP does not say which
    are open: every file goes through ``fs/*``)."""

    def __init__(
        self,
        connection: Callable[[], Any],
        capabilities: Callable[[], Any],
        flush: Callable[[str], Awaitable[None]],
    ) -> None:
        self._connection = connection
        self._capabilities = capabilities
        self._flush = flush
        """Sends every update queued for an ACP session so far."""

    def _fs(self) -> Any:
        capabilities = self._capabilities()
        return getattr(capabilities, "fs", None) if capabilities is not None else None

    async def read_text(self, path: Path) -> str | None:
        fs, session_id = self._fs(), prompting_session.get()
        if not (fs and fs.read_text_file and session_id) or path.suffix.lower() in IMAGE_SUFFIXES:
            return None
        await self._flush(session_id)
        try:
            answer = await self._connection().read_text_file(path=str(path), session_id=session_id)
        except RequestError as error:  # the client could not read it: the disk decides
            logger.info("fs/read_text_file %s: %s", path, error)
            return None
        return answer.content

    async def write_text(self, path: Path, text: str) -> bool:
        fs, session_id = self._fs(), prompting_session.get()
        if not (fs and fs.write_text_file and session_id):
            return False
        await self._flush(session_id)
        try:
            await self._connection().write_text_file(
                path=str(path), content=text, session_id=session_id
            )
        except RequestError as error:  # the client's answer, not a fault: stderr stays quiet
            logger.info("fs/write_text_file %s refused, writing the disk: %s", path, error)
            return False
        return True

    async def start_command(self, command: str, cwd: Path) -> AcpTerminal | None:
        capabilities, session_id = self._capabilities(), prompting_session.get()
        if not (capabilities is not None and capabilities.terminal and session_id):
            return None
        try:
            return await start_command(
                self._connection(), session_id, command, cwd, lambda: self._flush(session_id)
            )
        except RequestError as error:  # the client could not start it: bash runs it itself
            logger.info("terminal/create refused, running the command itself: %s", error)
            return None
