"""The event stream of one session: ``pi/event`` notifications in order, with deltas coalesced.

Streaming models produce hundreds of tiny deltas a second; an editor only needs about 30 updates a
second. Consecutive ``text_delta`` (or ``thinking_delta``) events for the same message are merged
into one and sent at most every ``interval`` seconds; any other event first flushes what is
pending, so nothing is lost or reordered and ``seq`` rises by exactly one per notification.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

COALESCED_TYPES = ("text_delta", "thinking_delta")
DEFAULT_INTERVAL = 1 / 30

Sender = Callable[[dict[str, Any]], None]
"""Delivers one ``pi/event`` params object (``{"sessionId", "seq", "event"}``) to the client."""


class EventStream:
    """Numbers and delivers the events of one session, merging bursts of deltas."""

    def __init__(self, session_id: str, send: Sender, interval: float = DEFAULT_INTERVAL) -> None:
        self.session_id = session_id
        self._send = send
        self._interval = interval
        self._seq = 0
        self._pending: dict[str, Any] | None = None
        self._flush_handle: asyncio.TimerHandle | None = None
        self._last_sent = 0.0

    @property
    def seq(self) -> int:
        """The ``seq`` of the last notification sent (0 before the first)."""
        return self._seq

    def emit(self, event: dict[str, Any]) -> None:
        """Queue ``event``; deltas may be merged with the
        next ones, everything else goes out now."""
        if event.get("type") in COALESCED_TYPES:
            self._add_delta(event)
            return
        self.flush()
        self._deliver(event)

    def flush(self) -> None:
        """Send the pending merged delta, if any."""
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        pending, self._pending = self._pending, None
        if pending is not None:
            self._deliver(pending)

    def _add_delta(self, event: dict[str, Any]) -> None:
        pending = self._pending
        if pending is not None and _same_stream(pending, event):
            pending["delta"] += event["delta"]
        else:
            self.flush()
            self._pending = dict(event)
        loop = _running_loop()
        if loop is not None and loop.time() - self._last_sent >= self._interval:
            # A burst of buffered chunks may not yield to the event loop, so the timer alone could
            # hold every delta back until the burst ends; send once the interval has passed.
            self.flush()
        else:
            self._schedule_flush()

    def _schedule_flush(self) -> None:
        if self._flush_handle is not None:
            return
        loop = _running_loop()
        if loop is None:
            self.flush()
            return
        delay = max(0.0, self._last_sent + self._interval - loop.time())
        self._flush_handle = loop.call_later(delay, self._timed_flush)

    def _timed_flush(self) -> None:
        self._flush_handle = None
        self.flush()

    def _deliver(self, event: dict[str, Any]) -> None:
        self._seq += 1
        loop = _running_loop()
        if loop is not None:
            self._last_sent = loop.time()
        self._send({"sessionId": self.session_id, "seq": self._seq, "event": event})


def _same_stream(pending: dict[str, Any], event: dict[str, Any]) -> bool:
    return (
        pending["type"] == event["type"]
        and pending.get("messageId") == event.get("messageId")
        and pending.get("contentIndex") == event.get("contentIndex")
    )


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
