"""The interface the agent calls models through, and its litellm implementation.

``ModelClient.stream(request)`` opens one streamed completion: an async context manager whose
``events()`` yield pi-shaped stream events ending in ``Completed(message)``, and whose
``partial_message(stop_reason)`` is what arrived so far (see ``stream.py`` for the contract).
``LitellmClient`` is the real one; ``double.ModelDouble`` answers from a script, in process, for
tests of the agent's orchestration. ``complete`` runs a stream to its end for callers that only
want the final message (summaries).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator
from typing import Any, Protocol, Self

from pi_lsp.llm.events import StreamEvent
from pi_lsp.llm.stream import AssistantStream, CompletionRequest

logger = logging.getLogger(__name__)


class ModelStream(Protocol):
    """One streamed completion, iterated once (``AssistantStream`` is the reference)."""

    message: dict[str, Any] | None
    """The final message, once ``Completed`` was yielded."""

    async def __aenter__(self) -> Self: ...

    async def __aexit__(self, *exc_info: object) -> None: ...

    def events(self) -> AsyncIterator[StreamEvent]: ...

    def partial_message(
        self, stop_reason: str = "aborted", error_message: str | None = None
    ) -> dict[str, Any]: ...


class ModelClient(Protocol):
    """Where completions come from."""

    def stream(self, request: CompletionRequest) -> ModelStream:
        """Open one streamed completion of ``request``."""
        ...

    def preload(self) -> None:
        """Start loading, in the background, what the first completion needs."""
        ...


class LitellmClient:
    """Completions through litellm (imported lazily: ``preload`` starts that on a daemon thread)."""

    def stream(self, request: CompletionRequest) -> AssistantStream:
        return AssistantStream(request)

    def preload(self) -> None:
        """Import litellm on a daemon thread, so the first prompt does not wait for it.

        A daemon thread, because an import cannot be interrupted and a client that exits right
        away must not wait seconds for it.
        """
        threading.Thread(target=_load_quietly, name="litellm-preload", daemon=True).start()


async def complete(client: ModelClient, request: CompletionRequest) -> dict[str, Any]:
    """The final assistant message of one completion (an ``error`` message if it ended early)."""
    async with client.stream(request) as stream:
        async for _ in stream.events():
            pass
        return stream.message or stream.partial_message("error", "the stream ended early")


def _load_quietly() -> None:
    from pi_lsp.llm._litellm import load_litellm

    try:
        load_litellm()
    except Exception:
        logger.exception("loading litellm failed")
