"""The event stream of one session: ``pi/event`` notifications in order, with deltas coalesced.

Streaming models produce hundreds of tiny deltas a second; an editor only needs about 30 updates a
second. Consecutive ``text_delta`` (or ``thinking_delta``) events are merged into one and sent at
most every ``interval`` seconds; consecutive ``tool_execution_update`` events of one tool call
replace each other (each carries the whole output so far). Any other event first flushes what is
pending, so nothing is lost or reordered and ``seq`` rises by exactly one per notification.

Events are the typed payloads of ``protocol.py``; the stream hands each one, numbered, to its
sender as a ``protocol.EventNotification``, and the adapter puts it on the wire.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import attrs

from pi_lsp.protocol import (
    Event,
    EventNotification,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolExecutionUpdateEvent,
)

DEFAULT_INTERVAL = 1 / 30

Sender = Callable[[EventNotification], None]
"""Delivers one numbered event to the client."""


class EventStream:
    """Numbers and delivers the events of one session, merging bursts of deltas."""

    def __init__(self, session_id: str, send: Sender, interval: float = DEFAULT_INTERVAL) -> None:
        self.session_id = session_id
        self._send = send
        self._interval = interval
        self._seq = 0
        self._pending: Event | None = None
        self._pending_deltas: list[str] = []
        self._flush_handle: asyncio.TimerHandle | None = None
        self._last_sent = 0.0

    @property
    def seq(self) -> int:
        """The ``seq`` of the last notification sent (0 before the first)."""
        return self._seq

    def emit(self, event: Event) -> None:
        """Queue ``event``; deltas may merge with the next ones, everything else goes out now."""
        if isinstance(event, ToolExecutionUpdateEvent):
            self._replace_update(event)
        elif isinstance(event, (TextDeltaEvent, ThinkingDeltaEvent)):
            self._add_delta(event)
        else:
            self.flush()
            self._deliver(event)
            return
        loop = _running_loop()
        if loop is not None and loop.time() - self._last_sent >= self._interval:
            # A burst of buffered chunks may not yield to the event loop, so the timer alone could
            # hold every delta back until the burst ends; send once the interval has passed.
            self.flush()
        else:
            self._schedule_flush()

    def flush(self) -> None:
        """Send the pending merged event, if any."""
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        pending, self._pending = self._pending, None
        if pending is None:
            return
        merged = len(self._pending_deltas) > 1
        if merged and isinstance(pending, (TextDeltaEvent, ThinkingDeltaEvent)):
            pending = attrs.evolve(pending, delta="".join(self._pending_deltas))
        self._pending_deltas = []
        self._deliver(pending)

    def _add_delta(self, event: TextDeltaEvent | ThinkingDeltaEvent) -> None:
        if self._pending is not None and type(self._pending) is type(event):
            self._pending_deltas.append(event.delta)
            return
        self.flush()
        self._pending = event
        self._pending_deltas = [event.delta]

    def _replace_update(self, event: ToolExecutionUpdateEvent) -> None:
        pending = self._pending
        same_call = (
            isinstance(pending, ToolExecutionUpdateEvent)
            and pending.tool_call_id == event.tool_call_id
        )
        if not same_call:
            self.flush()
        self._pending = event
        self._pending_deltas = []

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

    def _deliver(self, event: Event) -> None:
        self._seq += 1
        loop = _running_loop()
        if loop is not None:
            self._last_sent = loop.time()
        self._send(EventNotification(self.session_id, self._seq, event))


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
