"""Compaction and branch-summary settings, with pi's defaults and names.

``reserve_tokens`` is the head-room kept free at the top of the context window (compaction starts
when the context grows into it); ``keep_recent_tokens`` is roughly how much recent conversation a
compaction keeps verbatim. The values come from settings files, so they are validated here once.
"""

from __future__ import annotations

from typing import Any

import attrs

DEFAULT_CONTEXT_WINDOW = 128000
"""pi's fallback context window when the model does not declare one."""


def _non_negative_int(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{attribute.name} must be a non-negative integer, got {value!r}")


def _boolean(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"{attribute.name} must be true or false, got {value!r}")


@attrs.frozen
class CompactionSettings:
    """pi's ``compaction`` settings (``DEFAULT_COMPACTION_SETTINGS``)."""

    enabled: bool = attrs.field(default=True, validator=_boolean)
    reserve_tokens: int = attrs.field(default=16384, validator=_non_negative_int)
    keep_recent_tokens: int = attrs.field(default=20000, validator=_non_negative_int)

    def to_json(self) -> dict[str, Any]:
        return {
            "enabled": self.enabled,
            "reserveTokens": self.reserve_tokens,
            "keepRecentTokens": self.keep_recent_tokens,
        }


@attrs.frozen
class BranchSummarySettings:
    """pi's ``branchSummary`` settings."""

    reserve_tokens: int = attrs.field(default=16384, validator=_non_negative_int)

    def token_budget(self, context_window: int | None = None) -> int:
        """Tokens of the abandoned branch that fit the summary request: window − reserve."""
        return (context_window or DEFAULT_CONTEXT_WINDOW) - self.reserve_tokens

    def to_json(self) -> dict[str, Any]:
        return {"reserveTokens": self.reserve_tokens}
