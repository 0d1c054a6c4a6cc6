"""Holding back a new session's updates until the client has been told the session's id.

The SDKs' session helpers (the TypeScript SDK's ``ActiveSession``) drop the updates of a session
id they have not been given yet, so whatever a ``session/new`` queues for its session (the command
list, a notice) waits until the response naming that session has been written. The connection
shows its observers every message after writing it; the response releases the held updates.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from acp.connection import StreamDirection, StreamEvent


class UnannouncedSessions:
    """The sessions whose id the client does not know yet, and the updates held for each."""

    def __init__(self, release: Callable[[str, Any], None]) -> None:
        self._held: dict[str, list[Any]] = {}
        self._release = release
        """Sends one held update (in the order they were held)."""

    def hold(self, session_id: str) -> None:
        self._held.setdefault(session_id, [])

    def keep(self, session_id: str, update: Any) -> bool:
        """Hold ``update`` if its session is not announced yet; False if it can go now."""
        held = self._held.get(session_id)
        if held is None:
            return False
        held.append(update)
        return True

    def forget(self, session_id: str) -> None:
        """The session was never announced (its ``session/new`` failed)."""
        self._held.pop(session_id, None)

    def observe(self, event: StreamEvent) -> None:
        """A connection observer: a written response naming a held session releases it."""
        if event.direction is not StreamDirection.OUTGOING:
            return
        result = event.message.get("result")
        session_id = result.get("sessionId") if isinstance(result, dict) else None
        if not isinstance(session_id, str) or session_id not in self._held:
            return
        for update in self._held.pop(session_id):
            self._release(session_id, update)
