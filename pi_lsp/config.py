"""The server's configuration: typed, defaulted and validated once, where it enters the server.

Sources, later ones winning: built-in defaults, pi's settings files (``defaultProvider``,
``defaultModel``, ``defaultThinkingLevel``, ``cacheRetention``, ``sessionDir``, ``compaction``,
``retry``, ``branchSummary``, ``permissions``, ``steeringMode``, ``followUpMode``), the environment
(``PI_CODING_AGENT_SESSION_DIR``, ``PI_LSP_MODEL``), the client's ``initializationOptions`` and,
live, the client's ``workspace/configuration`` section ``pi`` (the same keys as
``initializationOptions``: the editors' ``pi.*`` settings without the prefix). An invalid value is
reported once and replaced by its default; the server never refuses to start over configuration.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import cattrs

from pi_lsp.compaction.settings import (
    THRESHOLD_DESCRIPTION,
    BranchSummarySettings,
    CompactionSettings,
    is_threshold,
    parse_threshold,
)
from pi_lsp.protocol import THINKING_LEVELS, QueueMode, camel_case, converter
from pi_lsp.resources.permission_settings import (
    PermissionSettings,
    merged_permissions,
    parse_permissions,
)
from pi_lsp.resources.settings import RetrySettings, deep_merge

CACHE_RETENTIONS = ("none", "short", "long")
CLIENT_ONLY_KEYS = ("server",)
"""Settings the editor itself uses (``pi.server.path``); the server ignores them."""
START_ONLY_KEYS = ("trusted",)
"""Only ``initializationOptions`` may set these: trust
is the editor's decision, never a live setting."""


@attrs.frozen
class RetryOptions:
    """The client's ``retry`` option; a field left out (None) keeps pi's setting or default."""

    enabled: bool | None = None
    max_retries: int | None = None
    base_delay_ms: int | None = None


@attrs.frozen
class CheckpointOptions:
    """The client's ``checkpoints`` option: recording the agent's file changes for restores."""

    enabled: bool = True
    """Record the contents of the files the agent's ``write`` and ``edit`` change."""
    max_file_size_mb: float = 5
    """Files larger than this (in MB, 10^6 bytes) are recorded as not restorable."""

    @property
    def max_file_bytes(self) -> int:
        return int(self.max_file_size_mb * 1_000_000)


@attrs.frozen
class ServerSettings:
    """Everything a client may configure; each key is camelCase in ``initializationOptions``."""

    session_dir: str | None = None
    """Where sessions live; default ``<workspace>/.pi/sessions``.
    pi's own per-project directory works too."""
    model: str | None = None
    """A litellm model string (``openai/gpt-4o``,
    ``ollama/llama3``, …); ``PI_LSP_MODEL`` overrides it."""
    api_base: str | None = None
    """The endpoint for OpenAI-compatible and local servers (litellm's ``api_base``)."""
    context_window: int | None = None
    """The model's context window in tokens, when litellm does not know the model."""
    thinking_level: str | None = None
    """The thinking level of new sessions: off, minimal, low, medium, high or xhigh (default:
    pi's ``defaultThinkingLevel``, else medium)."""
    tokenizer: str = "tiktoken"
    """Token counting for estimates: ``tiktoken`` (real
    BPE counts) or ``chars4`` (pi's estimate)."""
    trusted: bool = True
    """Whether the workspace is trusted (the VS Code extension passes workspace trust)."""
    nested_context_files: bool = True
    """Load AGENTS.md/CLAUDE.md files below the workspace root when the agent works there."""
    session_index: bool = True
    """Keep the index of the workspace's sessions (``pi/searchSessions``); read at start."""
    session_search_tools: bool = True
    """Give the agent ``search_sessions`` and ``read_session_entry`` (trusted workspaces only)."""
    auto_name: bool = True
    """Name a session nobody named after its first answer, with the summary model."""
    retry: RetryOptions = attrs.Factory(RetryOptions)
    allowed_session_dirs: tuple[str, ...] = ()
    """Directories besides ``sessionDir`` whose session files ``pi/openSession`` may open (for
    example pi's own ``~/.pi/agent/sessions``); a session file elsewhere is refused."""
    cache_retention: str | None = None
    """Prompt caching: ``none``, ``short`` or ``long`` (default: pi's ``cacheRetention``, else
    ``PI_CACHE_RETENTION=long``, else short)."""
    checkpoints: CheckpointOptions = attrs.Factory(CheckpointOptions)
    steering_mode: QueueMode | None = None
    """How prompts steered into a running turn are delivered: ``one-at-a-time`` (one after each
    answer) or ``all`` (default: pi's ``steeringMode``, else one-at-a-time)."""
    follow_up_mode: QueueMode | None = None
    """How follow-ups queued during a turn are delivered when the agent would stop:
    ``one-at-a-time`` or ``all`` (default: pi's ``followUpMode``, else one-at-a-time)."""


@attrs.frozen
class ServerConfig:
    workspace_root: Path
    session_dir: Path
    settings: ServerSettings
    pi_settings: dict[str, Any] = attrs.Factory(dict)
    """pi's own settings files (global, then the project's
    when trusted), for the keys pi-lsp shares with pi."""
    client_options: dict[str, Any] = attrs.Factory(dict)
    """Everything the client sent (``initializationOptions``
    merged with ``workspace/configuration``)."""
    problems: tuple[str, ...] = ()
    """What was wrong with the given configuration (already replaced by defaults)."""
    allowed_session_dirs: tuple[Path, ...] = ()
    """``allowedSessionDirs`` as absolute paths (relative ones start at the workspace root)."""

    @property
    def client_compaction(self) -> dict[str, Any]:
        """The client's ``compaction`` options (``enabled``, ``reserveTokens``,
        ``keepRecentTokens``, ``threshold``, ``fileListLimit``, ``model``, ``tokenizer``)."""
        return _object(self.client_options.get("compaction"))

    def compaction_settings(self, model: str | None = None) -> CompactionSettings:
        """pi's ``compaction`` settings, with the client's
        ``compaction`` options winning; invalid → defaults.

        With ``model`` (``provider/modelId``), its ``compaction.modelOverrides`` entry (pi 0.86)
        gives ``reserveTokens`` and ``keepRecentTokens``, each falling back on its own to the
        ordinary setting; an override value that is not a non-negative integer is ignored."""
        merged = {**_object(self.pi_settings.get("compaction")), **self.client_compaction}
        override = _object(_object(merged.get("modelOverrides")).get(model)) if model else {}
        for key in ("reserveTokens", "keepRecentTokens"):
            if _is_count(override.get(key)):
                merged[key] = override[key]
        return _compaction_settings(merged)

    def tokenizer(self) -> str:
        """``compaction.tokenizer`` (pi-lsp's name in pi's
        settings layout) when valid, else ``tokenizer``."""
        merged = {**_object(self.pi_settings.get("compaction")), **self.client_compaction}
        configured = merged.get("tokenizer")
        return configured if configured in ("tiktoken", "chars4") else self.settings.tokenizer

    def compaction_model(self) -> str | None:
        """A cheaper model for summaries (``compaction.model``), if one is configured."""
        merged = {**_object(self.pi_settings.get("compaction")), **self.client_compaction}
        model = merged.get("model")
        return model if isinstance(model, str) and model else None

    def thinking_level(self) -> str:
        """The thinking level of new sessions: the client's,
        else pi's ``defaultThinkingLevel``, else medium."""
        configured = self.settings.thinking_level or self.pi_settings.get("defaultThinkingLevel")
        return configured if configured in THINKING_LEVELS else "medium"

    def steering_mode(self) -> QueueMode:
        """The client's ``steeringMode``, else pi's, else one-at-a-time (pi 1.6's default)."""
        return _queue_mode(self.settings.steering_mode, self.pi_settings.get("steeringMode"))

    def follow_up_mode(self) -> QueueMode:
        """The client's ``followUpMode``, else pi's, else one-at-a-time (pi 1.6's default)."""
        return _queue_mode(self.settings.follow_up_mode, self.pi_settings.get("followUpMode"))

    def cache_retention(self) -> str | None:
        """The configured prompt-cache retention (the client's, else pi's ``cacheRetention``);
        None leaves it to ``PI_CACHE_RETENTION`` and the default (``llm/caching.py``)."""
        configured = self.settings.cache_retention or self.pi_settings.get("cacheRetention")
        return configured if configured in CACHE_RETENTIONS else None

    def retry_settings(self) -> RetrySettings:
        """pi's ``retry`` settings with each retry option the client gave winning."""
        pi_retry = _object(self.pi_settings.get("retry"))
        client = self.settings.retry

        def pick(client_value: Any, pi_key: str, default: Any) -> Any:
            return client_value if client_value is not None else pi_retry.get(pi_key, default)

        return RetrySettings(
            enabled=pick(client.enabled, "enabled", True),
            max_retries=pick(client.max_retries, "maxRetries", 3),
            base_delay_ms=pick(client.base_delay_ms, "baseDelayMs", 2000),
            max_retry_delay_ms=_object(pi_retry.get("provider")).get("maxRetryDelayMs", 60000),
        )

    def permission_settings(self) -> PermissionSettings:
        """pi's ``permissions`` with the client's keys winning; invalid parts → defaults."""
        return parse_permissions(merged_permissions(self.pi_settings, self.client_options))[0]

    def branch_summary_settings(self) -> BranchSummarySettings:
        reserve = _object(self.pi_settings.get("branchSummary")).get("reserveTokens", 16384)
        try:
            return BranchSummarySettings(reserve_tokens=reserve)
        except (TypeError, ValueError):
            return BranchSummarySettings()

    def model_settings(self) -> dict[str, Any]:
        """The settings the LLM layer reads to choose and
        reach a model (the client's win over pi's)."""
        return {
            "model": self.settings.model,
            "defaultProvider": self.pi_settings.get("defaultProvider"),
            "defaultModel": self.pi_settings.get("defaultModel"),
            "enabledModels": self.pi_settings.get("enabledModels"),
            "apiBase": self.settings.api_base,
            "contextWindow": self.settings.context_window,
        }


def client_options(initialization_options: Any, workspace_configuration: Any = None) -> Any:
    """The client's settings: ``workspace/configuration`` (live) over ``initializationOptions``.

    Unset editor settings arrive as null or "" and mean "not set"; trust comes only from the
    options the editor started the server with.
    """
    if not isinstance(workspace_configuration, Mapping):
        return initialization_options
    live = _without_unset(workspace_configuration)
    for key in (*CLIENT_ONLY_KEYS, *START_ONLY_KEYS):
        live.pop(key, None)
    base = dict(initialization_options) if isinstance(initialization_options, Mapping) else {}
    return deep_merge(base, live)


def _without_unset(values: Mapping[str, Any]) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, Mapping):
            nested = _without_unset(value)
            if nested:
                kept[key] = nested
        elif value is not None and value != "":
            kept[key] = value
    return kept


def load_config(
    workspace_root: Path,
    initialization_options: Any,
    environ: Mapping[str, str] = os.environ,
    pi_settings: Mapping[str, Any] | None = None,
    workspace_configuration: Any = None,
) -> ServerConfig:
    """The configuration from the client's options, the environment and pi's merged settings files.

    ``pi_settings`` is what the resource loader read from ``<agentDir>/settings.json`` and the
    project's ``.pi/settings.json`` (see ``resources/settings.py``), already merged and validated.
    ``workspace_configuration`` is the client's answer to ``workspace/configuration`` for ``pi``.
    """
    initialization_options = client_options(initialization_options, workspace_configuration)
    settings, problems = _structure_settings(initialization_options)
    pi_settings = dict(pi_settings or {})
    session_dir = (
        settings.session_dir
        or environ.get("PI_CODING_AGENT_SESSION_DIR")
        or (
            pi_settings.get("sessionDir")
            if isinstance(pi_settings.get("sessionDir"), str)
            else None
        )
    )
    directory = (
        _directory(session_dir, workspace_root)
        if session_dir
        else workspace_root / ".pi" / "sessions"
    )
    options = dict(initialization_options) if isinstance(initialization_options, Mapping) else {}
    config = ServerConfig(
        workspace_root,
        directory,
        settings,
        pi_settings,
        options,
        tuple(problems),
        tuple(_directory(allowed, workspace_root) for allowed in settings.allowed_session_dirs),
    )
    merged = {**_object(pi_settings.get("compaction")), **config.client_compaction}
    more_problems = [
        *_compaction_problems(merged),
        *parse_permissions(merged_permissions(pi_settings, options))[1],
    ]
    if more_problems:
        config = attrs.evolve(config, problems=(*problems, *more_problems))
    return config


def _queue_mode(client: QueueMode | None, pi: Any) -> QueueMode:
    if client is not None:
        return client
    return "all" if pi == "all" else "one-at-a-time"


def _directory(configured: str, workspace_root: Path) -> Path:
    directory = Path(os.path.expanduser(configured))
    return directory if directory.is_absolute() else workspace_root / directory


def _object(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def _compaction_problems(merged: Mapping[str, Any]) -> list[str]:
    problems = []
    if _pi_compaction_settings(merged) is None:
        problems.append("compaction settings are invalid; using pi's defaults")
    if merged.get("threshold") is not None and not is_threshold(merged["threshold"]):
        problems.append(
            f"setting compaction.threshold must be {THRESHOLD_DESCRIPTION}; "
            "compacting at window minus reserveTokens"
        )
    if merged.get("fileListLimit") is not None and not _is_count(merged["fileListLimit"]):
        problems.append("setting compaction.fileListLimit must be a whole number; using 50")
    return problems


def _pi_compaction_settings(merged: Mapping[str, Any]) -> CompactionSettings | None:
    """pi's three compaction settings; None when one of them is invalid."""
    try:
        return CompactionSettings(
            enabled=merged.get("enabled", True),
            reserve_tokens=merged.get("reserveTokens", 16384),
            keep_recent_tokens=merged.get("keepRecentTokens", 20000),
        )
    except (TypeError, ValueError):
        return None


def _compaction_settings(merged: Mapping[str, Any]) -> CompactionSettings:
    """pi's settings (all defaults when one is invalid) and pi-lsp's own (each on its own:
    an invalid one is left at its default)."""
    settings = _pi_compaction_settings(merged) or CompactionSettings()
    threshold = merged.get("threshold")
    if threshold is not None and is_threshold(threshold):
        settings = attrs.evolve(settings, threshold=parse_threshold(threshold))
    limit = merged.get("fileListLimit")
    if limit is not None and _is_count(limit):
        settings = attrs.evolve(settings, file_list_limit=limit)
    return settings


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _structure_settings(raw: Any) -> tuple[ServerSettings, list[str]]:
    if raw is None:
        return ServerSettings(), []
    if not isinstance(raw, Mapping):
        return ServerSettings(), [
            f"initializationOptions must be an object, got {type(raw).__name__}"
        ]
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
    if "allowedSessionDirs" in valid and not _is_list_of_paths(valid["allowedSessionDirs"]):
        problems.append(
            "setting allowedSessionDirs must be a list of directory paths; "
            "sessions open from sessionDir only"
        )
        del valid["allowedSessionDirs"]
    settings = converter.structure(valid, ServerSettings)
    if settings.thinking_level is not None and settings.thinking_level not in THINKING_LEVELS:
        problems.append(
            f"setting thinkingLevel must be one of {', '.join(THINKING_LEVELS)}; using the default"
        )
        settings = attrs.evolve(settings, thinking_level=None)
    retry = settings.retry
    if any(value is not None and value < 0 for value in (retry.max_retries, retry.base_delay_ms)):
        problems.append(
            "setting retry: maxRetries and baseDelayMs must "
            "not be negative; using pi's retry settings"
        )
        settings = attrs.evolve(settings, retry=RetryOptions())
    if settings.cache_retention is not None and settings.cache_retention not in CACHE_RETENTIONS:
        problems.append("setting cacheRetention must be none, short or long; using the default")
        settings = attrs.evolve(settings, cache_retention=None)
    if settings.checkpoints.max_file_size_mb <= 0:
        problems.append("setting checkpoints.maxFileSizeMb must be above 0; using 5")
        settings = attrs.evolve(
            settings, checkpoints=attrs.evolve(settings.checkpoints, max_file_size_mb=5)
        )
    if settings.tokenizer not in ("tiktoken", "chars4"):
        problems.append("setting tokenizer must be tiktoken or chars4; using tiktoken")
        settings = attrs.evolve(settings, tokenizer="tiktoken")
    return settings, problems


def _is_list_of_paths(value: Any) -> bool:
    # A lone string would pass as a sequence of one-letter paths.
    return isinstance(value, list) and all(isinstance(item, str) and item.strip() for item in value)


def _first_message(error: Exception) -> str:
    if isinstance(error, cattrs.BaseValidationError):
        return "; ".join(cattrs.transform_error(error))
    return str(error)
