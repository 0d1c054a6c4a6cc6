"""The server's configuration: typed, defaulted and validated once, where it enters the server.

Sources, later ones winning: built-in defaults, the environment (``PI_CODING_AGENT_SESSION_DIR``,
``PI_LSP_MODEL``), and the client's ``initializationOptions`` (the same keys as the ``pi.*``
settings of the editor clients, without the prefix). An invalid value is reported once and
replaced by its default; the server never refuses to start over configuration.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import cattrs

from pi_lsp.compaction.settings import BranchSummarySettings, CompactionSettings
from pi_lsp.protocol import THINKING_LEVELS, camel_case, converter


@attrs.frozen
class RetrySettings:
    enabled: bool = True
    max_retries: int = 3
    base_delay_ms: int = 2000


@attrs.frozen
class ServerSettings:
    """Everything a client may configure; each key is camelCase in ``initializationOptions``."""

    session_dir: str | None = None
    """Where sessions live; default ``<workspace>/.pi/sessions``. pi's own per-project directory works too."""
    model: str | None = None
    """A litellm model string (``openai/gpt-4o``, ``ollama/llama3``, …); ``PI_LSP_MODEL`` overrides it."""
    api_base: str | None = None
    """The endpoint for OpenAI-compatible and local servers (litellm's ``api_base``)."""
    context_window: int | None = None
    """The model's context window in tokens, when litellm does not know the model."""
    thinking_level: str = "medium"
    """The thinking level of new sessions: off, minimal, low, medium, high or xhigh."""
    tokenizer: str = "tiktoken"
    """Token counting for estimates: ``tiktoken`` (real BPE counts) or ``chars4`` (pi's estimate)."""
    trusted: bool = True
    """Whether the workspace is trusted (the VS Code extension passes workspace trust)."""
    retry: RetrySettings = attrs.Factory(RetrySettings)


@attrs.frozen
class ServerConfig:
    workspace_root: Path
    session_dir: Path
    settings: ServerSettings
    pi_settings: dict[str, Any] = attrs.Factory(dict)
    """pi's own settings files (global, then the project's when trusted), for the keys pi-lsp shares with pi."""
    client_compaction: dict[str, Any] = attrs.Factory(dict)
    """The client's ``compaction`` options (``enabled``, ``reserveTokens``, ``keepRecentTokens``, ``model``)."""
    problems: tuple[str, ...] = ()
    """What was wrong with the given configuration (already replaced by defaults)."""

    def compaction_settings(self) -> CompactionSettings:
        """pi's ``compaction`` settings, with the client's ``compaction`` options winning; invalid → defaults."""
        merged = {**_object(self.pi_settings.get("compaction")), **_object(self.client_compaction)}
        return _compaction_settings(merged)

    def tokenizer(self) -> str:
        """``compaction.tokenizer`` (pi-lsp's name in pi's settings layout) when valid, else ``tokenizer``."""
        merged = {**_object(self.pi_settings.get("compaction")), **_object(self.client_compaction)}
        configured = merged.get("tokenizer")
        return configured if configured in ("tiktoken", "chars4") else self.settings.tokenizer

    def compaction_model(self) -> str | None:
        """A cheaper model for summaries (``compaction.model``), if one is configured."""
        merged = {**_object(self.pi_settings.get("compaction")), **_object(self.client_compaction)}
        model = merged.get("model")
        return model if isinstance(model, str) and model else None

    def branch_summary_settings(self) -> BranchSummarySettings:
        reserve = _object(self.pi_settings.get("branchSummary")).get("reserveTokens", 16384)
        try:
            return BranchSummarySettings(reserve_tokens=reserve)
        except (TypeError, ValueError):
            return BranchSummarySettings()

    def model_settings(self) -> dict[str, Any]:
        """The settings the LLM layer reads to choose and reach a model (the client's win over pi's)."""
        return {
            "model": self.settings.model,
            "defaultProvider": self.pi_settings.get("defaultProvider"),
            "defaultModel": self.pi_settings.get("defaultModel"),
            "apiBase": self.settings.api_base,
            "contextWindow": self.settings.context_window,
        }


def load_config(
    workspace_root: Path,
    initialization_options: Any,
    environ: Mapping[str, str] = os.environ,
    pi_settings: Mapping[str, Any] | None = None,
) -> ServerConfig:
    """The configuration from the client's options, the environment and pi's merged settings files.

    ``pi_settings`` is what the resource loader read from ``<agentDir>/settings.json`` and the
    project's ``.pi/settings.json`` (see ``resources/settings.py``), already merged and validated.
    """
    settings, problems = _structure_settings(initialization_options)
    pi_settings = dict(pi_settings or {})
    session_dir = (
        settings.session_dir
        or environ.get("PI_CODING_AGENT_SESSION_DIR")
        or (pi_settings.get("sessionDir") if isinstance(pi_settings.get("sessionDir"), str) else None)
    )
    directory = Path(os.path.expanduser(session_dir)) if session_dir else workspace_root / ".pi" / "sessions"
    if not directory.is_absolute():
        directory = workspace_root / directory
    client_compaction = _object(initialization_options.get("compaction")) if isinstance(initialization_options, Mapping) else {}
    config = ServerConfig(workspace_root, directory, settings, pi_settings, client_compaction, tuple(problems))
    merged = {**_object(pi_settings.get("compaction")), **client_compaction}
    if _compaction_settings(merged) == CompactionSettings() and _has_compaction_values(merged):
        problems.append("compaction settings are invalid; using pi's defaults")
        config = attrs.evolve(config, problems=tuple(problems))
    return config


def _object(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def _has_compaction_values(merged: Mapping[str, Any]) -> bool:
    defaults = CompactionSettings().to_json()
    return any(key in merged and merged[key] != defaults[key] for key in defaults)


def _compaction_settings(merged: Mapping[str, Any]) -> CompactionSettings:
    try:
        return CompactionSettings(
            enabled=merged.get("enabled", True),
            reserve_tokens=merged.get("reserveTokens", 16384),
            keep_recent_tokens=merged.get("keepRecentTokens", 20000),
        )
    except (TypeError, ValueError):
        return CompactionSettings()


def _structure_settings(raw: Any) -> tuple[ServerSettings, list[str]]:
    if raw is None:
        return ServerSettings(), []
    if not isinstance(raw, Mapping):
        return ServerSettings(), [f"initializationOptions must be an object, got {type(raw).__name__}"]
    problems: list[str] = []
    valid: dict[str, Any] = {}
    for field in attrs.fields(ServerSettings):
        wire_name = camel_case(field.name)
        if wire_name not in raw:
            continue
        try:
            converter.structure({wire_name: raw[wire_name]}, ServerSettings)
        except (cattrs.BaseValidationError, TypeError, ValueError) as error:
            problems.append(f"setting {wire_name}: {_first_message(error)}; using the default")
            continue
        valid[wire_name] = raw[wire_name]
    settings = converter.structure(valid, ServerSettings)
    if settings.thinking_level not in THINKING_LEVELS:
        problems.append(f"setting thinkingLevel must be one of {', '.join(THINKING_LEVELS)}; using medium")
        settings = attrs.evolve(settings, thinking_level="medium")
    if settings.tokenizer not in ("tiktoken", "chars4"):
        problems.append("setting tokenizer must be tiktoken or chars4; using tiktoken")
        settings = attrs.evolve(settings, tokenizer="tiktoken")
    return settings, problems


def _first_message(error: Exception) -> str:
    if isinstance(error, cattrs.BaseValidationError):
        return "; ".join(cattrs.transform_error(error))
    return str(error)
