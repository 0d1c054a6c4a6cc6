"""Compaction and branch-summary settings, with pi's defaults and names.

``reserve_tokens`` is the head-room kept free at the top of the context window (compaction starts
when the context grows into it); ``keep_recent_tokens`` is roughly how much recent conversation a
compaction keeps verbatim. pi-lsp adds two settings pi 0.84.2 does not have: ``threshold`` (start
compacting earlier, at a share of the window or at a token count) and ``file_list_limit`` (how many
paths each file list in a summary's text shows). The values come from settings files, so they are
validated here once.
"""

from __future__ import annotations

import re
from typing import Any

import attrs

DEFAULT_CONTEXT_WINDOW = 128000
"""pi's fallback context window when the model does not declare one."""

DEFAULT_FILE_LIST_LIMIT = 50
"""Paths per list in a summary's text (``<read-files>``, ``<modified-files>``)."""

THRESHOLD_DESCRIPTION = 'a percentage of the context window such as "80%", or a token count'
_PERCENT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s*$")


def _non_negative_int(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{attribute.name} must be a non-negative integer, got {value!r}")


def _boolean(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"{attribute.name} must be true or false, got {value!r}")


@attrs.frozen
class Threshold:
    """Where the user wants automatic compaction to start: a share of the window, or tokens."""

    percent: float | None = None
    tokens: int | None = None

    def tokens_for(self, context_window: int) -> float:
        if self.percent is not None:
            return context_window * self.percent / 100
        assert self.tokens is not None
        return self.tokens

    def to_json(self) -> str | int:
        if self.percent is not None:
            return f"{self.percent:g}%"
        assert self.tokens is not None
        return self.tokens


def parse_threshold(value: Any) -> Threshold:
    """``"80%"`` (more than 0, at most 100) or a positive whole number of tokens; ValueError
    naming what is expected otherwise."""
    if isinstance(value, str):
        match = _PERCENT.match(value)
        if match and 0 < float(match.group(1)) <= 100:
            return Threshold(percent=float(match.group(1)))
    elif isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return Threshold(tokens=value)
    raise ValueError(f"compaction.threshold must be {THRESHOLD_DESCRIPTION}, got {value!r}")


def is_threshold(value: Any) -> bool:
    try:
        parse_threshold(value)
    except ValueError:
        return False
    return True


def _threshold(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if value is not None and not isinstance(value, Threshold):
        raise TypeError(f"{attribute.name} must be a Threshold or None, got {value!r}")


@attrs.frozen
class CompactionSettings:
    """pi's ``compaction`` settings (``DEFAULT_COMPACTION_SETTINGS``), plus pi-lsp's own."""

    enabled: bool = attrs.field(default=True, validator=_boolean)
    reserve_tokens: int = attrs.field(default=16384, validator=_non_negative_int)
    keep_recent_tokens: int = attrs.field(default=20000, validator=_non_negative_int)
    threshold: Threshold | None = attrs.field(default=None, validator=_threshold)
    """An earlier start for automatic compaction than ``window − reserve_tokens`` (None: pi's)."""
    file_list_limit: int = attrs.field(default=DEFAULT_FILE_LIST_LIMIT, validator=_non_negative_int)

    def to_json(self) -> dict[str, Any]:
        """pi's three keys, and pi-lsp's only where they differ from the defaults."""
        json: dict[str, Any] = {
            "enabled": self.enabled,
            "reserveTokens": self.reserve_tokens,
            "keepRecentTokens": self.keep_recent_tokens,
        }
        if self.threshold is not None:
            json["threshold"] = self.threshold.to_json()
        if self.file_list_limit != DEFAULT_FILE_LIST_LIMIT:
            json["fileListLimit"] = self.file_list_limit
        return json


@attrs.frozen
class BranchSummarySettings:
    """pi's ``branchSummary`` settings."""

    reserve_tokens: int = attrs.field(default=16384, validator=_non_negative_int)

    def token_budget(self, context_window: int | None = None) -> int:
        """Tokens of the abandoned branch that fit the summary request: window − reserve."""
        return (context_window or DEFAULT_CONTEXT_WINDOW) - self.reserve_tokens

    def to_json(self) -> dict[str, Any]:
        return {"reserveTokens": self.reserve_tokens}
