"""The ``session/update`` notifications of every ACP session, sent in order by one sender.

Updates are queued as pi's events arrive and sent one at a time, so a client sees them in the
order they happened; ``join`` waits until all queued so far are written (a prompt answers, and a
request to the client goes, only after the updates before it). A new session's updates are held
until the response naming it is written (``announced.py``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from pi_lsp.acp.announced import UnannouncedSessions

logger = logging.getLogger(__name__)


class Outbox:
    """The queue of ``(ACP session id, update)`` and the task that sends it."""

    def __init__(self, connection: Callable[[], Any]) -> None:
        self._connection = connection
        self.unannounced = UnannouncedSessions(self._put)
        """New sessions whose updates wait for the ``session/new`` response (a wire observer)."""
        self._queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self._sender: asyncio.Task | None = None

    def enqueue(self, acp_id: str, update: Any) -> None:
        if not self.unannounced.keep(acp_id, update):
            self._put(acp_id, update)

    async def join(self) -> None:
        """Wait until every update queued so far has been sent."""
        await self._queue.join()

    def _put(self, acp_id: str, update: Any) -> None:
        self._queue.put_nowait((acp_id, update))
        if self._sender is None or self._sender.done():
            self._sender = asyncio.get_running_loop().create_task(self._send())

    async def _send(self) -> None:
        while True:
            acp_id, update = await self._queue.get()
            try:
                await self._connection().session_update(acp_id, update)
            except Exception:
                logger.exception("session/update could not be sent")
            finally:
                self._queue.task_done()
