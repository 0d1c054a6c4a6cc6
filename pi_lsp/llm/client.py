"""The interface the agent calls models through, and its implementation over the providers.

``ModelClient.stream(request)`` opens one streamed completion: an async context manager whose
``events()`` yield pi-shaped stream events ending in ``Completed(message)``, and whose
``partial_message(stop_reason)`` is what arrived so far (see ``stream.py`` for the contract).
``ProviderClient`` is the real one (each provider's wire API, litellm for the long tail, the
client for the editor's own models);
``double.ModelDouble`` answers from a script, in process, for tests of the agent's orchestration.
``complete`` runs a stream to its end for callers that only want the final message (summaries).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator, Callable
from typing import Protocol, Self

from pi_lsp.llm.config import ModelConfig
from pi_lsp.llm.editor_models import PROVIDER as EDITOR_PROVIDER
from pi_lsp.llm.editor_models import EditorModels
from pi_lsp.llm.events import StreamEvent
from pi_lsp.llm.stream import AssistantStream, CompletionRequest
from pi_lsp.protocol import StopReason
from pi_lsp.session.message_types import AssistantMessage

logger = logging.getLogger(__name__)


class ModelStream(Protocol):
    """One streamed completion, iterated once (``AssistantStream`` is the reference)."""

    message: AssistantMessage | None
    """The final message, once ``Completed`` was yielded."""

    async def __aenter__(self) -> Self: ...

    async def __aexit__(self, *exc_info: object) -> None: ...

    def events(self) -> AsyncIterator[StreamEvent]: ...

    def partial_message(
        self, stop_reason: StopReason = "aborted", error_message: str | None = None
    ) -> AssistantMessage: ...


class ModelClient(Protocol):
    """Where completions come from."""

    def stream(self, request: CompletionRequest) -> ModelStream:
        """Open one streamed completion of ``request``."""
        ...

    def preload(self) -> None:
        """Start loading, in the background, what the first completion needs."""
        ...


class ProviderClient:
    """Completions over the provider's own wire API for the models of the provider table, through
    litellm for the others.

    ``configured_model`` tells ``preload`` which model the first prompt will likely use: for a
    table model, litellm (seconds of import, a few hundred MB) is not loaded at all.
    """

    def __init__(
        self,
        configured_model: Callable[[], ModelConfig | None] | None = None,
        editor_models: EditorModels | None = None,
    ) -> None:
        self._configured_model = configured_model
        self._editor_models = editor_models
        """The editor's own models, whose requests go to the client (``vscode_lm.py``)."""

    def stream(self, request: CompletionRequest) -> AssistantStream:
        return AssistantStream(request, self._editor_models)

    def preload(self) -> None:
        """Import what the first prompt needs on a daemon thread, so it does not wait for it.

        A daemon thread, because an import cannot be interrupted and a client that exits right
        away must not wait seconds for it.
        """
        threading.Thread(
            target=_load_quietly, args=(self._configured_model,), name="llm-preload", daemon=True
        ).start()


async def complete(client: ModelClient, request: CompletionRequest) -> AssistantMessage:
    """The final assistant message of one completion (an ``error`` message if it ended early)."""
    async with client.stream(request) as stream:
        async for _ in stream.events():
            pass
        return stream.message or stream.partial_message("error", "the stream ended early")


def _load_quietly(configured_model: Callable[[], ModelConfig | None] | None) -> None:
    from pi_lsp.llm import anthropic_direct, direct, google_generative_ai, openai_responses
    from pi_lsp.llm._litellm import load_litellm

    try:
        model = configured_model() if configured_model is not None else None
        if model is not None and model.provider == EDITOR_PROVIDER:
            return  # the editor runs its models: nothing to load
        served = (
            direct.serves,
            anthropic_direct.serves,
            openai_responses.serves,
            google_generative_ai.serves,
        )
        if model is not None and any(serves(model) for serves in served):
            direct.preload(model)
        else:
            load_litellm()
    except Exception:
        logger.exception("preloading the LLM client failed")
