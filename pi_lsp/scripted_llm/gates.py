"""Named gates that hold a scripted answer open until a test releases it.

A reply with ``gate="name"`` on the chat-completions endpoint streams its start and first piece of
content, then waits at the gate: the agent is mid-answer for as long as the test needs (to queue
prompts, steer, abort), with no timing involved. ``reached`` tells a test the answer is being held;
``release`` lets it finish. Another process uses ``GET /__gates`` (the gates reached) and ``POST
/__release {"gate": name}``.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict


class Gates:
    """The gates of one scripted server, by name; each opens once."""

    def __init__(self) -> None:
        self._reached: defaultdict[str, asyncio.Event] = defaultdict(asyncio.Event)
        self._released: defaultdict[str, asyncio.Event] = defaultdict(asyncio.Event)

    async def pass_through(self, name: str) -> None:
        """Mark ``name`` reached, then wait until a test releases it."""
        self._reached[name].set()
        await self._released[name].wait()

    async def reached(self, name: str, timeout: float = 30.0) -> None:
        """Wait until an answer waits at ``name`` (a test fails rather than hangs)."""
        try:
            await asyncio.wait_for(self._reached[name].wait(), timeout)
        except TimeoutError:
            raise AssertionError(f"no scripted answer reached gate {name!r}") from None

    def release(self, name: str) -> None:
        self._released[name].set()

    def names_reached(self) -> list[str]:
        return sorted(name for name, event in self._reached.items() if event.is_set())
