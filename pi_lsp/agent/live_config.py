"""The configuration as it is right now, and what follows from it for one session.

The client's settings change while the server runs (``workspace/configuration``), and so do pi's
settings files (watched by the resource service); ``LiveConfig.current`` merges the latest of
both. For a session it answers the questions every service asks: which model (``pi/setModel``
and a resumed session's own choice beat the configured one), which cheaper model writes
summaries, the thinking level, the context window and the token counter.

Models and keys come from a ``ModelCatalog`` over pi's ``models.json`` and ``auth.json`` (as the
resource service last read them), the keys the editor sent (``pi/setCredentials``) and the
environment. ``pi/login``/``pi/logout`` write ``auth.json`` through ``llm/auth_store.py`` and
reload the resources at once, so the next prompt already uses the new key.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import attrs

from pi_lsp.agent.resource_service import ResourceService
from pi_lsp.agent.runtime import SessionRuntime
from pi_lsp.compaction.file_ops import FileExists
from pi_lsp.compaction.settings import CompactionSettings
from pi_lsp.compaction.tokens import TokenCounter, get_token_counter
from pi_lsp.config import ServerConfig
from pi_lsp.errors import ModelNotConfiguredError, NoApiKeyError
from pi_lsp.llm.auth_store import remove_api_key, save_api_key
from pi_lsp.llm.caching import resolve_cache_retention
from pi_lsp.llm.catalog import ModelCatalog
from pi_lsp.llm.config import ModelConfig, resolve_model, split_model_string
from pi_lsp.llm.credentials import EditorKeys
from pi_lsp.llm.editor_models import EditorModels
from pi_lsp.llm.models import context_window_for, max_output_tokens_for
from pi_lsp.resources.auth_file import AUTH_FILE
from pi_lsp.tools.paths import resolve_read_path

NO_MODEL_MESSAGE = (
    "No model is configured. Set the pi.model setting (a litellm model string such as "
    "openai/gpt-4o or ollama/llama3, plus pi.apiBase for a local server), or the PI_LSP_MODEL "
    "environment variable, or defaultProvider/defaultModel in pi's settings.json, or give a "
    'provider an API key (its environment variable, "Pi: Set API Key…" in VS Code, '
    ":PiLogin in Neovim) or a model in pi's models.json."
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
        self.editor_keys = EditorKeys()
        self.editor_models = EditorModels()
        """The models the editor provides (``pi/languageModels``), for a client that runs them."""

    @property
    def current(self) -> ServerConfig:
        """The configuration with pi's settings files as they are now (they are watched)."""
        merged = self.resources.loaded.settings.settings.merged
        if merged == self.config.pi_settings:
            return self.config
        return attrs.evolve(self.config, pi_settings=merged)

    def catalog(self, environ: dict[str, str] | None = None) -> ModelCatalog:
        """Models and keys as they are now."""
        snapshot = self.resources.loaded
        environ = dict(self._environ) if environ is None else environ
        return ModelCatalog(
            snapshot.models, snapshot.auth, self.editor_keys, environ, self.editor_models
        )

    def configured_model(self) -> ModelConfig | None:
        """The model of a session that chose none (None when no model is configured)."""
        return resolve_model(self.current.model_settings(), dict(self._environ), self.catalog())

    def model_for(self, runtime: SessionRuntime) -> ModelConfig | None:
        """The session's model: its own choice (``pi/setModel``, a resumed session's), else the
        configured one; None when no model is configured."""
        return self.model_named(runtime.model_override)

    def model_named(self, override: str | None) -> ModelConfig | None:
        """The model a session would use after choosing ``override`` (None: the configured one)."""
        settings = self.current.model_settings()
        environ = dict(self._environ)
        if override:
            configured = environ.pop("PI_LSP_MODEL", None) or settings.get("model")
            # pi/setModel is the user's latest word: it beats the server's start-up PI_LSP_MODEL.
            settings = {**settings, "model": override}
            if not _same_provider(configured, override):
                # The endpoint given for the configured model (a local server's) is not another
                # provider's: its model goes to its own API with its own key.
                settings = {
                    name: value
                    for name, value in settings.items()
                    if name not in ("apiBase", "apiKey")
                }
                environ.pop("PI_LSP_API_BASE", None)
                environ.pop("PI_LSP_API_KEY", None)
        return resolve_model(settings, environ, self.catalog(environ))

    def require_model(self, runtime: SessionRuntime) -> ModelConfig:
        model = self.model_for(runtime)
        if model is None:
            raise ModelNotConfiguredError(NO_MODEL_MESSAGE)
        return model

    def callable_model(self, runtime: SessionRuntime) -> ModelConfig:
        """The session's model, when it can be called: a provider without a key is refused here,
        with what to do, instead of failing at the provider."""
        model = self.require_model(runtime)
        if model.key_status == "missing":
            raise NoApiKeyError(self.catalog().missing_key_message(model), model.provider)
        return model

    def summary_model(self, runtime: SessionRuntime) -> ModelConfig:
        """The model that writes summaries: ``compaction.model`` when set, else the session's."""
        model = self.require_model(runtime)
        cheaper = self.current.compaction_model()
        if not cheaper:
            return model
        environ = {key: value for key, value in self._environ.items() if key != "PI_LSP_MODEL"}
        settings = {**self.current.model_settings(), "model": cheaper}
        return resolve_model(settings, environ, self.catalog(environ)) or model

    # ------------------------------------------------------------------ keys

    def set_editor_keys(self, keys: dict[str, str]) -> None:
        """``pi/setCredentials``: the keys in the editor's secret storage, all of them."""
        self.editor_keys.replace(keys)

    def login(self, provider: str, key: str, *, replace_subscription: bool) -> str:
        """``pi/login``: store ``key`` in pi's auth.json; returns the file's path."""
        path = self.resources.agent_dir / AUTH_FILE
        save_api_key(path, provider, key, replace_subscription=replace_subscription)
        self.resources.reload()
        return str(path)

    def logout(self, provider: str) -> tuple[bool, str]:
        """``pi/logout``: remove ``provider``'s API key from auth.json; (removed, the path)."""
        path = self.resources.agent_dir / AUTH_FILE
        removed = remove_api_key(path, provider.strip())
        self.resources.reload()
        return removed, str(path)

    def thinking_level(self, runtime: SessionRuntime) -> str:
        """The level of the session's active path (its last change), else the configured one."""
        level = runtime.session.named_thinking_level()
        return level if level is not None else self.current.thinking_level()

    def cache_retention(self) -> str:
        """Prompt-cache retention: the setting, else ``PI_CACHE_RETENTION=long``, else short."""
        return resolve_cache_retention(self.current.cache_retention(), self._environ)

    def context_window(self, model: ModelConfig | None) -> int:
        if model is None:
            return self.config.settings.context_window or FALLBACK_CONTEXT_WINDOW
        return context_window_for(model)

    def max_output_tokens(self, model: ModelConfig) -> int | None:
        return max_output_tokens_for(model)

    def compaction_settings(self, runtime: SessionRuntime) -> CompactionSettings:
        """The compaction settings for ``runtime``'s model (its ``modelOverrides`` applied)."""
        model = self.model_for(runtime)
        key = f"{model.provider}/{model.model_id}" if model is not None else None
        return self.current.compaction_settings(key)

    def token_counter(self) -> TokenCounter:
        return get_token_counter(self.current.tokenizer())

    def file_exists(self) -> FileExists:
        """Whether a path, as the agent's tools take it (relative to the workspace), exists now:
        summaries leave read files that are gone out of their lists and mark deleted ones."""
        root = self.config.workspace_root
        return lambda path: resolve_read_path(path, root).exists()


def _same_provider(configured: object, chosen: str) -> bool:
    """Whether ``chosen`` is of the configured model's provider (true when none is configured)."""
    if not isinstance(configured, str) or not configured.strip():
        return True
    return split_model_string(configured.strip())[0] == split_model_string(chosen)[0]
