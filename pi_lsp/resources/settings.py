"""pi's settings files, read, migrated, validated and merged the way pi 0.84.2's
``core/settings-manager.ts`` does.

``<agentDir>/settings.json`` is merged with ``<workspace>/.pi/settings.json`` (read only for a
trusted workspace) by a recursive deep merge in which the project wins and arrays replace. A
file with broken JSON keeps its last good content (``previous``), as pi's reload does; a known
key with a wrong type is dropped from that file with a diagnostic on its line, so the other
file's value or the default applies.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Union

import attrs

from pi_lsp.compaction.settings import (
    DEFAULT_FILE_LIST_LIMIT,
    THRESHOLD_DESCRIPTION,
    BranchSummarySettings,
    CompactionSettings,
    is_threshold,
    parse_threshold,
)
from pi_lsp.protocol import THINKING_LEVELS
from pi_lsp.resources.diagnostics import ResourceDiagnostic, error, warning

SETTINGS_FILE = "settings.json"
QUEUE_MODES = ("all", "one-at-a-time")

Check = tuple[str, Callable[[Any], bool]]
Schema = Mapping[str, Union[Check, "Schema"]]


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def _is_non_negative_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_non_negative_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0


def _is_string(value: Any) -> bool:
    return isinstance(value, str)


def _is_string_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _one_of(*allowed: str) -> Check:
    return "one of " + ", ".join(allowed), lambda value: value in allowed


BOOLEAN: Check = ("true or false", _is_bool)
NON_NEGATIVE_INT: Check = ("a non-negative integer", _is_non_negative_int)
NON_NEGATIVE_NUMBER: Check = ("a non-negative number", _is_non_negative_number)
STRING: Check = ("a string", _is_string)
STRING_LIST: Check = ("an array of strings", _is_string_list)

KNOWN_KEYS: Schema = {
    "compaction": {
        "enabled": BOOLEAN,
        "reserveTokens": NON_NEGATIVE_INT,
        "keepRecentTokens": NON_NEGATIVE_INT,
        # pi-lsp's own (pi keeps keys it does not know).
        "threshold": (THRESHOLD_DESCRIPTION, is_threshold),
        "fileListLimit": NON_NEGATIVE_INT,
    },
    "branchSummary": {"reserveTokens": NON_NEGATIVE_INT, "skipPrompt": BOOLEAN},
    "retry": {
        "enabled": BOOLEAN,
        "maxRetries": NON_NEGATIVE_INT,
        "baseDelayMs": NON_NEGATIVE_INT,
        "provider": {
            "timeoutMs": NON_NEGATIVE_NUMBER,
            "maxRetries": NON_NEGATIVE_INT,
            "maxRetryDelayMs": NON_NEGATIVE_NUMBER,
        },
    },
    "defaultThinkingLevel": _one_of(*THINKING_LEVELS),
    "defaultProvider": STRING,
    "defaultModel": STRING,
    "enabledModels": STRING_LIST,
    "enableSkillCommands": BOOLEAN,
    "sessionDir": STRING,
    "steeringMode": _one_of(*QUEUE_MODES),
    "followUpMode": _one_of(*QUEUE_MODES),
    "skills": STRING_LIST,
    "prompts": STRING_LIST,
    "extensions": STRING_LIST,
    "themes": STRING_LIST,
}


@attrs.frozen
class RetrySettings:
    """pi's ``retry`` settings (agent-level retries of a failed model call)."""

    enabled: bool = True
    max_retries: int = 3
    base_delay_ms: int = 2000
    max_retry_delay_ms: float = 60000


@attrs.frozen
class Settings:
    """The effective settings: typed, defaulted, and the merged raw mapping for everything else."""

    compaction: CompactionSettings = attrs.Factory(CompactionSettings)
    branch_summary: BranchSummarySettings = attrs.Factory(BranchSummarySettings)
    retry: RetrySettings = attrs.Factory(RetrySettings)
    default_thinking_level: str | None = None
    default_provider: str | None = None
    default_model: str | None = None
    enable_skill_commands: bool = True
    session_dir: str | None = None
    steering_mode: str = "one-at-a-time"
    follow_up_mode: str = "one-at-a-time"
    merged: dict[str, Any] = attrs.Factory(dict)


@attrs.frozen
class SettingsFile:
    path: str
    raw: dict[str, Any]
    """The file's last good content, migrated; what ``previous`` hands to the next load."""
    valid: dict[str, Any]
    """``raw`` without the known keys whose type is wrong."""
    text: str = attrs.field(default="", repr=False, eq=False)
    """The file's text when it was last read successfully ("" otherwise), to find a value's line."""


@attrs.frozen
class SettingsLoad:
    global_file: SettingsFile
    project_file: SettingsFile | None
    """None when the workspace is not trusted."""
    settings: Settings
    diagnostics: tuple[ResourceDiagnostic, ...]


def load_settings(
    workspace: Path, agent_dir: Path, *, trusted: bool, previous: SettingsLoad | None = None
) -> SettingsLoad:
    diagnostics: list[ResourceDiagnostic] = []
    global_file = read_settings_file(
        agent_dir / SETTINGS_FILE, _previous_raw(previous, "global"), diagnostics
    )
    project_file = None
    if trusted:
        project_path = workspace / ".pi" / SETTINGS_FILE
        project_file = read_settings_file(
            project_path, _previous_raw(previous, "project"), diagnostics
        )
    merged = deep_merge(global_file.valid, project_file.valid if project_file else {})
    return SettingsLoad(global_file, project_file, typed_settings(merged), tuple(diagnostics))


def _previous_raw(previous: SettingsLoad | None, scope: str) -> dict[str, Any] | None:
    if previous is None:
        return None
    file = previous.global_file if scope == "global" else previous.project_file
    return file.raw if file is not None else None


def read_settings_file(
    path: Path, previous_raw: dict[str, Any] | None, diagnostics: list[ResourceDiagnostic]
) -> SettingsFile:
    """One settings file; when it cannot be used, its previous content (or nothing) stands."""
    fallback = previous_raw if previous_raw is not None else {}
    if not path.exists():
        return SettingsFile(str(path), {}, {})
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as problem:
        diagnostics.append(
            error(str(path), 1, f"cannot read settings: {problem}; keeping the last good settings")
        )
        return SettingsFile(str(path), fallback, validate_settings(fallback, "", str(path), []))
    raw = _parse_settings(text, str(path), diagnostics)
    if raw is None:
        return SettingsFile(str(path), fallback, validate_settings(fallback, "", str(path), []))
    raw = migrate_settings(raw)
    return SettingsFile(str(path), raw, validate_settings(raw, text, str(path), diagnostics), text)


def _parse_settings(
    text: str, path: str, diagnostics: list[ResourceDiagnostic]
) -> dict[str, Any] | None:
    if not text:
        return {}  # pi treats an empty file as no settings
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as problem:
        message = (
            f"invalid JSON: {problem.msg} (line {problem.lineno}, "
            f"column {problem.colno}); keeping the last good settings"
        )
        diagnostics.append(error(path, problem.lineno, message))
        return None
    if not isinstance(parsed, dict):
        diagnostics.append(
            error(path, 1, "settings must be a JSON object; keeping the last good settings")
        )
        return None
    return parsed


def migrate_settings(raw: dict[str, Any]) -> dict[str, Any]:
    """pi 0.84.2's renames of old keys, applied to a copy."""
    settings = copy.deepcopy(raw)
    if "queueMode" in settings and "steeringMode" not in settings:
        settings["steeringMode"] = settings.pop("queueMode")
    if "transport" not in settings and isinstance(settings.get("websockets"), bool):
        settings["transport"] = "websocket" if settings.pop("websockets") else "sse"
    skills = settings.get("skills")
    if isinstance(skills, dict):
        if (
            skills.get("enableSkillCommands") is not None
            and settings.get("enableSkillCommands") is None
        ):
            settings["enableSkillCommands"] = skills["enableSkillCommands"]
        directories = skills.get("customDirectories")
        if isinstance(directories, list) and directories:
            settings["skills"] = directories
        else:
            del settings["skills"]
    retry = settings.get("retry")
    if isinstance(retry, dict) and "maxDelayMs" in retry:
        _migrate_retry_delay(retry)
    return settings


def _migrate_retry_delay(retry: dict[str, Any]) -> None:
    provider = retry.get("provider") if isinstance(retry.get("provider"), dict) else None
    delay = retry.pop("maxDelayMs")
    number = isinstance(delay, (int, float)) and not isinstance(delay, bool)
    if number and (provider is None or provider.get("maxRetryDelayMs") is None):
        retry["provider"] = {**(provider or {}), "maxRetryDelayMs": delay}


def validate_settings(
    raw: Mapping[str, Any], text: str, path: str, diagnostics: list[ResourceDiagnostic]
) -> dict[str, Any]:
    """``raw`` without the known keys of the wrong type, each reported on its line in ``text``."""
    return _validate_object(raw, KNOWN_KEYS, (), text, path, diagnostics)


def _validate_object(
    raw: Mapping[str, Any],
    schema: Schema,
    key_path: tuple[str, ...],
    text: str,
    path: str,
    diagnostics: list[ResourceDiagnostic],
) -> dict[str, Any]:
    valid: dict[str, Any] = {}
    for key, value in raw.items():
        rule = schema.get(key)
        here = (*key_path, key)
        dotted = ".".join(here)
        if isinstance(rule, Mapping):
            if not isinstance(value, dict):
                diagnostics.append(
                    warning(
                        path, key_line(text, here), f"{dotted} must be an object; using the default"
                    )
                )
                continue
            valid[key] = _validate_object(value, rule, here, text, path, diagnostics)
        elif rule is not None and not rule[1](value):
            diagnostics.append(
                warning(
                    path,
                    key_line(text, here),
                    f"{dotted} must be {rule[0]}, got {json.dumps(value)}; using the default",
                )
            )
        else:
            valid[key] = value
    return valid


def key_line(text: str, key_path: tuple[str, ...]) -> int:
    """The 1-based line of the last key of ``key_path``, searching each key after its parent."""
    position = 0
    for key in key_path:
        match = re.compile(re.escape(json.dumps(key)) + r"\s*:").search(text, position)
        if match is None:
            return 1
        position = match.start()
    return text.count("\n", 0, position) + 1


def deep_merge(base: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """pi 0.84.2's merge: nested objects merge recursively, anything else (arrays too) replaces."""
    result = dict(base)
    for key, value in overrides.items():
        if isinstance(result.get(key), dict) and isinstance(value, dict):
            result[key] = deep_merge(result[key], value)
        else:
            result[key] = value
    return result


def typed_settings(merged: dict[str, Any]) -> Settings:
    """The typed view of already-validated merged settings, defaults filling the gaps."""
    compaction = merged.get("compaction", {})
    branch_summary = merged.get("branchSummary", {})
    retry = merged.get("retry", {})
    return Settings(
        compaction=CompactionSettings(
            enabled=compaction.get("enabled", True),
            reserve_tokens=compaction.get("reserveTokens", 16384),
            keep_recent_tokens=compaction.get("keepRecentTokens", 20000),
            threshold=(
                parse_threshold(compaction["threshold"]) if "threshold" in compaction else None
            ),
            file_list_limit=compaction.get("fileListLimit", DEFAULT_FILE_LIST_LIMIT),
        ),
        branch_summary=BranchSummarySettings(
            reserve_tokens=branch_summary.get("reserveTokens", 16384)
        ),
        retry=RetrySettings(
            enabled=retry.get("enabled", True),
            max_retries=retry.get("maxRetries", 3),
            base_delay_ms=retry.get("baseDelayMs", 2000),
            max_retry_delay_ms=retry.get("provider", {}).get("maxRetryDelayMs", 60000),
        ),
        default_thinking_level=merged.get("defaultThinkingLevel"),
        default_provider=merged.get("defaultProvider"),
        default_model=merged.get("defaultModel"),
        enable_skill_commands=merged.get("enableSkillCommands", True),
        session_dir=merged.get("sessionDir"),
        steering_mode=merged.get("steeringMode", "one-at-a-time"),
        follow_up_mode=merged.get("followUpMode", "one-at-a-time"),
        merged=merged,
    )
