"""Cancelling a stream part-way, as an editor's abort does: the shared steps of the transports'
cancel tests."""

from __future__ import annotations

import asyncio

import pytest

from pi_lsp.llm.events import TextDelta
from pi_lsp.llm.stream import AssistantStream

SLOW_TEXT = "abcdefghijklmnopqrstuvwxyz0123"
"""The reply the cancel tests script: 30 one-character chunks, 50 ms apart."""


async def cancel_after_three_deltas(stream: AssistantStream) -> list[str]:
    """Consume ``stream`` until three text deltas arrived, cancel the consumer, and return the
    deltas received; the cancellation must reach the consumer within 5 s."""
    received: list[str] = []
    three = asyncio.Event()

    async def consume() -> None:
        async with stream:
            async for event in stream.events():
                if isinstance(event, TextDelta):
                    received.append(event.text)
                    if len(received) == 3:
                        three.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(three.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 5)
    return received
