"""The chat models an editor lends pi-lsp (VS Code's Language Model API: Copilot and every model an
extension contributes), and the channel their requests travel through.

A client that runs ``pi/languageModel/chat`` says so in ``initialize``; the server then connects
a ``LanguageModelChannel`` (``handlers/language_models.py`` implements it over LSP) and keeps the
list the client sends (``pi/languageModels``) here. The catalogue lists these models as
``vscode-lm/<vendor>/<id>`` only while a channel is connected, so Neovim, ACP and plain LSP
clients never see one. ``vscode_lm.py`` sends their requests through the channel.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from pi_lsp.llm.config import ModelConfig
from pi_lsp.protocol import (
    LanguageModelChatParams,
    LanguageModelChatResult,
    LanguageModelInfo,
    LanguageModelPart,
)
from pi_lsp.resources.models_file import ModelCost

PROVIDER = "vscode-lm"
"""The provider name of the editor's models, as pi records it on their messages."""
FREE = ModelCost(input=0, output=0, cache_read=0, cache_write=0)
"""The editor's plan pays for these requests: pi-lsp's accounting records no cost for them."""


class LanguageModelRequestError(Exception):
    """The client answered ``pi/languageModel/chat`` with an error: ``code`` says which."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class LanguageModelChannel(Protocol):
    """Runs one chat request on the client: ``on_part`` gets each streamed part, in order, before
    the returned result; an error answer raises ``LanguageModelRequestError``; cancelling the
    awaiting task cancels the client's request."""

    def chat(
        self, params: LanguageModelChatParams, on_part: Callable[[LanguageModelPart], None]
    ) -> Awaitable[LanguageModelChatResult]: ...


class EditorModels:
    """The client's models and its channel; empty and unconnected for a client without them."""

    def __init__(self) -> None:
        self.channel: LanguageModelChannel | None = None
        self._models: tuple[LanguageModelInfo, ...] = ()

    def connect(self, channel: LanguageModelChannel) -> None:
        self.channel = channel

    def replace(self, models: Sequence[LanguageModelInfo]) -> None:
        """``pi/languageModels``: the client's whole list, as it is now."""
        self._models = tuple(models)

    def listed(self) -> tuple[LanguageModelInfo, ...]:
        """The models to offer: none unless the client runs their requests."""
        return self._models if self.channel is not None else ()

    def find(self, model_id: str) -> LanguageModelInfo | None:
        """The listed model ``<vendor>/<id>`` names."""
        return next((model for model in self.listed() if local_id(model) == model_id), None)

    def config(self, model_id: str) -> ModelConfig:
        """The model ``vscode-lm/<model_id>``; ``key_status`` is ``missing`` when the client does
        not offer it (now)."""
        found = self.find(model_id)
        return ModelConfig(
            model=f"{PROVIDER}/{model_id}",
            provider=PROVIDER,
            model_id=model_id,
            context_window=found.max_input_tokens if found else None,
            cost=FREE,
            name=found.name if found else None,
            source="editor",
            key_status="key" if found else "missing",
        )

    def missing_message(self, model_id: str) -> str:
        """Why ``vscode-lm/<model_id>`` cannot be called, and what to do."""
        if self.channel is None:
            return (
                f"{PROVIDER}/{model_id} is a model VS Code provides: only the Pi extension for "
                "VS Code can run it. Choose another model here."
            )
        return (
            f"VS Code offers no model {model_id} now (its extension may be disabled or signed "
            'out): choose another model with "Pi: Select Model…".'
        )


def local_id(model: LanguageModelInfo) -> str:
    """``<vendor>/<id>``: the model's id after ``vscode-lm/``."""
    return f"{model.vendor}/{model.id}"
