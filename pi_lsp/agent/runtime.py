"""One open session as the server runs it: the session, its event stream and its turn state.

A runtime is busy while a turn runs; ``pi/prompt`` requests that arrive meanwhile are queued (as
follow-ups, delivered after the turn) or, with ``streamingBehavior: "steer"``, handed to the
running turn after its current tool batch. Tree changes made while idle are announced with a
``tree_changed`` event so every client view stays current.
"""

from __future__ import annotations

import asyncio
from collections import deque

import attrs

from pi_lsp.agent.events import EventStream
from pi_lsp.errors import SessionReadOnlyError, TurnInProgressError
from pi_lsp.protocol import TreeChangedEvent
from pi_lsp.session.session import Session


@attrs.define
class QueuedPrompt:
    text: str
    images: list[dict]
    done: asyncio.Future


class SessionRuntime:
    """A session plus what the server keeps about it between requests."""

    def __init__(
        self, session: Session, events: EventStream, read_only_reason: str | None = None
    ) -> None:
        self.session = session
        self.events = events
        self.read_only_reason = read_only_reason
        self.model_override: str | None = None
        self.turn: asyncio.Task | None = None
        self.starting = asyncio.Lock()
        """Held while a prompt decides whether to start a turn or join the queue."""
        self.abort_requested = asyncio.Event()
        self.steering: deque[QueuedPrompt] = deque()
        self.follow_ups: deque[QueuedPrompt] = deque()
        self.compacting = False
        self.compaction_task: asyncio.Task | None = None
        """The task summarizing for a compaction or a navigation, so an abort can cancel it."""
        self.compaction_finished = asyncio.Event()
        self.compaction_finished.set()

    @property
    def id(self) -> str:
        return self.session.id

    @property
    def is_streaming(self) -> bool:
        return self.turn is not None and not self.turn.done()

    def require_idle(self, action: str) -> None:
        """Refuse ``action`` while a turn or a compaction runs (pi refuses tree moves then too)."""
        if self.is_streaming or self.compacting:
            raise TurnInProgressError(
                f"cannot {action} while the agent is working on session {self.id}; abort it first"
            )

    def require_writable(self) -> None:
        if self.read_only_reason:
            raise SessionReadOnlyError(self.read_only_reason)

    def tree_changed(self) -> None:
        self.events.emit(TreeChangedEvent(self.session.leaf_id))

    def close(self) -> None:
        self.events.flush()
        self.session.close()

    @property
    def path(self) -> str | None:
        """Where the session file is (or will be, at the first message); None in memory."""
        return str(self.session.path) if self.session.path else None
