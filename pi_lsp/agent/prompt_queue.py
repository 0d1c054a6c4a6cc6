"""The prompts waiting for a session's running turn, kept and delivered as pi 1.6 keeps them.

A prompt sent while a turn runs joins one of two queues: *steering* (delivered after the turn's
current tool batch, or after its answer, before the model is asked again) or *follow-ups*
(delivered when the agent would stop). Each queue is drained by its mode, pi's ``steeringMode``
and ``followUpMode``: ``one-at-a-time`` hands over the oldest prompt per delivery, ``all`` every
prompt at once (pi-agent-core's ``PendingMessageQueue``). Until the agent takes a prompt, the
user may see it, edit it or take it back; every change is announced with a ``queue_update``
event carrying both queues whole.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import deque
from collections.abc import Callable
from typing import Literal

import attrs

from pi_lsp.errors import InvalidParamsError, PromptTakenBackError, echoed
from pi_lsp.protocol import QueuedPromptInfo, QueueMode, QueueUpdateEvent
from pi_lsp.session.message_types import UserMessage

QueueKind = Literal["steer", "followUp"]
_ids = itertools.count(1)


@attrs.define(eq=False)
class QueuedPrompt:
    """A prompt waiting for the running turn: its text as the model gets it, its user message
    (already expanded) and the future its ``pi/prompt`` request waits on."""

    text: str
    message: UserMessage
    done: asyncio.Future
    id: str = attrs.Factory(lambda: f"q{next(_ids)}")


class PromptQueue:
    """A session's steering and follow-up queues; ``announce`` receives each change."""

    def __init__(self, announce: Callable[[QueueUpdateEvent], None]) -> None:
        self.steering: deque[QueuedPrompt] = deque()
        self.follow_ups: deque[QueuedPrompt] = deque()
        self._announce = announce

    def __bool__(self) -> bool:
        return bool(self.steering or self.follow_ups)

    def add(self, kind: QueueKind, queued: QueuedPrompt) -> None:
        (self.steering if kind == "steer" else self.follow_ups).append(queued)
        self._changed()

    def take_steering(self, mode: QueueMode) -> list[QueuedPrompt]:
        """The steering prompts the next delivery hands over (removed from the queue)."""
        return self._take(self.steering, mode)

    def take_follow_ups(self, mode: QueueMode) -> list[QueuedPrompt]:
        """The follow-ups the next delivery hands over (removed from the queue)."""
        return self._take(self.follow_ups, mode)

    def clear(self) -> tuple[list[QueuedPrompt], list[QueuedPrompt]]:
        """Take every prompt back (pi's ``clear_queue``); their requests end as taken back."""
        steering, follow_ups = list(self.steering), list(self.follow_ups)
        self.steering.clear()
        self.follow_ups.clear()
        for queued in (*steering, *follow_ups):
            _taken_back(queued)
        if steering or follow_ups:
            self._changed()
        return steering, follow_ups

    def cancel_all(self) -> None:
        """Drop every prompt without a word (the session closes): their requests are cancelled."""
        for queued in (*self.steering, *self.follow_ups):
            queued.done.cancel()
        self.steering.clear()
        self.follow_ups.clear()

    def discard(self, queued: QueuedPrompt) -> None:
        """Drop ``queued`` if it still waits (its request was cancelled)."""
        for queue in (self.steering, self.follow_ups):
            if queued in queue:
                queue.remove(queued)
                self._changed()

    def remove(self, prompt_id: str) -> QueuedPrompt:
        """Take one prompt back; InvalidParams when no prompt of that id waits (any more)."""
        queue, queued = self._find(prompt_id)
        queue.remove(queued)
        _taken_back(queued)
        self._changed()
        return queued

    def replace(self, prompt_id: str, text: str, message: UserMessage) -> None:
        """Give a waiting prompt a new text (its request keeps waiting, its place is kept)."""
        _, queued = self._find(prompt_id)
        queued.text, queued.message = text, message
        self._changed()

    def find(self, prompt_id: str) -> QueuedPrompt:
        return self._find(prompt_id)[1]

    def infos(self) -> tuple[list[QueuedPromptInfo], list[QueuedPromptInfo]]:
        return _infos(self.steering), _infos(self.follow_ups)

    def _find(self, prompt_id: str) -> tuple[deque[QueuedPrompt], QueuedPrompt]:
        for queue in (self.steering, self.follow_ups):
            for queued in queue:
                if queued.id == prompt_id:
                    return queue, queued
        raise InvalidParamsError(
            f"no queued prompt {echoed(prompt_id)}: the agent already took it, or it was "
            "taken back (pi/queue lists the prompts still waiting)"
        )

    def _take(self, queue: deque[QueuedPrompt], mode: QueueMode) -> list[QueuedPrompt]:
        count = len(queue) if mode == "all" else min(1, len(queue))
        taken = [queue.popleft() for _ in range(count)]
        if taken:
            self._changed()
        return taken

    def _changed(self) -> None:
        steering, follow_up = self.infos()
        self._announce(QueueUpdateEvent(steering, follow_up))


def _infos(queue: deque[QueuedPrompt]) -> list[QueuedPromptInfo]:
    return [QueuedPromptInfo(queued.id, queued.text) for queued in queue]


def _taken_back(queued: QueuedPrompt) -> None:
    if not queued.done.done():
        queued.done.set_exception(
            PromptTakenBackError("the prompt was taken out of the queue before the agent read it")
        )
