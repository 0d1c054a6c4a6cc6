"""An in-process model for tests: the ``ModelClient`` interface answered from a script.

The replies are the scripted LLM server's (``pi_lsp.scripted_llm.replies``: ``text``,
``tool_calls``, ``error``, ``context_overflow``, ``length_stop``, ``mid_stream_error``…), so a
test written against the HTTP server reads the same here. Each reply's OpenAI deltas go through
``AssistantStream``'s own chunk handling, without HTTP or litellm, so the events, the final
message, usage and partial messages on abort are those of a real stream; an HTTP error reply
ends the answer as a provider error would (``"429 ScriptedModelError: …"``).

::

    model = ModelDouble(
        replies.tool_calls([("call-1", "read", {"path": "a.py"})]), replies.text("Done")
    )
    gate = model.hold(replies.text("Thinking about it"), after=1)  # pauses after the first delta
    ...
    await gate.reached()                  # the answer is streaming now: abort, steer, queue…
    gate.release()
    model.requests                        # every CompletionRequest the agent sent, in order

Without a scripted reply a completion ends in an error saying so, never hangs.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncGenerator
from types import SimpleNamespace
from typing import Any

import attrs

from pi_lsp.llm.messages import to_chat_messages
from pi_lsp.llm.stream import AssistantStream, CompletionRequest
from pi_lsp.scripted_llm import replies
from pi_lsp.scripted_llm.replies import Reply, usage_for

__all__ = ["Gate", "ModelDouble", "ScriptedModelError", "replies"]

NO_REPLY_MESSAGE = "the model double has no reply scripted for this request"


class ScriptedModelError(Exception):
    """A scripted provider failure (an HTTP error reply, or an error in the stream)."""

    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class Gate:
    """Holds a scripted answer mid-stream until released, so a test can act while it streams."""

    def __init__(self) -> None:
        self._reached = asyncio.Event()
        self._released = asyncio.Event()

    async def reached(self, timeout: float = 10.0) -> None:
        """Wait until the held answer has streamed up to the gate (a test fails rather than hangs
        when it never does)."""
        try:
            await asyncio.wait_for(self._reached.wait(), timeout)
        except TimeoutError:
            raise AssertionError(f"the held reply was not streamed within {timeout} s") from None

    def release(self) -> None:
        self._released.set()

    async def _pass(self) -> None:
        self._reached.set()
        await self._released.wait()


@attrs.frozen
class _Scripted:
    reply: Reply
    gate: Gate | None = None
    hold_after: int = 0


class ModelDouble:
    """Answers each completion with the next scripted reply (see the module docstring)."""

    def __init__(self, *replies: Reply) -> None:
        self._queue: deque[_Scripted] = deque(_Scripted(reply) for reply in replies)
        self.requests: list[CompletionRequest] = []

    def script(self, *replies: Reply) -> None:
        """Queue ``replies`` for the next completions, in order."""
        self._queue.extend(_Scripted(reply) for reply in replies)

    def hold(self, reply: Reply, *, after: int = 1) -> Gate:
        """Queue ``reply``, paused after its first ``after`` deltas until the gate is released."""
        gate = Gate()
        self._queue.append(_Scripted(reply, gate, after))
        return gate

    @property
    def pending(self) -> int:
        """Replies scripted and not used yet."""
        return len(self._queue)

    def stream(self, request: CompletionRequest) -> ScriptedStream:
        self.requests.append(request)
        return ScriptedStream(request, self._queue.popleft() if self._queue else None)

    def preload(self) -> None:
        """Nothing to load."""


class ScriptedStream(AssistantStream):
    """``AssistantStream`` fed by a scripted reply instead of litellm."""

    def __init__(self, request: CompletionRequest, scripted: _Scripted | None) -> None:
        super().__init__(request)
        self._scripted = scripted

    async def _chunks(self) -> AsyncGenerator[Any, None]:
        if self._scripted is None:
            raise ScriptedModelError(NO_REPLY_MESSAGE)
        reply, gate = self._scripted.reply, self._scripted.gate
        if reply.is_http_error:
            body = (reply.error_body or {}).get("error") or {}
            raise ScriptedModelError(str(body.get("message", "error")), reply.status)
        for index, delta in enumerate(reply.deltas):
            if gate is not None and index == self._scripted.hold_after:
                await gate._pass()
            if index and reply.chunk_delay:
                await asyncio.sleep(reply.chunk_delay)
            yield _chunk(delta, None)
        if gate is not None and self._scripted.hold_after >= len(reply.deltas):
            await gate._pass()
        if reply.hang_seconds:
            await asyncio.sleep(reply.hang_seconds)
        if reply.drop_connection:
            return
        if reply.stream_error is not None:
            error = reply.stream_error
            raise ScriptedModelError(str(error.get("message")), _status(error.get("code")))
        yield _chunk({}, reply.finish_reason)
        yield SimpleNamespace(usage=usage_for(reply, self._chat_messages()), choices=[])

    def _chat_messages(self) -> list[dict[str, Any]]:
        model = self.request.model
        return to_chat_messages(
            self.request.system_prompt,
            self.request.messages,
            provider=model.provider,
            model_id=model.model_id,
        )


def _chunk(delta: dict[str, Any], finish_reason: str | None) -> SimpleNamespace:
    return SimpleNamespace(
        usage=None,
        choices=[SimpleNamespace(delta=SimpleNamespace(**delta), finish_reason=finish_reason)],
    )


def _status(code: Any) -> int | None:
    return code if isinstance(code, int) else None
