"""The configuration as it is right now, and what follows from it for one session.

The client's settings change while the server runs (``workspace/configuration``), and so do pi's
settings files (watched by the resource service); ``LiveConfig.current`` merges the latest of
both. For a session it answers the questions every service asks: which model (``pi/setModel``
and a resumed session's own choice beat the configured one), which cheaper model writes
summaries, the thinking level, the context window and the token counter.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import attrs

from pi_lsp.agent.resources import ResourceService
from pi_lsp.agent.runtime import SessionRuntime
from pi_lsp.compaction.tokens import TokenCounter, get_token_counter
from pi_lsp.config import ServerConfig
from pi_lsp.errors import ModelNotConfiguredError
from pi_lsp.llm.config import ModelConfig, resolve_model
from pi_lsp.llm.models import context_window_for, max_output_tokens_for

NO_MODEL_MESSAGE = (
    "No model is configured. Set the pi.model setting (a litellm model string such as "
    "openai/gpt-4o or ollama/llama3, plus pi.apiBase for a local server), or the PI_LSP_MODEL "
    "environment variable, or defaultProvider/defaultModel in pi's settings.json."
)
FALLBACK_CONTEXT_WINDOW = 128_000


class LiveConfig:
    """The server's configuration with pi's settings files as they are now."""

    def __init__(
        self,
        config: ServerConfig,
        resources: ResourceService,
        environ: Mapping[str, str] = os.environ,
    ) -> None:
        self.config = config
        self.resources = resources
        self._environ = environ

    @property
    def current(self) -> ServerConfig:
        """The configuration with pi's settings files as they are now (they are watched)."""
        merged = self.resources.snapshot.settings.settings.merged
        if merged == self.config.pi_settings:
            return self.config
        return attrs.evolve(self.config, pi_settings=merged)

    def model_for(self, runtime: SessionRuntime) -> ModelConfig | None:
        """The session's model: its own choice (``pi/setModel``, a resumed session's), else the
        configured one; None when no model is configured."""
        settings = self.current.model_settings()
        environ = dict(self._environ)
        if runtime.model_override:
            # pi/setModel is the user's latest word: it beats the server's start-up PI_LSP_MODEL.
            settings = {**settings, "model": runtime.model_override}
            environ.pop("PI_LSP_MODEL", None)
        return resolve_model(settings, environ)

    def require_model(self, runtime: SessionRuntime) -> ModelConfig:
        model = self.model_for(runtime)
        if model is None:
            raise ModelNotConfiguredError(NO_MODEL_MESSAGE)
        return model

    def summary_model(self, runtime: SessionRuntime) -> ModelConfig:
        """The model that writes summaries: ``compaction.model`` when set, else the session's."""
        model = self.require_model(runtime)
        cheaper = self.current.compaction_model()
        if not cheaper:
            return model
        return resolve_model({**self.current.model_settings(), "model": cheaper}, {}) or model

    def thinking_level(self, runtime: SessionRuntime) -> str:
        """The level of the session's active path (its last change), else the configured one."""
        for entry in reversed(runtime.session.branch()):
            if entry.type == "thinking_level_change" and isinstance(
                entry.get("thinkingLevel"), str
            ):
                return entry["thinkingLevel"]
        return self.current.thinking_level()

    def context_window(self, model: ModelConfig | None) -> int:
        if model is None:
            return self.config.settings.context_window or FALLBACK_CONTEXT_WINDOW
        return context_window_for(model)

    def max_output_tokens(self, model: ModelConfig) -> int | None:
        return max_output_tokens_for(model)

    def token_counter(self) -> TokenCounter:
        return get_token_counter(self.current.tokenizer())
