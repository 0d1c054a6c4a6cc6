"""One open session as the server runs it: the session, its event stream and its busy state.

A runtime is busy while a turn runs or while the model writes a summary (a compaction or the
summary of a branch being left). ``pi/prompt`` requests that arrive during a turn wait in its
``PromptQueue`` (``prompt_queue.py``): as follow-ups, delivered when the agent would stop, or, with
``streamingBehavior: "steer"``, handed to the running turn after its current tool batch. While a
summary is written the session refuses another summary and any move of the leaf, and prompts wait
for it (``summarizing``). Tree changes are announced with a ``tree_changed`` event so every client
view stays current.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

import attrs

from pi_lsp.agent.events import EventStream
from pi_lsp.agent.prompt_queue import PromptQueue
from pi_lsp.agent.tree_changes import TreeChanges
from pi_lsp.errors import SessionReadOnlyError, TurnInProgressError
from pi_lsp.llm.converted_history import ConvertedHistory
from pi_lsp.llm.stream import CompletionRequest
from pi_lsp.session.session import Session
from pi_lsp.session.usage_totals import UsageTally


@attrs.frozen
class CacheAnchor:
    """The latest request of the conversation the provider answered, which is what its prompt
    cache holds now: summaries resend its prefix to read it from there (``SummaryModel``)."""

    request: CompletionRequest
    sent_at: float
    """``time.monotonic()`` when it was sent (a cache entry lives from then, for its TTL)."""
    cached: bool
    """Whether the answer's usage shows the provider caching (reads or writes)."""


class SessionRuntime:
    """A session plus what the server keeps about it between requests."""

    def __init__(
        self, session: Session, events: EventStream, read_only_reason: str | None = None
    ) -> None:
        self.session = session
        self.events = events
        self.tree_changes = TreeChanges(session)
        """The tree's version and what ``tree_changed`` has announced."""
        self.read_only_reason = read_only_reason
        self.model_override: str | None = None
        self.turn: asyncio.Task | None = None
        self.starting = asyncio.Lock()
        """Held while a prompt decides whether to start a turn or join the queue."""
        self.queue = PromptQueue(events.emit)
        """The prompts waiting for the running turn (steering and follow-ups)."""
        self.compacting = False
        """True while the model writes a summary (a compaction or a branch summary)."""
        self.summary_task: asyncio.Task | None = None
        """The task writing that summary, so an abort can cancel it."""
        self.summary_finished = asyncio.Event()
        self.summary_finished.set()
        self.cache_anchor: CacheAnchor | None = None
        self.converted_history = ConvertedHistory()
        """The chat messages of the previous request, which the next one extends."""
        self.usage = UsageTally()
        """What the session's model calls cost, kept up to date as entries are appended."""
        self.started_extensions: set[Any] = set()
        """The extensions whose ``session_start`` has run for this session."""
        self.extension_prompt_addition = ""
        """What extensions' ``before_agent_start`` hooks changed in the last turn's system prompt
        (the text they added, or their whole prompt when they replaced it), for the inspector."""
        self._activity = ""

    @property
    def id(self) -> str:
        return self.session.id

    @property
    def path(self) -> str | None:
        """Where the session file is (or will be, at the first message); None in memory."""
        return str(self.session.path) if self.session.path else None

    @property
    def is_streaming(self) -> bool:
        return self.turn is not None and not self.turn.done()

    def require_idle(self, action: str) -> None:
        """Refuse ``action`` while a turn or a summary runs (pi refuses tree moves then too)."""
        if self.is_streaming or self.compacting:
            raise TurnInProgressError(
                f"cannot {action} while the agent is working on session {self.id}; abort it first"
            )

    def require_writable(self) -> None:
        if self.read_only_reason:
            raise SessionReadOnlyError(self.read_only_reason)

    @contextlib.contextmanager
    def summarizing(self, activity: str) -> Iterator[None]:
        """Mark the session busy while the current task writes a summary (one at a time);
        ``activity`` says what it does, for the error a second one gets (``"being compacted"``)."""
        if self.compacting:
            raise TurnInProgressError(f"session {self.id} is already {self._activity}")
        self.require_writable()
        self._activity = activity
        self.compacting = True
        self.summary_task = asyncio.current_task()
        self.summary_finished.clear()
        try:
            yield
        finally:
            self.compacting = False
            self.summary_task = None
            self.summary_finished.set()

    def tree_changed(self) -> None:
        self.events.emit(self.tree_changes.next_event())

    def close(self) -> None:
        self.queue.cancel_all()
        self.events.flush()
        self.session.close()
